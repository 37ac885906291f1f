"""The committed page, the docs build, and the page in a real browser."""

import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from opsweep.cli import main

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
ARTIFACT = ROOT / "docs" / "onnx_support_measured.json"
PAGE = ROOT / "docs" / "supported_operators.md"
SHOTS = ROOT / "test-artifacts"


def render(out, *extra):
    assert main(["render", "--onnx-report", str(ARTIFACT), "--out", str(out),
                 "--documented", str(ROOT / "docs/data/documented.json"),
                 "--data-dir", str(ROOT / "docs/data"), *extra]) == 0
    return out.read_text("utf-8")


def test_committed_page_is_the_render_of_the_committed_artifact(tmp_path):
    assert render(tmp_path / "page.md") == PAGE.read_text("utf-8"), (
        "docs/supported_operators.md is stale: run "
        "`opsweep render --onnx-report docs/onnx_support_measured.json`")


def test_committed_history_holds_the_committed_artifact_and_its_view_is_current(tmp_path):
    from opsweep import artifact as art
    from opsweep import history
    records = history.load_all(ROOT / "docs" / "history")
    measured = art.load(ARTIFACT)
    mine = [r for r in records if r.torch == measured.fingerprint.torch]
    assert mine and mine[0] == history.record(measured, mine[0].generated_at), (
        "docs/history has no record of the committed artifact: run `opsweep history record`")
    assert history.render(records) == (ROOT / "docs" / "history.md").read_text("utf-8"), (
        "docs/history.md is stale: run `opsweep history render`")


def test_rendering_is_byte_identical(tmp_path):
    assert render(tmp_path / "a.md") == render(tmp_path / "b.md")


def test_fallback_without_a_report(tmp_path):
    out = tmp_path / "page.md"
    assert main(["render", "--out", str(out), "--documented", str(ROOT / "docs/data/documented.json"),
                 "--data-dir", str(ROOT / "docs/data")]) == 0
    assert "No measurement report was given" in out.read_text("utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                             str(ROOT / "mkdocs.yml"), "-d", str(out)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return out


def test_docs_build_strict(site):
    html = (site / "supported_operators" / "index.html").read_text("utf-8")
    assert html.count('class="progress ') + html.count('class="progress"') >= 2
    assert (site / "refreshing" / "index.html").exists()
    assert "History across torch versions" in (site / "history" / "index.html").read_text("utf-8")


@pytest.fixture
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]


def chromium():
    from ..conftest import require
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    require(found is not None, "headless Chromium (Debian package 'chromium')")
    return found


def test_page_in_a_real_browser(served, tmp_path):
    url = f"{served}/supported_operators/"
    profile = ["--user-data-dir=" + str(tmp_path / "profile")]
    dom = subprocess.run([chromium(), *CHROMIUM_FLAGS, *profile, "--dump-dom", url],
                         capture_output=True, text=True, timeout=120).stdout
    bars = re.findall(r'class="progress-bar" style="width:\s*([\d.]+)%', dom)
    assert len(bars) >= 2, "both headline bars render"
    assert "every generated example exported" in dom  # the legend
    assert dom.count("<tr>") > 500  # the operator table, one row per operator
    SHOTS.mkdir(exist_ok=True)
    shot = SHOTS / "supported_operators.png"
    subprocess.run([chromium(), *CHROMIUM_FLAGS, *profile, "--window-size=1400,1800",
                    f"--screenshot={shot}", url], capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000

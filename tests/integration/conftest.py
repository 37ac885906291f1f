import functools
import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from opsweep.engine.adapter import quiet_exporter
from opsweep.catalog.load import load_catalog

from ..conftest import made_once

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def specs():
    """The built-in catalog's specs, loaded once for the integration tests."""
    quiet_exporter()
    return load_catalog(check_draws=False).specs


@pytest.fixture(scope="module")
def outside_project(tmp_path_factory):
    """The module's tests run in an empty directory: a sweep there reads no project
    configuration, so it measures the targets its command line names, not the ones this
    repository's [tool.opsweep] adds (torchscript = true); tests of the engine's reuse,
    crash and resume rules need no third exporter measuring every spec again."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("outside"))
        yield


def _build_site(out: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                             str(ROOT / "mkdocs.yml"), "-d", str(out)],
                            check=False, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The docs built by `mkdocs build --strict`, once for every test that reads or serves
    them (the browser tests and the build's own test)."""
    return made_once(tmp_path_factory, "site", _build_site)


@pytest.fixture
def served(site):
    """The built site on a loopback port."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def committed_artifact():
    """docs/onnx_support_measured.json, loaded once per worker for the check tests that
    read it (test_check_owner, _models, _targets, _capture): a load costs some two seconds
    of CPU (its derived check rebuilds the whole table), and the artifact is a frozen
    dataclass that those tests copy (dataclasses.replace, dict(...)) rather than change."""
    from opsweep.artifact import data
    return data.load(ROOT / "docs" / "onnx_support_measured.json")

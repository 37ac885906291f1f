"""The catalog ships inside the wheel, so a non-editable install finds it."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_wheel_contains_the_catalog_schema_and_templates(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("opsweep-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"opsweep/data/documented.json", "opsweep/specs/unary.py", "opsweep/specs/excluded.py", "opsweep/schema/artifact.schema.json",
            "opsweep/templates/supported_operators.md.j2", "opsweep/templates/diff.md.j2",
            "opsweep/templates/specs.md.j2", "opsweep/check/report.py",
            "opsweep/cli/check.py"} <= names
    assert sum(n.startswith("opsweep/specs/") for n in names) >= 25


ADOPTER_SPECS = '''"""An adopter's own specs: two operators, through opsweep's public face."""
from opsweep import unary

SPECS = [unary("sin"), unary("neg")]
'''


def _fresh_venv(tmp_path: Path) -> Path:
    """A venv outside the repository holding the wheel built from the checkout, which sees
    the running interpreter's packages (torch is not installed twice) as a plain path:
    their .pth files (an editable opsweep among them) are not run, so only the wheel's
    opsweep is importable."""
    import sysconfig
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(ROOT)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("opsweep-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    purelib = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True)
    Path(purelib.stdout.strip(), "parent-env.pth").write_text(
        "\n".join(dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]))
        + "\n")
    # --ignore-installed: where the parent has opsweep installed as a wheel (tox), pip would
    # otherwise see it through parent-env.pth and install nothing
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", "--ignore-installed", str(wheel)], check=True,
                   capture_output=True)
    return venv


def test_an_installed_wheel_measures_renders_and_diffs_an_empty_project(tmp_path):
    """`pip install` of the wheel, then in a project of its own (catalog none, one spec
    module of two operators, torch pinned in a requirements file, its own layout) the
    main job runs end to end with nothing from opsweep's repository."""
    import torch
    venv = _fresh_venv(tmp_path)
    repo = tmp_path / "adopter"
    (repo / "onnx_specs").mkdir(parents=True)
    (repo / "onnx_specs" / "mine.py").write_text(ADOPTER_SPECS)
    (repo / "requirements-onnx.txt").write_text(f"torch=={torch.__version__.split('+')[0]}\n")
    (repo / "pyproject.toml").write_text('''[project]
name = "adopter"
[tool.opsweep]
version = 1
pins = { requirements = "requirements-onnx.txt" }
catalog = "none"
specs = ["onnx_specs"]
artifact = "site/onnx.json"
pages-dir = "site"
history-dir = "site/history"
data-dir = "site/data"
''')
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path),
           "OPSWEEP_HYP_PROFILE": "ci"}

    def run(*args: str, ok=(0,)) -> subprocess.CompletedProcess:
        done = subprocess.run([str(venv / "bin" / "opsweep"), *args], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode in ok, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        return done

    code = "import opsweep; print(opsweep.__file__)"
    where = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=repo, env=env,
                           capture_output=True, text=True, check=False)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    run("sweep", "--jobs", "0", "--quiet", "--no-dynamic")
    artifact = json.loads((repo / "site" / "onnx.json").read_text())
    assert sorted(artifact["specs"]) == ["neg", "sin"]  # the built-in catalog is off
    done = run("assemble")
    pages = {p.name for p in (repo / "site").glob("*.md")}
    assert {"supported_operators.md", "operators.md", "specs.md", "history.md", "index.md"} <= pages
    page = (repo / "site" / "supported_operators.md").read_text()
    assert 'data-op="sin"' in page and 'data-op="neg"' in page, done.stdout
    # the retired listing's claims come from the copy the wheel ships (the project has none)
    details = (repo / "site" / "operators.md").read_text()
    assert "Documented (retired TorchScript listing): since opset" in details
    assert list((repo / "site" / "history").glob("*.json"))
    assert not (repo / "docs").exists()  # nothing written where opsweep's own layout is
    (repo / "old.json").write_text((repo / "site" / "onnx.json").read_text())
    done = run("diff", "old.json", "site/onnx.json", "--json")
    compared = json.loads(done.stdout)  # the same measurement: no transition at all
    assert compared["transitions"] == [] and set(compared["counts"]) >= {"regression"}
    for step in (["init", "-q"], ["add", "."], ["-c", "user.name=a", "-c", "user.email=a@b.c",
                                                "commit", "-qm", "measured"]):
        subprocess.run(["git", *step], cwd=repo, env=env, check=True, capture_output=True)
    guard = run("bot", "should-run", "--repo-dir", ".")  # the pins read from the requirements file
    assert f"torch {torch.__version__.split('+')[0]}" in guard.stdout

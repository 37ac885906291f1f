"""End to end: the real workflow file under nektos/act, for each trigger.

Jobs run self-hosted on this machine; actions/checkout, upload-artifact and
download-artifact are replaced by local stand-ins (a local bare repository is
the origin); GITHUB_API_URL points at the stateful fake of GitHub's REST API.
Afterwards the fake holds the expected comment and the bare repository the
expected commit. All traffic stays on 127.0.0.1.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from opsweep.bot import MARKER
from opsweep.gitops import TRAILER

from .fake_github import FakeGitHub

ROOT = Path(__file__).resolve().parents[2]
STANDINS = Path(__file__).parent / "standins"
REPO = "octo/demo"
PR = 12
ONLY = "--only sin relu cdist --jobs 0"
PINNED = {  # the remote actions the workflow uses, by the exact ref it pins
    "actions/checkout@08eba0b27e820071cde6df949e0beb9ba4906955": "checkout",
    "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02": "upload-artifact",
    "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093": "download-artifact",
}
pytestmark = pytest.mark.integration



def _require_git():
    from ..conftest import require
    require(shutil.which("git") is not None, "git")


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


IDENT = ["-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]


def _set_pin(tree: Path, pin: str) -> None:
    path = tree / "pyproject.toml"
    text = path.read_text()
    new = re.sub(r'"torch==[^"]+"', f'"torch=={pin}"', text, count=1)
    assert new != text or f'"torch=={pin}"' in text, "the fixture could not move the torch pin"
    path.write_text(new)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A bare origin holding this project at `main` (pin 2.12.0, an artifact measured on
    2.12.0) and a `feature` branch that bumps the pin to the installed 2.13.0."""
    _require_git()
    top = tmp_path_factory.mktemp("e2e")
    tree = top / "work"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tree / name)
    artifact = tree / "docs" / "onnx_support_measured.json"
    artifact.unlink()  # the fixture's own small artifact, measured below
    subprocess.run([sys.executable, "-m", "opsweep.cli", "sweep", *ONLY.split(), "--no-reuse",
                    "--quiet", "--out", str(artifact)], check=True, capture_output=True, cwd=tree)
    data = json.loads(artifact.read_text())
    data["fingerprint"]["torch"] = "2.12.0"
    artifact.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    _set_pin(tree, "2.12.0")
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, *IDENT, "commit", "-qm", "base")
    base = git(tree, "rev-parse", "HEAD")
    git(tree, "checkout", "-q", "-b", "feature")
    _set_pin(tree, "2.13.0")
    git(tree, *IDENT, "commit", "-qam", "Bump torch to 2.13.0")
    head = git(tree, "rev-parse", "HEAD")
    git(tree, "remote", "add", "origin", f"https://github.com/{REPO}.git")  # what act reads
    return {"tree": tree, "base": base, "head": head}


@pytest.fixture
def project(built, tmp_path):
    """A fresh bare origin per test, so one test's bot commit cannot guard another's run."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(built["tree"]), str(origin))
    git(origin, "symbolic-ref", "HEAD", "refs/heads/main")
    return {**built, "origin": origin}


@pytest.fixture
def fake(httpserver, project):
    github = FakeGitHub(httpserver)
    github.add_pull(REPO, PR, ref="feature", sha=project["head"])
    github.repo(REPO).permissions.update({"maintainer": "admin", "reader": "read"})
    return github


def act(project, fake, event_name, payload, tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    cmd = [shutil.which("act") or str(Path(sys.executable).with_name("act")), event_name,
           "-e", str(event), "-W", ".github/workflows/onnx-support.yml",
           "-P", "ubuntu-latest=-self-hosted", "--no-skip-checkout",
           "--artifact-server-addr", "127.0.0.1", "--cache-server-addr", "127.0.0.1",
           "-s", "GITHUB_TOKEN=fake-token",
           "--env", f"GITHUB_API_URL={fake.base}", "--env", f"E2E_ORIGIN={project['origin']}",
           "--env", f"E2E_ARTIFACTS={artifacts}",
           "--var", f"OPSWEEP_PYTHON_ENV={sys.prefix}", "--var", f"OPSWEEP_SWEEP_ARGS={ONLY}"]
    for ref, name in PINNED.items():
        cmd += ["--local-repository", f"{ref}={STANDINS / name}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    result = subprocess.run(cmd, cwd=project["tree"], capture_output=True, text=True,
                            timeout=900, env=env)
    (tmp_path / "act.log").write_text(result.stdout + result.stderr)
    return result


def pull_request_event(project):
    return {"action": "synchronize", "number": PR,
            "pull_request": {"number": PR, "head": {"sha": project["head"], "ref": "feature",
                                                    "repo": {"full_name": REPO}},
                             "base": {"sha": project["base"], "ref": "main"}},
            "repository": {"full_name": REPO}}


def test_pin_bump_pull_request_measures_comments_and_commits(project, fake, tmp_path):
    result = act(project, fake, "pull_request", pull_request_event(project), tmp_path)
    assert result.returncode == 0, (tmp_path / "act.log").read_text()[-6000:]
    (comment,) = [c for c in fake.comments(REPO, PR) if MARKER in c.body]
    assert "torch 2.12.0 → 2.13.0" in comment.body
    log = git(project["origin"], "log", "-1", "--format=%B", "feature")
    assert TRAILER in log
    committed = json.loads(git(project["origin"], "show", "feature:docs/onnx_support_measured.json"))
    assert committed["fingerprint"]["torch"].startswith("2.13.0")
    assert set(committed["specs"]) == {"sin", "relu", "cdist"}
    # the workflow measures the example translation table as a second target
    (target,) = committed["targets"]
    assert target == "examples/custom_translations.py:TABLE"
    assert set(committed["targets"][target]["specs"]) == {"sin", "relu", "cdist"}
    assert "target examples/custom_translations.py:TABLE added" in comment.body
    # the history record of the measured torch, its view, and the comment's link to it
    record = json.loads(git(project["origin"], "show", "feature:docs/history/torch-2.13.0.json"))
    assert set(record["targets"]) == {"stock", target} and set(record["targets"]["stock"]) == {
        "sin", "relu", "cdist"}
    assert "# History across torch versions" in git(project["origin"], "show",
                                                    "feature:docs/history.md")
    assert f"/{REPO}/blob/feature/docs/history.md" in comment.body


def comment_event(body, login):
    return {"action": "created", "issue": {"number": PR, "pull_request": {"url": "x"}},
            "comment": {"id": 0, "body": body, "user": {"login": login, "type": "User"}},
            "repository": {"full_name": REPO}}


def regen_command(project, fake, tmp_path, login):
    """`/regen-onnx` commented by `login`, run through the workflow; the comment."""
    comment = fake.add_comment(REPO, PR, "/regen-onnx", login)
    payload = comment_event("/regen-onnx", login)
    payload["comment"]["id"] = comment.id
    result = act(project, fake, "issue_comment", payload, tmp_path)
    assert result.returncode == 0, (tmp_path / "act.log").read_text()[-6000:]
    return comment


def test_regen_command_from_a_reader_is_refused(project, fake, tmp_path):
    comment = regen_command(project, fake, tmp_path, "reader")
    assert comment.reactions == [("confused", "github-actions[bot]")]
    assert any("has read permission" in c.body for c in fake.comments(REPO, PR))
    assert not any(MARKER in c.body for c in fake.comments(REPO, PR))


def test_regen_command_from_a_maintainer_runs_with_eyes_then_rocket(project, fake, tmp_path):
    comment = regen_command(project, fake, tmp_path, "maintainer")
    assert [r for r, _ in comment.reactions] == ["eyes", "rocket"]
    assert len([c for c in fake.comments(REPO, PR) if MARKER in c.body]) == 1
    assert TRAILER in git(project["origin"], "log", "-1", "--format=%B", "feature")


def test_manual_dispatch_commits_to_the_dispatched_branch(project, fake, tmp_path):
    before = git(project["origin"], "rev-parse", "feature")
    result = act(project, fake, "workflow_dispatch", {"inputs": {"profile": "ci"}}, tmp_path)
    assert result.returncode == 0, (tmp_path / "act.log").read_text()[-6000:]
    assert git(project["origin"], "rev-parse", "feature~1") == before
    assert TRAILER in git(project["origin"], "log", "-1", "--format=%B", "feature")
    assert not [c for c in fake.comments(REPO, PR) if MARKER in c.body]  # no pull request to comment on


def test_the_bot_s_own_commit_does_not_trigger_another_run(project, fake, tmp_path):
    first = act(project, fake, "pull_request", pull_request_event(project), tmp_path)
    assert first.returncode == 0, (tmp_path / "act.log").read_text()[-6000:]
    bot_head = git(project["origin"], "rev-parse", "feature")
    fake.repo(REPO).pulls[PR]["sha"] = bot_head
    again = dict(pull_request_event(project))
    again["pull_request"] = {**again["pull_request"], "head": {"sha": bot_head, "ref": "feature",
                                                               "repo": {"full_name": REPO}}}
    (tmp_path / "second").mkdir()
    second = act(project, fake, "pull_request", again, tmp_path / "second")
    assert second.returncode == 0, (tmp_path / "second" / "act.log").read_text()[-6000:]
    assert "run=false" in (tmp_path / "second" / "act.log").read_text()
    assert git(project["origin"], "rev-parse", "feature") == bot_head

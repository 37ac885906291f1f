"""Commits and pushes against a real local bare repository."""

import shutil
import subprocess

import pytest

from opsweep.bot.git import (
    TRAILER,
    GitError,
    StaleHead,
    commit_and_push,
    head_is_bot,
    token_env,
)


@pytest.fixture(autouse=True)
def _needs_git():
    from ..conftest import require
    require(shutil.which("git") is not None, "git")


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


IDENT = ["-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]


@pytest.fixture
def remote(tmp_path):
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    (seed / "docs").mkdir()
    (seed / "docs" / "a.json").write_text("{}\n")
    git(seed, "add", ".")
    git(seed, *IDENT, "commit", "-qm", "start")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/feature")
    return bare


def clone(remote, where):
    git(remote.parent, "clone", "-q", "-b", "feature", str(remote), str(where))
    return where


def test_commit_push_and_no_change_skip(remote, tmp_path):
    work = clone(remote, tmp_path / "work")
    head = git(work, "rev-parse", "HEAD")
    (work / "docs" / "a.json").write_text('{"v": 1}\n')
    pushed = commit_and_push(work, ["docs/a.json"], "feature", head, "Regenerate ONNX support")
    assert pushed.sha and pushed.attempts == 1
    assert git(remote, "rev-parse", "feature") == pushed.sha
    assert TRAILER in git(remote, "log", "-1", "--format=%B", "feature")
    again = commit_and_push(work, ["docs/a.json"], "feature", pushed.sha, "Regenerate")
    assert again.sha is None and again.reason == "artifact and page unchanged"


def test_a_moved_head_is_rebased_onto_never_forced(remote, tmp_path):
    work = clone(remote, tmp_path / "work")
    head = git(work, "rev-parse", "HEAD")
    other = clone(remote, tmp_path / "other")  # someone pushes meanwhile
    (other / "README").write_text("hello\n")
    git(other, "add", "README")
    git(other, *IDENT, "commit", "-qm", "human change")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/feature")
    human = git(other, "rev-parse", "HEAD")
    (work / "docs" / "a.json").write_text('{"v": 2}\n')
    pushed = commit_and_push(work, ["docs/a.json"], "feature", head, "Regenerate")
    assert pushed.attempts == 2
    log = git(remote, "log", "--format=%H %s", "feature").splitlines()
    assert log[0].startswith(pushed.sha) and log[1].startswith(human)  # on top, nothing lost


def test_conflicting_move_fails_clearly(remote, tmp_path):
    work = clone(remote, tmp_path / "work")
    head = git(work, "rev-parse", "HEAD")
    other = clone(remote, tmp_path / "other")
    (other / "docs" / "a.json").write_text('{"human": true}\n')
    git(other, *IDENT, "commit", "-qam", "human edit of the artifact")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/feature")
    (work / "docs" / "a.json").write_text('{"v": 3}\n')
    with pytest.raises(GitError, match="the new head changed the regenerated files"):
        commit_and_push(work, ["docs/a.json"], "feature", head, "Regenerate")
    assert git(remote, "log", "-1", "--format=%s", "feature") == "human edit of the artifact"


def test_loop_guard_and_measured_head_check(remote, tmp_path):
    work = clone(remote, tmp_path / "work")
    assert not head_is_bot(work)
    head = git(work, "rev-parse", "HEAD")
    (work / "docs" / "a.json").write_text('{"v": 4}\n')
    commit_and_push(work, ["docs/a.json"], "feature", head, "Regenerate")
    assert head_is_bot(work)
    with pytest.raises(GitError, match="is not the measured head"):
        commit_and_push(work, ["docs/a.json"], "feature", head, "Regenerate")


PINNED = '[tool.tox.env.proptest_onnx]\ndeps = ["torch=={}", "hypothesis==6.170.17"]\n'


def test_a_stale_artifact_is_never_rebased_onto_a_new_pin(remote, tmp_path):
    """Reproduces defect 3: the branch is re-pinned while the sweep runs."""
    seed = clone(remote, tmp_path / "seed2")
    (seed / "pyproject.toml").write_text(PINNED.format("2.14.1"))
    git(seed, "add", "pyproject.toml")
    git(seed, *IDENT, "commit", "-qm", "pin torch 2.14.1")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/feature")
    work = clone(remote, tmp_path / "work")
    measured = git(work, "rev-parse", "HEAD")
    other = clone(remote, tmp_path / "other")  # someone bumps the pin during the sweep
    (other / "pyproject.toml").write_text(PINNED.format("2.15.0"))
    git(other, *IDENT, "commit", "-qam", "pin torch 2.15.0")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/feature")
    human = git(other, "rev-parse", "HEAD")
    (work / "docs" / "a.json").write_text('{"torch": "2.14.1"}\n')
    with pytest.raises(StaleHead, match=r"torch 2.14.1 -> 2.15.0.*not committed"):
        commit_and_push(work, ["docs/a.json"], "feature", measured, "Regenerate")
    assert git(remote, "rev-parse", "feature") == human  # nothing of the stale run landed
    assert not head_is_bot(other)  # so the guard lets the new head be measured


def test_the_push_token_reaches_git_only_through_the_environment(remote, tmp_path):
    work = clone(remote, tmp_path / "work")
    head = git(work, "rev-parse", "HEAD")
    env = token_env("s3cret")
    assert env["GIT_CONFIG_KEY_0"] == "http.extraheader"
    assert "s3cret" not in env["GIT_CONFIG_VALUE_0"]  # base64 basic credentials
    assert token_env("") is None
    (work / "docs" / "a.json").write_text('{"v": 5}\n')
    pushed = commit_and_push(work, ["docs/a.json"], "feature", head, "Regenerate", token="s3cret")
    assert git(remote, "rev-parse", "feature") == pushed.sha
    config = (work / ".git" / "config").read_text()
    assert "extraheader" not in config and "s3cret" not in config

"""Commits and pushes against a real local bare repository."""

import os
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


def test_a_site_s_pages_are_committed_as_exactly_their_files(remote, tmp_path, monkeypatch):
    """Hundreds of pages (a site's operators): each lands as the blob of its own file, the
    bytes as they are (no line-ending filter), a source whose path holds a line break among
    them; one git writes the blobs, not one per page (a publish made some 800 before)."""
    import subprocess as sp

    from opsweep.bot import git as botgit
    work = clone(remote, tmp_path / "work")
    head = git(work, "rev-parse", "HEAD")
    (work / ".gitattributes").write_text("*.md text eol=crlf\n")  # a filter is never applied
    sources = tmp_path / "out"
    sources.mkdir()
    files = {}
    for n in range(300):
        source = sources / f"op{n}.md"
        source.write_bytes(f"# op{n}\n".encode() + bytes([n % 256]) * (n % 7))
        files[f"docs/operators/op{n}.md"] = source
    odd = tmp_path / "line\nbreak"
    odd.mkdir()
    (odd / "odd.md").write_bytes(b"odd\r\n")
    files["docs/operators/odd.md"] = odd / "odd.md"
    calls = []
    real = sp.run
    monkeypatch.setattr(botgit.subprocess, "run",
                        lambda args, **kw: calls.append(args[:2]) or real(args, **kw))
    pushed = botgit.commit_files(work, files, "feature", head, "m")
    assert pushed.sha
    listed = git(remote, "ls-tree", "-r", pushed.sha, "docs/operators").splitlines()
    blobs = {line.split("\t", 1)[1]: line.split()[2] for line in listed}
    assert set(blobs) == set(files)
    for path, source in files.items():
        assert sp.run(["git", "cat-file", "blob", blobs[path]], cwd=remote, check=True,
                      capture_output=True).stdout == source.read_bytes(), path
    assert calls.count(["git", "hash-object"]) == 2  # the batch, and the path it cannot read


def test_stale_pages_are_told_by_their_first_4096_characters(remote, tmp_path):
    """A page is rendered when the mark is in its first 4096 characters (of any width);
    past them, in a page that is not UTF-8, or under a name that is not, the page is the
    writer's and stays."""
    from opsweep.bot.git import stale_pages
    from opsweep.files import RENDERED_MARK
    work = clone(remote, tmp_path / "work")
    pages = work / "docs" / "operators"
    pages.mkdir()
    (pages / "wide.md").write_text("é" * 4000 + RENDERED_MARK)  # 8,000 bytes, 4,000 characters
    (pages / "late.md").write_text("x" * 4096 + RENDERED_MARK)
    (pages / "latin1.md").write_bytes(b"\xe9t\xe9\n")
    (pages / "plain.md").write_text(RENDERED_MARK)
    (pages / "kept.md").write_text(RENDERED_MARK)
    (pages / "sub.md").mkdir()
    (pages / "sub.md" / "x.md").write_text(RENDERED_MARK)
    (pages / os.fsdecode(b"caf\xe9.md")).write_text(RENDERED_MARK)  # a name that is not UTF-8
    git(work, "add", ".")
    git(work, *IDENT, "commit", "-qm", "pages")
    found = stale_pages(work, git(work, "rev-parse", "HEAD"), ["docs/operators", "docs/none"],
                        ["docs/operators/kept.md"])
    assert sorted(found) == ["docs/operators/plain.md", "docs/operators/wide.md"]

"""Committing the regenerated artifact and page back to a pull request's branch.

Real git, never force: the commit is made on top of the head SHA that was
measured, from objects alone (`hash-object -w`, a private index, `commit-tree`):
nothing is written through the checkout, and a destination that is a symbolic
link in the head (or a folder above it is), or lies outside the checkout, is
refused. If the branch moved meanwhile, the push is rejected, the bot fetches
and makes its one commit again on the new head -- but only when the new head
pins the same packages as the measured one and did not touch the regenerated
files. A push the remote refuses for another reason (a protected branch) is
`PushRefused`. When a watched pin moved (someone pushed a
new torch pin during the sweep), the artifact describes the old pin: the
commit is refused with `StaleHead`, and the new head gets its own run.
Its commits carry a trailer, so a workflow triggered by the bot's own push
does nothing.

The push token is handed to git alone, through GIT_CONFIG_* environment
variables (never argv, never the checkout's config), as the HTTP
Authorization header.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from opsweep.bot.pins import pins_at
from opsweep.config import PinSource
from opsweep.errors import OpsweepError
from opsweep.files import RENDERED_MARK

TRAILER = "Opsweep-Regenerated: true"
BOT_NAME = "opsweep-bot"
BOT_EMAIL = "opsweep-bot@users.noreply.invalid"


class GitError(OpsweepError):
    pass


class StaleHead(GitError):
    """The branch moved to a head whose watched pins differ from the measured ones."""


class PushRefused(GitError):
    """The remote refused the push for another reason than a moved branch (a protected
    branch, a hook): the run must fail, not end green with nothing committed."""


def token_env(token: str | None) -> Mapping[str, str] | None:
    """git's environment with `token` as HTTP basic credentials, or None (no token)."""
    if not token:
        return None
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {**os.environ, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraheader",
            "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}", "GIT_TERMINAL_PROMPT": "0"}


def git(repo: Path, *args: str, check: bool = True,
        env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                            env=dict(env) if env is not None else None, check=False)
    if check and result.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result


def head_is_bot(repo: Path) -> bool:
    """The loop guard: is the checked-out head commit one the bot made?"""
    message = git(repo, "log", "-1", "--format=%B").stdout
    return TRAILER in message


@dataclass(frozen=True)
class Pushed:
    sha: str | None  # None: nothing to commit
    attempts: int
    reason: str


def _check_pins(repo: Path, measured: str, moved_to: str, pyproject: str,
                source: PinSource | None = None) -> None:
    before = pins_at(measured, pyproject, repo, source)
    after = pins_at(moved_to, pyproject, repo, source)
    if before != after:
        moves = ", ".join(f"{n} {before.get(n, 'unpinned')} -> {after.get(n, 'unpinned')}"
                          for n in sorted(set(before) | set(after)) if before.get(n) != after.get(n))
        raise StaleHead(f"the branch moved to {moved_to[:12]} and its pins moved ({moves}): the "
                        f"files measured at {measured[:12]} are stale and were not committed; "
                        "the new head is measured by its own run")


def _checked(path: str) -> str:
    """`path` as a repository path, or GitError when it could leave the checkout."""
    parts = path.split("/")
    if (not path or path.startswith("/") or "\\" in path or "\0" in path
            or any(p in ("", ".", "..") for p in parts) or parts[0].lower() == ".git"):
        raise GitError(f"{path!r} is not a path inside the checkout: nothing was committed")
    return path


def refuse_links(repo: Path, tree: str, paths: Sequence[str]) -> None:
    """No destination, nor a folder above one, may be a symbolic link (or a file) in
    `tree`: its content would land elsewhere than the path says."""
    prefixes = sorted({"/".join(p.split("/")[:i]) for p in paths
                       for i in range(1, p.count("/") + 2)})
    listed = git(repo, "ls-tree", "-z", tree, "--", *prefixes).stdout
    for entry in filter(None, listed.split("\0")):
        mode, name = entry.split(" ", 1)[0], entry.split("\t", 1)[1]
        if mode == "120000":
            raise GitError(f"{name} is a symbolic link in the head {tree[:12]}: the bot writes no "
                           "file through a link, so nothing was committed (commit a regular "
                           "file there, or remove it)")
        if mode != "040000" and any(p.startswith(name + "/") for p in paths):
            raise GitError(f"{name} is a file in the head {tree[:12]}, not a folder: nothing "
                           "was committed")


def _build(repo: Path, parent: str, blobs: Mapping[str, str], message: str,
           removed: Sequence[str] = ()) -> str | None:
    """A commit of `blobs` (path -> blob id) on top of `parent`, without the files at
    `removed`, made from objects alone: no working tree, no checkout index is written. None
    when the tree would not change."""
    refuse_links(repo, parent, list(blobs))
    index = Path(git(repo, "rev-parse", "--absolute-git-dir").stdout.strip(), "opsweep-index")
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    try:
        git(repo, "read-tree", parent, env=env)
        info = "".join(f"100644 {blob}\t{path}\n" for path, blob in sorted(blobs.items()))
        subprocess.run(["git", "update-index", "--index-info"], cwd=repo, input=info,
                       text=True, env=env, check=True, capture_output=True)
        if removed:
            subprocess.run(["git", "update-index", "--force-remove", "--", *removed], cwd=repo,
                           env=env, check=True, capture_output=True, text=True)
        tree = git(repo, "write-tree", env=env).stdout.strip()
    except subprocess.CalledProcessError as exc:
        raise GitError(f"git update-index failed: {exc.stderr.strip()}") from None
    finally:
        index.unlink(missing_ok=True)
    if tree == git(repo, "rev-parse", f"{parent}^{{tree}}").stdout.strip():
        return None
    ident = {**os.environ, "GIT_AUTHOR_NAME": BOT_NAME, "GIT_AUTHOR_EMAIL": BOT_EMAIL,
             "GIT_COMMITTER_NAME": BOT_NAME, "GIT_COMMITTER_EMAIL": BOT_EMAIL}
    return git(repo, "commit-tree", tree, "-p", parent, "-m", f"{message}\n\n{TRAILER}",
               env=ident).stdout.strip()


def _non_fast_forward(stderr: str) -> bool:
    """The branch moved (retry on top of it); a `remote rejected` (a protected branch, a
    hook) is a refusal that no retry changes."""
    return "remote rejected" not in stderr and (
        "non-fast-forward" in stderr or "fetch first" in stderr or "[rejected]" in stderr)


def commit_files(repo: Path, files: Mapping[str, Path], branch: str, expected_head: str,
                 message: str, remote: str = "origin", attempts: int = 3, *,
                 token: str | None = None, pyproject: str = "pyproject.toml",
                 pins: PinSource | None = None, prune: Sequence[str] = ()) -> Pushed:
    """Commit `files` (repository path -> the file holding its new content) on top of the
    measured head and push, never forcing; a rendered page (one carrying the renderer's mark)
    directly in one of the `prune` directories that `files` does not hold is removed (an
    operator's page whose operator is gone). The commit is built from blobs
    (`git hash-object -w`, a private index, `commit-tree`), so nothing is written through
    the checkout; a destination that is a link, or outside the checkout, is refused."""
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    if head != expected_head:
        raise GitError(f"checked-out HEAD {head[:12]} is not the measured head {expected_head[:12]}")
    blobs = _blobs(repo, {_checked(path): source for path, source in files.items()})
    removed = stale_pages(repo, head, prune, blobs)
    commit = _build(repo, head, blobs, message, removed)
    if commit is None:
        return Pushed(None, 0, "artifact and page unchanged")
    env = token_env(token)
    for attempt in range(1, attempts + 1):
        pushed = git(repo, "push", remote, f"{commit}:refs/heads/{branch}", check=False, env=env)
        if pushed.returncode == 0:  # HEAD and the index follow; no file of the checkout is
            git(repo, "update-ref", "-m", "opsweep: regenerated", "HEAD", commit)  # touched
            git(repo, "read-tree", "HEAD")
            return Pushed(commit, attempt, "pushed")
        if not _non_fast_forward(pushed.stderr):
            raise PushRefused(f"the push to {branch} was refused, so nothing was committed: "
                              f"{pushed.stderr.strip()}")
        git(repo, "fetch", "-q", remote, branch, env=env)
        moved_to = git(repo, "rev-parse", "FETCH_HEAD").stdout.strip()
        _check_pins(repo, expected_head, moved_to, pyproject, pins)
        touched = git(repo, "diff", "--name-only", expected_head, moved_to, "--",
                      *blobs, *removed).stdout.split()
        if touched:
            raise GitError("the branch moved and the new head changed the regenerated files "
                           f"({', '.join(touched)}): nothing was committed")
        commit = _build(repo, moved_to, blobs, message, removed)
        if commit is None:
            return Pushed(None, attempt, "artifact and page unchanged")
    raise GitError(f"push to {branch} still rejected after {attempts} attempts")


def _batch(repo: Path, args: Sequence[str], lines: Sequence[str]) -> bytes:
    """What one git command that reads a line per item on its standard input prints for
    `lines` (one process for all of them, however many: a site's pages are hundreds)."""
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False,
                            input=b"".join(os.fsencode(line) + b"\n" for line in lines))
    if result.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: "
                       f"{result.stderr.decode(errors='replace').strip()}")
    return result.stdout


def _blobs(repo: Path, files: Mapping[str, Path]) -> dict[str, str]:
    """Each file's content written as a blob (`hash-object -w`, as is: no filters), by
    repository path: one git for all of them. A source whose path holds a line break
    (which `--stdin-paths` cannot read) is hashed on its own."""
    sources = {path: str(Path(source).resolve()) for path, source in files.items()}
    listed = [path for path, source in sources.items() if "\n" not in source]
    ids = _batch(repo, ["hash-object", "-w", "--no-filters", "--stdin-paths"],
                 [sources[path] for path in listed]).decode().split() if listed else []
    if len(ids) != len(listed):
        raise GitError(f"git hash-object named {len(ids)} blobs for {len(listed)} files")
    blobs = dict(zip(listed, ids))
    for path, source in sources.items():
        if path not in blobs:
            blobs[path] = git(repo, "hash-object", "-w", "--no-filters", "--",
                              source).stdout.strip()
    return {path: blobs[path] for path in files}


def _heads(repo: Path, blobs: Sequence[str], size: int) -> list[str]:
    """The first `size` characters of each blob's text, "" for one git cannot find
    (`cat-file --batch`: one git for all)."""
    out = _batch(repo, ["cat-file", "--batch"], blobs)
    heads, at = [], 0
    for _ in blobs:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) < 3:  # "<id> missing"
            heads.append("")
            at = end + 1
            continue
        length = int(header[2])
        text = out[end + 1:end + 1 + min(length, 4 * size)]  # UTF-8: at most 4 bytes a character
        heads.append(text.decode(errors="replace")[:size])
        at = end + 1 + length + 1  # the content, then its line break
    return heads


def stale_pages(repo: Path, commit: str, directories: Sequence[str],
                kept: Collection[str]) -> list[str]:
    """The rendered pages directly in `directories` at `commit` that `kept` does not hold:
    only ``.md`` files carrying the renderer's mark (a hand-written page is never one)."""
    candidates: dict[str, str] = {}  # path -> blob
    for directory in directories:
        listed = subprocess.run(["git", "ls-tree", "-z", f"{commit}:{directory}"], cwd=repo,
                                capture_output=True, check=False)
        for entry in filter(None, listed.stdout.split(b"\0")) if listed.returncode == 0 else ():
            meta, raw = entry.split(b"\t", 1)
            try:  # a rendered page is named after its operator: a name that is not UTF-8 is not one
                name = raw.decode()
            except UnicodeDecodeError:
                continue
            kind, blob = meta.decode().split()[1:3]
            path = f"{directory}/{name}"
            if kind == "blob" and name.endswith(".md") and path not in kept:
                candidates[path] = blob
    heads = _heads(repo, list(candidates.values()), 4096) if candidates else []
    return [path for path, head in zip(candidates, heads) if RENDERED_MARK in head]


def commit_and_push(repo: Path, paths: Sequence[str], branch: str, expected_head: str,
                    message: str, remote: str = "origin", attempts: int = 3, *,
                    token: str | None = None, pyproject: str = "pyproject.toml") -> Pushed:
    """`commit_files` of the checkout's own files at `paths` (files, or folders whose
    files are taken; a link among them is refused)."""
    files: dict[str, Path] = {}
    for path in paths:
        where = Path(repo, path)
        if where.is_symlink():
            raise GitError(f"{path} is a symbolic link in the checkout: nothing was committed")
        found = sorted(p for p in where.rglob("*") if p.is_file()) if where.is_dir() else [where]
        for file in found:
            files[file.relative_to(repo).as_posix()] = file
    return commit_files(repo, files, branch, expected_head, message, remote, attempts,
                        token=token, pyproject=pyproject)

"""Committing the regenerated artifact and page back to a pull request's branch.

Real git, never force: the commit is made on top of the head SHA that was
measured; if the branch moved meanwhile, the push is rejected, the bot
fetches, rebases its one commit, and tries again. Its commits carry a
trailer, so a workflow triggered by the bot's own push does nothing.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import OpsweepError

TRAILER = "Opsweep-Regenerated: true"
BOT_NAME = "opsweep-bot"
BOT_EMAIL = "opsweep-bot@users.noreply.invalid"


class GitError(OpsweepError):
    pass


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
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


def commit_and_push(repo: Path, paths: Sequence[str], branch: str, expected_head: str,
                    message: str, remote: str = "origin", attempts: int = 3) -> Pushed:
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    if head != expected_head:
        raise GitError(f"checked-out HEAD {head[:12]} is not the measured head {expected_head[:12]}")
    git(repo, "add", "--", *paths)
    if git(repo, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return Pushed(None, 0, "artifact and page unchanged")
    git(repo, "-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}", "commit", "-q",
        "-m", f"{message}\n\n{TRAILER}")
    for attempt in range(1, attempts + 1):
        pushed = git(repo, "push", remote, f"HEAD:refs/heads/{branch}", check=False)
        if pushed.returncode == 0:
            return Pushed(git(repo, "rev-parse", "HEAD").stdout.strip(), attempt, "pushed")
        if "non-fast-forward" not in pushed.stderr and "fetch first" not in pushed.stderr \
                and "rejected" not in pushed.stderr:
            raise GitError(f"git push failed: {pushed.stderr.strip()}")
        git(repo, "fetch", "-q", remote, branch)
        rebased = git(repo, "-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}",
                      "rebase", "-q", "FETCH_HEAD", check=False)
        if rebased.returncode != 0:
            git(repo, "rebase", "--abort", check=False)
            raise GitError("the branch moved and the regenerated files no longer rebase "
                           f"cleanly onto it: {rebased.stderr.strip()}")
    raise GitError(f"push to {branch} still rejected after {attempts} attempts")

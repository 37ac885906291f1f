"""Committing the regenerated artifact and page back to a pull request's branch.

Real git, never force: the commit is made on top of the head SHA that was
measured; if the branch moved meanwhile, the push is rejected, the bot
fetches and rebases its one commit -- but only when the new head pins the
same packages as the measured one. When a watched pin moved (someone pushed a
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from opsweep.bot.pins import pins_at
from opsweep.errors import OpsweepError

TRAILER = "Opsweep-Regenerated: true"
BOT_NAME = "opsweep-bot"
BOT_EMAIL = "opsweep-bot@users.noreply.invalid"


class GitError(OpsweepError):
    pass


class StaleHead(GitError):
    """The branch moved to a head whose watched pins differ from the measured ones."""


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


def _check_pins(repo: Path, measured: str, moved_to: str, pyproject: str) -> None:
    before, after = pins_at(measured, pyproject, repo), pins_at(moved_to, pyproject, repo)
    if before != after:
        moves = ", ".join(f"{n} {before.get(n, 'unpinned')} -> {after.get(n, 'unpinned')}"
                          for n in sorted(set(before) | set(after)) if before.get(n) != after.get(n))
        raise StaleHead(f"the branch moved to {moved_to[:12]} and its pins moved ({moves}): the "
                        f"files measured at {measured[:12]} are stale and were not committed; "
                        "the new head is measured by its own run")


def commit_and_push(repo: Path, paths: Sequence[str], branch: str, expected_head: str,
                    message: str, remote: str = "origin", attempts: int = 3, *,
                    token: str | None = None, pyproject: str = "pyproject.toml") -> Pushed:
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    if head != expected_head:
        raise GitError(f"checked-out HEAD {head[:12]} is not the measured head {expected_head[:12]}")
    git(repo, "add", "--", *paths)
    if git(repo, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return Pushed(None, 0, "artifact and page unchanged")
    git(repo, "-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}", "commit", "-q",
        "-m", f"{message}\n\n{TRAILER}")
    env = token_env(token)
    for attempt in range(1, attempts + 1):
        pushed = git(repo, "push", remote, f"HEAD:refs/heads/{branch}", check=False, env=env)
        if pushed.returncode == 0:
            return Pushed(git(repo, "rev-parse", "HEAD").stdout.strip(), attempt, "pushed")
        if "non-fast-forward" not in pushed.stderr and "fetch first" not in pushed.stderr \
                and "rejected" not in pushed.stderr:
            raise GitError(f"git push failed: {pushed.stderr.strip()}")
        git(repo, "fetch", "-q", remote, branch, env=env)
        moved_to = git(repo, "rev-parse", "FETCH_HEAD").stdout.strip()
        _check_pins(repo, expected_head, moved_to, pyproject)
        rebased = git(repo, "-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}",
                      "rebase", "-q", "FETCH_HEAD", check=False)
        if rebased.returncode != 0:
            git(repo, "rebase", "--abort", check=False)
            raise GitError("the branch moved and the regenerated files no longer rebase "
                           f"cleanly onto it: {rebased.stderr.strip()}")
    raise GitError(f"push to {branch} still rejected after {attempts} attempts")

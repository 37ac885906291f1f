"""What the bot's command-line steps share (cli.bot, cli.botbump and cli.steps): the step
outputs, the API client, the measuring run's request file and the loop guard."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from opsweep.artifact import data as art
from opsweep.bot.git import head_is_bot
from opsweep.bot.github import client
from opsweep.bot.pins import fingerprint_mismatches, read_pins
from opsweep.cli import actions, settings
from opsweep.cli.invocation import Invocation
from opsweep.errors import OpsweepError, UsageError
from opsweep.files import write_atomic


def outputs(invocation: Invocation, **values: object) -> None:
    """`key=value` lines on stdout, and appended to $GITHUB_OUTPUT when it is set."""
    sys.stdout.write(actions.write_outputs(values, invocation.settings.output))


def client_of(invocation: Invocation):
    """The API client of the step's token and API address; no token is a usage error."""
    if not invocation.settings.token:
        raise UsageError("GITHUB_TOKEN is not set")
    return client(invocation.settings.token, invocation.settings.api_url,
                  invocation.settings.paced)


def write_request(path: Path, event: str, pr: int, sha: str, profile: str, comment: int) -> None:
    data = {"event": event, "pr": int(pr or 0), "sha": sha, "profile": profile,
            "comment_id": int(comment or 0)}
    write_atomic(path, (json.dumps(data, sort_keys=True) + "\n").encode("utf-8"))


def should_run(repo_dir: Path, profile: str, artifact: str = "",
               pyproject: str = "") -> tuple[bool, str]:
    """(whether the checkout at `repo_dir` needs measuring at `profile`, why)."""
    layout = settings.layout(repo_dir)
    source = replace(layout.pins, pyproject=pyproject or layout.pyproject)
    pins_file = Path(repo_dir, source.file)
    if not pins_file.is_file():
        raise UsageError(f"{pins_file}: no such file (the pins [tool.opsweep] pins names)")
    pins = read_pins(pins_file.read_text("utf-8"), str(pins_file), source)
    path = Path(repo_dir, artifact or layout.artifact)
    bot = " (the head is the bot's commit)" if head_is_bot(repo_dir) else ""
    if path.exists() and "torch" in pins:
        try:
            current = art.load(path)
        except OpsweepError as exc:
            return True, f"committed artifact unreadable ({exc})"
        stale = fingerprint_mismatches(current.fingerprint, pins)
        if not stale and current.profile in (profile, "nightly"):
            return False, (f"artifact already measured torch {pins['torch']} at "
                           f"{current.profile}{bot}")
        if stale:
            return True, "; ".join(stale) + bot
    return True, f"torch pin {pins.get('torch', 'none')}, profile {profile}"

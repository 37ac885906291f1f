"""GitHub Actions I/O, in one place: the environment a run is given (token, API and
server addresses, repository, push token), step outputs ($GITHUB_OUTPUT) and the job
summary ($GITHUB_STEP_SUMMARY). Outside Actions every one of them is simply absent."""

from __future__ import annotations

import os

DEFAULT_API = "https://api.github.com"
DEFAULT_SERVER = "https://github.com"


def token() -> str:
    return os.environ.get("GITHUB_TOKEN", "")


def api_url() -> str:
    return os.environ.get("GITHUB_API_URL", DEFAULT_API)


def server_url() -> str:
    return os.environ.get("GITHUB_SERVER_URL", DEFAULT_SERVER).rstrip("/")


def repository() -> str:
    return os.environ.get("GITHUB_REPOSITORY", "")


def push_token() -> str | None:
    """The token the push alone uses (a GitHub App's, so the new head's checks run)."""
    return os.environ.get("OPSWEEP_PUSH_TOKEN") or None


def bot_login() -> str:
    return os.environ.get("OPSWEEP_BOT_LOGIN", "")


def summary_path() -> str | None:
    return os.environ.get("GITHUB_STEP_SUMMARY") or None


def append_summary(text: str, path: str | None = None) -> None:
    """Append to the job summary (no-op outside Actions)."""
    path = path or summary_path()
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def output_lines(values: dict[str, object]) -> str:
    return "".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}\n"
                   for k, v in values.items())


def write_outputs(values: dict[str, object], target: str | None = None) -> str:
    """Append `key=value` lines to `target` (default $GITHUB_OUTPUT); return them."""
    lines = output_lines(values)
    target = target if target is not None else os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(lines)
    return lines

"""The one check a maintainer requires: the commit status `onnx-support`.

Only the privileged onnx-publish (default-branch code, after the measuring run ended)
reports it, on the head that was measured and on the bot's own commit: success when
nothing needed measuring or the measurement was published, failure when it failed, was
cancelled, or the pin set breaks the exporter. A head nobody measured has no status, so
branch protection keeps it from merging ("expected"): a bump cannot merge green without
its measurement. The bot's own commit gets the status from the run that made it,
because a push with GITHUB_TOKEN starts no workflow run that could report it.

Also: the bot's pull request for the default branch, when a merge moved a pin without
the regenerated files (:func:`regen_pull`).
"""

from __future__ import annotations

from opsweep.bot.bump import create_pull

CONTEXT = "onnx-support"
#: outcome -> (state, description); GitHub cuts a description at 140 characters
OUTCOMES = {
    "done": ("success", "measured; the grade transitions are on the pull request"),
    "nothing": ("success", "nothing needs measuring: the artifact describes these pins"),
    "failed": ("failure", "the measurement failed or could not be published: see the run"),
    "broken": ("failure", "this pin set breaks the exporter: no operator could be measured"),
    "cancelled": ("failure", "the measurement was cancelled: push, or comment /regen-onnx"),
}


def report(gh, repo_name: str, shas: list[str], outcome: str, url: str = "") -> list[str]:
    """Set the `onnx-support` status on every SHA (each once); returns the SHAs set."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {sorted(OUTCOMES)}, got {outcome!r}")
    state, description = OUTCOMES[outcome]
    repo = gh.get_repo(repo_name)
    done: list[str] = []
    for sha in dict.fromkeys(s for s in shas if s):
        extra = {"target_url": url} if url.startswith("https://") else {}
        repo.get_commit(sha).create_status(state, description=description, context=CONTEXT,
                                           **extra)
        done.append(sha)
    return done


def regen_pull(gh, repo_name: str, branch: str, base: str, measured: str, committed: str,
               event: str = "push") -> int:
    """Open the bot's pull request carrying the regenerated files for `base` (the default
    branch, measured at `measured` after a push or a dispatch); returns its number."""
    title = f"Regenerate measured ONNX support for {base} at {measured[:12]}"
    why = (f"A dispatch measured `{base}`" if event == "workflow_dispatch" else
           f"A merge into `{base}` moved a watched pin without the regenerated files")
    body = (f"{why}: `{base}` was re-measured at `{measured}`, and `{committed[:12]}` commits "
            "the artifact, the pages and the history record that describe its pins (the bot "
            "never pushes to the default branch itself).\n")
    return create_pull(gh.get_repo(repo_name), title=title, body=body, head=branch,
                       base=base).number

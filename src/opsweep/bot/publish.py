"""The privileged half of the bot (GitHub Security Lab's split): it runs the
default branch's code in a `workflow_run` job, after the unprivileged
measuring run finished, and takes everything that run produced as data.

* :func:`resolve` decides what may be published from what GitHub itself says:
  the `workflow_run` payload (event, head SHA, head repository) and the API
  (the open pull request with that head -- the payload's `pull_requests` is
  empty for forks -- and, for `/regen-onnx`, the command comment re-read,
  re-parsed and re-authorised; for a push or a dispatch, that a BRANCH of the
  run's `head_branch` has its head as tip, since a tag's run names the tag
  there), and refuses a run of another workflow file than opsweep's (any file
  may take the name onnx-measure). It never targets the default branch: a run
  of it goes to a bot branch and the bot's pull request. The run's
  `request.json` is only a pointer that is checked against those. A command
  run is bound to its command by its `display_title` (onnx-command's run-name,
  from the event's numeric fields): a request naming another pull request or
  comment is `Forged`.
* :func:`collect` accepts only the expected files of the measured result
  (the artifact, the page, the history record and view, the doc-link cache),
  regular files under a size cap; the artifact and history records must load.
* :func:`publish` refuses a partial artifact and one whose fingerprint is not
  the head's pins, commits only to a branch of this repository (never a
  fork's), building the commit from blobs (nothing is written through the
  checkout; a destination that is a link is `CommitFailed`), pushing with the
  push token alone, and comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from opsweep.artifact import data as art
from opsweep.artifact import checked
from opsweep.artifact import models_diff, models_history
from opsweep.artifact import records as history
from opsweep.artifact.account import ACCOUNT_FILE, Account
from opsweep.artifact.diff import diff
from opsweep.artifact.shard import partial_reason
from opsweep.bot.check import regen_pull
from opsweep.bot.comment import (
    GITHUB_COMMENT_LIMIT,
    models_first_markdown,
    models_gone_markdown,
    models_markdown,
    to_json,
    to_markdown,
)
from opsweep.bot.git import GitError, StaleHead, commit_files, refuse_links
from opsweep.bot.github import (
    PROFILES,
    authorize,
    bind,
    branch_tip,
    parse_command,
    pull_for_head,
    upsert_comment,
)
from opsweep.bot.pins import fingerprint_mismatches, pins_at
from opsweep.errors import OpsweepError, UsageError
from opsweep.files import Layout

MAX_FILE_BYTES = 32 * 1024 * 1024
NO_CHANGE = ("No change: every measurement equals the committed artifact's, so the artifact, "
             "the page and the history record are left as they are.")
#: what the comment keeps free for the note on committing, after the models section
NOTE_ROOM = 1_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,120}$")


class Refused(OpsweepError):
    """The measured result may not be published (the reason is for the comment)."""


class CommitFailed(Refused):
    """Committing was attempted and refused (a link at a destination, a protected branch):
    the run fails, so a green run always means the files were committed or need not be."""


#: onnx-command's `run-name`, from the comment event's numeric fields alone: GitHub
#: reports it as the `workflow_run`'s `display_title`, which no job of the run can change.
RUN_NAME = re.compile(r"^/regen-onnx #([1-9][0-9]{0,9}) comment ([1-9][0-9]{0,19})$")


class Forged(UsageError):
    """The run's request.json names another command than the one that started the run."""

    def __init__(self, message: str, pr: int, comment_id: int) -> None:
        super().__init__(message)
        self.pr, self.comment_id = pr, comment_id


def run_binding(run: dict[str, Any]) -> tuple[int, int]:
    """(pull request, comment id) of the `/regen-onnx` that started an onnx-command run,
    from the run's `display_title` (onnx-command's `run-name`)."""
    title = str(run.get("display_title") or "")
    match = RUN_NAME.match(title)
    if not match:
        raise UsageError(f"workflow_run.display_title {title[:80]!r} is not onnx-command's "
                         "run-name `/regen-onnx #PR comment ID`: the run cannot be bound to the "
                         "command that started it, so nothing is published")
    return int(match.group(1)), int(match.group(2))


def allowed(layout: Layout, relative: str) -> bool:
    """Whether a measured result may hold the file `relative`: the artifact, a page, a
    history record (the models' too) or a documentation-link cache file, by name."""
    parent, _, name = relative.rpartition("/")
    if not _NAME.match(name) or ".." in name:
        return False
    if relative in (layout.artifact, layout.models) or relative in layout.pages:
        return True
    if parent in layout.page_dirs:  # an operator's page, a spec file's page, their index
        return name.endswith(".md")
    if parent in (layout.history_dir, layout.models_history):
        return name.startswith("torch-") and name.endswith(".json")
    return parent == layout.data_dir and name.startswith("doc-links-") and name.endswith(".json")


@dataclass(frozen=True)
class Target:
    """What the run measured and where its result may go."""
    event: str
    sha: str
    branch: str
    head_repo: str
    same_repo: bool
    pr: int = 0
    profile: str = "ci"
    comment_id: int = 0
    refused: str = ""  # why nothing may be committed ("" = allowed)
    base: str = ""  # for a run of the default branch: that branch (the bot PR's base)


def collect(result: Path, layout: Layout) -> dict[str, Path]:
    """The result's files by repository path; anything else in `result` is an error."""
    files: dict[str, Path] = {}
    for path in sorted(Path(result).rglob("*")):
        relative = path.relative_to(result).as_posix()
        if path.is_symlink() or (not path.is_file() and not path.is_dir()):
            raise UsageError(f"{relative}: not a regular file in the measured result")
        if path.is_dir() or relative == ACCOUNT_FILE:  # the account: read apart, as data
            continue
        if not allowed(layout, relative):
            raise UsageError(f"{relative}: not a file the measured result may carry")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise UsageError(f"{relative}: exceeds the {MAX_FILE_BYTES}-byte cap")
        files[relative] = path
    if layout.artifact not in files:
        raise UsageError(f"the measured result has no {layout.artifact}")
    art.load(files[layout.artifact])
    if layout.models in files:
        checked.load(files[layout.models])
    for relative, path in files.items():
        if relative.startswith(layout.models_history + "/"):
            models_history.load(path)
        elif relative.startswith(layout.history_dir + "/"):
            history.load(path)
    return files


def _pull_target(gh, repo: str, run: dict[str, Any]) -> Target:
    sha, head_repo = run["head_sha"], (run.get("head_repository") or {}).get("full_name", "")
    pull = pull_for_head(gh, repo, sha, head_repo)
    if pull is None:
        return Target("pull_request", sha, run.get("head_branch", ""), head_repo,
                      head_repo == repo, refused=f"no open pull request has head {sha[:12]} "
                      "any more (it moved or closed); the new head is measured by its own run")
    return Target("pull_request", sha, pull.head.ref, head_repo, head_repo == repo, pull.number)


def _command_target(gh, repo: str, run: dict[str, Any], request: dict[str, Any],
                    bot: str) -> Target:
    number, comment_id = run_binding(run)
    named = (int(request.get("pr") or 0), int(request.get("comment_id") or 0))
    if named != (number, comment_id):
        raise Forged(f"request.json names pull request #{named[0]} and comment {named[1]}, but "
                     f"this run was started by comment {comment_id} on pull request #{number} "
                     "(the run's name says so, which no job of the run can change): the request "
                     "is forged or stale, and nothing is published", number, comment_id)
    measured = str(request.get("sha") or "")
    comment = gh.get_repo(repo).get_issue(number).get_comment(comment_id)
    if not (comment.issue_url or "").endswith(f"/issues/{number}"):
        raise UsageError(f"comment {comment_id} is not on pull request #{number}")
    event = {"action": "created", "issue": {"number": number, "pull_request": {"url": ""}},
             "comment": {"id": comment_id, "body": comment.body,
                         "user": {"login": comment.user.login, "type": comment.user.type}}}
    command = parse_command(event, bot)
    if command is None or not command.accepted:
        raise UsageError(f"comment {comment_id} is not an accepted /regen-onnx command")
    command = authorize(gh, repo, event, command)
    if not command.accepted:
        raise UsageError(f"comment {comment_id} is not an accepted /regen-onnx command: "
                         f"{command.reason}")
    command = bind(gh, repo, command)
    base = Target("issue_comment", measured, command.head_ref, command.head_repo,
                  command.head_repo == repo, number, command.profile, comment_id)
    if not command.accepted:
        return _with(base, command.reason)
    if command.sha != measured:
        return _with(base, f"the head moved during the sweep (measured {measured[:12]}, the head "
                     f"is now {command.sha[:12]}); comment /regen-onnx again to measure it")
    return base


def _with(target: Target, refused: str) -> Target:
    return replace(target, refused=refused)


#: the workflow files whose runs are published: a `workflow_run` names its source by the
#: workflow's `name:` only, which any workflow file of any branch or tag may take
MEASURE_WORKFLOW = ".github/workflows/onnx-measure.yml"
COMMAND_WORKFLOW = ".github/workflows/onnx-command.yml"


def check_workflow(run: dict[str, Any]) -> None:
    """Refuse a run of another workflow file than the one its event comes from (opsweep's
    and `opsweep init`'s file names): the payload's `path`, which the run cannot choose."""
    expected = COMMAND_WORKFLOW if run.get("event") == "issue_comment" else MEASURE_WORKFLOW
    path = str(run.get("path") or "")
    if path.split("@", 1)[0] != expected:
        raise UsageError(f"workflow_run.path {path[:120]!r} is not {expected!r}: a run of "
                         "another workflow file that took the name of opsweep's is never "
                         "published")


def resolve(gh, repo: str, run: dict[str, Any], request: dict[str, Any], bot: str) -> Target:
    """The target of a finished measuring run, from the `workflow_run` payload; never the
    default branch itself (a run of the default branch goes to a bot branch, proposed as
    the bot's pull request)."""
    check_workflow(run)
    event = run.get("event", "")
    default = gh.get_repo(repo).default_branch
    if event == "pull_request":
        target = _pull_target(gh, repo, run)
    elif event == "issue_comment":
        target = _command_target(gh, repo, run, request, bot)
    elif event in ("workflow_dispatch", "push"):
        target = _branch_target(gh, repo, run, request, default)
    else:
        raise UsageError(f"workflow_run of a {event!r} run: nothing to publish")
    if target.same_repo and target.branch == default and not target.refused:
        return _with(target, f"the branch {default!r} is the default branch, which the bot "
                     "never commits to")
    return target


REGEN_PREFIX = "opsweep/regen-"


def _branch_target(gh, repo: str, run: dict[str, Any], request: dict[str, Any],
                   default: str) -> Target:
    """A push or a dispatch measured the tip of a branch of this repository -- as the API
    says, never as the payload's `head_branch` says (a tag's run names the tag there). A run
    of the default branch (a push whose merge moved a pin without the regenerated files, a
    dispatch) goes to a new bot branch, proposed as a pull request (check.regen_pull)."""
    event, sha, branch = run.get("event", ""), run["head_sha"], str(run.get("head_branch") or "")
    head_repo = (run.get("head_repository") or {}).get("full_name", "")
    profile = str(request.get("profile") or "ci") if event == "workflow_dispatch" else "ci"
    if profile not in PROFILES:
        raise UsageError(f"request.json: profile {profile!r} is not one of {PROFILES}")
    if event == "push" and branch != default:
        raise UsageError(f"workflow_run of a push to {branch!r}: only the default branch "
                         f"({default!r}) is re-measured after a merge")
    if head_repo != repo:
        raise UsageError(f"workflow_run of a {event} in {head_repo!r}, not {repo!r}")
    moved = branch_tip(gh, repo, branch, sha)
    target = Target(event, sha, branch, head_repo, True, profile=profile)
    if branch == default:
        target = replace(target, branch=f"{REGEN_PREFIX}{sha[:12]}", base=default)
    return _with(target, moved) if moved else target


def check_publishable(old, new, head: Path | None, layout: Layout, sha: str = "HEAD") -> None:
    """Raise Refused when the artifact is partial or does not describe the head's pins
    (checked where the head is checked out, which it never is for a fork; the pins are
    read from the head commit's objects, never through its working tree)."""
    reason = partial_reason(old, new)
    if reason:
        raise Refused(f"the measured artifact is not a whole sweep: {reason}")
    if head is None:
        return
    pins = pins_at(sha, layout.pyproject, head, layout.pins)
    stale = fingerprint_mismatches(new.fingerprint, pins)
    if stale:
        raise Refused(f"the measured artifact does not describe the head's pins ({'; '.join(stale)})")


@dataclass(frozen=True)
class Published:
    counts: dict[str, int]
    committed: str  # the pushed SHA, or ""
    note: str  # what the comment says about committing
    outcome: str  # done | nothing | failed (for the command's reaction)
    summary: str = ""  # for the job summary: the full table (the comment may be cut)


def _history_url(server: str, repo: str, branch: str, page: str) -> str:
    if not (repo and branch):
        return ""
    return f"{server}/{quote(repo)}/blob/{quote(branch, safe='')}/{quote(page)}"


def _commit(head: Path, target: Target, files: dict[str, Path], layout: Layout,
            push_token: str | None, message: str) -> tuple[str, str]:
    """(pushed SHA or '', the comment's note)."""
    if target.refused:
        return "", f"Not committed: {target.refused}."
    if not target.same_repo:
        return "", ("Not committed: the pull request's branch lives in a fork, where the bot "
                    "never pushes; the regenerated artifact and page are this run's artifacts, "
                    "and the job summary carries the full table.")
    try:
        pushed = commit_files(head, files, target.branch, target.sha, message,
                              token=push_token, pyproject=layout.pyproject,
                              pins=layout.pins, prune=[d for d in layout.page_dirs
                                                       if f"{d}/index.md" in files])
    except StaleHead as exc:
        return "", f"Not committed: {exc}."
    except GitError as exc:
        raise CommitFailed(f"not committed: {exc}") from None
    if pushed.sha is None:
        return "", NO_CHANGE
    return pushed.sha, f"Committed the regenerated artifact and page as {pushed.sha[:12]}."


def publish(gh, repo: str, target: Target, files: dict[str, Path], head: Path | None,
            base: Path, layout: Layout, *, push_token: str | None, bot: str | None,
            message: str, server_url: str = "https://github.com",
            account: Account | None = None) -> Published:
    """`head`: a checkout of the measured head (same repository only, as data), or None
    for a fork, whose head the write job never checks out: it is compared against the
    artifact of `base` (the default branch) and never committed. The result carries the
    job summary's text (the full table), for the CLI to write."""
    if head is None and target.same_repo and not target.refused:
        raise UsageError("a same-repository head needs its checkout (--repo-dir) to commit to")
    new = art.load(files[layout.artifact])
    if head is not None:  # nothing of the head is read or written through a link
        try:
            refuse_links(head, "HEAD", [*files, layout.artifact, layout.pyproject])
        except GitError as exc:
            raise CommitFailed(f"not committed: {exc}") from None
    old_path = Path(head if head is not None else base, layout.artifact)
    old = art.load(old_path) if old_path.exists() else None
    if new.broken is not None:
        return _publish_broken(gh, repo, target, old, new, bot)
    check_publishable(old, new, head, layout)
    result = diff(old, new) if old is not None else None
    # the models record of the same checkout as the artifact, read before the result is
    # installed over it
    committed = Path(head if head is not None else base, layout.models)
    section, full_extra = models_section(files, layout, committed, result, new)
    history = _history_url(server_url, repo, target.branch, layout.history_page) \
        if target.same_repo else ""
    title = "grade transitions" if result else "first measurement"
    body = comment_body(result, new, section, title=title, history=history, account=account)
    # without a head checkout the target is a fork or refused: _commit never runs git then
    sha, note = _commit(head if head is not None else base, target, files, layout, push_token,
                        message)
    if target.base and sha:  # a run of the default branch: the bot's pull request
        target = replace(target, pr=regen_pull(gh, repo, target.branch, target.base,
                                                target.sha, sha, target.event))
    full = to_markdown(result, new, title=title, limit=10**9, history=history, account=account) \
        if result else body
    full = f"{full}\n\n{full_extra}" if full_extra and result else full
    if target.pr:
        upsert_comment(gh, repo, target.pr, f"{body}\n\n{note}\n", bot)
    counts = to_json(result)["counts"] if result else {}
    outcome = "done" if sha or (result and result.transitions) else "nothing"
    return Published(counts, sha, note, outcome, f"{full}\n\n{note}\n")


def comment_body(result, new, section: str, *, title: str, history: str,
                 account: Account | None) -> str:
    """The sticky comment before its note on committing: the operator transitions, then
    the models section, kept whole (the transitions are cut to the room it leaves)."""
    if result is None:
        body = f"{len(new.operators)} operators measured (no previous artifact to compare)."
    else:
        room = GITHUB_COMMENT_LIMIT - (len(section) + NOTE_ROOM if section else 0)
        body = to_markdown(result, new, title=title, history=history, account=account,
                           limit=room)
    return f"{body}\n\n{section}" if section else body


def models_section(files: dict[str, Path], layout: Layout, committed: Path, result,
                   new) -> tuple[str, str]:
    """The comment's "Models" section, after the operator transitions, and the job
    summary's (never cut): the committed models record against the measured result's, when
    both exist; one line when only one does; ("", "") when neither does."""
    if layout.models not in files:
        return (models_gone_markdown(layout.models),) * 2 if committed.is_file() else ("", "")
    if not committed.is_file():
        first = models_first_markdown(models_diff.load_diff(None, files[layout.models]),
                                      layout.models)
        return first, first
    moved = models_diff.load_diff(committed, files[layout.models])
    return models_markdown(moved, result, new), models_markdown(moved, result, new, limit=10**9)


def broken_body(old, new) -> str:
    """The comment for a pin set that breaks the exporter: its headline, once."""
    if old is not None:
        return to_markdown(diff(old, new), new)
    return f"## ONNX support\n\n**{new.broken.headline(new.fingerprint)}.**\n"


def _publish_broken(gh, repo: str, target: Target, old, new, bot: str | None) -> Published:
    """Commented, never committed: the branch keeps the artifact of the last pin set that
    worked, and the outcome is `broken` (the job fails, so the bump cannot merge green)."""
    body = broken_body(old, new)
    note = "Not committed: this pin set measures nothing."
    if target.pr:
        upsert_comment(gh, repo, target.pr, f"{body}\n{note}\n", bot)
    return Published({}, "", note, "broken", body + "\n")

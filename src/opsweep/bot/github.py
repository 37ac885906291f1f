"""The review bot: one sticky comment per pull request, and the `/regen-onnx`
command, through PyGithub.

* The comment is found by a hidden marker *and* the identity of the token
  actually used (the configured login, else ``GET /user`` where the token may
  ask, else the author GitHub gives the comment the bot creates), across
  every page of the pull request's comments. Another author's comment is never
  edited or deleted, marker or not. Two runs racing to create it converge:
  the oldest of the bot's own marked comments is kept, its duplicates deleted.
* `/regen-onnx [ci|nightly] [SHA]` is parsed by one parser (:func:`parse_command`):
  the first word of the comment, any case, leading blanks allowed; any other
  argument is refused with a reply, never ignored. It is honoured only from
  users whose collaborator permission is write, maintain or admin (the
  permission API, not author_association), on an open pull request, and is
  bound to a head SHA: the one it names (which must still be the head), else
  the head when it was accepted. A fork's pull request must name the full
  40-character SHA the maintainer reviewed (a prefix can be brute-forced). Accepted commands get 👀; when the run ends the 👀
  is replaced by 🚀 (done), 👍 (nothing to do) or 👎 (failed). Refused ones
  get 😕 and a reply saying why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from github import Auth, Github, GithubException, GithubRetry, UnknownObjectException

from opsweep.bot.comment import (  # the comment's format lives with the report
    GITHUB_COMMENT_LIMIT,
    MARKER,
    code,
)
from opsweep.errors import UsageError

DEFAULT_BOT = "github-actions[bot]"
#: The workflow's coarse filter; the parser decides. Whatever the parser reads as a
#: command passes this (GitHub's contains() ignores case), so nothing is dropped silently.
WORKFLOW_FILTER = "contains(github.event.comment.body, '/regen-onnx')"
COMMAND_WORD = "/regen-onnx"
PROFILES = ("ci", "nightly")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")
WRITE_PERMISSIONS = {"admin", "maintain", "write"}
OUTCOMES = {"done": "rocket", "nothing": "+1", "failed": "-1"}
USAGE = "usage: `/regen-onnx [ci|nightly] [HEAD-SHA]`"


def client(token: str, api_url: str, paced: bool = True) -> Github:
    """PyGithub against `api_url` (GITHUB_API_URL), retrying rate limits. `paced`: with
    PyGithub's waits between requests (a quarter of a second, a second before a write:
    GitHub's advice against its secondary rate limits); a runner setting turns them off
    for an API server of its own (Settings.paced)."""
    retry = GithubRetry(total=5, backoff_factor=0.2)
    if paced:  # PyGithub's own defaults
        return Github(base_url=api_url.rstrip("/"), auth=Auth.Token(token), retry=retry,
                      per_page=100)
    return Github(base_url=api_url.rstrip("/"), auth=Auth.Token(token), retry=retry,
                  per_page=100, seconds_between_requests=None, seconds_between_writes=None)


def identity(gh: Github) -> str | None:
    """The login the token acts as, when the token may ask (``GET /user``); None for
    installation tokens (GITHUB_TOKEN, a GitHub App's), which may not."""
    try:
        return gh.get_user().login
    except GithubException as exc:
        if exc.status in (401, 403, 404):
            return None
        raise


def bot_login(gh: Github | None, configured: str | None = None) -> str:
    """Who the bot is: the configured login, else the login the token acts as (where it may
    ask; `gh` None: not asked), else GitHub's own Actions bot, whose installation token
    cannot ask."""
    return configured or (identity(gh) if gh is not None else None) or DEFAULT_BOT


def _fit(body: str) -> str:
    if len(body) <= GITHUB_COMMENT_LIMIT:
        return body
    cut = "\n\n*Cut at GitHub's comment limit: the job summary carries the full table.*\n"
    return body[: GITHUB_COMMENT_LIMIT - len(cut)] + cut


def _marked(comments, login: str) -> list:
    return sorted((c for c in comments if c.user.login == login and MARKER in (c.body or "")),
                  key=lambda c: c.id)


def upsert_comment(gh: Github, repo_name: str, number: int, body: str,
                   bot: str | None = None) -> int:
    """Create or edit the bot's single marked comment; returns its id. `bot`: the login
    the token acts as. When neither `bot` nor the API can say, the bot creates its
    comment first and learns its login from it (then keeps its oldest marked comment
    and deletes its own duplicates), so it never edits a comment it did not write."""
    if MARKER not in body:
        body = f"{MARKER}\n{body}"
    body = _fit(body)
    login = bot or identity(gh)
    issue = gh.get_repo(repo_name).get_issue(number)
    mine = _marked(issue.get_comments(), login) if login else []
    if not mine:
        created = issue.create_comment(body)
        login = created.user.login  # the identity GitHub really gave the token
        mine = _marked(issue.get_comments(), login) or [created]  # another run may race
    keep = mine[0]
    if keep.body != body:
        keep.edit(body)
    for duplicate in mine[1:]:
        try:
            duplicate.delete()
        except UnknownObjectException:
            pass  # the other run removed it first
    return keep.id


@dataclass(frozen=True)
class Command:
    accepted: bool
    profile: str
    reason: str  # why it was refused or ignored ("" when accepted)
    respond: bool  # whether the refusal deserves a reaction and a reply
    sha: str = ""  # the SHA the comment names ("" when none); after binding, the full head SHA
    pr: int = 0
    head_repo: str = ""
    head_ref: str = ""


def _refused(profile: str, reason: str, sha: str = "") -> Command:
    return Command(False, profile, reason, True, sha)


def parse_command(event: dict[str, Any], bot: str = DEFAULT_BOT) -> Command | None:
    """None when the comment is not a `/regen-onnx` command at all (its first word,
    in any case, after any blank space, is something else)."""
    comment = event.get("comment") or {}
    words = (comment.get("body") or "").strip().split("\n", 1)[0].split()
    if not words or words[0].lower() != COMMAND_WORD:
        return None
    profile, sha, unknown = "ci", "", []
    for word in words[1:]:
        low = word.lower()
        if low in PROFILES:
            profile = low
        elif _SHA.match(low) and not sha:
            sha = low
        else:
            unknown.append(word)
    login = (comment.get("user") or {}).get("login", "")
    if event.get("action") != "created":
        return Command(False, profile, f"ignored: comment was {event.get('action')}", False)
    if login == bot or (comment.get("user") or {}).get("type") == "Bot":
        return Command(False, profile, "ignored: comment by a bot", False)
    if not (event.get("issue") or {}).get("pull_request"):
        return _refused(profile, "/regen-onnx works on pull requests only")
    if unknown:  # echoed in a code span only, and only once the commenter may write
        return _refused(profile, f"unknown argument(s) {code(' '.join(unknown)[:80])}; {USAGE}",
                        sha)
    return Command(True, profile, "", True, sha, int((event.get("issue") or {}).get("number", 0)))


def authorize(gh: Github, repo_name: str, event: dict[str, Any], command: Command) -> Command:
    """Check the commenter's collaborator permission through the permission API, before
    any reply: a commenter without write permission hears that, and nothing else (no
    refusal that would echo their comment)."""
    if not command.respond:
        return command
    login = event["comment"]["user"]["login"]
    try:
        permission = gh.get_repo(repo_name).get_collaborator_permission(login)
    except GithubException as exc:
        if exc.status == 404:
            permission = "none"
        else:
            raise
    if permission not in WRITE_PERMISSIONS:
        return _refused(command.profile, f"{code(login)} has {permission} permission on "
                        f"{code(repo_name)}; /regen-onnx needs write, maintain or admin",
                        command.sha)
    return command


def bind(gh: Github, repo_name: str, command: Command) -> Command:
    """Bind an accepted command to the pull request's head: refuse a closed pull
    request, a SHA that is no longer the head, and a fork's command without a SHA."""
    if not command.accepted:
        return command
    pull = gh.get_repo(repo_name).get_pull(command.pr)
    if pull.state != "open":
        return _refused(command.profile, f"pull request #{command.pr} is {pull.state}",
                        command.sha)
    head, head_repo = pull.head.sha, pull.head.repo.full_name if pull.head.repo else ""
    if command.sha and not head.startswith(command.sha):
        return _refused(command.profile, f"`{command.sha}` is not the head any more (the head is "
                        f"`{head[:12]}`): review it and comment again", command.sha)
    if head_repo != repo_name and len(command.sha) != 40:
        # a prefix is not a binding: 7 hex digits are found by brute force in minutes
        return _refused(command.profile, "this pull request's head lives in a fork: name the full "
                        "40-character head SHA you reviewed "
                        f"(`/regen-onnx {command.profile} {head}`)", command.sha)
    return replace(command, sha=head, head_repo=head_repo, head_ref=pull.head.ref)


def react(gh: Github, repo_name: str, number: int, comment_id: int, content: str) -> None:
    comment = gh.get_repo(repo_name).get_issue(number).get_comment(comment_id)
    comment.create_reaction(content)


def finish(gh: Github, repo_name: str, number: int, comment_id: int, outcome: str,
           bot: str | None = None) -> None:
    """Replace the bot's 👀 on the command by the outcome's reaction."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {sorted(OUTCOMES)}, got {outcome!r}")
    login = bot_login(gh, bot)
    comment = gh.get_repo(repo_name).get_issue(number).get_comment(comment_id)
    for reaction in comment.get_reactions():
        if reaction.content == "eyes" and reaction.user.login == login:
            comment.delete_reaction(reaction.id)
    comment.create_reaction(OUTCOMES[outcome])


def refuse(gh: Github, repo_name: str, number: int, comment_id: int, command: Command) -> None:
    react(gh, repo_name, number, comment_id, "confused")
    gh.get_repo(repo_name).get_issue(number).create_comment(
        f"> /regen-onnx\n\nNot run: {command.reason}.")


def pull_for_head(gh: Github, repo_name: str, sha: str, head_repo: str):
    """The open pull request whose head is `sha` in `head_repo`, or None. A
    `workflow_run` payload's `pull_requests` list is empty for a fork's head, so the
    pull request is found from the head SHA, never from that list."""
    for pull in gh.get_repo(repo_name).get_pulls(state="open"):
        repo = pull.head.repo.full_name if pull.head.repo else ""
        if pull.head.sha == sha and repo == head_repo:
            return pull
    return None


def branch_tip(gh: Github, repo_name: str, name: str, sha: str) -> str:
    """'' when `sha` is the tip of the BRANCH `name`, else why not (the branch moved on). A
    `workflow_run`'s `head_branch` is a tag's name for a run of a tag, so the name is
    checked through the API: a UsageError when a tag has that name too, or no branch does."""
    repo = gh.get_repo(repo_name)
    if not name or f"refs/tags/{name}" in (r.ref for r in repo.get_git_matching_refs(
            f"tags/{name}")):
        raise UsageError(f"the run's head_branch {name!r} names a tag (refs/tags/{name}) of "
                         f"{repo_name}: a run of a tag reports the tag's name as its branch, "
                         "so nothing it measured is published")
    try:
        branch = repo.get_branch(name)
    except UnknownObjectException:
        branch = None
    if branch is None or branch.name != name:  # (GitHub redirects a renamed branch)
        raise UsageError(f"the run's head_branch {name!r} is no branch of {repo_name}: "
                         "nothing it measured is published")
    if branch.commit.sha != sha:
        return (f"the branch {name!r} is at {branch.commit.sha[:12]} now, not at the measured "
                f"{sha[:12]}; its new tip is measured by its own run")
    return ""

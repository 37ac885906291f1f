"""The review bot: one sticky comment per pull request, and the `/regen-onnx`
command, through PyGithub.

* The comment is found by a hidden marker *and* the bot's own login, across
  every page of the pull request's comments; re-runs edit it. Two runs racing
  to create it converge: after creating, the bot keeps the oldest marked
  comment and deletes its own duplicates.
* `/regen-onnx` (optionally `/regen-onnx nightly`) is honoured only from users
  whose collaborator permission is write, maintain or admin (the permission
  API, not author_association); edited comments and the bot's own comments are
  ignored. Accepted commands get 👀, then 🚀 when done; refused ones get 😕
  and a reply saying why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from github import Auth, Github, GithubException, GithubRetry, UnknownObjectException

#: The hidden marker that, with the bot's login, identifies its sticky comment.
MARKER = "<!-- opsweep:onnx-support -->"
GITHUB_COMMENT_LIMIT = 65_536

DEFAULT_BOT = "github-actions[bot]"
COMMAND = re.compile(r"^\s*/regen-onnx(?:\s+(?P<profile>ci|nightly))?\s*$")
WRITE_PERMISSIONS = {"admin", "maintain", "write"}


def client(token: str, api_url: str) -> Github:
    """PyGithub against `api_url` (GITHUB_API_URL), retrying rate limits."""
    return Github(base_url=api_url.rstrip("/"), auth=Auth.Token(token),
                  retry=GithubRetry(total=5, backoff_factor=0.2), per_page=100)


def _fit(body: str) -> str:
    if len(body) <= GITHUB_COMMENT_LIMIT:
        return body
    cut = "\n\n*Cut at GitHub's comment limit: the job summary carries the full table.*\n"
    return body[: GITHUB_COMMENT_LIMIT - len(cut)] + cut


def _marked(comments, bot: str) -> list:
    return sorted((c for c in comments if c.user.login == bot and MARKER in (c.body or "")),
                  key=lambda c: c.id)


def upsert_comment(gh: Github, repo_name: str, number: int, body: str, bot: str = DEFAULT_BOT) -> int:
    """Create or edit the bot's single marked comment; returns its id."""
    if MARKER not in body:
        body = f"{MARKER}\n{body}"
    body = _fit(body)
    issue = gh.get_repo(repo_name).get_issue(number)
    mine = _marked(issue.get_comments(), bot)
    if mine:
        keep = mine[0]
        if keep.body != body:
            keep.edit(body)
    else:
        issue.create_comment(body)
        mine = _marked(issue.get_comments(), bot)  # another run may have created one too
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


def parse_command(event: dict[str, Any], bot: str = DEFAULT_BOT) -> Command | None:
    """None when the event is not a `/regen-onnx` command at all."""
    comment = event.get("comment") or {}
    match = COMMAND.match(comment.get("body") or "")
    if match is None:
        return None
    profile = match.group("profile") or "ci"
    login = (comment.get("user") or {}).get("login", "")
    if event.get("action") != "created":
        return Command(False, profile, f"ignored: comment was {event.get('action')}", False)
    if login == bot or (comment.get("user") or {}).get("type") == "Bot":
        return Command(False, profile, "ignored: comment by a bot", False)
    if not (event.get("issue") or {}).get("pull_request"):
        return Command(False, profile, "/regen-onnx works on pull requests only", True)
    return Command(True, profile, "", True)


def authorize(gh: Github, repo_name: str, event: dict[str, Any], command: Command) -> Command:
    """Check the commenter's collaborator permission through the permission API."""
    if not command.accepted:
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
        return Command(False, command.profile,
                       f"@{login} has {permission} permission on {repo_name}; "
                       "/regen-onnx needs write, maintain or admin", True)
    return command


def react(gh: Github, repo_name: str, event: dict[str, Any], content: str) -> None:
    number = event["issue"]["number"]
    comment = gh.get_repo(repo_name).get_issue(number).get_comment(event["comment"]["id"])
    comment.create_reaction(content)


def refuse(gh: Github, repo_name: str, event: dict[str, Any], command: Command) -> None:
    react(gh, repo_name, event, "confused")
    gh.get_repo(repo_name).get_issue(event["issue"]["number"]).create_comment(
        f"> /regen-onnx\n\nNot run: {command.reason}.")

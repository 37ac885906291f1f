"""`opsweep bot ...`: the steps the GitHub Action runs, one command each.

Every command reads the token from $GITHUB_TOKEN and the API from
$GITHUB_API_URL (as Actions sets them), and writes its results as
`key=value` lines to $GITHUB_OUTPUT when that is set.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .errors import OpsweepError, UsageError

MAX_ARTIFACT_BYTES = 32 * 1024 * 1024


def write_outputs(values: dict[str, object], target: str | None = None) -> None:
    """`key=value` lines on stdout, and appended to `target` (default $GITHUB_OUTPUT)."""
    lines = "".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}\n" for k, v in values.items())
    sys.stdout.write(lines)
    target = target if target is not None else os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(lines)


def _outputs(**values: object) -> None:
    write_outputs(values)


def _client():
    from .bot import client
    token = os.environ.get("GITHUB_TOKEN")
    if not token:
        raise UsageError("GITHUB_TOKEN is not set")
    return client(token, os.environ.get("GITHUB_API_URL", "https://api.github.com"))


def _event(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--event {path}: cannot read the event payload ({exc})") from None


def cmd_command(args) -> int:
    from .bot import authorize, parse_command, react, refuse
    event = _event(args.event)
    command = parse_command(event, args.bot_login)
    if command is None:
        _outputs(accepted=False, profile="", pr="", reason="not a /regen-onnx command")
        return 0
    gh = _client()
    command = authorize(gh, args.repo, event, command)
    if command.accepted:
        react(gh, args.repo, event, "eyes")
    elif command.respond:
        refuse(gh, args.repo, event, command)
    _outputs(accepted=command.accepted, profile=command.profile,
             pr=event.get("issue", {}).get("number", ""), reason=command.reason or "accepted")
    return 0


def cmd_done(args) -> int:
    from .bot import react
    react(_client(), args.repo, _event(args.event), args.reaction)
    return 0


def cmd_comment(args) -> int:
    from .bot import upsert_comment
    body = Path(args.body).read_text("utf-8")
    comment_id = upsert_comment(_client(), args.repo, args.pr, body, args.bot_login)
    _outputs(comment_id=comment_id)
    return 0


def cmd_pull(args) -> int:
    """Where a pull request's head lives: same repository (commit) or a fork (do not push)."""
    pull = _client().get_repo(args.repo).get_pull(args.pr)
    head_repo = pull.head.repo.full_name if pull.head.repo else ""
    _outputs(head_ref=pull.head.ref, head_sha=pull.head.sha, head_repo=head_repo,
             same_repo=head_repo == args.repo)
    return 0


def cmd_should_run(args) -> int:
    """The loop guard: skip when the committed artifact already describes the head's
    pins at this profile (a nightly artifact serves ci too). A head that is the
    bot's own commit is skipped only on that ground, never on authorship alone."""
    from . import artifact as art
    from .gitops import head_is_bot
    from .pin import fingerprint_mismatches, read_pins
    pins = read_pins(Path(args.repo_dir, args.pyproject).read_text("utf-8"))
    path = Path(args.repo_dir, args.artifact)
    bot = " (the head is the bot's commit)" if head_is_bot(args.repo_dir) else ""
    if path.exists() and "torch" in pins:
        try:
            current = art.load(path)
        except OpsweepError as exc:
            _outputs(run=True, reason=f"committed artifact unreadable ({exc})")
            return 0
        stale = fingerprint_mismatches(current.fingerprint, pins)
        if not stale and current.profile in (args.profile, "nightly"):
            _outputs(run=False, reason=f"artifact already measured torch {pins['torch']} at "
                     f"{current.profile}{bot}")
            return 0
        if stale:
            _outputs(run=True, reason="; ".join(stale) + bot)
            return 0
    _outputs(run=True, reason=f"torch pin {pins.get('torch', 'none')}, profile {args.profile}")
    return 0


def cmd_validate(args) -> int:
    """Artifacts from the untrusted sweep job are data: size-capped and schema-checked."""
    from . import artifact as art
    for path in args.paths:
        size = Path(path).stat().st_size
        if size > MAX_ARTIFACT_BYTES:
            raise UsageError(f"{path}: {size} bytes exceeds the {MAX_ARTIFACT_BYTES}-byte cap")
        art.load(path)
    print(f"opsweep: {len(args.paths)} artifact(s) valid")
    return 0


def cmd_commit(args) -> int:
    from .gitops import commit_and_push
    pushed = commit_and_push(args.repo_dir, args.paths, args.branch, args.expected_sha, args.message)
    _outputs(changed=pushed.sha is not None, sha=pushed.sha or "", reason=pushed.reason)
    return 0


def cmd_publish(args) -> int:
    """Merge the shard artifacts (validated as data), render the page, diff
    against the committed artifact, write the job summary, comment, commit."""
    from . import artifact as art
    from .cli import main as opsweep_main
    from .diff import diff
    from .report import to_json, to_markdown
    from .shard import merge
    for path in args.parts:
        if Path(path).stat().st_size > MAX_ARTIFACT_BYTES:
            raise UsageError(f"{path}: exceeds the {MAX_ARTIFACT_BYTES}-byte cap")
    parts = [(p, art.load(p)) for p in args.parts]
    new = merge(parts) if parts[0][1].shard else parts[0][1]
    if len(parts) > 1 and not parts[0][1].shard:
        raise UsageError("several artifacts given, but they are not shards")
    target = Path(args.repo_dir, args.artifact)
    old = art.load(target) if target.exists() else None
    art.save(target, new)
    page = Path(args.repo_dir, args.page)
    render = ["render", "--onnx-report", str(target), "--out", str(page),
              "--documented", str(Path(args.repo_dir, "docs/data/documented.json")),
              "--data-dir", str(Path(args.repo_dir, "docs/data"))]
    if opsweep_main(render) != 0:
        raise UsageError("rendering the page failed")
    history_url = _record_history(args, new)
    result = diff(old, new) if old is not None else None
    title = "first measurement" if result is None else "grade transitions"
    body = to_markdown(result, new, title=title, history=history_url) if result else \
        f"{len(new.operators)} operators measured (no previous artifact to compare)."
    full = to_markdown(result, new, title=title, limit=10**9, history=history_url) \
        if result else body
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(full + "\n")
    if args.comment and not args.commit:
        body += ("\n\nNot committed (the pull request's branch lives in a fork, or committing is "
                 "off): the regenerated artifact and page are this run's artifacts, and the job "
                 "summary carries the full table.\n")
    counts = to_json(result)["counts"] if result else {}
    if args.comment and args.pr:
        from .bot import upsert_comment
        upsert_comment(_client(), args.repo, args.pr, body, args.bot_login)
    changed, sha = False, ""
    if args.commit:
        from .gitops import commit_and_push
        pushed = commit_and_push(Path(args.repo_dir), [args.artifact, args.page, "docs/data",
                                                       args.history_dir, args.history_page],
                                 args.branch, args.expected_sha, args.message)
        changed, sha = pushed.sha is not None, pushed.sha or ""
    _outputs(regressions=counts.get("regression", 0), improvements=counts.get("improvement", 0),
             newly_measured=counts.get("newly measured", 0),
             no_longer_measured=counts.get("no longer measured", 0), changed=changed, sha=sha)
    return 0


def _record_history(args, artifact) -> str:
    """Write this torch version's history record and re-render the history view;
    return the view's address on the branch (for the comment), or ''."""
    from . import history
    from .artifact import write_atomic
    directory = Path(args.repo_dir, args.history_dir)
    history.write(artifact, directory)
    write_atomic(Path(args.repo_dir, args.history_page),
                 history.render(history.load_all(directory)).encode("utf-8"))
    if not (args.repo and args.branch):
        return ""
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    return f"{server}/{args.repo}/blob/{args.branch}/{args.history_page}"


def add_parser(sub) -> None:
    bot = sub.add_parser("bot", help="steps of the review bot (used by the GitHub Action)")
    steps = bot.add_subparsers(dest="step", required=True)
    bot_login = {"default": os.environ.get("OPSWEEP_BOT_LOGIN", "github-actions[bot]")}

    p = steps.add_parser("command", help="handle an issue_comment event: /regen-onnx [nightly]")
    p.add_argument("--event", type=Path, required=True)
    p.add_argument("--repo", required=True)
    p.add_argument("--bot-login", **bot_login)
    p.set_defaults(run=cmd_command)

    p = steps.add_parser("done", help="react to the command comment when the run finished")
    p.add_argument("--event", type=Path, required=True)
    p.add_argument("--repo", required=True)
    p.add_argument("--reaction", default="rocket")
    p.set_defaults(run=cmd_done)

    p = steps.add_parser("comment", help="create or edit the sticky pull-request comment")
    p.add_argument("--repo", required=True)
    p.add_argument("--pr", type=int, required=True)
    p.add_argument("--body", type=Path, required=True)
    p.add_argument("--bot-login", **bot_login)
    p.set_defaults(run=cmd_comment)

    p = steps.add_parser("pull", help="where a pull request's head lives")
    p.add_argument("--repo", required=True)
    p.add_argument("--pr", type=int, required=True)
    p.set_defaults(run=cmd_pull)

    p = steps.add_parser("should-run", help="the loop guard")
    p.add_argument("--repo-dir", type=Path, default=Path("."))
    p.add_argument("--artifact", default="docs/onnx_support_measured.json")
    p.add_argument("--pyproject", default="pyproject.toml")
    p.add_argument("--profile", default="ci")
    p.set_defaults(run=cmd_should_run)

    p = steps.add_parser("validate", help="size-cap and schema-check artifacts taken as data")
    p.add_argument("paths", type=Path, nargs="+")
    p.set_defaults(run=cmd_validate)

    p = steps.add_parser("publish", help="merge, render, diff, summary, comment and commit")
    p.add_argument("parts", type=Path, nargs="+", help="shard artifacts (or one whole artifact)")
    p.add_argument("--repo-dir", type=Path, default=Path("."), help="checkout of the PR branch")
    p.add_argument("--artifact", default="docs/onnx_support_measured.json")
    p.add_argument("--page", default="docs/supported_operators.md")
    p.add_argument("--history-dir", default="docs/history",
                   help="where the per-torch-version records live")
    p.add_argument("--history-page", default="docs/history.md")
    p.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY", ""))
    p.add_argument("--pr", type=int, default=0)
    p.add_argument("--comment", action="store_true")
    p.add_argument("--commit", action="store_true")
    p.add_argument("--branch", default="")
    p.add_argument("--expected-sha", default="")
    p.add_argument("--message", default="Regenerate measured ONNX support")
    p.add_argument("--bot-login", **bot_login)
    p.set_defaults(run=cmd_publish)

    p = steps.add_parser("commit", help="commit and push regenerated files, never forcing")
    p.add_argument("--repo-dir", type=Path, default=Path("."))
    p.add_argument("--branch", required=True)
    p.add_argument("--expected-sha", required=True)
    p.add_argument("--message", default="Regenerate measured ONNX support")
    p.add_argument("paths", nargs="+")
    p.set_defaults(run=cmd_commit)

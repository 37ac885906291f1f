"""`opsweep bot ...`: the steps the GitHub Action runs, one command each.

Every command takes the token from $GITHUB_TOKEN and the API from $GITHUB_API_URL (as
Actions sets them; read once, `opsweep.cli.settings`), and writes its results as
`key=value` lines to $GITHUB_OUTPUT when that is set.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from opsweep.artifact import account
from opsweep.artifact import data as art
from opsweep.artifact.checked import is_part as is_models_part
from opsweep.artifact.shard import combine
from opsweep.bot import check
from opsweep.bot.comment import code
from opsweep.bot.git import commit_and_push
from opsweep.bot.github import (
    DEFAULT_BOT,
    authorize,
    bind,
    bot_login,
    finish,
    parse_command,
    react,
    refuse,
    upsert_comment,
)
from opsweep.bot.publish import (
    CommitFailed,
    Forged,
    Refused,
    broken_body,
    collect,
    publish,
    resolve,
)
from opsweep.cli import actions, settings
from opsweep.cli.botio import client_of, outputs, should_run, write_request
from opsweep.cli.botbump import add_parser as add_bump_parser
from opsweep.cli.invocation import Invocation
from opsweep.cli.release import add_parser as add_release_parser
from opsweep.cli.steps import add_parsers as add_action_steps
from opsweep.errors import UsageError
from opsweep.files import Layout

MAX_ARTIFACT_BYTES = 32 * 1024 * 1024


def _event(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--event {path}: cannot read the event payload ({exc})") from None


def _bot_login(args) -> str | None:
    return getattr(args, "bot_login", "") or None


def cmd_command(invocation: Invocation) -> int:
    """Handle an issue_comment event: parse, authorise, bind to the head, react."""
    args = invocation.options
    event = _event(args.event)
    command = parse_command(event, bot_login(None, args.bot_login))  # the API is not asked yet
    if command is None:
        outputs(invocation, accepted=False, profile="", pr="", sha="",
                reason="not a /regen-onnx command")
        return 0
    gh = client_of(invocation)
    number, comment_id = event["issue"]["number"], event["comment"]["id"]
    command = bind(gh, args.repo, authorize(gh, args.repo, event, command))
    if command.accepted:
        react(gh, args.repo, number, comment_id, "eyes")
    elif command.respond:
        refuse(gh, args.repo, number, comment_id, command)
    if command.accepted and args.request:
        write_request(args.request, "issue_comment", number, command.sha, command.profile,
                       comment_id)
    outputs(invocation, accepted=command.accepted, profile=command.profile, pr=number,
             sha=command.sha if command.accepted else "",  # bound: the full head SHA
             head_repo=command.head_repo, comment_id=comment_id,
             reason=command.reason or "accepted")
    return 0


def cmd_request(invocation: Invocation) -> int:
    """The measuring run's pointer for the publishing run (checked there, never trusted)."""
    args = invocation.options
    write_request(args.out, args.event_name, args.pr, args.sha, args.profile, args.comment_id)
    return 0


def cmd_finish(invocation: Invocation) -> int:
    """Replace the 👀 on a command by 🚀 (done), 👍 (nothing to do) or 👎 (failed)."""
    args = invocation.options
    gh = client_of(invocation)
    finish(gh, args.repo, args.pr, args.comment_id, args.outcome, _bot_login(args))
    if args.reply:
        what = {"nothing": "Nothing to do", "failed": "Failed", "done": "Done"}[args.outcome]
        gh.get_repo(args.repo).get_issue(args.pr).create_comment(
            f"> /regen-onnx\n\n{what}: {code(args.reply)}.")
    return 0


def cmd_comment(invocation: Invocation) -> int:
    args = invocation.options
    body = Path(args.body).read_text("utf-8")
    comment_id = upsert_comment(client_of(invocation), args.repo, args.pr, body, _bot_login(args))
    outputs(invocation, comment_id=comment_id)
    return 0


def cmd_pull(invocation: Invocation) -> int:
    """Where a pull request's head lives: same repository (commit) or a fork (do not push)."""
    args = invocation.options
    pull = client_of(invocation).get_repo(args.repo).get_pull(args.pr)
    head_repo = pull.head.repo.full_name if pull.head.repo else ""
    outputs(invocation, head_ref=pull.head.ref, head_sha=pull.head.sha, head_repo=head_repo,
             same_repo=head_repo == args.repo)
    return 0


def cmd_should_run(invocation: Invocation) -> int:
    """The loop guard: skip when the committed artifact already describes the head's
    pins at this profile (a nightly artifact serves ci too). A head that is the
    bot's own commit is skipped only on that ground, never on authorship alone."""
    args = invocation.options
    run, reason = should_run(args.repo_dir, args.profile, args.artifact, args.pyproject)
    outputs(invocation, run=run, reason=reason)
    return 0


def cmd_validate(invocation: Invocation) -> int:
    """Artifacts from the untrusted sweep job are data: size-capped and schema-checked."""
    args = invocation.options
    for path in args.paths:
        size = Path(path).stat().st_size
        if size > MAX_ARTIFACT_BYTES:
            raise UsageError(f"{path}: {size} bytes exceeds the {MAX_ARTIFACT_BYTES}-byte cap")
        art.load(path)
    print(f"opsweep: {len(args.paths)} artifact(s) valid")
    return 0


def cmd_commit(invocation: Invocation) -> int:
    args = invocation.options
    pushed = commit_and_push(args.repo_dir, args.paths, args.branch, args.expected_sha,
                             args.message, token=invocation.settings.push_token)
    outputs(invocation, changed=pushed.sha is not None, sha=pushed.sha or "", reason=pushed.reason)
    return 0


def cmd_assemble(invocation: Invocation) -> int:
    """Unprivileged: the main command's post-sweep sequence (`opsweep assemble`) over the
    shards, then the result files copied to --out for the privileged job."""
    from opsweep.cli.assemble import check_models, regenerate_site  # the sweep's job: torch, catalog
    args = invocation.options
    configured = settings.project(args.repo_dir)
    layout = replace(Layout.of(configured), **{k: v for k, v in (
        ("artifact", args.artifact), ("page", args.page), ("history_dir", args.history_dir),
        ("history_page", args.history_page)) if v})
    found = [f for p in args.parts for f in (sorted(p.rglob("*.json")) if p.is_dir() else [p])
             if f.is_file()]  # a directory: every *.json under it
    # the shard jobs' models records (bot sweep) beside their shard artifacts
    parts = [f for f in found if not is_models_part(f)]
    if not parts:
        raise UsageError(f"no shard artifact in {', '.join(map(str, args.parts))}")
    new = combine([(p, art.load(p)) for p in parts])
    if new.broken is not None:  # the breakage is the result: nothing to render or record
        art.save(Path(args.out, layout.artifact), new)
        outputs(invocation, result=args.out, specs=0, broken=True)
        return 0
    specs = [Path(args.repo_dir, d) for d in configured.specs]
    done = regenerate_site(args.repo_dir, layout, new, specs,
                           builtin=settings.builtin_scope(args.repo_dir, configured),
                           cache=invocation.settings.cache_dir())
    checked = check_models(args.repo_dir, layout, new,  # only when models are configured
                           parts=[f for f in found if is_models_part(f)])
    if checked is not None:
        print(f"opsweep: {checked.line()}", file=sys.stderr)
    data_dir = Path(args.repo_dir, layout.data_dir)
    wanted = [layout.artifact, *layout.rendered(args.repo_dir), done.record,
              *([checked.path, checked.history] if checked else [])]
    wanted += [str(p.relative_to(args.repo_dir)) for p in data_dir.glob("doc-links-*.json")]
    for relative in wanted:
        destination = Path(args.out, relative)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(Path(args.repo_dir, relative).read_bytes())
    measured = account.beside([(p, art.load(p).regen_index) for p in parts])
    if measured is not None:  # what the comment says was measured again, and why
        account.save(Path(args.out, account.ACCOUNT_FILE), measured)
    outputs(invocation, result=args.out, specs=len(new.specs))
    return 0


def cmd_resolve(invocation: Invocation) -> int:
    """Privileged: what a finished measuring run may publish (see publish.resolve)."""
    args = invocation.options
    run = _event(args.run_event).get("workflow_run") or {}
    if not (args.request and Path(args.request).exists()):
        outputs(invocation, publish=False, measured=False,
                 reason="the run measured nothing (it left no request)")
        return 0
    gh = client_of(invocation)
    try:
        target = resolve(gh, args.repo, run, _event(args.request), bot_login(gh, args.bot_login))
    except Forged as exc:  # the command that started the run still gets its final reaction
        outputs(invocation, publish=False, pr=exc.pr, comment_id=exc.comment_id,
                reason="forged request")
        raise
    outputs(invocation, publish=bool(target.pr) or target.event in ("workflow_dispatch", "push"),
             pr=target.pr,
             sha=target.sha, branch=target.branch, head_repo=target.head_repo,
             same_repo=target.same_repo, comment_id=target.comment_id,
             refused=target.refused or "")
    return 0


def cmd_failed(invocation: Invocation) -> int:
    """Privileged: a measuring run failed, timed out or was cancelled; say so on the pull
    request, on the command (👎 and a reply) and in the `onnx-support` check."""
    args = invocation.options
    gh = client_of(invocation)
    run = _event(args.run_event).get("workflow_run") or {}
    request = _event(args.request) if args.request and Path(args.request).exists() else {}
    target = resolve(gh, args.repo, run, request, bot_login(gh, args.bot_login))
    url = str(run.get("html_url") or "")
    how = {"cancelled": "was cancelled", "timed_out": "timed out"}.get(
        str(run.get("conclusion") or ""), "failed")
    broken = _broken_result(args)
    see = f"see the run{f' ({url})' if url else ''}"
    if target.pr:
        upsert_comment(gh, args.repo, target.pr, broken or "## ONNX support\n\nThe measurement "
                       f"of `{target.sha[:12]}` {how}; {see}.\n", _bot_login(args))
    if target.comment_id:
        finish(gh, args.repo, target.pr, target.comment_id, "failed", _bot_login(args))
        gh.get_repo(args.repo).get_issue(target.pr).create_comment(
            f"> /regen-onnx\n\nFailed: the measuring run {how}; {see}. Comment `/regen-onnx` "
            "again to measure the head.")
    if target.pr and target.event != "push":
        outcome = "broken" if broken else "cancelled" if how == "was cancelled" else "failed"
        check.report(gh, args.repo, [target.sha], outcome, url)
    return 0


def cmd_check(invocation: Invocation) -> int:
    """Privileged: set the required `onnx-support` status on the measured head and the
    bot's own commit."""
    args = invocation.options
    done = check.report(client_of(invocation), args.repo, args.sha, args.outcome, args.url)
    outputs(invocation, reported=",".join(done))
    return 0


def _broken_result(args) -> str:
    """The comment for a run that failed because its pin set breaks the exporter (its
    uploaded result says so), or '' for any other failure."""
    layout = settings.layout(args.base_dir)  # the default branch's configuration
    if not (args.result and Path(args.result, layout.artifact).is_file()):
        return ""
    new = art.load(collect(args.result, layout)[layout.artifact])
    if new.broken is None:
        return ""
    committed = Path(args.base_dir, layout.artifact)
    return broken_body(art.load(committed) if committed.is_file() else None, new)


def cmd_publish(invocation: Invocation) -> int:
    """Privileged (workflow_run, default-branch code): check the finished run's result as
    data, then diff, summary, comment and commit. Nothing from the pull request runs."""
    args = invocation.options
    gh = client_of(invocation)
    run = _event(args.run_event).get("workflow_run") or {}
    request = _event(args.request) if args.request and Path(args.request).exists() else {}
    target = resolve(gh, args.repo, run, request, bot_login(gh, args.bot_login))
    outputs(invocation, pr=target.pr, sha=target.sha, comment_id=target.comment_id,
             same_repo=target.same_repo)
    # the layout the default branch configures (trusted code; never the head's say)
    layout = settings.layout(args.base_dir)
    try:
        files = collect(args.result, layout)
        head = args.repo_dir if target.same_repo and args.repo_dir else None
        measured = Path(args.result, account.ACCOUNT_FILE)
        done = publish(gh, args.repo, target, files, head, args.base_dir, layout,
                       push_token=invocation.settings.push_token,
                       server_url=invocation.settings.server_url,
                       bot=_bot_login(args), message=args.message,
                       account=account.load(measured) if measured.is_file() else None)
    except Refused as exc:
        if target.pr:
            upsert_comment(gh, args.repo, target.pr, f"## ONNX support\n\nNot published: {exc}.\n",
                           _bot_login(args))
        outputs(invocation, outcome="failed", changed=False, reason=str(exc))
        print(f"opsweep: not published: {exc}", file=sys.stderr)
        # a refused commit fails the run (nobody else may be told: a dispatch has no PR);
        # a stale or partial result is an answer, said on the pull request
        return 1 if isinstance(exc, CommitFailed) else 0
    actions.append_summary(done.summary, invocation.settings.summary)
    counts = done.counts
    outputs(invocation, regressions=counts.get("regression", 0),
            improvements=counts.get("improvement", 0),
             newly_measured=counts.get("newly measured", 0),
             no_longer_measured=counts.get("no longer measured", 0),
             changed=bool(done.committed), sha=done.committed,
             outcome="failed" if done.outcome == "broken" else done.outcome,
             broken=done.outcome == "broken")
    if done.outcome == "broken":
        print("opsweep: the measured pin set breaks the exporter; nothing committed",
              file=sys.stderr)
        return 1
    return 0


def from_environment(parsed: argparse.Namespace,
                     environment: settings.Settings) -> dict[str, str]:
    """What the environment gives where the command line left a value out: a step's
    ``--bot-login ''`` ($OPSWEEP_BOT_LOGIN) and ``--repo ''`` ($GITHUB_REPOSITORY), as the
    options' values in place of the parsed ones (`opsweep.cli.main` makes the options
    from both, once)."""
    given = vars(parsed)
    return {name: value for name, value in (("bot_login", environment.bot_login),
                                            ("repo", environment.repository))
            if given.get(name) == ""}


def add_parser(sub) -> None:
    bot = sub.add_parser("bot", help="steps of the review bot (used by the GitHub Action)")
    steps = bot.add_subparsers(dest="step", required=True)
    login = {"default": "",
             "help": "the login the token acts as (default: $OPSWEEP_BOT_LOGIN, else asked of "
                     f"the API, else {DEFAULT_BOT})"}
    _conversation_parsers(steps, login)
    _data_parsers(steps, login)
    add_action_steps(steps)
    add_bump_parser(steps)
    add_release_parser(steps)


def _conversation_parsers(steps, login: dict) -> None:
    """The steps that talk on the pull request: command, reactions, comments."""

    p = steps.add_parser("command", help="handle an issue_comment event: /regen-onnx")
    p.add_argument("--event", type=Path, required=True)
    p.add_argument("--repo", required=True)
    p.add_argument("--request", type=Path, default=None, help="write the run's request here")
    p.add_argument("--bot-login", **login)
    p.set_defaults(run=cmd_command)

    p = steps.add_parser("request", help="write the measuring run's request.json")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--event-name", required=True)
    p.add_argument("--pr", default="0")
    p.add_argument("--sha", default="")
    p.add_argument("--profile", default="ci", choices=("ci", "nightly"))
    p.add_argument("--comment-id", default="0")
    p.set_defaults(run=cmd_request)

    p = steps.add_parser("finish", help="replace the command's eyes by the outcome's reaction")
    p.add_argument("--repo", required=True)
    p.add_argument("--pr", type=int, required=True)
    p.add_argument("--comment-id", type=int, required=True)
    p.add_argument("--outcome", choices=("done", "nothing", "failed"), required=True)
    p.add_argument("--reply", default="", help="also reply to the command with this reason")
    p.add_argument("--bot-login", **login)
    p.set_defaults(run=cmd_finish)

    p = steps.add_parser("comment", help="create or edit the sticky pull-request comment")
    p.add_argument("--repo", required=True)
    p.add_argument("--pr", type=int, required=True)
    p.add_argument("--body", type=Path, required=True)
    p.add_argument("--bot-login", **login)
    p.set_defaults(run=cmd_comment)

    p = steps.add_parser("pull", help="where a pull request's head lives")
    p.add_argument("--repo", required=True)
    p.add_argument("--pr", type=int, required=True)
    p.set_defaults(run=cmd_pull)


def _data_parsers(steps, login: dict) -> None:
    """The steps that handle measured data: guard, assemble, resolve, publish, bump, commit."""
    p = steps.add_parser("should-run", help="the loop guard")
    p.add_argument("--repo-dir", type=Path, default=Path("."))
    p.add_argument("--artifact", default="", help="default: [tool.opsweep] artifact")
    p.add_argument("--pyproject", default="")
    p.add_argument("--profile", default="ci")
    p.set_defaults(run=cmd_should_run)

    p = steps.add_parser("validate", help="size-cap and schema-check artifacts taken as data")
    p.add_argument("paths", type=Path, nargs="+")
    p.set_defaults(run=cmd_validate)

    p = steps.add_parser("assemble", help="unprivileged: merge, refuse partial, render, history")
    p.add_argument("parts", type=Path, nargs="+",
                   help="shard artifacts (or one whole artifact), or directories holding them")
    p.add_argument("--repo-dir", type=Path, default=Path("."), help="the measured checkout")
    p.add_argument("--out", type=Path, required=True, help="where the result files go")
    # (each default: what [tool.opsweep] in the checkout configures)
    p.add_argument("--artifact", default="")
    p.add_argument("--page", default="")
    p.add_argument("--history-dir", default="")
    p.add_argument("--history-page", default="")
    p.set_defaults(run=cmd_assemble)

    _privileged_parsers(steps, login)


def _privileged_parsers(steps, login: dict) -> None:
    """The steps of the workflow_run job and the scheduled bump."""
    p = steps.add_parser("publish", help="privileged: check the result, diff, comment, commit")
    p.add_argument("--run-event", type=Path, required=True, help="the workflow_run payload")
    p.add_argument("--request", type=Path, default=None, help="the measuring run's request.json")
    p.add_argument("--result", type=Path, required=True, help="the measuring run's result files")
    p.add_argument("--repo-dir", type=Path, default=None,
                   help="checkout of the head as data (same repository only; never a fork's)")
    p.add_argument("--base-dir", type=Path, default=Path("."),
                   help="checkout of the default branch (what a fork's result is compared with)")
    p.add_argument("--repo", default="", help="owner/name (default: $GITHUB_REPOSITORY)")
    p.add_argument("--message", default="Regenerate measured ONNX support")
    p.add_argument("--bot-login", **login)
    p.set_defaults(run=cmd_publish)

    for name, run, text in (("resolve", cmd_resolve, "privileged: what a finished run may publish"),
                            ("failed", cmd_failed, "privileged: report a failed measuring run")):
        p = steps.add_parser(name, help=text)
        p.add_argument("--run-event", type=Path, required=True, help="the workflow_run payload")
        p.add_argument("--request", type=Path, default=None)
        p.add_argument("--repo", default="", help="owner/name (default: $GITHUB_REPOSITORY)")
        p.add_argument("--bot-login", **login)
        p.set_defaults(run=run)
        if name == "failed":  # a run that failed because the pin set breaks the exporter
            p.add_argument("--result", type=Path, default=None,
                           help="the run's uploaded result, when it got that far (data)")
            p.add_argument("--base-dir", type=Path, default=Path("."),
                           help="the default branch's checkout (its committed artifact)")

    p = steps.add_parser("check", help="privileged: set the required onnx-support status")
    p.add_argument("--repo", default="", help="owner/name (default: $GITHUB_REPOSITORY)")
    p.add_argument("--sha", action="append", default=[], help="a commit to report on (repeat)")
    p.add_argument("--outcome", choices=sorted(check.OUTCOMES), required=True)
    p.add_argument("--url", default="", help="the run to link to")
    p.set_defaults(run=cmd_check)

    p = steps.add_parser("commit", help="commit and push regenerated files, never forcing "
                         "(push token: $OPSWEEP_PUSH_TOKEN)")
    p.add_argument("--repo-dir", type=Path, default=Path("."))
    p.add_argument("--branch", required=True)
    p.add_argument("--expected-sha", required=True)
    p.add_argument("--message", default="Regenerate measured ONNX support")
    p.add_argument("paths", nargs="+")
    p.set_defaults(run=cmd_commit)

"""Steps of the Action that decide from the outputs of other steps: what used to be inline
shell in action.yml, here so that the action stays a thin shell over the CLI.

- ``bot sweep`` (sweep, all): one shard measured into the parts directory, reusing the
  committed artifact's grades when there is one; a pin set that breaks the exporter (exit
  3) is a result, recorded in the artifact, not a failure of the step. Then the shard's
  share of the project's models that the committed models record cannot answer, checked
  for real into a record beside the shard (`cli.assemble.check_shard`): the scoreboard is
  sharded like the sweep, and the assemble job joins those checks with the merged table.
- ``bot decide`` (onnx-measure): does the head need measuring, at which profile? A pull
  request is measured when a watched pin moved against its merge base, a push always
  (the guard then skips an artifact that already describes the pins), a dispatch at the
  profile it asked for; then the run's request is written for onnx-publish.
- ``bot report`` (onnx-publish): which commits get the required check `onnx-support`,
  with which outcome, from what `bot resolve` and `bot publish` said.
"""

from __future__ import annotations

import sys
from pathlib import Path

from opsweep.artifact import data as art
from opsweep.bot import check
from opsweep.bot.pins import pin_change
from opsweep.cli import botio, settings
from opsweep.cli.exits import EXIT_BROKEN
from opsweep.cli.invocation import Invocation


def cmd_sweep(invocation: Invocation) -> int:
    args = invocation.options
    committed = Path(args.artifact or settings.project(".").artifact)
    out = Path(args.parts, f"onnx-shard-{args.shard}-of-{args.shards}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = ["sweep", "--profile", args.profile, "--shard", f"{args.shard}/{args.shards}"]
    if committed.is_file():
        argv += ["--previous", str(committed)]
    for table in args.translations.split():
        argv += ["--translations", table]
    argv += ["--out", str(out), "--quiet", "--cache", str(args.cache), *args.sweep_args]
    code = invocation.main(argv)  # cli.main's, handed over in the invocation
    if code not in (0, EXIT_BROKEN):
        return code
    checked = None
    if code == 0 and not args.no_models:
        # the models' check: torch, the exporter (the sweep's job has them)
        from opsweep.cli.assemble import check_shard
        layout = settings.layout(".")
        checked = check_shard(Path("."), layout, art.load(out), args.shard, args.shards,
                              args.parts)
    botio.outputs(invocation, path=out, models=checked or "")
    return 0


def cmd_decide(invocation: Invocation) -> int:
    args = invocation.options
    profile, run = "ci", True
    if args.event_name == "pull_request":
        source = settings.project(args.repo_dir).pins
        change = pin_change(args.base_sha, "HEAD", source.pyproject, args.repo_dir,
                            source=source)
        run = change.changed
        print(f"watched pins moved against {change.base[:12]}: "
              f"{', '.join(map(str, change.moves)) or 'none'}")
    elif args.event_name != "push":  # a push is measured unless the guard says otherwise
        profile = args.dispatch_profile or "nightly"
    if run:
        run, reason = botio.should_run(args.repo_dir, profile)
        print(f"guard: {'measure' if run else 'skip'}: {reason}")
    botio.outputs(invocation, run=run, profile=profile, sha=args.sha)
    botio.write_request(args.request, args.event_name, args.pr, args.sha, profile, 0)
    return 0


def report_targets(args) -> tuple[str, list[str]]:
    """(outcome, commits) the check is reported on; no commit: nothing to report."""
    outcome, shas = args.outcome, []
    if args.measured == "false":  # the run decided that nothing needs measuring
        outcome = "nothing"
        if args.event == "pull_request":
            shas.append(args.run_sha)
    elif args.publish == "true":  # else: nothing measured here is any head's now
        outcome = "broken" if args.broken == "true" else (outcome or "failed")
        if args.head and args.event != "push":  # a push's head is the default branch itself
            shas.append(args.head)
        if args.committed:  # the bot's own commit
            shas.append(args.committed)
    return outcome, [s for s in shas if s]


def cmd_report(invocation: Invocation) -> int:
    args = invocation.options
    outcome, shas = report_targets(args)
    if shas and outcome not in check.OUTCOMES:
        print(f"opsweep: error: --outcome {outcome!r}: expected one of "
              f"{', '.join(sorted(check.OUTCOMES))}", file=sys.stderr)
        return 2
    done = check.report(botio.client_of(invocation), args.repo, shas, outcome, args.url) \
        if shas else []
    botio.outputs(invocation, outcome=outcome, reported=",".join(done))
    return 0


def add_parsers(steps) -> None:
    p = steps.add_parser("sweep", help="unprivileged: measure one shard into --parts")
    p.add_argument("--profile", default="ci", choices=("ci", "nightly"))
    p.add_argument("--shard", type=int, default=1)
    p.add_argument("--shards", type=int, default=1)
    p.add_argument("--parts", type=Path, required=True, help="the directory the shard goes to")
    p.add_argument("--cache", type=Path, required=True, help="the export cache")
    p.add_argument("--artifact", default="", help="the committed artifact whose grades are "
                   "reused (default: [tool.opsweep] artifact)")
    p.add_argument("--translations", default="", help="MODULE:TABLE ..., separated by spaces")
    p.add_argument("--no-models", action="store_true", help="measure the shard only: leave "
                   "the project's models to the assemble job (default: the shard's share of "
                   "them is checked here)")
    p.add_argument("sweep_args", nargs="*", metavar="-- SWEEP-ARGS",
                   help="further arguments of `opsweep sweep`, after --")
    p.set_defaults(run=cmd_sweep)

    p = steps.add_parser("decide", help="unprivileged: does the head need measuring? writes "
                         "the run's request")
    p.add_argument("--event-name", required=True)
    p.add_argument("--base-sha", default="", help="a pull request's base (its merge base is "
                   "compared with HEAD)")
    p.add_argument("--dispatch-profile", default="", choices=("", "ci", "nightly"),
                   help="the profile a workflow_dispatch asked for (empty: nightly)")
    p.add_argument("--pr", default="0")
    p.add_argument("--sha", required=True, help="the head being decided on")
    p.add_argument("--repo-dir", type=Path, default=Path("."), help="its checkout")
    p.add_argument("--request", type=Path, required=True, help="where the request goes")
    p.set_defaults(run=cmd_decide)

    p = steps.add_parser("report", help="privileged: report onnx-support on what resolve and "
                         "publish name")
    p.add_argument("--repo", default="", help="owner/name (default: $GITHUB_REPOSITORY)")
    p.add_argument("--event", required=True, help="the measuring run's event")
    p.add_argument("--run-sha", default="", help="the measuring run's head_sha")
    p.add_argument("--url", default="", help="the run to link to")
    for name in ("measured", "publish", "broken"):
        p.add_argument(f"--{name}", default="", help=f"resolve/publish output `{name}`")
    p.add_argument("--head", default="", help="resolve's sha: the measured head")
    p.add_argument("--committed", default="", help="publish's sha: the bot's commit")
    p.add_argument("--outcome", default="", help="publish's outcome (empty: failed)")
    p.set_defaults(run=cmd_report)

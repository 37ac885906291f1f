"""opsweep measures which aten operators PyTorch's ONNX exporter really supports.

The command line: the only place that parses arguments, reads the environment
(`opsweep.cli.settings`, once), prints, and maps errors and outcomes to exit codes and
Actions outputs. It imports the measuring stages (catalog, engine, sweep: torch and
hypothesis) only in the commands that measure, so `opsweep bot ...` runs where only the
bot's light dependencies are installed.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

from opsweep.artifact import data as art
from opsweep.artifact import models_history, records
from opsweep.artifact.account import beside
from opsweep.artifact.diff import diff
from opsweep.artifact.shard import combine, merge, parse_shard, partial_reason
from opsweep.artifact import models_diff
from opsweep.bot.comment import models_json, models_markdown, to_json, to_markdown
from opsweep.bot.pins import pin_change
from opsweep.cli.actions import append_summary, write_outputs
from opsweep.cli.bot import add_parser as add_bot_parser
from opsweep.cli.bot import from_environment
from opsweep.cli.check import add_parser as add_check_parser
from opsweep.cli.catalogcmds import add_parsers as add_catalog_parsers
from opsweep.cli.catalogcmds import (
    catalog_of,
    cmd_attribution,
    cmd_coverage,
    cmd_draw,
    cmd_list,
    err,
    profile_source,
    spec_dirs,
)
from opsweep.cli.check import cmd_check
from opsweep.cli.exits import EXIT_BROKEN, EXIT_ERROR, EXIT_OK, EXIT_USAGE
from opsweep.cli.init import add_parser as add_init_parser
from opsweep.cli.invocation import Command, Invocation, Options
from opsweep.cli.progress import DEFAULT_INTERVAL
from opsweep.cli.regrade import add_parser as add_regrade_parser, cmd_regrade
from opsweep.cli.settings import (
    Settings,
    builtin_scope,
    policy_file,
    project,
    repo_url,
    source_url,
)
from opsweep.cli.summary import summary
from opsweep.cli.tables import add_parser as add_tables_parser
from opsweep.cli.tables import cmd_tables
from opsweep.engine.sweepconfig import RECYCLE, SweepConfig
from opsweep.errors import OpsweepError, UsageError
from opsweep.files import DEFAULT, Layout, write_atomic
from opsweep.page import site
from opsweep.streams import flush
from opsweep.sweep.request import Request

DESCRIPTION = """\
Measure, operator by operator, what torch.onnx.export(dynamo=True) really supports at the
installed torch: every spec of the catalog is exported from real small modules drawn across
shapes, ranks and dtypes, checked, run in onnxruntime and compared with PyTorch. The result
is a JSON artifact (docs/onnx_support_measured.json) and a support site rendered from it.

The main job, measure then render:
  opsweep sweep       measure the catalog, write the artifact
  opsweep assemble    record this pin set's history, render the pages and the history view
  opsweep regrade     re-grade the artifact's numerics at your tolerance policy, unmeasured
"""
EPILOG = """\
`opsweep COMMAND --help` describes each command. `tox -e proptest_onnx` runs the main job
with the pinned exporter stack; docs/refreshing.md explains how to read the results."""


def _add_sweep(sub) -> None:
    p = sub.add_parser("sweep", help="measure the catalog and write the artifact")
    p.add_argument("--profile", choices=["ci", "nightly"], default=None,
                   help="hypothesis profile (default: $OPSWEEP_HYP_PROFILE, else ci)")
    p.add_argument("--only", nargs="+", metavar="NAME", default=[],
                   help="measure only these specs (the rest is carried from the previous artifact)")
    p.add_argument("--out", type=Path, default=None,
                   help=f"artifact path (default: [tool.opsweep] artifact, else {DEFAULT.artifact})")
    p.add_argument("--previous", type=Path, default=None,
                   help="artifact to reuse full grades from (default: the one at --out)")
    p.add_argument("--no-reuse", action="store_true",
                   help="re-measure every spec; also the way past a corrupt previous artifact")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="measure only this cost-balanced slice; combine with `opsweep merge`")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR",
                   help="another directory of spec modules, measured beside [tool.opsweep] specs "
                        "(and the built-in ones, unless [tool.opsweep] catalog = \"none\")")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: CPU count; 0 runs inline, without isolation, with "
                        "one torch thread as a worker; an error line that quotes a set "
                        "follows this process's PYTHONHASHSEED, a worker's is 0)")
    p.add_argument("--recycle", type=int, default=None, metavar="GROUPS",
                   help="replace a worker by a fresh one after this many signature groups, "
                        "which bounds its memory (default: %d; 0: never)" % RECYCLE)
    p.add_argument("--spawn", action="store_true",
                   help="start every worker afresh (each sets itself up) instead of forking it "
                        "from a process that made the set-up once")
    p.add_argument("--timeout", type=float, default=180.0,
                   help="seconds allowed for one export before the worker is replaced")
    p.add_argument("--translations", action="append", default=[], metavar="MODULE:TABLE",
                   help="also measure the catalog with this custom_translation_table (a dotted "
                        "module or a .py file, then the table's name); a further target, beside "
                        "[tool.opsweep] translations")
    p.add_argument("--torchscript", action="store_true",
                   help="also measure the TorchScript exporter (torch.onnx.export(..., "
                        "dynamo=False)) on the same examples: the 'torchscript' target "
                        "(also [tool.opsweep] torchscript = true; recorded absent when this torch "
                        "no longer has it)")
    p.add_argument("--opset", type=int, action="append", default=[], metavar="N", dest="opsets",
                   help="also measure the dynamo exporter at opset N: the 'opsetN' target")
    p.add_argument("--no-dynamic", action="store_true",
                   help="skip the dynamic axis (re-export with the leading dimension dynamic)")
    cached = p.add_mutually_exclusive_group()
    cached.add_argument("--cache", type=Path, default=None, metavar="DIR",
                        help="the export cache: models and their outcomes up to the checker, "
                             "keyed by all they depend on, so that a move of a pin that builds "
                             "no model (onnxruntime) re-runs only the sessions and comparisons "
                             "(default: $OPSWEEP_CACHE, else .opsweep-cache)")
    cached.add_argument("--no-cache", action="store_true",
                        help="export every group; read and write no cache")
    p.add_argument("--public-exporter", action="store_true",
                   help="call torch.onnx.export for every example instead of the fast path")
    p.add_argument("--quiet", action="store_true", help="no progress display, only the summary")
    p.add_argument("--verbose", action="store_true",
                   help="let the exporter's, onnxscript's and onnxruntime's own warnings and log "
                        "lines through, and whatever the workers print (silenced by default: the "
                        "artifact records every failure, the run log what the workers printed)")
    p.add_argument("--progress-interval", type=float, default=DEFAULT_INTERVAL, metavar="SECONDS",
                   help="when not on a terminal, at most one progress line per SECONDS "
                        f"(default {DEFAULT_INTERVAL:g}); on a terminal a live bar")


def _cache_dir(invocation: Invocation) -> Path | None:
    """--cache, else $OPSWEEP_CACHE (``off``: none), else the default; None with --no-cache."""
    return invocation.settings.cache_dir(invocation.options.cache, invocation.options.no_cache)


def cmd_sweep(invocation: Invocation) -> int:
    from opsweep.catalog.draw import resolve_profile  # the measuring stages: torch, hypothesis
    from opsweep.cli.progress import display
    from opsweep.sweep.driver import regenerate
    args = invocation.options
    profile = resolve_profile(args.profile or invocation.settings.profile, profile_source(args))
    jobs = (os.cpu_count() or 1) if args.jobs is None else args.jobs
    if jobs < 0:
        raise UsageError(f"--jobs must be >= 0, got {jobs}")
    recycle = RECYCLE if args.recycle is None else args.recycle
    if recycle < 0:
        raise UsageError(f"--recycle must be >= 0, got {recycle}")
    if not args.progress_interval > 0:  # also NaN
        raise UsageError(f"--progress-interval must be > 0 seconds, got {args.progress_interval:g}")
    shard = parse_shard(args.shard) if args.shard else None
    configured = project()
    out = args.out or Path(configured.artifact)  # the artifact this sweep writes
    specs = spec_dirs(args)
    # the draws of the specs this sweep measures (all of them without --only)
    catalog = catalog_of(args, check_draws=list(args.only) or True)
    config = SweepConfig(profile, jobs=jobs, timeout=args.timeout,
                         spec_dirs=tuple(p.resolve() for p in specs), builtin=builtin_scope(),
                         fast=not args.public_exporter,
                         targets=configured.targets(args.translations, args.torchscript, args.opsets),
                         dynamic=not args.no_dynamic, verbose=args.verbose, recycle=recycle,
                         preload=not args.spawn, cache=_cache_dir(invocation),
                         policy=policy_file(configured.tolerance_policy))
    request = Request(tuple(args.only), out, args.previous, args.no_reuse, shard)
    started = time.monotonic()
    shown = display(args.quiet, args.progress_interval)
    try:
        result = regenerate(catalog, config, request, shown)
    finally:
        shown.close()
    broken = result.artifact.broken
    if broken is not None:
        err(f"{broken.headline(result.artifact.fingerprint)} (recorded in {result.written or out}; "
             f"the {broken.target} target's canary stopped at {broken.stage})")
        return EXIT_BROKEN
    text = summary(result, result.written or out, time.monotonic() - started,
                   invocation.settings.in_tox_sweep, config.cache)
    print(text)
    append_summary(f"```text\n{text}\n```\n", invocation.settings.summary)  # the job summary too
    return EXIT_OK


def cmd_merge(invocation: Invocation) -> int:
    args = invocation.options
    parts = [(p, art.load(p)) for p in args.parts]
    merged = merge(parts)
    art.save(args.out, merged)
    print(f"opsweep: merged {len(parts)} shards, {len(merged.specs)} specs, "
          f"{len(merged.operators)} operators into {args.out}")
    return EXIT_OK


def cmd_assemble(invocation: Invocation) -> int:
    args = invocation.options
    configured = project(args.repo_dir)
    layout = Layout.of(configured)
    new = combine([(p, art.load(p)) for p in args.parts or [Path(args.repo_dir, layout.artifact)]])
    if new.broken is not None:
        err(f"nothing to assemble: {new.broken.headline(new.fingerprint)}")
        return EXIT_BROKEN
    from opsweep.cli.assemble import check_models, regenerate_site  # torch, the catalog: hypothesis
    done = regenerate_site(args.repo_dir, layout, new, spec_dirs(args, args.repo_dir),
                           builtin=builtin_scope(args.repo_dir, configured),
                           cache=invocation.settings.cache_dir())
    checked = check_models(args.repo_dir, layout, new)  # only when models are configured
    if checked:
        print(f"opsweep: {checked.line()}")
    core, listing = done.view.bars
    if done.artifact_changed:
        print(f"opsweep: wrote {layout.artifact}")
    shown = [p for p in layout.pages if Path(args.repo_dir, p).is_file()]
    print(f"opsweep: recorded {done.record}; rendered {', '.join(shown)} and the pages "
          f"in {', '.join(d + '/' for d in layout.page_dirs)}: full "
          f"{core.numerator}/{core.denominator} core, {listing.numerator}/{listing.denominator} "
          "of the listing")
    return EXIT_OK


def cmd_render(invocation: Invocation) -> int:
    from opsweep.catalog.installed import gather  # torch, and the catalog: hypothesis
    args = invocation.options
    report = art.load(args.onnx_report) if args.onnx_report else None
    root = Path(args.pyproject).parent  # the project --pyproject configures
    configured = Layout.of(project(root))
    out = args.out or Path(root, configured.page)
    data_dir = args.data_dir or Path(root, configured.data_dir)
    layout = replace(configured, page=str(out), history_dir=str(
        args.history or Path(root, configured.history_dir)), data_dir=str(data_dir),
        models=str(Path(root, configured.models)),
        templates=str(Path(root, configured.templates)) if configured.templates else "")
    installed = gather(data_dir, report.fingerprint.opset if report else None,
                       args.torch_version)
    from opsweep.engine.standalone import Scripts  # the snippets' inline modules: torch
    catalog = catalog_of(args, root)
    from opsweep.cli.assemble import page_draws  # the sweep's draws: hypothesis, the catalog
    scripts = Scripts(catalog, report.profile if report else "ci",
                      page_draws(invocation.settings.cache_dir())).for_example
    view = site.render(layout, report, catalog, installed,
                       documented_path=args.documented, torch_version=args.torch_version,
                       source_url=source_url(args.source_url, args.pyproject),
                       repo_url=repo_url(args.pyproject), scripts=scripts)
    bar_core, bar_all = view.bars
    print(f"opsweep: wrote {out}: {len(view.rows)} operators; full {bar_core.numerator}/"
          f"{bar_core.denominator} core, {bar_all.numerator}/{bar_all.denominator} of the listing")
    return EXIT_OK


def cmd_diff(invocation: Invocation) -> int:
    """Exit 0: no regressions; 1: regressions found, or the new pin set breaks the
    exporter; 2: bad input."""
    args = invocation.options
    try:
        old, new = art.load(args.old), art.load(args.new)
        models = None if args.models is None else models_diff.load_diff(*args.models)
    except OpsweepError as exc:
        err(str(exc))
        return EXIT_USAGE
    reason = partial_reason(old, new)
    if reason and new.shard is None:  # lost specs count only while the catalog still has them
        reason = partial_reason(old, new, frozenset(catalog_of(args).specs))
    if reason:
        err(f"{args.new}: not a whole sweep: {reason}; merge every shard first")
        return EXIT_USAGE
    result = diff(old, new)
    if args.json:
        data = to_json(result)
        if models is not None:
            data["models"] = models_json(models)
        text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    else:
        text = to_markdown(result, new, account=beside([(args.new, new.regen_index)]))
        if models is not None:  # the bot's section, never cut
            text = f"{text.rstrip()}\n\n{models_markdown(models, result, new, limit=10**9)}"
    if args.out:
        write_atomic(args.out, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    regressed = models is not None and bool(models.of_status("regression"))
    return 1 if result.failed or regressed else EXIT_OK


def cmd_pin_changed(invocation: Invocation) -> int:
    args = invocation.options
    source = replace(project(args.repo).pins, pyproject=args.pyproject)
    change = pin_change(args.base, args.head, args.pyproject, args.repo,
                        against_merge_base=not args.tip, source=source)
    torch_moved = change.old != change.new
    print(f"torch pin: {change.old or 'none'} -> {change.new or 'none'} "
          f"({'changed' if torch_moved else 'unchanged'}; against {change.base[:12]})")
    if change.changed and not torch_moved:
        print(f"other watched pins moved: {', '.join(m.name for m in change.moves)}")
    for move in change.moves:
        print(f"  moved: {move}")
    sys.stdout.write(write_outputs(
        {"changed": change.changed, "old": change.old or "", "new": change.new or "",
         "moved": ",".join(f"{m.name}:{m.old or ''}:{m.new or ''}" for m in change.moves)},
        args.github_output or invocation.settings.output))
    return EXIT_OK


def cmd_history(invocation: Invocation) -> int:
    args = invocation.options
    if args.step == "record":
        path = records.write(art.load(args.artifact), args.dir)
        print(f"opsweep: wrote {path}")
    elif args.step == "models":  # a models record checked elsewhere: its pin set's verdicts
        layout = Layout.of(project())
        if args.render and Path(layout.models_history).resolve() != args.dir.resolve():
            raise UsageError(f"--render: the project's models page reads its pin sets from "
                             f"{layout.models_history}, not --dir {args.dir}")
        print(f"opsweep: wrote {models_history.write_from_models(args.models, args.dir)}")
        if args.render:  # the project's models page, with the pin set just written
            if not site.render_models(layout):
                raise UsageError(f"--render: the project has no models record "
                                 f"({layout.models}) to render its page from")
            print(f"opsweep: rendered {layout.models_page} (the project's models record, its "
                  f"verdicts across the pin sets in {layout.models_history})")
    else:
        found = site.render_history_page(Layout(history_dir=str(args.dir), history_page=str(args.out)))
        print(f"opsweep: wrote {args.out}: {len(found)} pin sets "
              f"({', '.join(r.name for r in found)})")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opsweep", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_sweep(sub)
    add_catalog_parsers(sub)
    p = sub.add_parser("assemble", help="after a sweep: record this pin set's history, render "
                       "the pages and the history view (tox's main command runs it)")
    p.add_argument("parts", type=Path, nargs="*", metavar="PART",
                   help="the artifact, or every shard of one (default: the layout's artifact)")
    p.add_argument("--repo-dir", type=Path, default=Path("."), help="the measured checkout")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR",
                   help="another directory of spec modules the sweep measured (as for sweep)")
    p = sub.add_parser("render", help="render the support page from an artifact")
    p.add_argument("--onnx-report", type=Path, default=None, metavar="ARTIFACT",
                   help="the measured artifact; without it, only the retired listing's claims")
    p.add_argument("--out", type=Path, default=None,
                   help=f"the support page (default: in [tool.opsweep] pages-dir, else {DEFAULT.page})")
    p.add_argument("--torch-version", default=None,
                   help="torch version the page targets (default: the installed one)")
    p.add_argument("--documented", type=Path, default=None,
                   help="the retired TorchScript listing's claims (default: the data dir's, else "
                        "the copy opsweep ships)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="where the per-version documentation-link cache lives")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p.add_argument("--history", type=Path, default=None, metavar="DIR",
                   help="history records, for grades per release and the last bump's changes")
    p.add_argument("--source-url", default=None, metavar="URL",
                   help="base URL of the repository's files, to link each spec to its source "
                   "(default: [tool.opsweep] source-url in --pyproject; '' for none)")
    p.add_argument("--pyproject", type=Path, default=Path(DEFAULT.pyproject),
                   help="where [tool.opsweep] source-url is read from, when --source-url is not given")
    p = sub.add_parser("diff", help="grade transitions between two artifacts "
                       "(exit 1 when there are regressions)")
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("--json", action="store_true", help="JSON instead of markdown")
    p.add_argument("--out", type=Path, default=None, help="write here instead of stdout")
    p.add_argument("--models", nargs=2, type=Path, default=None, metavar=("OLD", "NEW"),
                   help="two models records (docs/models_checked.json of each side): add the "
                   "models whose verdicts moved, as the review bot's comment does (a model "
                   "that passed an axis and fails it now is a regression: exit 1)")
    p = sub.add_parser("pin-changed", help="did a watched pin in pyproject.toml move since REF (its merge base)?")
    p.add_argument("--base", required=True, metavar="REF")
    p.add_argument("--head", default="HEAD", metavar="REF", help="'' for the working tree")
    p.add_argument("--pyproject", default=DEFAULT.pyproject)
    p.add_argument("--repo", type=Path, default=Path("."))
    p.add_argument("--tip", action="store_true",
                   help="compare against REF itself, not its merge base with --head")
    p.add_argument("--github-output", default=None, metavar="FILE",
                   help="append changed/old/new to this file (default: $GITHUB_OUTPUT)")
    add_bot_parser(sub)
    add_check_parser(sub)
    add_init_parser(sub)
    add_regrade_parser(sub)
    add_tables_parser(sub)
    p = sub.add_parser("history", help="per-torch-version records and the history view")
    steps = p.add_subparsers(dest="step", required=True)
    q = steps.add_parser("record", help="write (or replace) the record of the artifact's torch")
    q.add_argument("--artifact", type=Path, default=Path(DEFAULT.artifact))
    q.add_argument("--dir", type=Path, default=Path(DEFAULT.history_dir))
    q = steps.add_parser("models", help="write (or replace) the models history record of "
                         "the pin set a models record (opsweep check --json) was checked at")
    q.add_argument("--models", type=Path, default=Path(DEFAULT.models), metavar="FILE")
    q.add_argument("--dir", type=Path, default=Path(DEFAULT.models_history))
    q.add_argument("--render", action="store_true",
                   help="also render the project's models page from its models record, with "
                   "the verdicts across every pin set in --dir, which must then be the "
                   "project's models history (default: off)")
    q = steps.add_parser("render", help="render the history view from every record")
    q.add_argument("--dir", type=Path, default=Path(DEFAULT.history_dir))
    q.add_argument("--out", type=Path, default=Path(DEFAULT.history_page))
    p = sub.add_parser("merge", help="combine shard artifacts into one")
    p.add_argument("parts", type=Path, nargs="+", metavar="PART")
    p.add_argument("--out", type=Path, default=Path(DEFAULT.artifact))
    return parser


COMMANDS: dict[str, Command] = {"sweep": cmd_sweep, "list": cmd_list, "draw": cmd_draw, "coverage": cmd_coverage, "attribution": cmd_attribution,
            "merge": cmd_merge, "assemble": cmd_assemble, "render": cmd_render, "diff": cmd_diff,
            "pin-changed": cmd_pin_changed, "history": cmd_history,
            "check": cmd_check, "regrade": cmd_regrade, "tables": cmd_tables}


def parse(argv: list[str] | None, settings: Settings) -> Options:
    """The command line as read-only options: what argparse parsed, and what the
    environment gives where a bot step's option was left out (cli.bot.from_environment)."""
    parsed = build_parser().parse_args(argv)
    return Options(**{**vars(parsed), **from_environment(parsed, settings)})


def main(argv: list[str] | None = None) -> int:
    try:
        settings = Settings.read()
    except UsageError as exc:  # a runner setting it cannot read, named
        err(str(exc))
        return EXIT_USAGE
    options = parse(argv, settings)
    # a step that runs another command (bot sweep) calls `main` so, not by import
    invocation = Invocation(options, settings, main)
    command: Command = options.run if options.command in ("bot", "init") \
        else COMMANDS[options.command]
    try:
        return command(invocation)
    except KeyboardInterrupt:
        err("interrupted: the artifact was not touched; a sweep keeps its finished specs in a "
             "checkpoint beside the artifact, and running the same command again resumes it")
        return 130
    except OpsweepError as exc:
        err(str(exc))
        return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_ERROR


def run() -> NoReturn:
    """The `opsweep` command and `python -m opsweep`: `main`, then `leave` with its code."""
    leave(main())


def leave(code: int) -> NoReturn:
    """End the process with `code` once what the interpreter's own exit does that anyone can
    see is done: non-daemon threads joined (and threading's exit hooks), every `atexit`
    function run (multiprocessing's clean-up of its children, temporary directories'
    finalizers, logging's flush), the standard streams flushed, Python's and C's. What it
    skips is the teardown of every imported module, which for torch and the exporter's
    stack is over a second of CPU a process (benchmarks/bench_exit.py) and changes nothing
    on disk or on the terminal, for every `opsweep` command a workflow step or the README's
    main command runs. An exception escaping `main` is not here: it unwinds as usual."""
    shutdown = getattr(threading, "_shutdown", None)  # what Py_FinalizeEx calls first
    if shutdown is not None:
        shutdown()
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if shutdown is None or run_exit_functions is None:  # another interpreter: its own exit
        sys.exit(code)
    run_exit_functions()
    flush()  # Python's streams, and what native code left in C's (C's exit() writes it)
    os._exit(code)


if __name__ == "__main__":
    run()

"""The command line: the only place that prints and chooses exit codes."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from opsweep.engine.config import RECYCLE
from opsweep.errors import OpsweepError, UsageError
from opsweep.model import Stage
from opsweep.cli.progress import DEFAULT_INTERVAL

DEFAULT_ARTIFACT = Path("docs/onnx_support_measured.json")
DEFAULT_HISTORY = Path("docs/history")
DEFAULT_HISTORY_PAGE = Path("docs/history.md")
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
EXIT_BROKEN = 3  # the pin set breaks the exporter: nothing could be measured
#: The tox env (pyproject.toml) whose commands are the sweep, then render and history.
TOX_SWEEP_ENV = "proptest_onnx"


def _err(message: str) -> None:
    print(f"opsweep: error: {message}", file=sys.stderr)


def _add_sweep(sub) -> None:
    p = sub.add_parser("sweep", help="measure the catalog and write the artifact")
    p.add_argument("--profile", choices=["ci", "nightly"], default=None,
                   help="hypothesis profile (default: $OPSWEEP_HYP_PROFILE, else ci)")
    p.add_argument("--only", nargs="+", metavar="NAME", default=[],
                   help="measure only these specs (the rest is carried from the previous artifact)")
    p.add_argument("--out", type=Path, default=DEFAULT_ARTIFACT, help="artifact path")
    p.add_argument("--previous", type=Path, default=None,
                   help="artifact to reuse full grades from (default: the one at --out)")
    p.add_argument("--no-reuse", action="store_true",
                   help="re-measure every spec; also the way past a corrupt previous artifact")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="measure only this cost-balanced slice; combine with `opsweep merge`")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR",
                   help="another directory of spec modules, measured beside the built-in ones")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: CPU count; 0 runs inline, without isolation)")
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
                        "module or a .py file, then the table's name); a second target")
    p.add_argument("--no-dynamic", action="store_true",
                   help="skip the dynamic axis (re-export with the leading dimension dynamic)")
    p.add_argument("--public-exporter", action="store_true",
                   help="call torch.onnx.export for every example instead of the fast path")
    p.add_argument("--quiet", action="store_true", help="no progress display, only the summary")
    p.add_argument("--verbose", action="store_true",
                   help="let the exporter's, onnxscript's and onnxruntime's own warnings and log "
                        "lines through (silenced by default: the artifact records every failure)")
    p.add_argument("--progress-interval", type=float, default=DEFAULT_INTERVAL, metavar="SECONDS",
                   help="when not on a terminal, at most one progress line per SECONDS "
                        f"(default {DEFAULT_INTERVAL:g}); on a terminal a live bar")


#: The summary's lines stay within this many columns, names of files aside.
SUMMARY_WIDTH = 80
#: Names listed in one summary line before it says "and N more" (the summary fits a screen).
MAX_NAMES = 8


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")


def _summary(result, out: Path, seconds: float) -> str:
    from opsweep.cli.progress import clock
    artifact = result.artifact
    fp = artifact.fingerprint
    lines = [(f"opsweep: {len(artifact.specs)} specs, {len(artifact.operators)} aten operators "
              f"in {clock(seconds)}"),
             (f" measured with torch {fp.torch}, opset {fp.opset}, exporter {fp.exporter}, "
              f"profile {artifact.profile}")]
    for target in artifact.target_names:
        lines += _target_summary(artifact.view(target), target, result.decisions.get(target, {}))
    if result.resumed:
        lines.append(f"  resumed  {result.resumed} specs from the checkpoint")
    lines += [f"  note: {n}" for n in result.notes]
    return "\n".join(lines + _next_steps(out, result.run_log))


def _next_steps(out: Path, run_log: Path | None = None) -> list[str]:
    import os
    lines = [f" wrote      {out} (the artifact)"]
    if run_log:
        lines.append(f" wrote      {run_log} (why each spec was reused or re-measured)")
    if os.environ.get("TOX_ENV_NAME") == TOX_SWEEP_ENV:  # its next commands render the page
        return lines + [" next       tox renders the support page and the history view from it,",
                        "            then `git diff docs/` shows what changed"]
    return lines + [f" next       opsweep render --onnx-report {out}   # the support page",
                    f"            opsweep diff OLD.json {out}   # grade transitions"]


def _wrapped(label: str, items: list[str], width: int = SUMMARY_WIDTH,
             sep: str = "  ") -> list[str]:
    """`  label    a 1  b 2 ...`, continued on indented lines to stay within `width`."""
    lines, line = [], f"  {label:<10}"
    for item in items:
        if len(line) + len(item) + len(sep) > width and line.strip() != label:
            lines.append(line.rstrip())
            line = " " * 12
        line += item + sep
    return lines + [line.rstrip().removesuffix(sep.strip())]


def _stage_counts(counts: Counter) -> list[str]:
    return [f"{s.value} {counts[s.value]}" for s in reversed(Stage) if counts[s.value]]


def _target_summary(artifact, target: str, decisions) -> list[str]:
    from opsweep.artifact.grade import AXES
    # the run's decisions, not the artifact's: specs carried from it (--only) were not decided
    decided = {n: d for n, d in decisions.items() if n in artifact.specs}
    title, reuse = f" target {target}", _reuse(decided, len(artifact.specs) - len(decided))
    fits = len(title) + len(reuse) + 2 <= SUMMARY_WIDTH
    lines = ([f"{title}: {reuse}"] if fits
             else [title, *_wrapped("reuse", reuse.split("; "), sep="; ")])
    order = ["full", "partial", "none", "blocked", "skipped", "n/a"]
    for axis in AXES:
        counts = Counter((getattr(r.grades, axis).value if getattr(r.grades, axis) else "n/a")
                         for r in artifact.operators.values())
        lines.append(f"  {axis:<10}" + "  ".join(f"{k} {counts[k]}" for k in order if counts[k]))
    stages: Counter = Counter()
    dynamic: Counter = Counter()
    for name in (n for n, d in decided.items() if not d.reuse):
        stages.update({s.value: n for s, n in artifact.specs[name].stages.items()})
        dynamic.update({s.value: n for s, n in artifact.specs[name].dynamic_stages.items()})
    lines += _wrapped("examples", _stage_counts(stages) or ["none run"])
    if dynamic:
        invalid = Stage.INVALID.value
        share = f"{invalid} {dynamic[invalid]} ({dynamic[invalid] / sum(dynamic.values()):.1%})"
        lines += _wrapped("re-export", [share if item.startswith(f"{invalid} ") else item
                                        for item in _stage_counts(dynamic)])  # the dynamic axis
    return lines + _spec_notes(artifact)


def _reuse(decided, carried: int) -> str:
    reasons = Counter(d.why for d in decided.values() if not d.reuse)
    reused = sum(d.reuse for d in decided.values())
    text = (f"reused {reused}, re-measured {sum(reasons.values())}"
            + "".join(f"; {n} {why}" for why, n in sorted(reasons.items())))
    return text + (f"; {carried} not selected, carried over" if carried else "")


def _spec_notes(artifact) -> list[str]:
    lines = []
    invalid = sorted(n for n, r in artifact.specs.items() if Stage.INVALID in r.stages)
    if invalid:
        lines.append(f"  spec bugs: PyTorch rejected drawn examples of {_names(invalid)}")
    lost = sorted(n for n, r in artifact.specs.items() if Stage.LOST in r.stages)
    if lost:
        lines.append(f"  lost: workers died or timed out before exporting examples of "
                     f"{_names(lost)} (no verdict either way)")
    from opsweep.artifact.specgrade import GapStatus
    stale = sorted(f"{n} ({r.gap.status})" for n, r in artifact.specs.items()
                   if r.gap is not None and not GapStatus(r.gap.status).holds)
    if stale:
        lines.append(f"  known-gap notes that no longer hold: {_names(stale)}")
    closed = sorted(n for n, r in artifact.specs.items()
                    if r.gap and r.gap.status == GapStatus.CLOSED)
    if closed:
        lines.append(f"  known gaps this target closes: {_names(closed)}")
    return lines


def cmd_sweep(args) -> int:
    import os

    from opsweep.catalog.load import load_catalog
    from opsweep.catalog.draw import resolve_profile
    from opsweep.cli.progress import display
    from opsweep.artifact.shard import parse_shard
    from opsweep.sweep.driver import Request, SweepConfig, regenerate

    profile = resolve_profile(args.profile)
    jobs = (os.cpu_count() or 1) if args.jobs is None else args.jobs
    if jobs < 0:
        raise UsageError(f"--jobs must be >= 0, got {jobs}")
    recycle = RECYCLE if args.recycle is None else args.recycle
    if recycle < 0:
        raise UsageError(f"--recycle must be >= 0, got {recycle}")
    if not args.progress_interval > 0:  # also NaN
        raise UsageError(f"--progress-interval must be > 0 seconds, got {args.progress_interval:g}")
    shard = parse_shard(args.shard) if args.shard else None
    catalog = load_catalog(args.specs)
    config = SweepConfig(profile, jobs=jobs, timeout=args.timeout,
                         spec_dirs=tuple(p.resolve() for p in args.specs),
                         fast=not args.public_exporter, translations=tuple(args.translations),
                         dynamic=not args.no_dynamic, verbose=args.verbose, recycle=recycle,
                         preload=not args.spawn)
    request = Request(tuple(args.only), args.out, args.previous, args.no_reuse, shard)
    started = time.monotonic()
    shown = display(args.quiet, args.progress_interval)
    try:
        result = regenerate(catalog, config, request, shown)
    finally:
        shown.close()
    broken = result.artifact.broken
    if broken is not None:
        _err(f"{broken.headline(result.artifact.fingerprint)} (recorded in {result.written or args.out}; "
             f"the {broken.target} target's canary stopped at {broken.stage})")
        return EXIT_BROKEN
    summary = _summary(result, result.written or args.out, time.monotonic() - started)
    print(summary)
    from opsweep.bot.actions import append_summary
    append_summary(f"```text\n{summary}\n```\n")  # under Actions, the job summary shows it too
    return EXIT_OK


def cmd_merge(args) -> int:
    from opsweep.artifact import data as art
    from opsweep.artifact.shard import merge
    parts = [(p, art.load(p)) for p in args.parts]
    merged = merge(parts)
    art.save(args.out, merged)
    print(f"opsweep: merged {len(parts)} shards, {len(merged.specs)} specs, "
          f"{len(merged.operators)} operators into {args.out}")
    return EXIT_OK


def cmd_render(args) -> int:
    from opsweep.origin import source_url
    from opsweep.page.render import render_files
    url = source_url(args.source_url, args.pyproject)
    view = render_files(args.onnx_report, args.out, torch_version=args.torch_version,
                        documented_path=args.documented, data_dir=args.data_dir,
                        history_dir=args.history, specs=args.specs, source_url=url)
    bar_core, bar_all = view.bars
    print(f"opsweep: wrote {args.out}: {len(view.rows)} operators; full {bar_core.numerator}/"
          f"{bar_core.denominator} core, {bar_all.numerator}/{bar_all.denominator} of the listing")
    return EXIT_OK


def cmd_diff(args) -> int:
    """Exit 0: no regressions; 1: regressions found, or the new pin set breaks the
    exporter; 2: bad input."""
    import json

    from opsweep.artifact import data as art
    from opsweep.artifact.diff import diff
    from opsweep.bot.comment import to_json, to_markdown
    from opsweep.bot.comment import partial_reason
    try:
        old, new = art.load(args.old), art.load(args.new)
    except OpsweepError as exc:
        _err(str(exc))
        return EXIT_USAGE
    reason = partial_reason(old, new)
    if reason and new.shard is None:  # lost specs count only while the catalog still has them
        from opsweep.catalog.load import load_catalog
        reason = partial_reason(old, new, frozenset(load_catalog(check_draws=False).specs))
    if reason:
        _err(f"{args.new}: not a whole sweep: {reason}; merge every shard first")
        return EXIT_USAGE
    result = diff(old, new)
    text = (json.dumps(to_json(result), indent=1, sort_keys=True) + "\n" if args.json
            else to_markdown(result, new))
    if args.out:
        from opsweep.files import write_atomic
        write_atomic(args.out, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    return 1 if result.failed else EXIT_OK


def cmd_pin_changed(args) -> int:
    from opsweep.bot.actions import write_outputs
    from opsweep.bot.pins import pin_change
    change = pin_change(args.base, args.head, args.pyproject, args.repo,
                        against_merge_base=not args.tip)
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
        args.github_output))
    return EXIT_OK


def cmd_history(args) -> int:
    from opsweep.artifact import data as art
    from opsweep.artifact import history
    from opsweep.files import write_atomic
    if args.step == "record":
        path = history.write(art.load(args.artifact), args.dir)
        print(f"opsweep: wrote {path}")
    else:
        records = history.load_all(args.dir)
        write_atomic(args.out, history.render(records).encode("utf-8"))
        print(f"opsweep: wrote {args.out}: {len(records)} pin sets "
              f"({', '.join(r.name for r in records)})")
    return EXIT_OK


def cmd_list(args) -> int:
    from opsweep.catalog.load import load_catalog
    catalog = load_catalog(args.specs, check_draws=False)
    for name, item in catalog.specs.items():
        gap = f"  [gap: {item.gap.stage.value}]" if item.gap else ""
        print(f"{name:<30} {item.family:<16} {', '.join(item.aten_ops)}{gap}")
    print(f"{len(catalog.specs)} specs, {len(catalog.by_operator)} operators, "
          f"{len(catalog.excluded)} excluded rows", file=sys.stderr)
    for name, absence in catalog.absent.items():
        print(f"not present in this torch: {name} ({absence.reason})", file=sys.stderr)
    return EXIT_OK


def cmd_attribution(args) -> int:
    """What each spec really traces, and the drawn examples eager PyTorch rejects."""
    from opsweep.engine.attribution import attribute, invalid_examples
    from opsweep.catalog.load import load_catalog
    from opsweep.errors import SpecError
    catalog = load_catalog(args.specs, check_draws=False)
    bad = 0
    for item in catalog.select(args.names or None):
        try:
            result = attribute(item)
        except SpecError as exc:
            bad += 1
            print(f"{item.name:<28} BROKEN {exc}")
            continue
        invalid = invalid_examples(item)
        verdict = "ok" if not result.missing else f"MISSING {', '.join(result.missing)}"
        bad += bool(result.missing) + bool(invalid)
        print(f"{item.name:<28} {verdict:<24} traced: {', '.join(sorted(result.traced))}")
        for signature, error in invalid[:3]:
            print(f"    INVALID example ({len(invalid)} of them) {signature}: {error}")
    return EXIT_ERROR if bad else EXIT_OK


def cmd_draw(args) -> int:
    """The examples a sweep would draw, one JSON line per spec (no export)."""
    import json

    from opsweep.catalog.load import load_catalog
    from opsweep.catalog.draw import draw_examples, resolve_profile
    from opsweep.engine.translations import load
    profile = resolve_profile(args.profile)
    catalog = load_catalog(args.specs, check_draws=False)
    for text in args.translations:  # loaded as the sweep loads them, before drawing
        load(text)
    for item in catalog.select(args.names or None):
        drawn = draw_examples(item, profile)
        print(json.dumps({"spec": item.name, "signatures": len({e.signature for e in drawn}),
                          "examples": [repr(e) for e in drawn]}))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opsweep", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_sweep(sub)
    p = sub.add_parser("list", help="list the catalog's specs")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p = sub.add_parser("attribution", help="what each spec really traces, and drawn examples "
                       "eager PyTorch rejects (exit 1 when any spec is off)")
    p.add_argument("names", nargs="*", metavar="NAME", help="specs to check (default: all)")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p = sub.add_parser("draw", help="print the examples a sweep draws for each spec (JSON lines)")
    p.add_argument("names", nargs="*", metavar="NAME", help="specs to draw (default: all)")
    p.add_argument("--profile", choices=["ci", "nightly"], default=None)
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p.add_argument("--translations", action="append", default=[], metavar="MODULE:TABLE")
    p = sub.add_parser("render", help="render the support page from an artifact")
    p.add_argument("--onnx-report", type=Path, default=None, metavar="ARTIFACT",
                   help="the measured artifact; without it, only the retired listing's claims")
    p.add_argument("--out", type=Path, default=Path("docs/supported_operators.md"))
    p.add_argument("--torch-version", default=None,
                   help="torch version the page targets (default: the installed one)")
    p.add_argument("--documented", type=Path, default=Path("docs/data/documented.json"),
                   help="the retired TorchScript listing's claims (scripts/recompute_documented.py)")
    p.add_argument("--data-dir", type=Path, default=Path("docs/data"),
                   help="where the per-version documentation-link cache lives")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p.add_argument("--history", type=Path, default=DEFAULT_HISTORY, metavar="DIR",
                   help="history records, for grades per release and the last bump's changes")
    p.add_argument("--source-url", default=None, metavar="URL",
                   help="base URL of the repository's files, to link each spec to its source "
                   "(default: [tool.opsweep] source-url in --pyproject; '' for none)")
    p.add_argument("--pyproject", type=Path, default=Path("pyproject.toml"),
                   help="where [tool.opsweep] source-url is read from, when --source-url is not given")
    p = sub.add_parser("diff", help="grade transitions between two artifacts "
                       "(exit 1 when there are regressions)")
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("--json", action="store_true", help="JSON instead of markdown")
    p.add_argument("--out", type=Path, default=None, help="write here instead of stdout")
    p = sub.add_parser("pin-changed", help="did a watched pin in pyproject.toml move since REF (its merge base)?")
    p.add_argument("--base", required=True, metavar="REF")
    p.add_argument("--head", default="HEAD", metavar="REF", help="'' for the working tree")
    p.add_argument("--pyproject", default="pyproject.toml")
    p.add_argument("--repo", type=Path, default=Path("."))
    p.add_argument("--tip", action="store_true",
                   help="compare against REF itself, not its merge base with --head")
    p.add_argument("--github-output", default=None, metavar="FILE",
                   help="append changed/old/new to this file (default: $GITHUB_OUTPUT)")
    from opsweep.cli.bot import add_parser as add_bot_parser
    add_bot_parser(sub)
    p = sub.add_parser("history", help="per-torch-version records and the history view")
    steps = p.add_subparsers(dest="step", required=True)
    q = steps.add_parser("record", help="write (or replace) the record of the artifact's torch")
    q.add_argument("--artifact", type=Path, default=DEFAULT_ARTIFACT)
    q.add_argument("--dir", type=Path, default=DEFAULT_HISTORY)
    q = steps.add_parser("render", help="render the history view from every record")
    q.add_argument("--dir", type=Path, default=DEFAULT_HISTORY)
    q.add_argument("--out", type=Path, default=DEFAULT_HISTORY_PAGE)
    p = sub.add_parser("merge", help="combine shard artifacts into one")
    p.add_argument("parts", type=Path, nargs="+", metavar="PART")
    p.add_argument("--out", type=Path, default=DEFAULT_ARTIFACT)
    return parser


COMMANDS = {"sweep": cmd_sweep, "list": cmd_list, "draw": cmd_draw, "attribution": cmd_attribution, "merge": cmd_merge, "render": cmd_render,
            "diff": cmd_diff, "pin-changed": cmd_pin_changed, "history": cmd_history}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args) if args.command == "bot" else COMMANDS[args.command](args)
    except KeyboardInterrupt:
        _err("interrupted: the artifact was not touched; a sweep keeps its finished specs in a "
             "checkpoint beside the artifact, and running the same command again resumes it")
        return 130
    except OpsweepError as exc:
        _err(str(exc))
        return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())

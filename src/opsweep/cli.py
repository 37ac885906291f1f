"""The command line: the only place that prints and chooses exit codes."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from .errors import OpsweepError, UsageError
from .model import Stage

DEFAULT_ARTIFACT = Path("docs/onnx_support_measured.json")
DEFAULT_HISTORY = Path("docs/history")
DEFAULT_HISTORY_PAGE = Path("docs/history.md")
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


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
    p.add_argument("--timeout", type=float, default=180.0,
                   help="seconds allowed for one export before the worker is replaced")
    p.add_argument("--translations", action="append", default=[], metavar="MODULE:TABLE",
                   help="also measure the catalog with this custom_translation_table (a dotted "
                        "module or a .py file, then the table's name); a second target")
    p.add_argument("--no-dynamic", action="store_true",
                   help="skip the dynamic axis (re-export with the leading dimension dynamic)")
    p.add_argument("--public-exporter", action="store_true",
                   help="call torch.onnx.export for every example instead of the fast path")
    p.add_argument("--quiet", action="store_true", help="no per-spec progress lines")


def _grades(r) -> str:
    from .grade import AXES
    return "/".join((getattr(r.grades, axis).value if getattr(r.grades, axis) else "-")
                    for axis in AXES)


def _progress(quiet: bool, started: float):
    def report(done) -> None:
        if quiet:
            return
        r = done.result
        how = "reused" if r.reuse.reused else f"{r.examples:>3} ex"
        width = len(str(done.total))
        name = done.name if done.target == "stock" else f"{done.name} @{done.target.split(':')[-1]}"
        print(f"[{done.index:>{width}}/{done.total}] {name:<28} {_grades(r):<32} "
              f"{how:<7} {time.monotonic() - started:7.1f}s", file=sys.stderr, flush=True)
    return report


def _summary(result, out: Path, seconds: float) -> str:
    artifact = result.artifact
    ops = artifact.operators
    fp = artifact.fingerprint
    lines = [f"opsweep: {len(artifact.specs)} specs, {len(ops)} aten operators, profile "
             f"{artifact.profile}, torch {fp.torch}, opset {fp.opset}, exporter {fp.exporter}, "
             f"{seconds:.0f}s"]
    for target in artifact.target_names:
        lines += _target_summary(artifact.view(target), target)
    if result.resumed:
        lines.append(f"  resumed  {result.resumed} specs from the checkpoint")
    lines += [f"  note: {n}" for n in result.notes]
    lines.append(f"  wrote {out}")
    return "\n".join(lines)


def _target_summary(artifact, target: str) -> list[str]:
    from .grade import AXES
    lines = [f" target {target}"]
    order = ["full", "partial", "none", "blocked", "skipped", "n/a"]
    for axis in AXES:
        counts = Counter((getattr(r.grades, axis).value if getattr(r.grades, axis) else "n/a")
                         for r in artifact.operators.values())
        lines.append(f"  {axis:<9}" + "  ".join(f"{k} {counts[k]}" for k in order if counts[k]))
    stages: Counter = Counter()
    dynamic: Counter = Counter()
    for r in artifact.specs.values():
        if not r.reuse.reused:
            stages.update({s.value: n for s, n in r.stages.items()})
            dynamic.update({s.value: n for s, n in r.dynamic_stages.items()})
    lines.append("  examples " + ("  ".join(f"{k} {stages[k]}" for k in sorted(stages)) or "none run"))
    if dynamic:
        lines.append("  dynamic  " + "  ".join(f"{k} {dynamic[k]}" for k in sorted(dynamic)))
    reasons = Counter(r.reuse.reason.split(" (")[0].split(":")[0]
                      for r in artifact.specs.values() if not r.reuse.reused)
    reused = sum(r.reuse.reused for r in artifact.specs.values())
    lines.append(f"  reuse    reused {reused}, re-measured {sum(reasons.values())}"
                 + "".join(f"; {n} {why}" for why, n in sorted(reasons.items())))
    invalid = sorted(n for n, r in artifact.specs.items() if Stage.INVALID in r.stages)
    if invalid:
        lines.append(f"  spec bugs: PyTorch rejected drawn examples of {', '.join(invalid)}")
    stale = sorted(f"{n} ({r.gap.status})" for n, r in artifact.specs.items()
                   if r.gap is not None and r.gap.status not in ("confirmed", "closed"))
    if stale:
        lines.append(f"  known-gap notes that no longer hold: {', '.join(stale)}")
    closed = sorted(n for n, r in artifact.specs.items() if r.gap and r.gap.status == "closed")
    if closed:
        lines.append(f"  known gaps this target closes: {', '.join(closed)}")
    return lines


def cmd_sweep(args) -> int:
    import os

    from .catalog import load_catalog
    from .draw import resolve_profile
    from .shard import parse_shard
    from .sweep import Request, SweepConfig, regenerate

    profile = resolve_profile(args.profile)
    jobs = (os.cpu_count() or 1) if args.jobs is None else args.jobs
    if jobs < 0:
        raise UsageError(f"--jobs must be >= 0, got {jobs}")
    shard = parse_shard(args.shard) if args.shard else None
    catalog = load_catalog(args.specs)
    config = SweepConfig(profile, jobs=jobs, timeout=args.timeout,
                         spec_dirs=tuple(p.resolve() for p in args.specs),
                         fast=not args.public_exporter, translations=tuple(args.translations),
                         dynamic=not args.no_dynamic)
    request = Request(tuple(args.only), args.out, args.previous, args.no_reuse, shard)
    started = time.monotonic()
    result = regenerate(catalog, config, request, _progress(args.quiet, started))
    print(_summary(result, args.out, time.monotonic() - started))
    return EXIT_OK


def cmd_merge(args) -> int:
    from . import artifact as art
    from .shard import merge
    parts = [(p, art.load(p)) for p in args.parts]
    merged = merge(parts)
    art.save(args.out, merged)
    print(f"opsweep: merged {len(parts)} shards, {len(merged.specs)} specs, "
          f"{len(merged.operators)} operators into {args.out}")
    return EXIT_OK


def cmd_render(args) -> int:
    import torch

    from . import artifact as art
    from . import documented, links
    from .catalog import load_catalog
    from .listing import installed_listing
    from .registry import registered_rows
    from .render import build_view, check_versions, render_page, write_page

    report = art.load(args.onnx_report) if args.onnx_report else None
    version = check_versions(report, torch.__version__, args.torch_version)
    listing = installed_listing()
    catalog = load_catalog(args.specs, check_draws=False)
    opset = report.fingerprint.opset if report else None
    view = build_view(listing, catalog, report, documented.load(args.documented),
                      registered_rows(opset), links.cached(listing.rows, version, args.data_dir),
                      version)
    write_page(args.out, render_page(view))
    bar_core, bar_all = view.bars
    print(f"opsweep: wrote {args.out}: {len(view.rows)} operators; full {bar_core.numerator}/"
          f"{bar_core.denominator} core, {bar_all.numerator}/{bar_all.denominator} of the listing")
    return EXIT_OK


def cmd_diff(args) -> int:
    """Exit 0: no regressions; 1: regressions found; 2: bad input."""
    import json

    from . import artifact as art
    from .diff import diff
    from .report import to_json, to_markdown
    from .report import partial_reason
    try:
        old, new = art.load(args.old), art.load(args.new)
    except OpsweepError as exc:
        _err(str(exc))
        return EXIT_USAGE
    reason = partial_reason(old, new)
    if reason and new.shard is None:  # lost specs count only while the catalog still has them
        from .catalog import load_catalog
        reason = partial_reason(old, new, frozenset(load_catalog(check_draws=False).specs))
    if reason:
        _err(f"{args.new}: not a whole sweep: {reason}; merge every shard first")
        return EXIT_USAGE
    result = diff(old, new)
    text = (json.dumps(to_json(result), indent=1, sort_keys=True) + "\n" if args.json
            else to_markdown(result, new))
    if args.out:
        from .artifact import write_atomic
        write_atomic(args.out, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    return 1 if result.regressions else EXIT_OK


def cmd_pin_changed(args) -> int:
    from .bot_cli import write_outputs
    from .pin import pin_change
    change = pin_change(args.base, args.head, args.pyproject, args.repo,
                        against_merge_base=not args.tip)
    print(f"torch pin: {change.old or 'none'} -> {change.new or 'none'} "
          f"({'changed' if change.changed else 'unchanged'}; against {change.base[:12]})")
    for move in change.moves:
        print(f"  moved: {move}")
    write_outputs({"changed": change.changed, "old": change.old or "", "new": change.new or "",
                   "moved": ",".join(f"{m.name}:{m.old or ''}:{m.new or ''}" for m in change.moves)},
                  args.github_output)
    return EXIT_OK


def cmd_history(args) -> int:
    from . import artifact as art
    from . import history
    if args.step == "record":
        path = history.write(art.load(args.artifact), args.dir)
        print(f"opsweep: wrote {path}")
    else:
        records = history.load_all(args.dir)
        art.write_atomic(args.out, history.render(records).encode("utf-8"))
        print(f"opsweep: wrote {args.out}: {len(records)} torch versions "
              f"({', '.join(r.version for r in records)})")
    return EXIT_OK


def cmd_list(args) -> int:
    from .catalog import load_catalog
    catalog = load_catalog(args.specs, check_draws=False)
    for name, item in catalog.specs.items():
        gap = f"  [gap: {item.gap.stage.value}]" if item.gap else ""
        print(f"{name:<30} {item.family:<16} {', '.join(item.aten_ops)}{gap}")
    print(f"{len(catalog.specs)} specs, {len(catalog.by_operator)} operators, "
          f"{len(catalog.excluded)} excluded rows", file=sys.stderr)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opsweep", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_sweep(sub)
    p = sub.add_parser("list", help="list the catalog's specs")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
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
    from .bot_cli import add_parser as add_bot_parser
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


COMMANDS = {"sweep": cmd_sweep, "list": cmd_list, "merge": cmd_merge, "render": cmd_render,
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

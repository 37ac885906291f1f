"""The command line: the only place that prints and chooses exit codes."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from .errors import OpsweepError, UsageError

DEFAULT_ARTIFACT = Path("docs/onnx_support_measured.json")
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _err(message: str) -> None:
    print(f"opsweep: error: {message}", file=sys.stderr)


def _add_sweep(sub) -> None:
    p = sub.add_parser("sweep", help="measure the catalog and write the artifact")
    p.add_argument("--profile", choices=["ci", "nightly"], default=None,
                   help="hypothesis profile (default: $OPSWEEP_HYP_PROFILE, else ci)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="measure only these specs")
    p.add_argument("--out", type=Path, default=DEFAULT_ARTIFACT, help="artifact path")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR",
                   help="another directory of spec modules, measured beside the built-in ones")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: CPU count; 0 runs inline, without isolation)")
    p.add_argument("--timeout", type=float, default=180.0,
                   help="seconds allowed for one export before the worker is replaced")
    p.add_argument("--public-exporter", action="store_true",
                   help="call torch.onnx.export for every example instead of the fast path")
    p.add_argument("--quiet", action="store_true", help="no per-spec progress lines")


def _progress(quiet: bool, started: float):
    def report(done) -> None:
        if quiet:
            return
        r = done.result
        grades = "/".join((g.value if g else "-") for g in
                          (r.grades.export, r.grades.runtime, r.grades.numerics))
        width = len(str(done.total))
        print(f"[{done.index:>{width}}/{done.total}] {done.name:<28} {grades:<24} "
              f"{r.examples:>3} ex  {time.monotonic() - started:7.1f}s", file=sys.stderr, flush=True)
    return report


def _summary(artifact, out: Path, seconds: float) -> str:
    ops = artifact.operators
    lines = [f"opsweep: {len(artifact.specs)} specs, {len(ops)} aten operators, "
             f"profile {artifact.profile}, torch {artifact.fingerprint.torch}, "
             f"opset {artifact.fingerprint.opset}, {seconds:.0f}s"]
    for axis in ("export", "runtime", "numerics"):
        counts = Counter((getattr(r.grades, axis).value if getattr(r.grades, axis) else "n/a")
                         for r in ops.values())
        order = ["full", "partial", "none", "blocked", "skipped", "n/a"]
        lines.append(f"  {axis:<9}" + "  ".join(f"{k} {counts[k]}" for k in order if counts[k]))
    stages = Counter()
    for r in artifact.specs.values():
        stages.update({s.value: n for s, n in r.stages.items()})
    lines.append("  examples " + "  ".join(f"{k} {stages[k]}" for k in sorted(stages)))
    invalid = sorted(n for n, r in artifact.specs.items() if any(
        s.value == "invalid" for s in r.stages))
    if invalid:
        lines.append(f"  spec bugs: PyTorch rejected drawn examples of {', '.join(invalid)}")
    moved = sorted(f"{n} ({r.gap.status})" for n, r in artifact.specs.items()
                   if r.gap is not None and r.gap.status != "confirmed")
    if moved:
        lines.append(f"  known-gap notes that no longer hold: {', '.join(moved)}")
    lines.append(f"  wrote {out}")
    return "\n".join(lines)


def cmd_sweep(args) -> int:
    import os

    from . import artifact as art
    from .catalog import load_catalog
    from .draw import resolve_profile
    from .sweep import SweepConfig, current_fingerprint, run_sweep

    profile = resolve_profile(args.profile)
    catalog = load_catalog(args.specs)
    specs = catalog.select(args.only)
    jobs = (os.cpu_count() or 1) if args.jobs is None else args.jobs
    if jobs < 0:
        raise UsageError(f"--jobs must be >= 0, got {jobs}")
    config = SweepConfig(profile, jobs=jobs, timeout=args.timeout,
                         spec_dirs=tuple(p.resolve() for p in args.specs),
                         fast=not args.public_exporter)
    started = time.monotonic()
    results = run_sweep(specs, config, _progress(args.quiet, started))
    stamp = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    artifact = art.make_artifact(current_fingerprint(config.exporter_path), profile.name, profile.max_examples, 0,
                                 results, stamp)
    art.save(args.out, artifact)
    print(_summary(artifact, args.out, time.monotonic() - started))
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
    return parser


COMMANDS = {"sweep": cmd_sweep, "list": cmd_list}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        _err("interrupted; nothing was written")
        return 130
    except OpsweepError as exc:
        _err(str(exc))
        return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())

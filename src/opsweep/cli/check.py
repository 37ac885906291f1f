"""`opsweep check MODEL...`: your models against the measured table, before you bump.

Exit 0 when every model exports, runs and matches (with --no-export: when no use is
measured failing), 1 when one does not, 2 for bad input (a model that cannot be loaded
or run, a bad artifact or setting), with one line naming it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from opsweep.artifact import data as art
from opsweep.cli.settings import MODELS_SETTING, models
from opsweep.errors import UsageError
from opsweep.files import DEFAULT, write_atomic

RECORD_VERSION = 1


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="check your models against the measured table, then "
                       "export them for real (exit 1 when one fails)")
    p.add_argument("models", nargs="*", metavar="MODEL",
                   help=f"module:callable or a .pt2 file (default: {MODELS_SETTING})")
    p.add_argument("--artifact", type=Path, default=Path(DEFAULT.artifact))
    p.add_argument("--against", type=Path, default=None, metavar="OTHER_ARTIFACT",
                   help="also show the uses whose verdict differs in this artifact")
    p.add_argument("--no-export", action="store_true",
                   help="the table lookup alone (no real export)")
    p.add_argument("--json", action="store_true", help="JSON on stdout")
    p.add_argument("--markdown", action="store_true", help="markdown on stdout")
    p.add_argument("--record", type=Path, default=None, metavar="FILE",
                   help="also write the JSON record here (what the bot diffs)")
    p.add_argument("--pyproject", type=Path, default=Path(DEFAULT.pyproject))


def record_data(reports) -> dict:
    # the check package: torch, the exporter
    from opsweep.check.report import to_data
    return {"models_version": RECORD_VERSION, "models": [to_data(r) for r in reports]}


def run_checks(sources, artifact, other=None, export: bool = True):
    # the check package: torch, the exporter, onnxruntime
    from opsweep.catalog.load import exclusions
    from opsweep.check.models import load_model
    from opsweep.check.run import check
    from opsweep.engine.adapter import quiet_exporter
    from opsweep.engine.runner import quiet_runtime
    quiet_exporter()
    quiet_runtime()
    excluded = exclusions()
    cases = [load_model(s) for s in sources]  # every model loads before any is checked
    return [check(c, artifact, excluded, export=export, other=other) for c in cases]


def cmd_check(args) -> int:
    sources = tuple(args.models) or models(args.pyproject)
    if not sources:
        raise UsageError(f"no MODEL given and no {MODELS_SETTING} in {args.pyproject}")
    artifact = art.load(args.artifact)
    other = art.load(args.against) if args.against else None
    reports = run_checks(sources, artifact, other, not args.no_export)
    data = record_data(reports)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.record:
        write_atomic(args.record, text.encode("utf-8"))
    if args.json:
        sys.stdout.write(text)
    elif args.markdown:
        from opsweep.check.report import to_markdown  # the check package: torch
        sys.stdout.write(to_markdown(reports))
    else:
        show(reports)
    return 1 if any(r.failed for r in reports) else 0


def show(reports) -> None:
    """The terminal table: one screen per model."""
    # rich: the terminal display only
    from rich.console import Console
    from rich.table import Table

    from opsweep.check.report import label  # the check package: torch
    from opsweep.check.table import STATUSES
    console = Console(width=max(Console().width, 120))
    for rep in reports:
        real = rep.reality
        head = Table(title=f"{rep.name} ({rep.source})", show_lines=False)
        for column in ("axis", "table predicts", "real export"):
            head.add_column(column)
        values = {} if real is None else {"export": real.export, "runtime": real.runtime,
                                          "numerics": real.numerics, "dynamic": real.dynamic}
        for axis, said in rep.prediction.items():
            head.add_row(axis, said, values.get(axis) or "not run")
        console.print(head)
        if rep.capture.error:
            console.print(f"capture failed: {rep.capture.error}", markup=False)
        if real is not None and real.error:
            node = f" at node {real.node} (aten::{real.op})" if real.node else ""
            console.print(f"real: {real.stage}{node}: {real.error}", markup=False)
        uses = Table(show_lines=False)
        for column in ("operator", "dtype", "rank", "uses", "table", "detail"):
            uses.add_column(column, overflow="fold")
        for v in sorted(rep.verdicts, key=lambda v: (STATUSES.index(v.status), v.use.key)):
            uses.add_row(v.use.op, v.use.dtype, str(v.use.rank), str(v.use.count), label(v),
                         _short(v.failures[0].error if v.failures else v.why))
        console.print(uses)
        if rep.capture.other:
            console.print("unattributable (not aten): " + ", ".join(rep.capture.other), markup=False)
        for gap in rep.gaps:
            console.print(f"prediction vs reality: {gap}", markup=False)
        for c in rep.against or ():
            console.print(f"against: {c.op} {c.dtype} rank {c.rank}: {c.old} → {c.new}", markup=False)


def _short(text: str, most: int = 100) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"

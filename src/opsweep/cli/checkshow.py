"""`opsweep check`'s terminal report: the measured table and the installed stack first
(a loud warning when their torch differs), then one screen per model: the verdict per
axis, the real export in sentences (the observed error against the tolerance), the table's
word on every operator the model uses, each failing one's repro, the gaps between
prediction and reality, and with --against what changes in the other table."""

from __future__ import annotations

# rich: the terminal display only; the check package: torch (imported by the caller first)
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from opsweep.check.advice import STATUS_WORDS, advice, failure_line, outcome, repro
from opsweep.check.report import (AXES, fallback_line, opset_of, other_line, queries_line,
                                  lose_lines, summary_line, target_rows)
from opsweep.check.table import FAILING, STATUSES

#: every failing operator gets its repro; past this many, --verbose shows the rest
REPROS = 3


def show(reports, table, verbose: bool = False, console: Console | None = None) -> None:
    console = console or Console(width=max(Console().width, 120), highlight=False)
    head(console, table)
    for rep in reports:
        brief = summary_line(rep)  # a lost model, a reused entry: one line
        if brief is not None:
            console.print(brief, markup=False, style="bold red" if hasattr(rep, "why") else None)
            console.print()
            continue
        model(console, rep, verbose)


def head(console: Console, table) -> None:
    warning = table.warning()
    if warning:
        console.print(Text(f"WARNING: {warning}", style="bold red"))
    grid = RichTable.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    for label, text in table.lines():
        grid.add_row(Text(label), Text(text))
    console.print(grid)
    console.print()


def model(console: Console, rep, verbose: bool) -> None:
    real = rep.reality
    axes = RichTable(title=f"{rep.name} ({rep.source})", title_justify="left")
    for column in ("axis", "table predicts", "real export"):
        axes.add_column(column)
    values = {} if real is None else {"export": real.export, "runtime": real.runtime,
                                      "numerics": real.numerics, "dynamic": real.dynamic}
    for axis, said in rep.prediction.items():
        axes.add_row(axis, said, values.get(axis) or "not run")
    console.print(axes)
    if rep.targets:
        targets(console, rep)
    if rep.capture.error:
        console.print(f"Capture failed: {rep.capture.error}", markup=False)
    if rep.capture.fallback:
        console.print(fallback_line(rep.capture), markup=False)
    for line in outcome(real) if real is not None else ():
        console.print(line, markup=False)
    order = sorted(rep.verdicts, key=lambda v: (STATUSES.index(v.status), v.use.key))
    uses = RichTable(title="what the table says of each operator the model calls",
                     title_justify="left")
    for column in ("operator", "dtype", "rank", "calls", "table", "what the table says"):
        uses.add_column(column, overflow="fold")
    for v in order:
        uses.add_row(v.use.op, v.use.dtype, str(v.use.rank), str(v.use.count),
                     STATUS_WORDS[v.status], advice(v, verbose))
    console.print(uses)
    if rep.capture.other:
        console.print(other_line(rep.capture), markup=False)
    if rep.capture.queries:
        console.print(queries_line(rep.capture), markup=False)
    failing = [(v, f) for v in order if v.status == FAILING for f in v.failures]
    for v, f in failing[: None if verbose else REPROS]:
        console.print(f"Failing in the table: {failure_line(v, f)}", markup=False)
        # plain and unwrapped: copied as it is printed
        console.print(repro(f, opset_of(rep)).rstrip(), markup=False, soft_wrap=True)
    if len(failing) > REPROS and not verbose:
        console.print(f"({len(failing) - REPROS} more failing in the table: --verbose shows "
                      "their repros)")
    for gap in rep.shown_gaps(verbose):
        console.print(f"Prediction vs reality: {gap}", markup=False)
    hidden = rep.shown_gaps(True) != rep.shown_gaps()
    if not verbose and (hidden or any(v.hint for v in rep.verdicts)):
        console.print("(--verbose adds what a spec author would change so that the table could "
                      "say more)")
    if rep.against is not None and not rep.against:
        console.print("Against the other table: no operator the model calls changes verdict")
    for c in rep.against or ():
        console.print(f"Against the other table: {c.op} at {c.dtype} rank {c.rank}: {c.new} "
                      f"in this table, {c.old} in the other", markup=False)
    console.print()


def targets(console: Console, rep) -> None:
    """Each target the model was checked with: its real verdicts beside its table's."""
    table = RichTable(title="with each target: real export (table's prediction)",
                      title_justify="left")
    table.add_column("target", overflow="fold")
    for axis in AXES:
        if axis != "dynamic" or rep.dynamic:
            table.add_column(axis)
    table.add_column("first failure", overflow="fold")
    for name, cells, why in target_rows(rep):
        table.add_row(name, *cells, why)
    console.print(table)
    for line in lose_lines(rep):
        console.print(line, markup=False)

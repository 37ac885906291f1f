"""The history view (``history.md``): every recorded pin set, in an order where no step
moves a pin backwards (:mod:`opsweep.artifact.points`), the transitions of each step of that
chain and of each point beside it, a comparison of any two points the reader picks, the
operators whose grades changed and the chart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from opsweep.artifact.diff import KINDS_ORDER, Kind
from opsweep.artifact.points import order
from opsweep.artifact.records import Record, bumps, compare, same_specs
from opsweep.errors import DataFileError
from opsweep.page.chart import svg, table
from opsweep.page.glyphs import glyph_code
from opsweep.page.templates import environment
from opsweep.targets import STOCK, stock_first


@dataclass(frozen=True)
class HistoryRow:
    op: str
    cells: tuple[str, ...]  # per point: four badges, or '-' when not measured
    changed: bool  # its grades moved between two points the same specs measured
    anew: bool = False  # its grades moved only where the specs measuring it changed


def rows(records: Sequence[Record], target: str) -> list[HistoryRow]:
    """Each operator the target measured at some point. Only the points that measured the
    target at all are compared (a target new at the latest point changed nothing), each
    with the next: a grade that moved where the specs measuring the operator changed is
    measured anew (`anew`), never a change of the pins (`changed`)."""
    ops = sorted({op for r in records for op in r.targets.get(target, {})})
    measured = [r for r in records if target in r.targets]
    out = []
    for op in ops:
        codes = [r.targets.get(target, {}).get(op) for r in records]
        moved = anew = False
        for a, b in zip(measured, measured[1:]):
            x, y = a.targets[target].get(op), b.targets[target].get(op)
            if x != y:  # newly measured or no longer measured is a change of the pins
                if x is None or y is None or same_specs(a, b, op):
                    moved = True
                else:
                    anew = True
        out.append(HistoryRow(op, tuple(glyph_code(c) for c in codes), moved, anew and not moved))
    return out


def render(records: Sequence[Record]) -> str:
    if not records:
        raise DataFileError("<history>", "", "no history records to render")
    found = order(records)
    points = found.points
    targets = sorted({t for r in records for t in r.targets}, key=stock_first)
    pairs = [(i, j, compare(a, b)) for i, a in enumerate(points) for j, b in enumerate(points)
             if i < j]  # the page shows a reversed pick as its forward pair
    beside = {side.name: at.name for side, at in found.beside}
    template = environment().get_template("history.md.j2")
    return template.render(records=points, beside=beside, bumps=bumps(records), kinds=KINDS_ORDER,
                           anew_kind=Kind.MEASURED_ANEW,
                           tables=[(t, rows(points, t), [r.name for r in points if t in r.targets])
                                   for t in targets], stock=STOCK,
                           chart=svg(found.chain), chart_table=table(found.chain), pairs=pairs,
                           newest=points.index(found.chain[-1]), oldest=points.index(found.chain[0]),
                           linked=frozenset(found.chain[-1].targets.get(STOCK, {})))

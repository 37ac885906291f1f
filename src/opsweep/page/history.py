"""The history view (``history.md``): every recorded pin set, in an order where no step
moves a pin backwards (:mod:`opsweep.artifact.points`), the transitions of each step of that
chain and of each point beside it, a comparison of any two points the reader picks, the
operators whose grades changed and the chart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from opsweep.artifact.diff import KINDS_ORDER, Kind
from opsweep.artifact.points import order
from opsweep.artifact.records import Record, bumps, compare
from opsweep.errors import DataFileError
from opsweep.page.chart import svg, table
from opsweep.page.glyphs import glyph_code
from opsweep.page.templates import environment
from opsweep.targets import STOCK, stock_first


@dataclass(frozen=True)
class HistoryRow:
    op: str
    cells: tuple[str, ...]  # per point: four badges, or '-' when not measured
    changed: bool


def rows(records: Sequence[Record], target: str) -> list[HistoryRow]:
    ops = sorted({op for r in records for op in r.targets.get(target, {})})
    out = []
    for op in ops:
        codes = [r.targets.get(target, {}).get(op) for r in records]
        out.append(HistoryRow(op, tuple(glyph_code(c) for c in codes), len(set(codes)) > 1))
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
                           tables=[(t, rows(points, t)) for t in targets], stock=STOCK,
                           chart=svg(found.chain), chart_table=table(found.chain), pairs=pairs,
                           newest=points.index(found.chain[-1]), oldest=points.index(found.chain[0]),
                           linked=frozenset(found.chain[-1].targets.get(STOCK, {})))

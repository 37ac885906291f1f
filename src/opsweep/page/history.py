"""The history view (``history.md``): every recorded pin set, the transitions of each
step between them, the grades per release and the chart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from opsweep.artifact.data import STOCK
from opsweep.artifact.diff import KINDS_ORDER
from opsweep.artifact.records import Record, bumps
from opsweep.errors import DataFileError
from opsweep.page.chart import svg, table
from opsweep.page.glyphs import glyph_code
from opsweep.page.templates import environment


@dataclass(frozen=True)
class HistoryRow:
    op: str
    cells: tuple[str, ...]  # per version: four glyphs, or '-' when not measured
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
    targets = sorted({t for r in records for t in r.targets}, key=lambda t: (t != STOCK, t))
    template = environment().get_template("history.md.j2")
    return template.render(records=records, bumps=bumps(records), kinds=KINDS_ORDER,
                           tables=[(t, rows(records, t)) for t in targets], stock=STOCK,
                           chart=svg(records), chart_table=table(records))

"""The observed error on the pages (issue 51): per operator, each (dtype, rank) cell its
specs compared, next to the cell's numerics grade, with the worst error at a glance (in
ULP at float16/bfloat16) and its distribution on demand (`ErrorView`, the operator's
page); and per operator the largest error in ULP among its cells within tolerance
(`within_ulp`, the support page's "within tolerance but more than N ULP" filter).

An artifact without recorded error (measured before schema 6) gives neither: its pages
say nothing about it.
"""

from __future__ import annotations

from dataclasses import dataclass

from opsweep.artifact.data import Artifact
from opsweep.artifact.numerics import CellError
from opsweep.artifact.results import SpecResult, TargetResult
from opsweep.model import Grade, Stage
from opsweep.page.glyphs import badge
from opsweep.targets import is_stock, unless_stock


@dataclass(frozen=True)
class ErrorCell:
    target: str  # "" for the stock exporter
    spec: str
    dtype: str
    rank: int
    grade: str  # the cell's numerics grade, a badge
    failing: int  # examples failing numerics, of `n` compared
    n: int
    worst: str  # "9 ULP" at float16/bfloat16, else the largest absolute error
    distribution: tuple[tuple[str, str], ...]  # (what, value), shown on demand


@dataclass(frozen=True)
class ErrorView:
    cells: tuple[ErrorCell, ...]
    policy: str  # the policy that graded them ("" when the artifact names none)

    @property
    def worst(self) -> ErrorCell | None:
        """The stock cell with the largest error in ULP, if any was counted in ULP."""
        counted = [c for c in self.cells if not c.target and c.worst.endswith(" ULP")]
        return max(counted, key=lambda c: int(c.worst.split()[0]), default=None)

    @property
    def targets(self) -> bool:
        return any(c.target for c in self.cells)

    @property
    def specs(self) -> bool:
        return len({c.spec for c in self.cells}) > 1


def _num(x: float) -> str:
    return f"{x:.4g}"


def _failing(result: SpecResult, cell: CellError) -> int:
    """The cell's examples that failed numerics (the outcome counts; the record's own
    count when there are none)."""
    if result.outcomes is None:
        return cell.nonfinite + cell.exact
    return sum(c.count for c in result.outcomes
               if (c.dtype, c.rank, c.stage) == (cell.dtype, cell.rank, Stage.NUMERICS))


def _grade(failing: int, n: int) -> Grade:
    return Grade.FULL if not failing else Grade.NONE if failing >= n else Grade.PARTIAL


def _distribution(c: CellError) -> tuple[tuple[str, str], ...]:
    rows = [("examples compared", str(c.n)), ("largest absolute error", _num(c.max_abs)),
            ("median absolute error", _num(c.median_abs)),
            ("largest relative error", _num(c.max_rel))]
    if c.ulp is not None:
        rows.append(("largest error in ULP", str(c.ulp)))
    if c.nonfinite:
        rows.append(("NaN or infinity misplaced", f"{c.nonfinite} examples"))
    if c.exact:
        rows.append(("exact outputs differing", f"{c.exact} examples"))
    rows.append(("compared at", "exactly" if c.tolerance is None else
                 f"rtol={c.tolerance.rtol:g} atol={c.tolerance.atol:g}"))
    return tuple(rows)


def _cells(view: TargetResult, spec: str, result: SpecResult) -> list[ErrorCell]:
    out = []
    for c in result.errors or ():
        failing = min(_failing(result, c), c.n)
        worst = f"{c.ulp} ULP" if c.ulp is not None else _num(c.max_abs)
        out.append(ErrorCell(unless_stock(view.name), spec, c.dtype, c.rank,
                             badge(_grade(failing, c.n)), failing, c.n, worst, _distribution(c)))
    return out


def error_view(artifact: Artifact | None, op: str) -> ErrorView | None:
    """`op`'s cells, stock first, another target's only where its error differs; None when
    no spec of it recorded any."""
    if artifact is None:
        return None
    stock = artifact.stock
    cells: list[ErrorCell] = []
    for view in artifact.results.values():
        result = view.operators.get(op)
        for spec in result.specs if result is not None else ():
            mine = view.specs[spec]
            if not is_stock(view.name) and spec in stock.specs \
                    and stock.specs[spec].errors == mine.errors:
                continue
            cells += _cells(view, spec, mine)
    return ErrorView(tuple(cells), artifact.policy) if cells else None


def within_ulp(artifact: Artifact | None, op: str) -> int | None:
    """The largest error in ULP among `op`'s stock cells whose every example was within
    tolerance (None: no such cell was counted in ULP)."""
    if artifact is None or op not in artifact.operators:
        return None
    found = [c.ulp for spec in artifact.operators[op].specs
             for c in artifact.specs[spec].errors or ()
             if c.ulp is not None and not _failing(artifact.specs[spec], c)
             and not (c.nonfinite or c.exact)]
    return max(found, default=None)

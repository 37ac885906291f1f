"""The observed error, per (dtype, rank) cell: what a spec's examples' value comparisons
saw for one target (`CellError`, from each example's `opsweep.model.Observed`), its compact
spelling in the artifact (one line per cell), and a re-grade against another tolerance
policy from it (`regrade`) without measuring again.

Numbers are kept to four significant digits, rounded up (an error is never recorded
smaller than it was), so the same draws at the same pins give the same bytes.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from opsweep.errors import DataFileError
from opsweep.model import Observed, Outcome, Tolerance
from opsweep.policy import Policy, judge

DIGITS = 4


def up(x: float) -> float:
    """`x` rounded up to four significant digits (0, infinity and NaN as they are)."""
    if x == 0 or not math.isfinite(x):
        return x
    near = Decimal(f"{x:.{DIGITS - 1}e}")  # the nearest four-digit decimal
    if float(near) >= x:
        return float(near)
    step = Decimal(1).scaleb(near.adjusted() - DIGITS + 1)
    return float((near + step).quantize(step, rounding=ROUND_CEILING))


@dataclass(frozen=True)
class CellError:
    """The error of the `n` examples of one dtype and rank whose values were compared."""

    dtype: str
    rank: int
    n: int
    max_abs: float
    median_abs: float  # the median of the examples' median absolute errors
    max_rel: float
    ulp: int | None = None  # float16/bfloat16 outputs: the largest error in ULP
    nonfinite: int = 0  # examples with a NaN or infinity where PyTorch has none, or back
    exact: int = 0  # examples whose exactly compared outputs differ
    #: the tolerance compared with, and the examples' smallest passing atol at its rtol where
    #: it is above 0 (ascending; the other examples' is 0); None: compared exactly (or at
    #: mixed tolerances), not re-gradable
    tolerance: Tolerance | None = None
    excess: tuple[float, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.dtype} {self.rank}"


def cell_errors(outcomes: Iterable[Outcome]) -> tuple[CellError, ...] | None:
    """The cells of the examples that reached the value comparison; None: none did."""
    cells: dict[tuple[str, int], list[Observed]] = {}
    for o in outcomes:
        if o.observed is not None:
            cells.setdefault((o.dtype, o.rank), []).append(o.observed)
    if not cells:
        return None
    return tuple(_cell(dtype, rank, seen) for (dtype, rank), seen in sorted(cells.items()))


def _cell(dtype: str, rank: int, seen: Sequence[Observed]) -> CellError:
    ulps = [s.ulp for s in seen if s.ulp is not None]
    tolerances = {s.tolerance for s in seen}
    one = next(iter(tolerances)) if len(tolerances) == 1 else None
    return CellError(
        dtype, rank, len(seen), up(max(s.max_abs for s in seen)),
        up(statistics.median_low(sorted(s.median_abs for s in seen))),
        up(max(s.max_rel for s in seen)), max(ulps) if ulps else None,
        sum(s.nonfinite for s in seen), sum(s.exact for s in seen), one,
        tuple(sorted(up(s.excess) for s in seen if s.excess > 0)) if one is not None else ())


# --- the artifact's spelling: "dtype rank" -> "n=3 abs=... med=... rel=... ..." ----------

def _num(x: float) -> str:
    return "inf" if x == math.inf else repr(x)


def cell_text(c: CellError) -> str:
    parts = [f"n={c.n}", f"abs={_num(c.max_abs)}", f"med={_num(c.median_abs)}",
             f"rel={_num(c.max_rel)}"]
    if c.ulp is not None:
        parts.append(f"ulp={c.ulp}")
    if c.nonfinite:
        parts.append(f"nonfinite={c.nonfinite}")
    if c.exact:
        parts.append(f"exact={c.exact}")
    if c.tolerance is not None:
        parts.append(f"tol={_num(c.tolerance.rtol)}/{_num(c.tolerance.atol)}")
        if c.excess:
            parts.append("excess=" + ",".join(map(_num, c.excess)))
    return " ".join(parts)


def errors_to_data(cells: Sequence[CellError]) -> dict[str, str]:
    return {c.key: cell_text(c) for c in cells}


def errors_from_data(data: Mapping[str, str], where: str = "errors") -> tuple[CellError, ...]:
    """Cells from their spelling (validated by the schema's patterns); a malformed one is a
    DataFileError naming it."""
    cells = []
    for key, text in data.items():
        try:
            dtype, rank = key.split(" ")
            fields = dict(part.split("=", 1) for part in text.split(" "))
            tol = fields.get("tol")
            rtol, atol = tol.split("/") if tol else ("", "")
            cells.append(CellError(
                dtype, int(rank), int(fields["n"]), float(fields["abs"]), float(fields["med"]),
                float(fields["rel"]), int(fields["ulp"]) if "ulp" in fields else None,
                int(fields.get("nonfinite", 0)), int(fields.get("exact", 0)),
                Tolerance(float(rtol), float(atol)) if tol else None,
                tuple(float(x) for x in fields["excess"].split(",")) if "excess" in fields
                else ()))
        except (ValueError, KeyError) as exc:
            raise DataFileError("<artifact>", f"{where}.{key}", f"not a cell's error: {exc}")
    return tuple(sorted(cells, key=lambda c: (c.dtype, c.rank)))


# --- re-grading ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Regraded:
    """One cell under another policy: how many of its examples fail there (`failing`), of
    `n`; `unsure` of them the recorded error cannot decide (measure again), `kept` of those
    failed where they were measured and are counted failing still (`now`)."""

    cell: CellError
    tolerance: Tolerance | None
    failing: int
    unsure: int
    was_failing: int
    kept: int = 0

    @property
    def now(self) -> int:
        """The examples failing under the new tolerance, an undecided one as it was."""
        return min(self.cell.n, self.failing + self.kept)


def regrade_cell(cell: CellError, tolerance: Tolerance | None) -> Regraded:
    """`cell`'s examples judged at `tolerance` (their value comparisons only: an output
    count, shape or dtype mismatch never reached one and fails at any tolerance)."""
    always = cell.nonfinite + cell.exact
    if cell.tolerance is None or tolerance is None:
        return Regraded(cell, tolerance, always, 0, always)
    every = (0.0,) * (cell.n - len(cell.excess)) + cell.excess
    was = always + sum(x > cell.tolerance.atol for x in every)
    failing = unsure = kept = 0
    for x in every:
        verdict = judge(x, cell.tolerance, tolerance, cell.max_abs, cell.max_rel)
        failing += verdict is False
        unsure += verdict is None
        kept += verdict is None and x > cell.tolerance.atol
    # the examples failing at any tolerance are among those the excess counts too
    return Regraded(cell, tolerance, min(cell.n, always + failing), unsure, min(cell.n, was),
                    kept)


def regrade(cells: Sequence[CellError], measured: Policy, policy: Policy,
            operators: Sequence[str]) -> tuple[Regraded, ...]:
    """Every cell of one spec (declaring `operators`), measured under the policy `measured`,
    at `policy`'s tolerances. A cell's recorded tolerance that neither an override nor the
    default of `measured` gave was the spec's own: it holds unless `policy` overrides it."""
    out = []
    for c in cells:
        own = None
        if (c.tolerance is not None and measured.overridden(operators, c.dtype) is None
                and c.tolerance != measured.defaults.get(c.dtype)):
            own = c.tolerance
        out.append(regrade_cell(c, policy.tolerance_for(operators, own, c.dtype)))
    return tuple(out)

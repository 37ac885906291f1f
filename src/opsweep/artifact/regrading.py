"""A whole artifact re-graded at another tolerance policy from its recorded error, without
measuring again (``opsweep regrade``): per spec and target, each (dtype, rank) cell judged
at the new policy's tolerance (`opsweep.artifact.numerics.regrade`), the spec's stage and
outcome counts and failure groups moved to match, the grades derived again, and what moved
said in a line each (`SpecMove.line`).

What the record cannot settle stays as it was measured: an example whose verdict the new
tolerance leaves undecided (a smaller rtol, an error between what each allows) keeps its
verdict and is counted (`Regrading.unsure`); an example that failed before its values were
compared (an output count, shape or dtype mismatch) fails at any tolerance. A failure the
stricter policy adds has no recorded signature: its group names the cell and says it was
re-graded. A cell whose rtol is unchanged is rewritten at the new tolerance (its excesses
do not depend on the atol); a cell whose rtol changed keeps the tolerance it was measured
with, so re-grade the measured artifact rather than a re-graded one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from opsweep.artifact.data import Artifact, SpecResult, make_target
from opsweep.artifact.grade import FailureGroup, StageCount, grade, merge_failures
from opsweep.artifact.numerics import CellError, Regraded, regrade
from opsweep.model import Grade, Stage
from opsweep.policy import Policy

#: how a value mismatch's failure line reads (engine.observe): the failures a looser
#: policy may clear
VALUES_MARK = "elements differ beyond rtol="
REGRADED_EXAMPLE = "re-graded, not drawn"


@dataclass(frozen=True)
class SpecMove:
    """One spec of one target whose numerics failures changed under the new policy."""

    spec: str
    target: str
    before: Grade | None
    after: Grade | None
    cells: tuple[Regraded, ...]  # the cells whose failing examples changed

    def line(self) -> str:
        """"`softmax` stock numerics full -> partial (float16 rank 3: 2/5 examples fail
        at rtol=0.01 atol=0.0005; max error 0.0012, 9 ULP)"."""
        grades = f"{_g(self.before)} -> {_g(self.after)}" if self.before != self.after \
            else f"{_g(self.after)} (unchanged)"
        return (f"`{self.spec}` {self.target} numerics {grades} ("
                + "; ".join(_cell_line(r) for r in self.cells) + ")")


def _g(g: Grade | None) -> str:
    return "unmeasured" if g is None else g.value


def _cell_line(r: Regraded) -> str:
    c, t = r.cell, r.tolerance
    at = "exactly" if t is None else f"at rtol={t.rtol:g} atol={t.atol:g}"
    ulp = f", {c.ulp} ULP" if c.ulp is not None else ""
    return (f"{c.dtype} rank {c.rank}: {r.now}/{c.n} examples fail {at} (were {r.was_failing}); "
            f"max error {c.max_abs:g}{ulp}")


@dataclass(frozen=True)
class Regrading:
    artifact: Artifact  # the re-graded artifact, naming the new policy
    moves: tuple[SpecMove, ...]  # grade moves first, then by target and spec
    unsure: int  # examples the record cannot decide (kept as measured)
    unrecorded: int  # graded numerics results without a recorded error (kept as graded)

    @property
    def grade_moves(self) -> tuple[SpecMove, ...]:
        return tuple(m for m in self.moves if m.before != m.after)


def regrade_artifact(artifact: Artifact, measured: Policy, policy: Policy) -> Regrading:
    """`artifact`, graded under `measured` (its `policy` names it), re-graded at `policy`."""
    moves: list[SpecMove] = []
    unsure = unrecorded = 0
    targets = {}
    for name, result in artifact.results.items():
        specs = {}
        for spec, r in result.specs.items():
            if r.errors is None:
                unrecorded += r.grades.numerics in (Grade.FULL, Grade.PARTIAL)
                specs[spec] = r
                continue
            cells = regrade(r.errors, measured, policy, r.aten_ops)
            unsure += sum(c.unsure for c in cells)
            specs[spec] = _spec(r, cells, policy)
            changed = tuple(c for c in cells if c.now != c.was_failing)
            if changed:
                moves.append(SpecMove(spec, name, r.grades.numerics,
                                      specs[spec].grades.numerics, changed))
        targets[name] = make_target(result.entry, specs)
    moves.sort(key=lambda m: (m.before == m.after, m.target, m.spec))
    return Regrading(replace(artifact, results=targets, policy=policy.label), tuple(moves),
                     unsure, unrecorded)


def _spec(r: SpecResult, cells: Sequence[Regraded], policy: Policy) -> SpecResult:
    """`r` with each cell's failing examples moved to what `cells` say."""
    stages = dict(r.stages)
    outcomes = {(c.dtype, c.rank, c.stage): c.count for c in (r.outcomes or ())}
    failures = list(r.failures)
    for cell in cells:
        passing = outcomes.get((cell.cell.dtype, cell.cell.rank, Stage.OK), 0) \
            if r.outcomes is not None else stages.get(Stage.OK, 0)
        delta = _move(cell, failures, policy, passing)
        if not delta:
            continue
        key = (cell.cell.dtype, cell.cell.rank)
        for stage, by in ((Stage.NUMERICS, delta), (Stage.OK, -delta)):
            stages[stage] = stages.get(stage, 0) + by
            outcomes[(*key, stage)] = outcomes.get((*key, stage), 0) + by
    stages = {s: n for s, n in sorted(stages.items(), key=lambda i: i[0].value) if n}
    counts = r.counts._replace(stages=stages)
    return replace(
        r, stages=stages, grades=grade([counts]),
        failures=merge_failures(failures), errors=tuple(_rewritten(c) for c in cells),
        outcomes=None if r.outcomes is None else tuple(
            StageCount(d, k, s, n) for (d, k, s), n in sorted(
                outcomes.items(), key=lambda i: (i[0][0], i[0][1], i[0][2].value)) if n))


def _move(cell: Regraded, failures: list[FailureGroup], policy: Policy, passing: int) -> int:
    """Edit `failures` (in place) for one cell's change; the examples moved to failing (at
    most the `passing` ones: an example whose values passed may have failed otherwise, e.g.
    a shape at its further draw) or, negative, moved to passing (as many as value
    mismatches of the cell there are)."""
    c = cell.cell
    delta = min(cell.now - cell.was_failing, passing)
    if delta > 0:
        t = cell.tolerance
        at = "exactly" if t is None else f"rtol={t.rtol:g} atol={t.atol:g}"
        failures.append(FailureGroup(c.dtype, c.rank, Stage.NUMERICS, (
            f"beyond {policy.label}'s tolerance {at} (re-graded from the recorded error: "
            f"max abs error {c.max_abs:g})"), delta, REGRADED_EXAMPLE))
        return delta
    cleared = 0
    for i, g in enumerate(failures):
        if cleared == -delta:
            break
        if (g.dtype, g.rank, g.stage) == (c.dtype, c.rank, Stage.NUMERICS) and (
                VALUES_MARK in g.error or g.example == REGRADED_EXAMPLE):
            take = min(g.count, -delta - cleared)
            cleared += take
            failures[i] = replace(g, count=g.count - take)
    failures[:] = [g for g in failures if g.count > 0]
    return -cleared


def _rewritten(r: Regraded) -> CellError:
    """The cell at its new tolerance where the record stays exact (the same rtol)."""
    c, t = r.cell, r.tolerance
    if c.tolerance is None or t is None or t.rtol != c.tolerance.rtol:
        return c
    return replace(c, tolerance=t)


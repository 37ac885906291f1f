"""Grading one spec: its examples' outcomes for one target in, its `SpecResult` out,
with the spec's known-gap note checked against what was measured.

The per-axis rules themselves live in :mod:`opsweep.artifact.grade`; this module only puts
one spec's counts, failure groups, grades and gap check together.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from opsweep.artifact.grade import (
    Counts,
    dynamic_counts,
    dynamic_failures,
    failure_groups,
    grade,
    outcome_counts,
    stage_counts,
)
from opsweep.artifact.numerics import cell_errors
from opsweep.artifact.results import GapCheck, SpecResult
from opsweep.coverage import coverage
from opsweep.model import UNGRADED, OpSpec, Outcome, Stage
from opsweep.targets import STOCK, behaviour

if TYPE_CHECKING:  # hypothesis stays out of the page's and the bot's import path
    from opsweep.catalog.draw import Profile


class GapStatus(str, enum.Enum):
    """What a known-gap note's check found (`GapCheck.status` holds the value)."""

    # the stock target
    CONFIRMED = "confirmed"  # the one failing stage is the one the note expects
    STALE = "stale"  # nothing fails any more: the note can go
    MOVED = "moved"  # something else fails (too)
    # a target the note names as closing the gap
    CLOSED = "closed"
    OPEN = "open"  # the expected stage still fails under it

    @property
    def holds(self) -> bool:
        """The note says what was measured."""
        return self in (GapStatus.CONFIRMED, GapStatus.CLOSED)


def gap_check(reason: str, expected: Stage, stages: Mapping[Stage, int],
              closing: bool = False) -> GapCheck:
    """`closing`: the measurement is of a target the note says closes the gap."""
    failing = tuple(sorted((s for s, n in stages.items() if n and s is not Stage.OK
                            and s not in UNGRADED),
                           key=lambda s: s.value))
    if closing:
        status = GapStatus.OPEN if expected in failing else GapStatus.CLOSED
    elif not failing:
        status = GapStatus.STALE
    elif failing == (expected,):
        status = GapStatus.CONFIRMED
    else:
        status = GapStatus.MOVED
    return GapCheck(reason, expected, failing, status.value)


def spec_result(spec: OpSpec, outcomes: Sequence[Outcome], profile: Profile, digest: str,
                signatures: int, target: str = STOCK,
                cells: Mapping[str, str] | None = None) -> SpecResult:
    """One spec's result for one target, from every example's outcome; `cells`: the
    spec's cells no example stands for (opsweep.catalog.cells.unmeasured)."""
    stages = stage_counts(outcomes)
    dynamic, regressed = dynamic_counts(outcomes)
    gap: GapCheck | None = None
    if spec.gap is not None and behaviour(target).dynamo:  # a note speaks of the dynamo exporter
        gap = gap_check(spec.gap.reason, spec.gap.stage, stages,
                        closing=target in spec.gap.closed_by)
    counts = Counts(stages, spec.nondeterministic, dynamic, regressed)
    return SpecResult(
        aten_ops=spec.aten_ops, family=spec.family, profile=profile.name,
        examples=len(outcomes), stages=stages, failures=failure_groups(outcomes),
        grades=grade([counts]), nondeterministic=spec.nondeterministic, gap=gap,
        digest=digest, signatures=signatures, dynamic_stages=dynamic,
        dynamic_regressed=regressed, dynamic_failures=dynamic_failures(outcomes),
        outcomes=outcome_counts(outcomes), arguments=arguments_reached(outcomes),
        errors=cell_errors(outcomes), mode=spec.mode,
        cells=dict(cells) if cells is not None else None)


def arguments_reached(outcomes: Sequence[Outcome]):
    """The coverage table of the spec's signature groups (each group's outcomes share their
    arguments); None when no outcome carries any (a worker lost before recording them)."""
    groups: dict[str, tuple] = {}
    for o in outcomes:
        if o.arguments:
            groups.setdefault(o.signature, o.arguments)
    return coverage(groups.values()) if groups else None

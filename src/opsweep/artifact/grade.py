"""Grading: outcomes of examples in, per-axis grades and failure groups out.

Export is graded over the examples torch.export could capture: if none
could, the grade is ``blocked`` (not an ONNX verdict). Runtime is graded over
the examples that exported (a model the checker rejects did not run), and
numerics over those that ran; a nondeterministic spec's numerics are
``skipped``. Examples PyTorch itself rejected (``invalid``) are spec bugs and
never count for or against the exporter; nor do examples whose worker died or timed
out before they reached the exporter (``lost``).

The dynamic axis is graded over the examples that exported and were exported
again with their leading dimension dynamic: an example passes when the dynamic
export got as far down the pipeline as the static one (so a dtype mismatch the
static export already had does not count twice). Values that differ at the
second size, which draws fresh values, are left to the numerics axis; wrong
output shapes, dtypes or counts there are dynamic failures. ``blocked`` when
torch.export could capture none of them with the dimension dynamic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple

from opsweep.coverage import set_apart
from opsweep.model import UNGRADED, Grade, Mismatch, Outcome, Stage


@dataclass(frozen=True)
class Grades:
    export: Grade | None
    runtime: Grade | None
    numerics: Grade | None
    dynamic: Grade | None = None


#: The graded axes, in the order pages, records and diffs show them.
AXES = tuple(Grades.__dataclass_fields__)
#: The stages at which an example fails each static axis (``capture`` makes the export
#: ``blocked``); the dynamic axis has failure groups of its own.
FAILS: dict[str, frozenset[Stage]] = {
    "export": frozenset({Stage.CAPTURE, Stage.NO_TRANSLATION, Stage.TRANSLATION_ERROR,
                         Stage.RAW_ERROR}),
    "runtime": frozenset({Stage.CHECKER, Stage.RUNTIME}),
    "numerics": frozenset({Stage.NUMERICS}),
}


class Counts(NamedTuple):
    """What grading needs of one spec's outcomes."""

    stages: Mapping[Stage, int]
    nondeterministic: bool = False
    dynamic: Mapping[Stage, int] = {}  # dynamic stage of every re-exported example
    dynamic_regressed: int = 0


@dataclass(frozen=True)
class FailureGroup:
    """Failing examples sharing dtype, rank, stage and error line."""

    dtype: str
    rank: int
    stage: Stage
    error: str
    count: int
    example: str  # the smallest failing signature of the group
    size: int = 0  # its total number of input elements
    #: ``argument=class`` values every example of the group has and no example of its dtype
    #: that got past its stage has: it fails only with them (opsweep.coverage.set_apart)
    only_with: tuple[str, ...] = ()

    @property
    def only(self) -> str:
        """"only with ceil_mode=True" (or several, "… or …"), or empty."""
        return f"only with {' or '.join(self.only_with)}" if self.only_with else ""

    def describe(self, *, example: bool = True) -> str:
        """One line for pages and comments: where, how often, the error, an example."""
        only = f" {self.only}" if self.only_with else ""
        line = (f"{self.dtype} rank {self.rank}: {self.stage.value} ×{self.count}{only} — "
                f"{self.error}")
        return f"{line} (e.g. {self.example})" if example else line


@dataclass(frozen=True)
class StageCount:
    """How many examples of one dtype and rank ended at one stage (ok included): what
    a dtype matrix needs to tell "drawn and passed" from "not drawn"."""

    dtype: str
    rank: int
    stage: Stage
    count: int


def outcome_counts(outcomes: Iterable[Outcome]) -> tuple[StageCount, ...]:
    counts = Counter((o.dtype, o.rank, o.stage.value) for o in outcomes)
    return tuple(StageCount(dtype, rank, Stage(stage), n)
                 for (dtype, rank, stage), n in sorted(counts.items()))


def axis_grade(passed: int, reached: int) -> Grade | None:
    if reached == 0:
        return None
    if passed == reached:
        return Grade.FULL
    return Grade.PARTIAL if passed else Grade.NONE


def grade(measured: Iterable[tuple]) -> Grades:
    """Grade pooled counts of one or more specs (each a :class:`Counts` or its tuple)."""
    counts: Counter[Stage] = Counter()
    dynamic: Counter[Stage] = Counter()
    det_ran = det_ok = any_ran = regressed = 0
    for item in measured:
        stages, nondeterministic, dyn, dyn_regressed = Counts(*item)
        counts.update(stages)
        dynamic.update(dyn)
        regressed += dyn_regressed
        ran = sum(n for s, n in stages.items() if s.ran)
        any_ran += ran
        if not nondeterministic:
            det_ran += ran
            det_ok += stages.get(Stage.OK, 0)
    valid = sum(n for s, n in counts.items() if s not in UNGRADED)
    captured = valid - counts[Stage.CAPTURE]
    exported = sum(n for s, n in counts.items() if s.exported)
    if valid == 0:
        export = None
    elif captured == 0:
        export = Grade.BLOCKED
    else:
        export = axis_grade(exported, captured)
    runtime = axis_grade(any_ran, exported)
    if det_ran:
        numerics = axis_grade(det_ok, det_ran)
    else:
        numerics = Grade.SKIPPED if any_ran else None
    return Grades(export, runtime, numerics, dynamic_grade(dynamic, regressed))


@dataclass(frozen=True)
class DynamicTally:
    """What a dynamic grade is made of, so that ✅ beside a failing export or runtime
    cannot be misread: of the examples `reexported` with their leading dimension
    dynamic (and valid at the second size), how many came out `unchanged` (the
    dynamic export got as far as the static one: the grade counts these) and how
    many `passed` (exported, ran and matched PyTorch at the second size)."""

    reexported: int = 0
    unchanged: int = 0
    passed: int = 0


def dynamic_tally(measured: Iterable[tuple]) -> DynamicTally:
    """The tally of one or more specs' pooled counts (each a :class:`Counts` or its tuple)."""
    reexported = unchanged = passed = 0
    for item in measured:
        counts = Counts(*item)
        valid = sum(n for s, n in counts.dynamic.items() if s not in UNGRADED)
        reexported += valid
        unchanged += valid - counts.dynamic_regressed
        passed += counts.dynamic.get(Stage.OK, 0)
    return DynamicTally(reexported, unchanged, passed)


def dynamic_grade(dynamic: Mapping[Stage, int], regressed: int) -> Grade | None:
    reached = sum(n for s, n in dynamic.items() if s not in UNGRADED)
    if reached and dynamic.get(Stage.CAPTURE, 0) == reached:
        return Grade.BLOCKED
    return axis_grade(reached - regressed, reached)


def dynamic_regressed(o: Outcome) -> bool:
    """The dynamic export got less far than the static one (invalid never counts).
    Values that differ at the second size (drawn afresh for it) are the numerics
    axis's business; wrong shapes, dtypes or output counts there count."""
    if o.dynamic is None or o.dynamic in UNGRADED:
        return False
    if o.dynamic is Stage.NUMERICS and o.dynamic_mismatch is Mismatch.VALUES:
        return o.stage.depth < Stage.NUMERICS.depth
    return o.dynamic.depth < o.stage.depth


def stage_counts(outcomes: Iterable[Outcome]) -> dict[Stage, int]:
    counts = Counter(o.stage for o in outcomes)
    return {s: counts[s] for s in sorted(counts, key=lambda s: s.value)}


def _key(g: FailureGroup) -> tuple:
    return (g.stage.value, g.dtype, g.rank, g.error)


def failure_groups(outcomes: Iterable[Outcome]) -> tuple[FailureGroup, ...]:
    """Group the failing outcomes of one spec, each with the argument values that set it
    apart from the examples of its dtype that got further."""
    outcomes = list(outcomes)
    groups = merge_failures(FailureGroup(o.dtype, o.rank, o.stage, o.error, 1, o.signature,
                                         o.size)
                            for o in outcomes if o.stage is not Stage.OK)
    return tuple(_named(g, outcomes) for g in groups)


def _named(g: FailureGroup, outcomes: list[Outcome]) -> FailureGroup:
    if g.stage in UNGRADED:
        return g
    failing = [o.arguments for o in outcomes
               if (o.stage, o.dtype, o.rank, o.error) == (g.stage, g.dtype, g.rank, g.error)]
    passing = [o.arguments for o in outcomes
               if o.dtype == g.dtype and o.stage not in UNGRADED and o.stage.depth > g.stage.depth]
    only = set_apart(failing, passing)
    return replace(g, only_with=only) if only else g


def dynamic_counts(outcomes: Iterable[Outcome]) -> tuple[dict[Stage, int], int]:
    """(dynamic stage counts of the re-exported examples, how many regressed)."""
    outcomes = [o for o in outcomes if o.dynamic is not None]
    counts = Counter(o.dynamic for o in outcomes if o.dynamic is not None)
    return ({s: counts[s] for s in sorted(counts, key=lambda s: s.value)},
            sum(dynamic_regressed(o) for o in outcomes))


def dynamic_failures(outcomes: Iterable[Outcome]) -> tuple[FailureGroup, ...]:
    """Groups of the examples whose dynamic export got less far than the static one."""
    return merge_failures(FailureGroup(o.dtype, o.rank, o.dynamic, o.dynamic_error, 1,  # type: ignore[arg-type]
                                       o.signature, o.size)
                          for o in outcomes if dynamic_regressed(o))


def merge_failures(groups: Iterable[FailureGroup]) -> tuple[FailureGroup, ...]:
    """Combine groups with the same key (across examples or specs): counts
    add up, the smallest example is kept."""
    merged: dict[tuple, FailureGroup] = {}
    for g in groups:
        old = merged.get(_key(g))
        if old is None:
            merged[_key(g)] = g
            continue
        small = min((old, g), key=lambda x: (x.size, len(x.example), x.example))
        merged[_key(g)] = FailureGroup(g.dtype, g.rank, g.stage, g.error,
                                       old.count + g.count, small.example, small.size,
                                       tuple(sorted(set(old.only_with) & set(g.only_with))))
    return tuple(merged[k] for k in sorted(merged))

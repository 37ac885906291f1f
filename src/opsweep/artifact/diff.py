"""Comparing two artifacts: grade transitions per operator and axis.

Improvements: none→full, partial→full, none→partial, blocked→anything.
Regressions: full→partial, full→none, partial→none, anything→blocked.
Operators appearing or disappearing are newly / no longer measured.
Measured anew: an operator whose grade moved while the specs measuring it changed (a
spec's own source, or the engine's shared source, both named by the spec's digest): a
difference of what is measured, neither a regression nor an improvement of the exporter.
`comparable` is the one rule, shared with the history view (artifact.records).
Beside the transitions, the cells whose observed error drifted (`opsweep.artifact.drift`).
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from opsweep.artifact.data import Artifact, fingerprint_changes
from opsweep.artifact.drift import Drift, drift
from opsweep.artifact.grade import AXES, FAILS, FailureGroup, Grades
from opsweep.artifact.results import ExporterEntry, OperatorResult, TargetResult
from opsweep.model import Grade
from opsweep.targets import STOCK, is_stock

_IMPROVE = {(Grade.NONE, Grade.FULL), (Grade.PARTIAL, Grade.FULL), (Grade.NONE, Grade.PARTIAL)}
_REGRESS = {(Grade.FULL, Grade.PARTIAL), (Grade.FULL, Grade.NONE), (Grade.PARTIAL, Grade.NONE)}


class Kind(str, enum.Enum):
    """Kinds of transition, most urgent first. Written, shown and compared as the value."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    #: the grade moved, and so did the specs measuring the operator (a changed catalog or
    #: engine): newly measured behaviour, not the exporter's
    MEASURED_ANEW = "measured anew"
    NEWLY_MEASURED = "newly measured"
    NO_LONGER_MEASURED = "no longer measured"
    CHANGED = "changed"

    def __str__(self) -> str:  # templates and f-strings show the value
        return self.value

    @property
    def whole_operator(self) -> bool:
        """The operator appeared or went away: no single axis moved."""
        return self in (Kind.NEWLY_MEASURED, Kind.NO_LONGER_MEASURED)


KINDS_ORDER = tuple(Kind)

#: hex digits of an operator's measuring digest (records keep one per operator)
MEASURED_DIGITS = 8


def measuring_digest(artifact: Artifact, op: str) -> str | None:
    """What measured `op`'s grades: a short digest of the names and digests of the stock
    target's specs measuring it (a spec's digest covers its own source and the engine's
    shared source); None when the stock target did not measure it."""
    result = artifact.operators.get(op)
    if result is None:
        return None
    h = hashlib.sha256()
    for name in sorted(result.specs):
        h.update(f"{name}\0{artifact.specs[name].digest}\n".encode())
    return h.hexdigest()[:MEASURED_DIGITS]


def measured_by(artifact: Artifact) -> dict[str, str]:
    """Per stock operator, its measuring digest (`measuring_digest`)."""
    return {op: measuring_digest(artifact, op) for op in sorted(artifact.operators)}  # type: ignore[misc]


def comparable(old: str | None, new: str | None) -> bool:
    """Whether an operator's grades in two measurements may be compared as the exporter's
    change: the same specs (catalog entries and engine) measured both sides. None is an
    unnamed measurement (a history record from before records named what measured them):
    comparable only with another unnamed one."""
    return old == new


def comparable_in(old: Mapping[str, str] | None, new: Mapping[str, str] | None, op: str) -> bool:
    """`comparable` for `op` between two measurements' measuring digests per operator (None
    or an operator missing: unnamed)."""
    return comparable((old or {}).get(op), (new or {}).get(op))


@dataclass(frozen=True)
class Transition:
    op: str
    axis: str
    old: Grade | None
    new: Grade | None
    kind: Kind
    failures: tuple[FailureGroup, ...]  # groups that appeared (regression) or went away
    spec: str  # a spec measuring the operator, for reproduction
    target: str = STOCK  # the stock exporter, or a custom translation table


@dataclass(frozen=True)
class Diff:
    old_fingerprint: dict
    new_fingerprint: dict
    fingerprint_changes: tuple[str, ...]
    transitions: tuple[Transition, ...]
    #: custom targets only one side measured, and targets whose table changed
    target_changes: tuple[str, ...] = ()
    #: the new pin set breaks the exporter: the canary's error line, headlined once
    #: instead of every operator
    broken: str = ""
    #: the cells whose observed error grew (artifact.drift), the largest growth first
    drift: tuple[Drift, ...] = ()

    @property
    def failed(self) -> bool:
        """What makes `opsweep diff` exit non-zero: a regression, or a broken exporter."""
        return bool(self.broken or self.regressions)

    def shared_causes(self, least: int = 3) -> list[tuple[str, tuple[str, ...]]]:
        """Regressions of at least `least` operators that appeared with the same error
        line: (error, operators), most operators first. A stack that breaks every
        export of some operators (a module only some translations import) shows here
        once, with the operators it took."""
        ops: dict[str, set[str]] = {}
        for t in self.regressions:
            for g in t.failures:
                ops.setdefault(g.error, set()).add(t.op)
        return sorted(((e, tuple(sorted(o))) for e, o in ops.items() if len(o) >= least),
                      key=lambda item: (-len(item[1]), item[0]))

    def of_kind(self, kind: Kind) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.kind == kind)

    @property
    def regressions(self) -> tuple[Transition, ...]:
        return self.of_kind(Kind.REGRESSION)

    @property
    def improvements(self) -> tuple[Transition, ...]:
        return self.of_kind(Kind.IMPROVEMENT)

    @property
    def measured_anew(self) -> tuple[Transition, ...]:
        return self.of_kind(Kind.MEASURED_ANEW)


def classify(old: Grade | None, new: Grade | None) -> Kind | None:
    """None when the grade did not move."""
    if old == new:
        return None
    if new is Grade.BLOCKED:
        return Kind.REGRESSION
    if old is Grade.BLOCKED:
        return Kind.IMPROVEMENT
    if (old, new) in _IMPROVE:
        return Kind.IMPROVEMENT
    if (old, new) in _REGRESS:
        return Kind.REGRESSION
    return Kind.CHANGED


def _axis_failures(result: OperatorResult | None, axis: str) -> set[FailureGroup]:
    if result is None:
        return set()
    if axis == "dynamic":
        return set(result.dynamic_failures)
    return {g for g in result.failures if g.stage in FAILS[axis]}


def _key(g: FailureGroup) -> tuple:
    return (g.dtype, g.rank, g.stage.value, g.error)


def diff(old: Artifact, new: Artifact) -> Diff:
    """Transitions per target: the stock exporter, then each custom table both sides measured."""
    fp_old, fp_new = vars(old.fingerprint), vars(new.fingerprint)
    moved = tuple(fingerprint_changes(old.fingerprint, new.fingerprint))
    if new.broken is not None:
        return Diff(dict(fp_old), dict(fp_new), moved, (), (), new.broken.error)
    transitions: list[Transition] = []
    changes = []
    if old.broken is not None:
        changes.append(f"the previous pin set broke the exporter ({old.broken.error}): "
                       "every operator is measured anew")
    for target in sorted(set(old.target_names) | set(new.target_names), key=lambda t: not is_stock(t)):
        a, b = old.target(target), new.target(target)
        if a is None or b is None:
            changes.append(f"target {target} {'added' if a is None else 'removed'}")
            continue
        before, after = a.entry, b.entry
        gone = [a.absent, b.absent]
        if any(gone):  # an exporter one pin set does not have: one line, no transitions
            changes.append(f"target {target} absent from the "
                           f"{'new' if gone[1] else 'previous'} pin set: {gone[1] or gone[0]}")
            continue
        if before is not None and after is not None and before != after:
            what = "exporter" if isinstance(after, ExporterEntry) else "translation table"
            changes.append(f"target {target}: {what} changed ({before.digest} → {after.digest})")
        transitions += _target_transitions(a, b, target, (measured_by(old), measured_by(new)))
    return Diff(dict(fp_old), dict(fp_new), moved, tuple(transitions), tuple(changes),
                drift=drift(old, new))


def grade_changes(old: Grades | None, new: Grades | None, same_specs: bool = True
                  ) -> list[tuple[str, Grade | None, Grade | None, Kind]]:
    """(axis, before, after, kind) of one operator between two measurements (None:
    not measured); `same_specs`: `comparable` said the same specs measured both (else a
    moved axis is measured anew). Used by `diff` and by the history view, so both
    classify alike."""
    if old is None or new is None:
        return [("export", old.export if old else None, new.export if new else None,
                 Kind.NEWLY_MEASURED if old is None else Kind.NO_LONGER_MEASURED)]
    changes = []
    for axis in AXES:
        before, after = getattr(old, axis), getattr(new, axis)
        if axis != "export" and (before is None or after is None):
            continue  # an axis no example reached: implied by the export transition
        kind = classify(before, after)
        if kind is not None:
            changes.append((axis, before, after, kind if same_specs else Kind.MEASURED_ANEW))
    return changes


def _target_transitions(old: TargetResult, new: TargetResult, target: str,
                        measured: tuple[Mapping[str, str], Mapping[str, str]]) -> list[Transition]:
    """`measured`: each side's measuring digests (the stock target's, for every target)."""
    transitions = []
    for op in sorted(set(old.operators) | set(new.operators)):
        a, b = old.operators.get(op), new.operators.get(op)
        either = b or a
        assert either is not None  # op is in one of the two
        spec = either.specs[0]
        same = comparable_in(*measured, op)
        for axis, before, after, kind in grade_changes(a.grades if a else None,
                                                       b.grades if b else None, same):
            if a is None or b is None:
                transitions.append(Transition(op, axis, before, after, kind,
                                              tuple(sorted(either.failures, key=_key)), spec,
                                              target))
                continue
            was, now = _axis_failures(a, axis), _axis_failures(b, axis)
            old_keys = {_key(g) for g in was}
            new_keys = {_key(g) for g in now}
            if kind is Kind.IMPROVEMENT:
                changed = [g for g in was if _key(g) not in new_keys]
            else:
                changed = [g for g in now if _key(g) not in old_keys]
            transitions.append(Transition(op, axis, before, after, kind,
                                          tuple(sorted(changed, key=_key)), spec, target))
    return transitions


def smallest(groups: tuple[FailureGroup, ...]) -> FailureGroup | None:
    return min(groups, key=lambda g: (g.size, len(g.example), g.example), default=None)

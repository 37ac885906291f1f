"""What a target measured: per spec (`SpecResult`), per operator (`OperatorResult`, derived
from the specs), and one target's whole result (`TargetResult`: its fingerprint entry, its
specs and its operators). The artifact (`opsweep.artifact.data`) holds one per target, the
stock target's alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opsweep.artifact.grade import (
    Counts,
    DynamicTally,
    FailureGroup,
    Grades,
    StageCount,
    dynamic_tally,
    grade,
    merge_failures,
)
from opsweep.artifact.numerics import CellError
from opsweep.model import Stage, Translations
from opsweep.targets import STOCK


@dataclass(frozen=True)
class GapCheck:
    reason: str
    expected: Stage
    measured: tuple[Stage, ...]
    status: str  # a specgrade.GapStatus value


@dataclass(frozen=True)
class SpecResult:
    aten_ops: tuple[str, ...]
    family: str
    profile: str
    examples: int
    stages: Mapping[Stage, int]
    failures: tuple[FailureGroup, ...]
    grades: Grades
    nondeterministic: bool
    gap: GapCheck | None
    digest: str  # of the spec as measured: a changed spec is never reused
    signatures: int  # distinct example signatures, i.e. exports: the spec's cost
    dynamic_stages: Mapping[Stage, int] = field(default_factory=dict)
    dynamic_regressed: int = 0
    dynamic_failures: tuple[FailureGroup, ...] = ()
    #: examples per (dtype, rank, stage reached), ok included; None: not recorded (an
    #: artifact from before schema 5)
    outcomes: tuple[StageCount, ...] | None = None
    #: the arguments the spec's draws reached, read from torch's schema of each overload it
    #: traces: overload -> argument -> {"type", "classes"} (opsweep.coverage.coverage); None:
    #: not recorded (measured by an engine before arguments were)
    arguments: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None
    #: the observed error per (dtype, rank) cell (opsweep.artifact.numerics); None: no
    #: example's values were compared, or measured before schema 6
    errors: tuple[CellError, ...] | None = None
    #: the one mode the spec held its operator to (OpSpec.mode: "training", "inference"),
    #: "" when none
    mode: str = ""
    #: the cells (opsweep.catalog.cells: each listed dtype at ranks 0 to the spec's top,
    #: and the empty tensor) no example stands for, "dtype rank[ empty]" -> "refused: <eager's
    #: error>", "unsettled: <its error>", "outside" or "unreachable"; every other cell of
    #: the universe has an example in `outcomes`. None: drawn without the cell covering (a
    #: profile without it, or measured before schema 7)
    cells: Mapping[str, str] | None = None

    @property
    def counts(self) -> Counts:
        return Counts(self.stages, self.nondeterministic, self.dynamic_stages,
                      self.dynamic_regressed)


@dataclass(frozen=True)
class OperatorResult:
    grades: Grades
    specs: tuple[str, ...]
    failures: tuple[FailureGroup, ...]
    dynamic_failures: tuple[FailureGroup, ...] = ()
    dynamic_tally: DynamicTally = DynamicTally()


@dataclass(frozen=True)
class ExporterEntry:
    """A target that is another exporter, not a translation table (``torchscript``: the
    TorchScript exporter, ``dynamo=False``). It lives in torch, so torch's release is its
    fingerprint part, with the opset it exported at; `absent`: why this pin set does not
    have it (the canary could not get ``x + y`` through), and then it measures no spec."""

    exporter: str
    torch: str
    opset: int
    absent: str = ""

    @property
    def name(self) -> str:
        return self.exporter

    @property
    def digest(self) -> str:
        """What a change of it is reported as (the diff's "target changed" line)."""
        return f"torch {self.torch} opset {self.opset}" + (" absent" if self.absent else "")

    @property
    def overrides(self) -> tuple[str, ...]:
        return ()


#: A target's fingerprint entry beside the artifact's fingerprint: a translation table or
#: another exporter (the stock target has none: the artifact's fingerprint is all of it).
TargetEntry = Translations | ExporterEntry


@dataclass(frozen=True)
class TargetResult:
    """The catalog as one target measured it: the stock exporter (`entry` None), the
    dynamo exporter with a custom translation table, or another exporter."""

    entry: TargetEntry | None
    specs: Mapping[str, SpecResult]
    operators: Mapping[str, OperatorResult]

    @property
    def name(self) -> str:
        """The name results are stored under (`opsweep.targets`)."""
        return STOCK if self.entry is None else self.entry.name

    @property
    def absent(self) -> str:
        """Why this pin set does not have the target ("" : it has it)."""
        return self.entry.absent if isinstance(self.entry, ExporterEntry) else ""


def build_operators(specs: Mapping[str, SpecResult]) -> dict[str, OperatorResult]:
    """The per-operator table is derived from the per-spec results, never kept by hand."""
    members: dict[str, list[str]] = {}
    for name in sorted(specs):
        for op in specs[name].aten_ops:
            members.setdefault(op, []).append(name)
    table = {}
    for op in sorted(members):
        names = members[op]
        grades = grade(specs[n].counts for n in names)
        failures = merge_failures(g for n in names for g in specs[n].failures)
        dynamic = merge_failures(g for n in names for g in specs[n].dynamic_failures)
        table[op] = OperatorResult(grades, tuple(names), failures, dynamic,
                                   dynamic_tally(specs[n].counts for n in names))
    return table


def make_target(entry: TargetEntry | None, specs: Mapping[str, SpecResult]) -> TargetResult:
    """One target's result from its spec results (an absent exporter's: none)."""
    if isinstance(entry, ExporterEntry) and entry.absent:
        specs = {}  # an exporter this pin set does not have measures nothing
    specs = {k: specs[k] for k in sorted(specs)}
    return TargetResult(entry, specs, build_operators(specs))

"""Dtypes at a glance: per operator, how far its examples of each dtype class
(and of rank 0 against higher ranks) got down the pipeline.

Derived from what the artifact keeps: each spec's outcome counts (examples per
dtype, rank and stage reached) and failure groups. A cell is the furthest stage
*every* failing example of that class reached, i.e. the earliest stage among its
failure groups; a class whose examples all passed is ``ok``; a class no example
was drawn in is empty. An artifact from before schema 5 has no outcome counts:
there a class the specs declare (in the catalog) with no failing example is
``ok``, which cannot tell "drawn and passed" from "declared but not drawn".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from opsweep.artifact.grade import FailureGroup, StageCount
from opsweep.model import UNGRADED, OpSpec, Stage

#: dtype classes of the matrix, in column order, with the dtypes each holds
CLASSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("float32", ("float32",)), ("float16", ("float16",)), ("bfloat16", ("bfloat16",)),
    ("float64", ("float64",)), ("integer", ("int64", "int32", "int16", "int8", "uint8")),
    ("bool", ("bool",)), ("complex", ("complex64", "complex128")),
)
RANK_CLASSES = ("rank 0", "rank ≥ 1")
OK = "ok"
NOT_DRAWN = ""


@dataclass(frozen=True)
class Cell:
    stage: str  # a Stage value (the earliest failing stage), "ok", or "" (not drawn)
    failures: int  # failing examples in this class
    title: str
    drawn: int | None = None  # examples measured in this class (None: not known)
    #: the argument values every failing example of the class is set apart by
    #: (FailureGroup.only_with of each of its groups): the failure is the argument's, not
    #: the dtype's; "" when some failing group has none
    only: str = ""

    @property
    def thin(self) -> bool:
        """The cell rests on a single example."""
        return self.drawn == 1

    @property
    def css(self) -> str:
        return "s-" + (self.stage or "none") + (" thin" if self.thin else "") + \
            (" args" if self.only else "")

    @property
    def text(self) -> str:
        """What the cell shows: the stage, then how many of how many examples failed
        ("num 19/33"), or how many passed ("ok 33"); "(thin)" on a single example."""
        if not self.stage:
            return ""
        short = SHORT.get(self.stage, self.stage)
        if self.stage == OK:
            count = "" if self.drawn is None else f" {self.drawn}"
        else:
            count = f" {self.failures}" + ("" if self.drawn is None else f"/{self.drawn}")
        only = f" only with {self.only}" if self.only else ""
        return short + count + only + (" (thin)" if self.thin else "")


@dataclass(frozen=True)
class MatrixRow:
    name: str
    cells: tuple[Cell, ...]

    @property
    def failing(self) -> tuple[str, ...]:
        """The class names with at least one failing example."""
        return tuple(c for c, cell in zip(self.columns, self.cells, strict=True) if cell.failures)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(c for c, _ in CLASSES) if len(self.cells) == len(CLASSES) else RANK_CLASSES


def class_of(dtype: str) -> str | None:
    for name, members in CLASSES:
        if dtype in members:
            return name
    return None


def _cell(label: str, drawn: int | None, groups: Sequence[FailureGroup]) -> Cell:
    """`drawn`: the class's measured examples (None: unknown; 0: none, or none known)."""
    of = "" if drawn is None else f" of {drawn}"
    if not groups:
        if not drawn:
            return Cell(NOT_DRAWN if drawn == 0 else OK, 0, "" if drawn == 0 else f"{label}: 0 failing")
        return Cell(OK, 0, f"{label}: 0 failing of {drawn}", drawn)
    earliest = min((g.stage for g in groups), key=lambda s: s.depth)
    by_stage: dict[str, int] = {}
    for g in sorted(groups, key=lambda g: g.stage.depth):
        by_stage[g.stage.value] = by_stage.get(g.stage.value, 0) + g.count
    total = sum(by_stage.values())
    detail = ", ".join(f"{s} ×{n}" for s, n in by_stage.items())
    only = " or ".join(sorted({v for g in groups for v in g.only_with})) \
        if all(g.only_with for g in groups) else ""
    said = f", only with {only}" if only else ""
    return Cell(earliest.value, total, f"{label}: {total} failing{of} ({detail}){said}", drawn,
                only)


def _failing(groups: Iterable[FailureGroup]) -> list[FailureGroup]:
    return [g for g in groups if g.stage is not Stage.OK and g.stage not in UNGRADED]


def _of_class(label: str) -> Callable[[StageCount], bool]:
    return lambda c: class_of(c.dtype) == label


def _drawn(outcomes: Sequence[StageCount], member: Callable[[StageCount], bool]) -> int:
    return sum(c.count for c in outcomes if c.stage not in UNGRADED and member(c))


def dtype_row(name: str, specs: Sequence[OpSpec], groups: Iterable[FailureGroup],
              outcomes: Sequence[StageCount] | None = None) -> MatrixRow:
    """`outcomes`: the operator's outcome counts (None: an artifact without them; the
    classes the specs declare stand in for what was drawn)."""
    failing = _failing(groups)
    declared = {class_of(d) for s in specs for d in s.dtypes}
    cells = []
    for label, _ in CLASSES:
        mine = [g for g in failing if class_of(g.dtype) == label]
        if outcomes is not None:
            drawn: int | None = _drawn(outcomes, _of_class(label))
        else:
            drawn = None if label in declared or mine else 0
        cells.append(_cell(label, drawn, mine))
    return MatrixRow(name, tuple(cells))


def rank_row(name: str, specs: Sequence[OpSpec], groups: Iterable[FailureGroup],
             outcomes: Sequence[StageCount] | None = None) -> MatrixRow | None:
    """Rank 0 against higher ranks, or None when both look the same (or only one is drawn)."""
    failing = _failing(groups)
    zero = [g for g in failing if g.rank == 0]
    higher = [g for g in failing if g.rank > 0]
    if outcomes is not None:
        drawn: tuple[int | None, int | None] = (_drawn(outcomes, lambda c: c.rank == 0),
                                                _drawn(outcomes, lambda c: c.rank > 0))
    else:
        drawn = (None if any(s.ranks[0] == 0 for s in specs) or zero else 0,
                 None if any(s.ranks[1] > 0 for s in specs) or higher else 0)
    cells = (_cell(RANK_CLASSES[0], drawn[0], zero), _cell(RANK_CLASSES[1], drawn[1], higher))
    if 0 in drawn or cells[0].stage == cells[1].stage:
        return None
    return MatrixRow(name, cells)


#: the matrix's legend: stage, the short text of its cell, what it means
STAGE_LEGEND: tuple[tuple[str, str, str], ...] = (
    ("capture", "cap", "torch.export could not capture"),
    ("no-translation", "no-tr", "the exporter has no translation"),
    ("translation-error", "err", "a translation raised"),
    ("raw-error", "raw", "a non-exporter exception escaped"),
    ("checker", "chk", "onnx.checker rejected the model"),
    ("runtime", "run", "onnxruntime refused to load or run it"),
    ("numerics", "num", "ran, outputs differ from PyTorch"),
    (OK, "ok", "no failing example"),
)
SHORT = {stage: short for stage, short, _ in STAGE_LEGEND}

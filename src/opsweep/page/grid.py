"""An operator's dtype × rank grid (issue 50): per target, each (dtype, rank) cell its specs
answer for, rows the dtypes, columns the ranks from 0 to the top.

A cell is one of:

- ``ok``: every graded example of the cell passed every stage;
- a failing stage: the furthest stage *every* failing example of the cell reached (its
  earliest failing stage, as in the dtype matrix, :mod:`opsweep.page.dtypes`), with how
  many failed of how many were drawn;
- ``refused``: eager PyTorch refuses the cell (the artifact keeps eager's error);
- ``unsettled``: eager refused the example made for the cell from a drawn one (a retyped,
  reranked or emptied example: the rewrite, not the operator, may be at fault);
- ``outside``: below the ranks the spec declares (eager accepts it, the spec does not draw
  it), or beyond every rank its specs declare;
- ``unreachable``: no example to make the cell from;
- not drawn: no graded example, and nothing recorded about it (a spec drawn without the
  cell covering, or measured before schema 7).

Counts are summed over the operator's specs; a cell's title says which spec measured what
when more than one did. Everything comes from what the artifact keeps per spec and target:
the outcome counts (examples per dtype, rank and stage reached) and the cells no example
stands for (``SpecResult.cells``). The empty tensor's cell, when it was measured, is counted
with its dtype and rank (the outcome counts do not tell it apart): only its other states
have a column of their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from opsweep.artifact.grade import FailureGroup
from opsweep.artifact.results import SpecResult, TargetResult
from opsweep.model import UNGRADED, Stage
from opsweep.page.dtypes import CLASSES, OK, SHORT
from opsweep.targets import label

#: the states a cell has when no graded example stands for it, in the order one spec's word
#: wins over another's for the same cell (what the operator refuses first)
REFUSED, UNSETTLED, UNREACHABLE, OUTSIDE = "refused", "unsettled", "unreachable", "outside"
RECORDED = (REFUSED, UNSETTLED, UNREACHABLE, OUTSIDE)
NOT_DRAWN = "none"
#: every state's legend: (state, the cell's text, what it means)
LEGEND: tuple[tuple[str, str, str], ...] = (
    (OK, "ok", "every example of the cell passed every stage"),
    (REFUSED, "refused", "eager PyTorch refuses the cell (its error in the cell's title)"),
    (UNSETTLED, "unsettled", "eager refused the example made for the cell from a drawn one"),
    (OUTSIDE, "outside", "outside the ranks the spec declares"),
    (UNREACHABLE, "unreachable", "no example to make the cell from"),
    (NOT_DRAWN, "not drawn", "no example drawn, nothing recorded"),
)
_TEXT = {state: text for state, text, _ in LEGEND}
#: the dtypes in the dtype matrix's order (a dtype it does not name comes after, by name)
ORDER = tuple(d for _, members in CLASSES for d in members)


@dataclass(frozen=True)
class GridCell:
    state: str  # "ok", a failing Stage value, one of RECORDED, or NOT_DRAWN
    failing: int = 0
    drawn: int = 0  # graded examples of the cell
    title: str = ""

    @property
    def failed(self) -> bool:
        return self.failing > 0

    @property
    def css(self) -> str:
        return f"s-{self.state}"

    @property
    def text(self) -> str:
        """"ok 3", "run 2/3" (the stage's short name, failing/drawn), or the state's word."""
        if self.state == OK:
            return f"ok {self.drawn}"
        if self.failing:
            return f"{SHORT.get(self.state, self.state)} {self.failing}/{self.drawn}"
        return _TEXT.get(self.state, self.state)


@dataclass(frozen=True)
class GridRow:
    dtype: str
    cells: tuple[GridCell, ...]  # one per rank of the grid
    total: GridCell  # every rank of the dtype
    empty: GridCell | None = None  # the empty tensor's cell, when recorded for this dtype


@dataclass(frozen=True)
class Grid:
    """One target's grid of one operator."""

    target: str  # the target's name as results store it
    label: str  # how the page names it
    ranks: tuple[int, ...]
    rows: tuple[GridRow, ...]
    #: the specs whose empty-tensor example was measured (counted with its dtype and rank)
    empty_measured: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether the grid has an empty-tensor column (some row recorded one)."""
        return any(r.empty is not None for r in self.rows)

    @property
    def failing(self) -> tuple[tuple[str, int], ...]:
        """The (dtype, rank) cells with a failing example."""
        return tuple((row.dtype, rank) for row in self.rows
                     for rank, c in zip(self.ranks, row.cells, strict=True) if c.failed)

    def same(self, other: Grid) -> bool:
        """The same cells as `other` (whatever the target)."""
        return (self.ranks, self.rows, self.empty_measured) == \
            (other.ranks, other.rows, other.empty_measured)


#: a spec's declaration, from the catalog: its dtypes and its (lowest, top) rank
Declared = tuple[Sequence[str], tuple[int, int]]


def parse_key(key: str) -> tuple[str, int, bool]:
    """A cell as `SpecResult.cells` spells it, "dtype rank[ empty]", back as its parts."""
    parts = key.split()
    if len(parts) not in (2, 3) or not parts[1].isdigit() or parts[2:] not in ([], ["empty"]):
        raise ValueError(f"cell {key!r}: expected 'dtype rank' or 'dtype rank empty'")
    return parts[0], int(parts[1]), len(parts) == 3


def _split(status: str) -> tuple[str, str]:
    """"refused: <error>" -> ("refused", "<error>")."""
    state, _, error = status.partition(":")
    return state.strip(), error.strip()


@dataclass
class _Spec:
    """What one spec says about each cell."""

    name: str
    graded: dict[tuple[str, int], Counter]  # (dtype, rank) -> stage -> examples
    ungraded: dict[tuple[str, int], Counter]
    recorded: dict[tuple[str, int, bool], tuple[str, str]]  # cell -> (state, error)
    covered: bool  # drawn with the cell covering (its cells recorded)
    declared: Declared | None


def _spec(name: str, result: SpecResult, declared: Declared | None) -> _Spec:
    graded: dict[tuple[str, int], Counter] = {}
    ungraded: dict[tuple[str, int], Counter] = {}
    for c in result.outcomes or ():
        into = ungraded if c.stage in UNGRADED else graded
        into.setdefault((c.dtype, c.rank), Counter())[c.stage] += c.count
    recorded = {parse_key(k): _split(v) for k, v in (result.cells or {}).items()}
    return _Spec(name, graded, ungraded, recorded, result.cells is not None, declared)


def _dtypes(specs: Sequence[_Spec]) -> list[str]:
    """The rows: every dtype an example is filed under or a cell is recorded at, and the
    dtypes a spec declares where its examples are filed under its declared dtypes (a spec
    whose first tensor is not the declared one files them elsewhere)."""
    found: set[str] = set()
    for s in specs:
        filed = {d for d, _ in (*s.graded, *s.ungraded)} | {d for d, _, _ in s.recorded}
        found |= filed
        if s.declared is not None and filed <= set(s.declared[0]):
            found |= set(s.declared[0])
    return sorted(found, key=lambda d: (ORDER.index(d) if d in ORDER else len(ORDER), d))


def _has_empty(s: _Spec) -> bool:
    """Whether the spec's cells hold an empty tensor's (its top rank is above 0)."""
    top = s.declared[1][1] if s.declared is not None else max(
        (r for _, r in s.graded), default=0)
    return top > 0 and bool(s.graded)


def _top(specs: Sequence[_Spec]) -> int:
    tops = [r for s in specs for _, r in (*s.graded, *s.ungraded)]
    tops += [r for s in specs for _, r, _ in s.recorded]
    tops += [s.declared[1][1] for s in specs if s.declared is not None]
    return max(tops, default=-1)


def _only(groups: Iterable[FailureGroup]) -> str:
    """The argument values every failing group of the cell is set apart by, or ""."""
    groups = list(groups)
    if not groups or not all(g.only_with for g in groups):
        return ""
    return " or ".join(sorted({v for g in groups for v in g.only_with}))


def _measured(where: str, mine: list[tuple[str, Counter]], groups: list[FailureGroup],
              many: bool) -> GridCell:
    stages: Counter = Counter()
    for _, counts in mine:
        stages.update(counts)
    drawn = sum(stages.values())
    failing = drawn - stages[Stage.OK]
    if not failing:
        title = f"{where}: 0 failing of {drawn}"
        state = OK
    else:
        bad = sorted((s for s in stages if s is not Stage.OK and stages[s]),
                     key=lambda s: s.depth)
        state = bad[0].value
        split = ", ".join(f"{s.value} ×{stages[s]}" for s in bad)
        title = f"{where}: {failing} failing of {drawn} ({split})"
        only = _only(groups)
        title += f", only with {only}" if only else ""
    if many:
        title += "; " + ", ".join(
            f"spec {name}: {sum(c.values()) - c[Stage.OK]} failing of {sum(c.values())}"
            for name, c in mine)
    return GridCell(state, failing, drawn, title)


_SAID = {REFUSED: "eager PyTorch refuses it", UNSETTLED: (
    "eager refused the example made for it from a drawn one (the rewrite may be at fault)"),
    OUTSIDE: "below the ranks the spec declares; eager accepts it",
    UNREACHABLE: "no example to make it from"}


def _recorded(where: str, said: list[tuple[str, str, str]], many: bool) -> GridCell:
    """`said`: (spec, state, error) of each spec that recorded the cell."""
    first = min(said, key=lambda s: RECORDED.index(s[1]) if s[1] in RECORDED else len(RECORDED))
    lines = []
    for spec, state, error in said:
        line = _SAID.get(state, state) + (f": {error}" if error else "")
        lines.append(f"spec {spec}: {line}" if many else line)
    return GridCell(first[1], title=f"{where}: " + "; ".join(lines))


def _empty_cell(specs: Sequence[_Spec], dtype: str, rank: int) -> GridCell | None:
    """The empty tensor's cell at `dtype` and `rank`, when a spec recorded it (measured, it
    is counted with its dtype and rank)."""
    said = [(s.name, *s.recorded[(dtype, rank, True)]) for s in specs
            if (dtype, rank, True) in s.recorded]
    return _recorded(f"{dtype} rank {rank}, empty tensor", said, len(specs) > 1) if said else None


def _cell(specs: Sequence[_Spec], dtype: str, rank: int,
          failures: Mapping[tuple[str, int], list[FailureGroup]]) -> GridCell:
    where = f"{dtype} rank {rank}"
    mine = [(s.name, s.graded[(dtype, rank)]) for s in specs if (dtype, rank) in s.graded]
    if mine:
        return _measured(where, mine, failures.get((dtype, rank), []), len(specs) > 1)
    said = [(s.name, *s.recorded[(dtype, rank, False)]) for s in specs
            if (dtype, rank, False) in s.recorded]
    if said:
        return _recorded(where, said, len(specs) > 1)
    declared = [s.declared[1] for s in specs if s.declared is not None]
    if declared and not any(low <= rank <= top for low, top in declared):
        ranks = ", ".join(sorted({f"{low} to {top}" for low, top in declared}))
        return GridCell(OUTSIDE, title=f"{where}: outside the ranks its specs declare ({ranks})")
    lost: Counter = Counter()
    for s in specs:
        lost.update(s.ungraded.get((dtype, rank), Counter()))
    why = ", ".join(f"{n} {s.value}" for s, n in sorted(lost.items(), key=lambda i: i[0].value))
    return GridCell(NOT_DRAWN, title=f"{where}: not drawn" + (f" (only {why})" if why else ""))


def _total(dtype: str, cells: Sequence[GridCell], specs: Sequence[_Spec],
           failures: Mapping[tuple[str, int], list[FailureGroup]]) -> GridCell:
    mine = [(s.name, sum((c for (d, _), c in s.graded.items() if d == dtype), Counter()))
            for s in specs]
    mine = [(name, c) for name, c in mine if c]
    if mine:
        groups = [g for (d, _), gs in failures.items() if d == dtype for g in gs]
        return _measured(f"{dtype}, every rank", mine, groups, len(specs) > 1)
    states = {c.state for c in cells}
    state = states.pop() if len(states) == 1 else NOT_DRAWN
    return GridCell(state, title=f"{dtype}: no example measured at any rank")


def grid(target: TargetResult, op: str,
         declared: Mapping[str, Declared] | None = None) -> Grid | None:
    """`op`'s grid as `target` measured it (None: it measured no spec of `op`, or kept no
    outcome counts, an artifact from before schema 5); `declared`: each spec's dtypes and
    ranks, from the catalog (a spec it lacks is read from its measurements alone)."""
    result = target.operators.get(op)
    if result is None:
        return None
    names = [n for n in result.specs if n in target.specs]
    if not names or any(target.specs[n].outcomes is None for n in names):
        return None
    declared = declared or {}
    specs = [_spec(n, target.specs[n], declared.get(n)) for n in names]
    failures: dict[tuple[str, int], list[FailureGroup]] = {}
    for g in result.failures:
        if g.stage is not Stage.OK and g.stage not in UNGRADED:
            failures.setdefault((g.dtype, g.rank), []).append(g)
    ranks = tuple(range(_top(specs) + 1))
    rows = []
    for dtype in _dtypes(specs):
        cells = tuple(_cell(specs, dtype, r, failures) for r in ranks)
        empties = [c for r in ranks if (c := _empty_cell(specs, dtype, r)) is not None]
        rows.append(GridRow(dtype, cells, _total(dtype, cells, specs, failures),
                            empties[0] if empties else None))
    measured = tuple(s.name for s in specs if s.covered and _has_empty(s)
                     and not any(e for _, _, e in s.recorded))
    return Grid(target.name, label(target.name), ranks, tuple(rows), measured)


@dataclass(frozen=True)
class Grids:
    """An operator's grids: the stock exporter's first, then each other target's whose
    grid differs from it; `same`: the labels of the targets whose grid is the stock one's."""

    shown: tuple[Grid, ...]
    same: tuple[str, ...] = ()

    @property
    def stock(self) -> Grid | None:
        return self.shown[0] if self.shown else None


def grids(targets: Iterable[TargetResult], op: str,
          declared: Mapping[str, Declared] | None = None) -> Grids:
    """`targets`: the artifact's results, the stock target's first."""
    found = [g for t in targets if (g := grid(t, op, declared)) is not None]
    if not found:
        return Grids(())
    first, rest = found[0], found[1:]
    return Grids((first, *(g for g in rest if not g.same(first))),
                 tuple(g.label for g in rest if g.same(first)))

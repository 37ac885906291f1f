"""A spec's cells: every (dtype, rank) its operator accepts, and the empty tensor.

An example is filed under its first tensor's dtype and rank (`Example.dtype`,
`Example.rank`); `opsweep check` joins a model's operator uses with the table there, so a
cell no example lands in is a question the table cannot answer. A spec's *cell universe*
is each dtype it lists (or, when its first tensor is not the one whose dtype it lists, the
dtypes its draws file examples under) at every rank from 0 to its top rank (the upper end
of the spec's ``ranks``: the operator's natural top, ``OpSpec.top`` says why), and one
empty cell (a zero-size side) at the first dtype.

Each cell is reached, in this order of preference:

1. by the spec's own draws (``drawn``): measured by the sweep as any example;
2. by a longer search of the spec's own strategy (derandomized, another seed) when a rank
   the spec declares has no drawn example, keeping the first example of each cell it
   reaches; it is asked of eager PyTorch once;
3. by retyping (a drawn example at that rank with its first tensor's dtype swapped, on
   every tensor of that dtype), reranking (the nearest rank's example with the sides of
   its first tensor's dtype trimmed from the left, or 2s prepended) or emptying (the
   first tensor's leading side set to 0, and the aligned side of every tensor sharing
   it): asked of eager once as well.

Eager's answer decides: ``added`` (it runs: the example joins the draw), ``refused`` (a
searched example, the spec's own strategy's draw, eager refuses: the operator refuses the
cell, with eager's error) or ``unsettled`` (a retyped, reranked or emptied example eager
refuses: the rewrite, not the operator, may be at fault, e.g. an index tensor that shared
the first tensor's dtype, a module built for another dtype, a `dim` or a partner that no
longer fits; the spec's strategy should draw the cell itself to settle it, or its
declaration say the operator takes no such cell).
A rank below the spec's declared ``ranks`` that eager accepts is ``outside``: never added
(a drawn example stays inside its spec's declaration, a catalog invariant), it tells the
spec's author to widen the strategy and its ``ranks``.
A cell with no example at all (the spec draws nothing with a tensor at any rank) is
``unreachable``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from opsweep.coverage import dtype_class
from opsweep.model import DTYPE_TAGS, FLOAT_DTYPES, Example, OpSpec, TensorArg

#: How many further examples the search draws at most, per spec with a rank missing (a
#: hypothesis draw costs about as much as eager's answer on a small example; a rank the
#: strategy draws rarely is found within a few tens of draws, dtypes are retyped instead)
SEARCH = 30

#: a cell's statuses (module docstring)
DRAWN, ADDED, REFUSED, UNSETTLED, OUTSIDE, UNREACHABLE = (
    "drawn", "added", "refused", "unsettled", "outside", "unreachable")
STATUSES = (DRAWN, ADDED, REFUSED, UNSETTLED, OUTSIDE, UNREACHABLE)
#: the rewrites of an example: eager refusing one may be the rewrite's fault (a retyped
#: index that shared the first tensor's dtype, a module built for the old dtype)
REWRITES = ("retyped", "emptied", "reranked")


@dataclass(frozen=True, order=True)
class Cell:
    dtype: str
    rank: int
    empty: bool = False

    @property
    def label(self) -> str:
        tag = DTYPE_TAGS.get(self.dtype, self.dtype)
        return f"{tag}/{self.rank}" + ("/empty" if self.empty else "")


def cell_of(example: Example) -> Cell | None:
    """The cell an example is filed under (None: it has no tensor)."""
    tensors = example.tensors
    if not tensors:
        return None
    first = tensors[0]
    return Cell(first.dtype, first.rank, first.rank > 0 and first.numel == 0)


@dataclass(frozen=True)
class CellPlan:
    """A spec's cells under a profile: each cell's status, the example standing for it
    (None: unreachable), and eager's error line for a refused or unsettled one."""

    spec: str
    status: dict[Cell, str] = field(default_factory=dict)
    example: dict[Cell, Example | None] = field(default_factory=dict)
    error: dict[Cell, str] = field(default_factory=dict)
    #: how the added example was made: "search", "retyped" or "emptied"
    how: dict[Cell, str] = field(default_factory=dict)

    @property
    def added(self) -> list[Example]:
        return [e for c, e in self.example.items() if self.status[c] == ADDED and e is not None]

    def count(self, status: str) -> int:
        return sum(1 for s in self.status.values() if s == status)


def universe(spec: OpSpec, drawn: Sequence[Example]) -> list[Cell]:
    """The cells `spec` should answer for (module docstring); empty when no drawn example
    has a tensor (a creation operator: its dtype and rank are arguments, not inputs)."""
    filed = [c.dtype for c in map(cell_of, drawn) if c is not None]
    if not filed:
        return []
    listed = list(spec.dtypes)
    dtypes = listed if set(filed) <= set(listed) else list(dict.fromkeys(filed))
    top = spec.ranks[1]
    cells = [Cell(d, r) for d in dtypes for r in range(top + 1)]
    if top == 0:  # a 0-d tensor has no side to empty
        return cells
    return cells + [Cell(dtypes[0], max(1, spec.ranks[0]), True)]


def retyped(example: Example, dtype: str) -> Example:
    """`example` with every tensor of its first tensor's dtype made `dtype` (element choices,
    the float edge values, are kept for float targets only)."""
    source = example.dtype

    def swap(value: Any) -> Any:
        if isinstance(value, TensorArg) and value.dtype == source:
            keep = value.choices if dtype in FLOAT_DTYPES else None
            return replace(value, dtype=dtype, choices=keep)
        if isinstance(value, (list, tuple)):
            return type(value)(swap(v) for v in value)
        return value
    return Example(swap(example.args), tuple((k, swap(v)) for k, v in example.kwargs),
                   example.init, example.seed)


def emptied(example: Example) -> Example | None:
    """`example` with its first tensor's leading side set to 0, and the side aligned with it
    (from the right, as broadcasting aligns) of every other tensor that has the same side;
    None when the first tensor has rank 0."""
    first = example.tensors[0]
    if first.rank == 0:
        return None
    from_end, side = first.rank, first.shape[0]

    def zero(value: Any) -> Any:
        if isinstance(value, TensorArg) and value.rank >= from_end \
                and value.shape[value.rank - from_end] == side:
            at = value.rank - from_end
            return replace(value, shape=value.shape[:at] + (0,) + value.shape[at + 1:])
        if isinstance(value, (list, tuple)):
            return type(value)(zero(v) for v in value)
        return value
    return Example(zero(example.args), tuple((k, zero(v)) for k, v in example.kwargs),
                   example.init, example.seed)


def reranked(example: Example, rank: int) -> Example:
    """`example` at another rank: every tensor of its first tensor's dtype longer than
    `rank` keeps its trailing `rank` sides (broadcasting aligns from the right), or, to
    go up, every tensor of the first tensor's rank gains leading sides of 2."""
    first = example.tensors[0]

    def fit(value: Any) -> Any:
        if isinstance(value, TensorArg) and value.dtype == first.dtype:
            if rank < first.rank and value.rank > rank:
                return replace(value, shape=value.shape[value.rank - rank:])
            if rank > first.rank and value.rank == first.rank:
                return replace(value, shape=(2,) * (rank - first.rank) + value.shape)
            return value
        if isinstance(value, (list, tuple)):
            return type(value)(fit(v) for v in value)
        return value
    return Example(fit(example.args), tuple((k, fit(v)) for k, v in example.kwargs),
                   example.init, example.seed)


def _first(examples: Iterable[Example]) -> dict[Cell, Example]:
    out: dict[Cell, Example] = {}
    for example in examples:
        cell = cell_of(example)
        if cell is not None:
            out.setdefault(cell, example)
    return out


def plan_cells(spec: OpSpec, drawn: Sequence[Example],
               search: Callable[[set[int]], list[Example]],
               probe: Callable[[OpSpec, Example], str | None]) -> CellPlan:
    """Each cell of `spec`'s universe: held by `drawn`, else searched (`search(ranks)`
    draws more from the strategy until it has drawn each rank no drawn example has), else
    retyped, reranked or emptied, and `probe`d (eager's error line or None) where the
    example is new."""
    plan = CellPlan(spec.name)
    cells = universe(spec, drawn)
    have = _first(drawn)
    low = spec.ranks[0]  # below it the strategy draws nothing: not searched for
    ranks = {c.rank for c in have if not c.empty}
    missing = {r for r in range(low, spec.ranks[1] + 1) if r not in ranks}
    found = _first(search(missing)) if missing else {}
    pool = {**found, **have}
    by_rank: dict[int, Example] = {}
    by_kind: dict[tuple[str, int], Example] = {}  # (dtype class, rank): retype within a class
    for held, e in sorted(pool.items()):
        if not held.empty:
            by_rank.setdefault(held.rank, e)
            by_kind.setdefault((dtype_class(held.dtype), held.rank), e)
    empties = sorted(c for c in have if c.empty)
    if cells and cells[-1].empty and empties:  # a drawn empty example stands for it
        cells[-1] = empties[0]
    elif cells and cells[-1].empty:
        at = sorted(r for r in by_rank if r >= cells[-1].rank) or sorted(by_rank)
        if at:  # the empty cell at the lowest rank (from 1) some example has
            cells[-1] = Cell(cells[-1].dtype, max(at[0], 1), True)
    for cell in cells:
        if cell in have:
            plan.status[cell], plan.example[cell] = DRAWN, have[cell]
            continue
        example, how = _made(cell, found, by_rank, by_kind)
        if example is None:
            plan.status[cell], plan.example[cell] = UNREACHABLE, None
            continue
        plan.example[cell], plan.how[cell] = example, how
        error = probe(spec, example)
        if error is None:  # below the declared ranks: the spec's to widen, not ours to add
            plan.status[cell] = OUTSIDE if cell.rank < low else ADDED
        else:
            plan.status[cell] = UNSETTLED if how in REWRITES else REFUSED
            plan.error[cell] = error
    return plan


def settle(plan: CellPlan, errors: Mapping[Cell, str | None], crashed: bool = False
           ) -> CellPlan:
    """`plan`, whose new cells were all taken as accepted, with eager's answers for them
    (`errors`: its error line, or None: it ran): a cell eager refused is ``refused`` (a
    searched example) or ``unsettled`` (a rewritten one, or any when eager `crashed`)."""
    for cell, error in errors.items():
        if error is not None:
            rewritten = crashed or plan.how.get(cell) in REWRITES
            plan.status[cell] = UNSETTLED if rewritten else REFUSED
            plan.error[cell] = error
    return plan


def _made(cell: Cell, found: dict[Cell, Example], by_rank: dict[int, Example],
          by_kind: dict[tuple[str, int], Example]) -> tuple[Example | None, str]:
    """The example standing for a cell no drawn example holds, and how it was made."""
    if cell in found:
        return found[cell], "search"
    if not cell.empty and cell.rank in by_rank:
        base = by_kind.get((dtype_class(cell.dtype), cell.rank), by_rank[cell.rank])
        return retyped(base, cell.dtype), "retyped"
    if not cell.empty and by_rank:
        near = min(by_rank, key=lambda r: (abs(r - cell.rank), r))
        base = by_kind.get((dtype_class(cell.dtype), near), by_rank[near])
        return reranked(retyped(base, cell.dtype), cell.rank), "reranked"
    if cell.empty and cell.rank in by_rank:
        return emptied(retyped(by_rank[cell.rank], cell.dtype)), "emptied"
    return None, ""


def search_seed(name: str) -> int:
    """The derandomized search's seed: another stream than the spec's own draw."""
    return zlib.crc32(("cells:" + name).encode())


# --- what the artifact keeps: the cells no example stands for -----------------------------

#: eager's error as the artifact keeps it: its first line, this long at most
ERROR_CHARS = 160


def cell_key(cell: Cell) -> str:
    """A cell as the artifact spells it: "dtype rank" (the key of the outcome counts and
    the errors), "dtype rank empty" for the empty cell."""
    return f"{cell.dtype} {cell.rank}" + (" empty" if cell.empty else "")


def unmeasured(plan: CellPlan) -> dict[str, str]:
    """The cells of the plan no measured example stands for, by `cell_key`: "refused: "
    with eager's error (the operator refuses the cell), "unsettled: " with it (a rewritten
    example eager refused), "outside" (below the spec's declared ranks), "unreachable"."""
    out = {}
    for cell, status in sorted(plan.status.items()):
        if status in (DRAWN, ADDED):
            continue
        error = plan.error.get(cell, "").strip().splitlines()
        out[cell_key(cell)] = status + (f": {error[0][:ERROR_CHARS]}" if error else "")
    return out


# --- the report: `opsweep coverage --cells` -----------------------------------------------

def summary(plan: CellPlan) -> dict[str, Any]:
    """The plan as JSON-ready data: counts, and the cells of each status by label."""
    by: dict[str, list[str]] = {s: [] for s in STATUSES}
    for cell in sorted(plan.status):
        by[plan.status[cell]].append(cell.label)
    return {"spec": plan.spec,
            "accepted": plan.count(DRAWN) + plan.count(ADDED),
            "counts": {s: len(v) for s, v in by.items()},
            "cells": by,
            "errors": {c.label: plan.error[c] for c in sorted(plan.error)},
            "how": {c.label: plan.how[c] for c in sorted(plan.how)}}


def describe(plan: CellPlan) -> list[str]:
    """A few lines: the counts, the cells not drawn by the spec itself, each refusal with
    eager's error (the first of each error in full, the rest of it by label)."""
    data = summary(plan)
    counts = data["counts"]
    if not plan.status:
        return [f"{plan.spec}: no tensor input (a creation operator): no cells"]
    lines = [f"{plan.spec}: {data['accepted']} accepted ({counts[DRAWN]} drawn, "
             f"{counts[ADDED]} added), {counts[REFUSED]} refused, {counts[UNSETTLED]} "
             f"unsettled, {counts[OUTSIDE]} outside its ranks, {counts[UNREACHABLE]} "
             "unreachable"]
    for status in (ADDED, OUTSIDE, UNREACHABLE):
        if data["cells"][status]:
            lines.append(f"    {status:<11} {' '.join(data['cells'][status])}")
    for status in (REFUSED, UNSETTLED):
        errors: dict[str, list[str]] = {}
        for label in data["cells"][status]:
            errors.setdefault(data["errors"][label], []).append(label)
        for error, labels in errors.items():
            lines.append(f"    {status:<11} {' '.join(labels)}: {error}")
    return lines

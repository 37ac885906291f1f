"""Hypothesis strategies for drawing examples.

Strategies are plural nouns with keyword-only ``min_``/``max_`` bounds. Bad
arguments raise ``ValueError`` naming the argument at construction time, which
for a spec module means at import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from opsweep.model import DTYPE_TAGS, Example, TensorArg

MAX_SIDE = 6
#: The catalog's top rank, and so the top of a spec's cells (opsweep.catalog.cells) unless
#: its ``ranks`` say otherwise: an elementwise, reducing or indexing kernel handles rank 5
#: and up as it handles 4 (a loop over flattened leading dimensions), and a real model's
#: tensors rarely go past 4, so the cells stop there; an operator of fixed rank (``mm``:
#: 2) declares that rank instead.
MAX_RANK = 4
SEED_MAX = 2**31 - 1


def _check(name: str, ok: bool, detail: str) -> None:
    if not ok:
        raise ValueError(f"{name}: {detail}")


def check_dtypes(dtypes: Sequence[str], argname: str = "dtypes") -> tuple[str, ...]:
    _check(argname, isinstance(dtypes, (tuple, list)) and len(dtypes) > 0,
           f"expected a non-empty tuple of dtype names, got {dtypes!r}")
    for d in dtypes:
        _check(argname, d in DTYPE_TAGS,
               f"unknown dtype {d!r}; known: {', '.join(DTYPE_TAGS)}")
    return tuple(dtypes)


def sides(*, min_side: int = 1, max_side: int = MAX_SIDE) -> st.SearchStrategy[int]:
    _check("min_side", isinstance(min_side, int) and min_side >= 0, f"must be an int >= 0, got {min_side!r}")
    _check("max_side", isinstance(max_side, int) and max_side >= min_side,
           f"must be an int >= min_side ({min_side}), got {max_side!r}")
    return st.integers(min_side, max_side)


def shapes(*, min_rank: int = 0, max_rank: int = MAX_RANK, min_side: int = 1,
           max_side: int = MAX_SIDE) -> st.SearchStrategy[tuple[int, ...]]:
    """Tensor shapes with rank in [min_rank, max_rank] and sides in [min_side, max_side]."""
    _check("min_rank", isinstance(min_rank, int) and min_rank >= 0, f"must be an int >= 0, got {min_rank!r}")
    _check("max_rank", isinstance(max_rank, int) and max_rank >= min_rank,
           f"must be an int >= min_rank ({min_rank}), got {max_rank!r}")
    return st.lists(sides(min_side=min_side, max_side=max_side),
                    min_size=min_rank, max_size=max_rank).map(tuple)


def seeds() -> st.SearchStrategy[int]:
    return st.integers(0, SEED_MAX)


def tensors(*, dtypes: Sequence[str], shape: Any = None, min_rank: int = 0,
            max_rank: int = MAX_RANK, min_side: int = 1, max_side: int = MAX_SIDE,
            min_value: float | None = None, max_value: float | None = None,
            choices: Sequence[float] | None = None) -> st.SearchStrategy[TensorArg]:
    """Tensor recipes. `shape` may be a fixed tuple or a strategy; otherwise
    a shape is drawn from the rank/side bounds. `min_value`/`max_value` bound
    the generated values (defaults: standard normal floats, small ints);
    `choices` draws every element from a fixed set of values instead."""
    dtypes = check_dtypes(dtypes)
    if min_value is not None and max_value is not None:
        _check("max_value", max_value > min_value, f"must exceed min_value ({min_value}), got {max_value!r}")
    if shape is None:
        shape_st = shapes(min_rank=min_rank, max_rank=max_rank, min_side=min_side, max_side=max_side)
    elif isinstance(shape, st.SearchStrategy):
        shape_st = shape
    else:
        _check("shape", isinstance(shape, tuple) and all(isinstance(s, int) and s >= 0 for s in shape),
               f"expected a tuple of sides or a strategy, got {shape!r}")
        shape_st = st.just(shape)
    picks = tuple(choices) if choices else None
    _check("choices", picks is None or all(isinstance(c, (int, float)) for c in picks),
           f"expected numbers, got {choices!r}")
    return st.builds(lambda sh, dt: TensorArg(tuple(sh), dt, min_value, max_value, picks),
                     shape_st, st.sampled_from(dtypes))


def broadcast_shapes(shape: tuple[int, ...], *, min_rank: int = 0) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes that broadcast against `shape` (trailing-aligned, sides kept or set to 1)."""
    @st.composite
    def draw_shape(draw):
        rank = draw(st.integers(min(min_rank, len(shape)), len(shape)))
        tail = shape[len(shape) - rank:]
        return tuple(side if draw(st.booleans()) else 1 for side in tail)
    return draw_shape()


def dims(rank: int) -> st.SearchStrategy[int]:
    """A valid dimension index for a tensor of `rank` (negative indices too)."""
    r = max(rank, 1)
    return st.integers(-r, r - 1)


def dim_subsets(rank: int, *, min_size: int = 1) -> st.SearchStrategy[tuple[int, ...]]:
    """A non-repeating tuple of dimensions for a tensor of `rank`."""
    if rank == 0:
        return st.just(())
    return st.lists(st.integers(0, rank - 1), min_size=min(min_size, rank), max_size=rank,
                    unique=True).map(lambda ds: tuple(sorted(ds)))


def examples(build: Callable[..., tuple], *, seed: bool = True) -> st.SearchStrategy[Example]:
    """Wrap a ``@composite``-style body returning ``(args, kwargs)`` or
    ``(args, kwargs, init)`` into a strategy of Example, adding a value seed."""
    @st.composite
    def draw_example(draw):
        built = build(draw)
        args, kwargs, init = (tuple(built) + ({}, {}))[:3]
        value_seed = draw(seeds()) if seed else 0
        return Example(tuple(args), tuple(sorted(dict(kwargs).items())),
                       tuple(sorted(dict(init).items())), value_seed)
    return draw_example()

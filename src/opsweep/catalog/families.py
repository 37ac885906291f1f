"""Family constructors: a common operator is one line (``unary("sin")``).

Each constructor states a family's defaults (dtypes, ranks, how operands are
drawn) and returns an :class:`OpSpec`; a spec passes only what differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from hypothesis import strategies as st

from opsweep.catalog.strategies import (
    MAX_RANK,
    broadcast_shapes,
    check_dtypes,
    dim_subsets,
    dims,
    examples,
    shapes,
)
from opsweep.model import (
    COMPLEX_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    KnownGap,
    OpSpec,
    Stage,
    TensorArg,
)

FLOAT = FLOAT_DTYPES
INTEGRAL = INT_DTYPES
COMPLEX = COMPLEX_DTYPES
BOOL = ("bool",)
NUMERIC = FLOAT + INTEGRAL
ALL = NUMERIC + BOOL


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


#: A drawn keyword value meaning "leave the argument out of the call".
ABSENT = _Absent()


def optional(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """The argument is drawn from `strategy`, or left out of the call."""
    return st.one_of(st.just(ABSENT), strategy)


class MissingCallable:
    """Stands in for a callable the installed torch does not have (removed in a
    release): the catalog still loads, and records the spec as not present."""

    def __init__(self, name: str, where: str) -> None:
        self.name, self.where = name, where

    @property
    def reason(self) -> str:
        return f"no callable named {self.name!r} in {self.where}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError(f"{self.reason}: this torch does not have it")

    def __repr__(self) -> str:
        return f"MissingCallable({self.name!r}, {self.where!r})"


def _resolve(name: str, fn: Callable | None, namespaces: Sequence[Any]) -> Callable:
    """`fn`, or the callable called `name` in the first namespace that has one;
    when none has it, a MissingCallable naming what is missing (never an import error:
    a callable removed from torch makes its spec absent, not the catalog unloadable)."""
    if fn is not None:
        if not callable(fn):
            raise ValueError(f"fn: expected a callable for spec {name!r}, got {fn!r}")
        return fn
    for ns in namespaces:
        found = getattr(ns, name, None)
        if callable(found):
            return found
    return MissingCallable(name, ", ".join(getattr(ns, "__name__", repr(ns)) for ns in namespaces))


def present(**drawn: Any) -> dict[str, Any]:
    """Keyword arguments as drawn, without the ones drawn ABSENT."""
    return {k: v for k, v in drawn.items() if v is not ABSENT}


def draw_kwargs(draw, params: Mapping[str, st.SearchStrategy]) -> dict[str, Any]:
    """Draw each keyword from its strategy; ABSENT ones are left out of the call."""
    return present(**{k: draw(v) for k, v in params.items()})


#: The example translation table shipped in examples/, as `--translations` names it.
EXAMPLE_TABLE = ("examples/custom_translations.py:TABLE",)


def no_translation(op: str, closed_by: Sequence[str] = ()) -> KnownGap:
    """The common known gap: the stock exporter registers nothing for aten::`op`."""
    return gap(f"no translation registered for aten::{op}", Stage.NO_TRANSLATION, closed_by)


def gap(reason: str, stage: str | Stage, closed_by: Sequence[str] = ()) -> KnownGap:
    """A known-gap note: the stock exporter is expected to fail at `stage`;
    `closed_by` names translation targets (``module:TABLE``) expected to fix it."""
    if not reason or not reason.strip():
        raise ValueError("gap: reason must not be empty")
    try:
        stage = Stage(stage)
    except ValueError:
        raise ValueError(f"gap: unknown stage {stage!r}") from None
    return KnownGap(reason.strip(), stage, tuple(closed_by))


def spec(name: str, examples_st: st.SearchStrategy, *, fn: Callable | None = None,
         module: Callable | None = None, aten: Sequence[str] | None = None,
         dtypes: Sequence[str] = FLOAT_DTYPES,
         ranks: tuple[int, int] = (0, MAX_RANK), **fields: Any) -> OpSpec:
    """The general constructor: everything else goes through here."""
    if fn is None and module is None:
        raise ValueError(f"fn: spec {name!r} needs fn= or module=")
    return OpSpec(name=name, aten_ops=tuple(aten if aten is not None else (name,)),
                  examples=examples_st, fn=fn, module=module,
                  dtypes=check_dtypes(dtypes), ranks=tuple(ranks), **fields)


def unary(name: str, *, fn: Callable | None = None, dtypes: Sequence[str] = FLOAT_DTYPES,
          min_rank: int = 0, max_rank: int = MAX_RANK, min_value: float | None = None,
          max_value: float | None = None, params: Mapping[str, st.SearchStrategy] | None = None,
          edges: Sequence[float] | None = None,
          namespaces: Sequence[Any] = (torch,), **fields: Any) -> OpSpec:
    """One tensor in, elementwise or not; `params` draws extra keyword arguments;
    with `edges`, some float examples draw every element from those values."""
    dtypes = check_dtypes(dtypes)
    params = dict(params or {})

    def build(draw):
        dtype = draw(st.sampled_from(dtypes))
        x = TensorArg(draw(shapes(min_rank=min_rank, max_rank=max_rank)), dtype,
                      min_value, max_value, _edge_choices(draw, edges, dtype))
        return (x,), draw_kwargs(draw, params)

    return spec(name, examples(build), fn=_resolve(name, fn, namespaces),
                dtypes=dtypes, ranks=(min_rank, max_rank), **fields)


#: Float values where implementations tend to disagree.
EDGE_FLOATS = (0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"))
SIGNED_ZEROS = (0.0, -0.0, 1.0, -1.0)


def _edge_choices(draw, edges: Sequence[float] | None, dtype: str) -> tuple[float, ...] | None:
    """One example in four draws its elements from `edges` (float dtypes only)."""
    if not edges or dtype not in FLOAT or draw(st.integers(0, 3)) != 0:
        return None
    return tuple(edges)


def draw_scalar(draw, dtype: str, low: float | None = None, high: float | None = None) -> Any:
    """A Python scalar operand for `dtype`, inside [low, high] when given."""
    if dtype == "bool":
        return draw(st.booleans())
    if dtype in INT_DTYPES or dtype in ("int8", "int16", "uint8"):
        lo = -4 if low is None else math.ceil(low)
        return draw(st.integers(lo, max(lo, 4 if high is None else math.floor(high))))
    values = [v for v in (-2.5, -1.0, 0.5, 1.0, 3.0)
              if (low is None or v >= low) and (high is None or v <= high)]
    return draw(st.sampled_from(values or [low if low is not None else high]))


def binary(name: str, *, fn: Callable | None = None, dtypes: Sequence[str] = NUMERIC,
           scalar_other: bool = True, min_rank: int = 0, max_rank: int = MAX_RANK,
           min_value: float | None = None, max_value: float | None = None,
           other_min_value: float | None = None, other_max_value: float | None = None,
           params: Mapping[str, st.SearchStrategy] | None = None, edges: Sequence[float] | None = None,
           namespaces: Sequence[Any] = (torch,), **fields: Any) -> OpSpec:
    """Two operands of one dtype with broadcasting; with `scalar_other`, the
    second operand is sometimes a Python scalar (the Scalar overload); with
    `edges`, some float examples draw both operands' elements from those values."""
    dtypes = check_dtypes(dtypes)
    params = dict(params or {})
    lo2 = min_value if other_min_value is None else other_min_value
    hi2 = max_value if other_max_value is None else other_max_value

    def build(draw):
        dtype = draw(st.sampled_from(dtypes))
        shape = draw(shapes(min_rank=min_rank, max_rank=max_rank))
        picks = _edge_choices(draw, edges, dtype)
        x = TensorArg(shape, dtype, min_value, max_value, picks)
        if scalar_other and draw(st.integers(0, 3)) == 0:
            other: Any = draw_scalar(draw, dtype, lo2, hi2)
        else:
            other = TensorArg(draw(broadcast_shapes(shape, min_rank=min(min_rank, len(shape)))),
                              dtype, lo2, hi2, picks)
            if draw(st.booleans()):  # broadcasting from either side
                x, other = (TensorArg(other.shape, dtype, min_value, max_value, picks),
                            TensorArg(x.shape, dtype, lo2, hi2, picks))
        return (x, other), draw_kwargs(draw, params)

    return spec(name, examples(build), fn=_resolve(name, fn, namespaces),
                dtypes=dtypes, ranks=(min_rank, max_rank), **fields)


def comparison(name: str, *, dtypes: Sequence[str] = ALL, **kw: Any) -> OpSpec:
    """Elementwise comparisons: every dtype, bool output, exact numerics."""
    return binary(name, dtypes=dtypes, **kw)


#: the `dtype=` a widening reduction draws, by the input's kind
_WIDE = {"c": torch.complex128, "f": torch.float64, "i": torch.int64}


def reduction(name: str, *, fn: Callable | None = None, dtypes: Sequence[str] = FLOAT_DTYPES,
              dim: str = "optional", keepdim: bool = True, min_rank: int = 0,
              max_rank: int = MAX_RANK, params: Mapping[str, st.SearchStrategy] | None = None,
              namespaces: Sequence[Any] = (torch,), widen: bool = False,
              **fields: Any) -> OpSpec:
    """Reductions. `dim` is 'optional' (absent, one dim or several), 'one'
    (a single dim, required), 'many' (a tuple, required) or 'none' (no dim
    argument); `keepdim` is drawn when the op takes it; with `widen`, the
    `dtype=` keyword is drawn: absent, or the widest dtype of the input's kind."""
    if dim not in ("optional", "one", "many", "none"):
        raise ValueError(f"dim: expected optional/one/many/none for {name!r}, got {dim!r}")
    dtypes = check_dtypes(dtypes)
    params = dict(params or {})
    lowest_rank = max(min_rank, 1) if dim in ("one", "many") else min_rank

    def build(draw):
        x = TensorArg(draw(shapes(min_rank=lowest_rank, max_rank=max_rank)),
                      draw(st.sampled_from(dtypes)))
        kwargs = draw_kwargs(draw, params)
        if widen and draw(st.booleans()):
            kwargs["dtype"] = _WIDE[x.dtype in COMPLEX and "c" or x.dtype in FLOAT and "f" or "i"]
        choice = dim if dim != "optional" else draw(st.sampled_from(["none", "one", "many"]))
        if choice == "one":
            kwargs["dim"] = draw(dims(x.rank))
        elif choice == "many" and x.rank > 0:
            kwargs["dim"] = draw(dim_subsets(x.rank))
        if "dim" in kwargs and keepdim:
            kwargs["keepdim"] = draw(st.booleans())
        return (x,), kwargs

    return spec(name, examples(build), fn=_resolve(name, fn, namespaces),
                dtypes=dtypes, ranks=(lowest_rank, max_rank), **fields)


def activation(name: str, *, fn: Callable | None = None, **kw: Any) -> OpSpec:
    """nn.functional activations: float dtypes, any rank."""
    kw.setdefault("namespaces", (torch.nn.functional, torch))
    return unary(name, fn=fn, **kw)


"""Views and their ``_copy`` forms: aliases, strides, transpositions,
diagonals, complex views, clone/copy/resize."""

import math

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ABSENT, ALL, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import dims, examples, shapes

A = torch.ops.aten
REAL_COMPLEX = ("complex64", "complex128")


def _tensor(draw, *, min_rank=0, max_rank=4, dtypes=ALL):
    return TensorArg(draw(shapes(min_rank=min_rank, max_rank=max_rank)),
                     draw(st.sampled_from(dtypes)))


def _one(min_rank=0, max_rank=4, dtypes=ALL):
    def build(draw):
        return (_tensor(draw, min_rank=min_rank, max_rank=max_rank, dtypes=dtypes),), {}
    return examples(build)


def _two_dims(draw, rank):
    """Two distinct dims of a `rank` tensor, each maybe negative."""
    a, b = draw(st.lists(st.integers(0, rank - 1), min_size=2, max_size=2, unique=True))
    return (a - rank if draw(st.booleans()) else a), (b - rank if draw(st.booleans()) else b)


# --- strides ----------------------------------------------------------------

def _as_strided_args(draw, n, *, overlap):
    """size, stride, offset addressing only storage elements [0, n)."""
    offset = draw(st.integers(0, n - 1))
    budget = n - 1 - offset
    size, stride, span = [], [], 0
    for _ in range(draw(st.integers(0, 3))):  # innermost first
        lo = 0 if overlap else span + 1
        step = draw(st.integers(lo, lo + 2))
        most = 3 if step == 0 else min(3, (budget - span) // step + 1)
        side = draw(st.integers(1, max(1, most)))
        span += (side - 1) * step
        size.insert(0, side)
        stride.insert(0, step)
    return tuple(size), tuple(stride), offset


def _as_strided(draw):
    x = _tensor(draw)
    size, stride, offset = _as_strided_args(draw, math.prod(x.shape), overlap=True)
    return (x, size, stride), present(storage_offset=offset if offset or draw(st.booleans())
                                  else ABSENT)


# --- clone, copy, resize ------------------------------------------------------

def _clone(draw):
    x = _tensor(draw, max_rank=6)
    formats = [torch.contiguous_format, torch.preserve_format]
    if x.rank == 4:
        formats.append(torch.channels_last)
    return (x,), present(memory_format=draw(optional(st.sampled_from(formats))))


def _contiguous(draw):
    """A rank-4 input whose channels-last layout differs from its own (C > 1, H*W > 1)."""
    n, c, h, w = (draw(st.integers(1, 4)), draw(st.integers(2, 5)), draw(st.integers(1, 4)),
                  draw(st.integers(2, 4)))
    x = TensorArg((n, c, h, w), draw(st.sampled_from(ALL)))
    return (x,), {"memory_format": torch.channels_last}


def _copy(draw):
    x = _tensor(draw)
    rank = draw(st.integers(0, x.rank))
    tail = x.shape[x.rank - rank:]
    src = TensorArg(tuple(s if draw(st.booleans()) else 1 for s in tail),
                    draw(st.sampled_from(ALL)))
    return (x, src), {}


def _resize(draw):
    x = _tensor(draw)
    n = math.prod(x.shape)  # shrink only: growing exposes uninitialised memory
    size = tuple(draw(st.lists(st.integers(1, 4), max_size=3).filter(
        lambda s: math.prod(s) <= n)))
    return (x, size), {}


def _resize_as(draw):
    (x, size), _ = _resize(draw)
    return (x, TensorArg(size, draw(st.sampled_from(ALL)))), {}


def _to_dtype(draw):
    x = _tensor(draw)
    dtype = draw(st.sampled_from([d for d in ALL if d != x.dtype]))  # the same dtype is a no-op
    return (x, getattr(torch, dtype)), present(copy=draw(optional(st.booleans())))


def _type_as(draw):
    x = _tensor(draw)
    other = TensorArg(draw(shapes(max_rank=2)), draw(st.sampled_from([d for d in ALL
                                                                       if d != x.dtype])))
    return (x, other), {}


# --- transpositions ----------------------------------------------------------

def _movedim(draw):
    x = _tensor(draw, min_rank=1)
    if draw(st.booleans()):
        return (x, draw(dims(x.rank)), draw(dims(x.rank))), {}
    k = draw(st.integers(1, x.rank))
    src = draw(st.lists(st.integers(0, x.rank - 1), min_size=k, max_size=k, unique=True))
    dst = draw(st.lists(st.integers(0, x.rank - 1), min_size=k, max_size=k, unique=True))
    return (x, tuple(src), tuple(d - x.rank if draw(st.booleans()) else d for d in dst)), {}


def _swap(draw):
    x = _tensor(draw, min_rank=1)
    return (x, draw(dims(x.rank)), draw(dims(x.rank))), {}


def _permute(draw):
    x = _tensor(draw)
    return (x, tuple(draw(st.permutations(range(x.rank))))), {}


# --- the _copy forms of shape views ---------------------------------------------

def _view(draw):
    x = _tensor(draw)
    n = math.prod(x.shape)
    first = draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    return (x, (first, n // first) if draw(st.booleans()) else (-1,)), {}


def _select(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    return (x, dim, draw(st.integers(-x.shape[dim], x.shape[dim] - 1))), {}


def _slice(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    start = draw(st.integers(0, x.shape[dim] - 1))
    return (x, dim, start, draw(st.integers(start + 1, x.shape[dim])), draw(st.integers(1, 3))), {}


def _narrow(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    start = draw(st.integers(0, x.shape[dim] - 1))
    return (x, dim, start, draw(st.integers(1, x.shape[dim] - start))), {}


def _expand(draw):
    x = _tensor(draw, max_rank=3)
    target = tuple(draw(st.integers(1, 4)) if side == 1 else side for side in x.shape)
    kwargs = present(implicit=draw(optional(st.booleans())))
    return (x, tuple(draw(st.lists(st.integers(1, 3), max_size=1))) + target), kwargs


def _squeeze(draw):
    x = TensorArg(tuple(draw(st.lists(st.sampled_from([1, 1, 2, 3]), max_size=4))),
                  draw(st.sampled_from(ALL)))
    form = draw(st.sampled_from(["all", "dim", "dims"] if x.rank else ["all"]))
    if form == "dim":
        return (x, draw(dims(x.rank))), {}
    if form == "dims":
        return (x, tuple(draw(st.lists(st.integers(0, x.rank - 1), min_size=1, unique=True)))), {}
    return (x,), {}


def _unsqueeze(draw):
    x = _tensor(draw)
    return (x, draw(st.integers(-(x.rank + 1), x.rank))), {}


def _unbind(draw):
    x = _tensor(draw, min_rank=1)
    return (x, draw(dims(x.rank))), {}


def _split(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    return (x, draw(st.integers(1, x.shape[dim])), dim), {}


def _split_sizes(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    side = x.shape[dim]
    cuts = sorted(draw(st.lists(st.integers(1, side - 1), max_size=3, unique=True))
                  if side > 1 else [])
    bounds = [0, *cuts, side]
    return (x, [b - a for a, b in zip(bounds, bounds[1:])], dim), {}


def _unfold(draw):
    x = _tensor(draw)
    dim = draw(dims(x.rank))
    side = x.shape[dim] if x.rank else 1
    return (x, dim, draw(st.integers(1, side)), draw(st.integers(1, 3))), {}


# --- diagonals -------------------------------------------------------------------

def _diagonal(draw):
    x = _tensor(draw, min_rank=2)
    dim1, dim2 = _two_dims(draw, x.rank)
    both = draw(st.booleans())  # dim1/dim2 given together: one alone may collide with a default
    return (x,), present(offset=draw(optional(st.integers(-3, 3))),
                     dim1=dim1 if both else ABSENT, dim2=dim2 if both else ABSENT)


def _diagonal_explicit(draw):
    x = _tensor(draw, min_rank=2)
    dim1, dim2 = _two_dims(draw, x.rank)
    return (x, draw(st.integers(-3, 3)), dim1, dim2), {}


def _diag_embed(draw):
    x = _tensor(draw, min_rank=1, max_rank=3)
    dim1, dim2 = _two_dims(draw, x.rank + 1)
    if draw(st.booleans()):
        return (x,), present(offset=draw(optional(st.integers(-3, 3))))
    return (x, draw(st.integers(-3, 3)), dim1, dim2), {}


def _diag(draw):
    x = _tensor(draw, min_rank=1, max_rank=2)
    return (x,), present(diagonal=draw(optional(st.integers(-3, 3))))


def _diagflat(draw):
    return (_tensor(draw, max_rank=3),), present(offset=draw(optional(st.integers(-3, 3))))


def _triangle(draw):
    return (_tensor(draw, min_rank=2),), present(diagonal=draw(optional(st.integers(-4, 4))))


# --- complex views ----------------------------------------------------------------

def _as_complex(draw):
    shape = draw(shapes(max_rank=3)) + (2,)
    return (TensorArg(shape, draw(st.sampled_from(("float32", "float64")))),), {}


SPECS = [
    spec("alias", _one(), fn=A.alias, dtypes=ALL),
    spec("alias_copy", _one(), fn=A.alias_copy, dtypes=ALL),
    spec("as_strided", examples(_as_strided), fn=torch.as_strided, dtypes=ALL),
    spec("as_strided_copy", examples(_as_strided), fn=torch.as_strided_copy, dtypes=ALL),
    spec("detach", _one(), fn=torch.detach, dtypes=ALL),
    spec("detach_copy", _one(), fn=torch.detach_copy, dtypes=ALL),
    spec("lift", _one(), fn=A.lift, dtypes=ALL),
    spec("lift_fresh", _one(), fn=A.lift_fresh, dtypes=ALL),
    spec("lift_fresh_copy", _one(), fn=A.lift_fresh_copy, dtypes=ALL),
    # top rank 6: the copy a model makes of a permuted rank-6 view (swin's windows)
    spec("clone", examples(_clone), fn=torch.clone, dtypes=ALL, ranks=(0, 6)),
    # on a contiguous input only a memory-format change makes contiguous() do anything
    spec("contiguous", examples(_contiguous), fn=lambda x, **kw: x.contiguous(**kw),
         dtypes=ALL, ranks=(4, 4)),
    spec("copy", examples(_copy), fn=A.copy, dtypes=ALL),
    # x.to(dtype) dispatches to _to_copy, the packet a model's decomposed graph calls
    spec("to_dtype", examples(_to_dtype), fn=lambda x, dtype, **kw: x.to(dtype, **kw),
         aten=("to",), dtypes=ALL, traces={"to": ("_to_copy",)}),
    spec("type_as", examples(_type_as), fn=lambda x, other: x.type_as(other), dtypes=ALL),
    spec("resize", examples(_resize), fn=A.resize, dtypes=ALL),
    spec("resize_as", examples(_resize_as), fn=A.resize_as, dtypes=ALL),
    # transpositions
    spec("t", _one(max_rank=2), fn=torch.t, dtypes=ALL, ranks=(0, 2)),
    spec("t_copy", _one(max_rank=2), fn=torch.t_copy, dtypes=ALL, ranks=(0, 2)),
    spec("numpy_T", _one(max_rank=2), fn=lambda x: x.T, dtypes=ALL, ranks=(0, 2)),
    spec("mT", _one(min_rank=2), fn=lambda x: x.mT, dtypes=ALL, ranks=(2, 4)),
    spec("mH", _one(min_rank=2, dtypes=ALL + REAL_COMPLEX), fn=lambda x: x.mH,
         dtypes=ALL + REAL_COMPLEX, ranks=(2, 4)),
    spec("adjoint", _one(min_rank=2, dtypes=ALL + REAL_COMPLEX), fn=torch.adjoint,
         dtypes=ALL + REAL_COMPLEX, ranks=(2, 4)),
    spec("matrix_H", _one(min_rank=2, max_rank=2, dtypes=ALL + REAL_COMPLEX), fn=lambda x: x.H,
         dtypes=ALL + REAL_COMPLEX, ranks=(2, 2)),
    spec("movedim", examples(_movedim), fn=torch.movedim, dtypes=ALL, ranks=(1, 4)),
    spec("moveaxis", examples(_movedim), fn=torch.moveaxis, dtypes=ALL, ranks=(1, 4)),
    spec("swapaxes", examples(_swap), fn=torch.swapaxes, dtypes=ALL, ranks=(1, 4)),
    spec("swapdims", examples(_swap), fn=torch.swapdims, dtypes=ALL, ranks=(1, 4)),
    spec("permute_copy", examples(_permute), fn=torch.permute_copy, dtypes=ALL),
    spec("transpose_copy", examples(_swap), fn=torch.transpose_copy, dtypes=ALL, ranks=(1, 4)),
    # _copy forms of shape views
    spec("view_copy", examples(_view), fn=torch.view_copy, dtypes=ALL),
    spec("select_copy", examples(_select), fn=torch.select_copy, dtypes=ALL, ranks=(1, 4)),
    spec("slice_copy", examples(_slice), fn=torch.slice_copy, dtypes=ALL, ranks=(1, 4)),
    spec("narrow_copy", examples(_narrow), fn=torch.narrow_copy, dtypes=ALL, ranks=(1, 4)),
    spec("expand_copy", examples(_expand), fn=torch.expand_copy, dtypes=ALL, ranks=(0, 3)),
    spec("squeeze_copy", examples(_squeeze), fn=torch.squeeze_copy, dtypes=ALL),
    spec("unsqueeze_copy", examples(_unsqueeze), fn=torch.unsqueeze_copy, dtypes=ALL),
    spec("unbind_copy", examples(_unbind), fn=torch.unbind_copy, dtypes=ALL, ranks=(1, 4)),
    spec("split_copy", examples(_split), fn=torch.split_copy, dtypes=ALL, ranks=(1, 4)),
    spec("split_with_sizes_copy", examples(_split_sizes), fn=torch.split_with_sizes_copy,
         dtypes=ALL, ranks=(1, 4)),
    spec("unfold", examples(_unfold), fn=lambda x, dim, size, step: x.unfold(dim, size, step),
         dtypes=ALL),
    spec("unfold_copy", examples(_unfold), fn=torch.unfold_copy, dtypes=ALL),
    # diagonals and triangles
    spec("diagonal", examples(_diagonal), fn=torch.diagonal, dtypes=ALL, ranks=(2, 4)),
    spec("diagonal_copy", examples(_diagonal_explicit), fn=torch.diagonal_copy, dtypes=ALL,
         ranks=(2, 4)),
    spec("diag", examples(_diag), fn=torch.diag, dtypes=ALL, ranks=(1, 2)),
    spec("diag_embed", examples(_diag_embed), fn=torch.diag_embed, dtypes=ALL, ranks=(1, 3)),
    spec("diagflat", examples(_diagflat), fn=torch.diagflat, dtypes=ALL, ranks=(0, 3)),
    spec("tril", examples(_triangle), fn=torch.tril, dtypes=ALL, ranks=(2, 4)),
    spec("triu", examples(_triangle), fn=torch.triu, dtypes=ALL, ranks=(2, 4)),
    # complex views
    spec("view_as_real", _one(dtypes=REAL_COMPLEX), fn=torch.view_as_real, dtypes=REAL_COMPLEX),
    spec("view_as_real_copy", _one(dtypes=REAL_COMPLEX), fn=torch.view_as_real_copy,
         dtypes=REAL_COMPLEX),
    spec("view_as_complex", examples(_as_complex), fn=torch.view_as_complex,
         dtypes=("float32", "float64"), ranks=(1, 4)),
    spec("view_as_complex_copy", examples(_as_complex), fn=torch.view_as_complex_copy,
         dtypes=("float32", "float64"), ranks=(1, 4)),
]

"""Scatter-style writes: scatter, index_put/add/copy/reduce, put, the
``*_scatter`` view inverses and masked_scatter.

Writes with duplicate indices are nondeterministic in PyTorch unless they
accumulate or write one value. So: ``scatter`` with a tensor source uses an
index one long along `dim` (every target distinct); ``index_put`` broadcasts
its values along the index dimensions (duplicates write the same value);
``index_copy`` and ``put`` write one index; the accumulating forms
(scatter_add, scatter_reduce, index_add, index_reduce, accumulate=True) take
any index."""

import math

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ABSENT, ALL, NUMERIC, draw_scalar, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import dims, examples, shapes

A = torch.ops.aten


def _tensor(draw, *, min_rank=0, max_rank=4, dtypes=ALL):
    return TensorArg(draw(shapes(min_rank=min_rank, max_rank=max_rank)),
                     draw(st.sampled_from(dtypes)))


def _dim_of(dim, rank):
    return dim % rank if rank else 0


# --- scatter ------------------------------------------------------------------

def _scatter_parts(draw, dtypes, *, unique):
    """x, dim, index, src for scatter along `dim`; with `unique`, the index is
    one long along `dim` so no two elements target the same place."""
    x = _tensor(draw, dtypes=dtypes)
    dim = draw(dims(x.rank))
    d = _dim_of(dim, x.rank)
    index_shape, src_shape = [], []
    for i, side in enumerate(x.shape):
        along = 1 if unique and i == d else draw(st.integers(1, 4 if i == d else side))
        index_shape.append(along)
        src_shape.append(along + draw(st.integers(0, 1)))
    index = TensorArg(tuple(index_shape), "int64", 0, x.shape[d] if x.rank else 1)
    return x, dim, index, TensorArg(tuple(src_shape), x.dtype)


def _scatter_src(draw):
    x, dim, index, src = _scatter_parts(draw, ALL, unique=True)
    return (x, dim, index, src), {}


def _scatter_value(draw):
    x, dim, index, _ = _scatter_parts(draw, ALL, unique=False)
    return (x, dim, index, draw_scalar(draw, x.dtype)), {}


def _scatter_src_reduce(draw):
    x, dim, index, src = _scatter_parts(draw, NUMERIC, unique=False)
    return (x, dim, index, src), {"reduce": draw(st.sampled_from(["add", "multiply"]))}


def _scatter_value_reduce(draw):
    x, dim, index, _ = _scatter_parts(draw, NUMERIC, unique=False)
    return (x, dim, index, draw_scalar(draw, x.dtype)), {
        "reduce": draw(st.sampled_from(["add", "multiply"]))}


def _scatter_add(draw):
    return _scatter_parts(draw, ALL, unique=False), {}


def _scatter_reduce(draw):
    x, dim, index, src = _scatter_parts(draw, NUMERIC, unique=False)
    reduce = draw(st.sampled_from(["sum", "prod", "mean", "amax", "amin"]))
    return (x, dim, index, src, reduce), present(include_self=draw(optional(st.booleans())))


# --- view scatters --------------------------------------------------------------

def _select_scatter(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    d = _dim_of(dim, x.rank)
    src = TensorArg(x.shape[:d] + x.shape[d + 1:], x.dtype)
    return (x, src, dim, draw(st.integers(-x.shape[d], x.shape[d] - 1))), {}


def _slice_scatter(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    d = _dim_of(dim, x.rank)
    side = x.shape[d]
    start = draw(optional(st.integers(0, side - 1)))
    lo = 0 if start is ABSENT else start
    end = draw(optional(st.integers(lo + 1, side)))
    step = draw(optional(st.integers(1, 3)))
    n = len(range(lo, side if end is ABSENT else end, 1 if step is ABSENT else step))
    src = TensorArg(x.shape[:d] + (n,) + x.shape[d + 1:], x.dtype)
    return (x, src), present(dim=dim, start=start, end=end, step=step)


def _diagonal_scatter(draw):
    x = _tensor(draw, min_rank=2)
    a, b = draw(st.lists(st.integers(0, x.rank - 1), min_size=2, max_size=2, unique=True))
    offset = draw(st.integers(-3, 3))
    shape = torch.empty(x.shape, device="meta").diagonal(offset, a, b).shape
    return (x, TensorArg(tuple(shape), x.dtype), offset, a - x.rank if draw(st.booleans()) else a,
            b), {}


def _as_strided_scatter(draw):
    """A view whose elements are distinct storage places (strides exceed inner spans)."""
    x = _tensor(draw)
    n = math.prod(x.shape)
    offset = draw(st.integers(0, n - 1))
    budget = n - 1 - offset
    size, stride, span = [], [], 0
    for _ in range(draw(st.integers(0, 3))):
        step = draw(st.integers(span + 1, span + 2))
        side = draw(st.integers(1, max(1, min(3, (budget - span) // step + 1))))
        span += (side - 1) * step
        size.insert(0, side)
        stride.insert(0, step)
    src = TensorArg(tuple(size), x.dtype)
    return (x, src, tuple(size), tuple(stride)), present(
        storage_offset=offset if offset or draw(st.booleans()) else ABSENT)


def _masked_scatter(draw):
    x = _tensor(draw)
    rank = draw(st.integers(0, x.rank))
    tail = x.shape[x.rank - rank:]
    mask = TensorArg(tuple(s if draw(st.booleans()) else 1 for s in tail), "bool")
    return (x, mask, TensorArg(x.shape, x.dtype)), {}  # source large enough for any mask


# --- index_* ----------------------------------------------------------------------

def _index_put_parts(draw, *, spread):
    """x, indices, values. Unless `spread`, values broadcast along the index
    dimensions, so duplicate indices write identical values."""
    x = _tensor(draw, min_rank=1)
    k = draw(st.integers(1, min(x.rank, 3)))
    common = draw(shapes(min_rank=1, max_rank=2, max_side=4))
    indices = []
    for d in range(k):
        rank = draw(st.integers(1, len(common)))
        tail = common[len(common) - rank:]
        indices.append(TensorArg(tuple(s if draw(st.booleans()) else 1 for s in tail), "int64",
                                 -x.shape[d], x.shape[d]))
    indexed = tuple(torch.broadcast_shapes(*(i.shape for i in indices)))
    rest = tuple(s if draw(st.booleans()) else 1 for s in x.shape[k:])
    lead = indexed if spread else (1,) * draw(st.integers(0, len(indexed)))
    values = lead + rest
    values = values[draw(st.integers(0, len(lead))) if not spread else 0:]
    return x, tuple(indices), TensorArg(values, x.dtype)


def _index_put(draw):
    x, indices, values = _index_put_parts(draw, spread=False)
    return (x, indices, values), present(accumulate=draw(optional(st.just(False))))


def _index_put_accumulate(draw):
    x, indices, values = _index_put_parts(draw, spread=True)
    return (x, indices, values, True), {}


def _index_put_mask(draw):
    """A boolean mask over the leading dims, alone or followed by one long index of
    shape (1,) on the next dim (x[mask, i] = v: the index broadcasts to the mask's
    nonzero count, whatever the mask's values)."""
    x = _tensor(draw, min_rank=1)
    k = draw(st.integers(1, x.rank))
    indices = (TensorArg(x.shape[:k], "bool"),)
    if k < x.rank and draw(st.booleans()):
        indices += (TensorArg((1,), "int64", -x.shape[k], x.shape[k]),)
    rest = x.shape[len(indices) - 1 + k:]
    rank = draw(st.integers(0, len(rest)))
    values = TensorArg(tuple(s if draw(st.booleans()) else 1 for s in rest[len(rest) - rank:]),
                       x.dtype)
    # a mask selects each place once, so accumulating is deterministic too
    return (x, indices, values), present(accumulate=draw(optional(st.booleans())))


def _setitem(draw):
    """x[i] = v, or x[i, j] = v on rank >= 2; v broadcasts along the indexed dims, so
    duplicate indices write identical values."""
    x = _tensor(draw, min_rank=1)
    k = draw(st.integers(1, min(x.rank, 2)))
    n = draw(st.integers(1, 5))
    index = tuple(TensorArg((n if d == 0 or draw(st.booleans()) else 1,), "int64",
                            -x.shape[d], x.shape[d]) for d in range(k))
    rank = draw(st.integers(0, x.rank - k))
    values = TensorArg(tuple(s if draw(st.booleans()) else 1
                             for s in x.shape[x.rank - rank:]), x.dtype)
    return (x, index[0] if k == 1 else index, values), {}


def _setitem_inplace(x, index, values):
    x[index] = values
    return x


def _index_parts(draw, dtypes, *, length=None):
    x = _tensor(draw, dtypes=dtypes)
    dim = draw(dims(x.rank))
    d = _dim_of(dim, x.rank)
    side = x.shape[d] if x.rank else 1
    n = 1 if not x.rank else length or draw(st.integers(1, 5))  # a 0-d source holds one slice
    index = TensorArg((n,), "int64", 0, side)
    source = TensorArg(x.shape[:d] + (n,) + x.shape[d + 1:] if x.rank else (), x.dtype)
    return x, dim, index, source


def _index_add(draw):
    x, dim, index, source = _index_parts(draw, NUMERIC)
    alpha = draw(optional(st.sampled_from([2, -1]) if x.dtype in ("int32", "int64")
                          else st.sampled_from([0.5, -2.0])))
    return (x, dim, index, source), present(alpha=alpha)


def _index_copy(draw):
    return _index_parts(draw, ALL, length=1), {}


def _index_reduce(draw):
    x, dim, index, source = _index_parts(draw, NUMERIC)
    reduce = draw(st.sampled_from(["prod", "mean", "amax", "amin"]))
    return (x, dim, index, source, reduce), present(include_self=draw(optional(st.booleans())))


def _put(draw, *, accumulate):
    x = _tensor(draw)
    n = math.prod(x.shape)
    shape = draw(shapes(max_rank=2, max_side=4)) if accumulate else draw(
        st.sampled_from([(), (1,)]))
    return (x, TensorArg(shape, "int64", -n, n), TensorArg(shape, x.dtype)), present(
        accumulate=True if accumulate else draw(optional(st.just(False))))


SPECS = [
    spec("scatter_src", examples(_scatter_src), fn=torch.scatter, aten=("scatter",), dtypes=ALL),
    spec("scatter_value", examples(_scatter_value), fn=torch.scatter, aten=("scatter",),
         dtypes=ALL),
    spec("scatter_src_reduce", examples(_scatter_src_reduce), fn=torch.scatter,
         aten=("scatter",), dtypes=NUMERIC),
    spec("scatter_value_reduce", examples(_scatter_value_reduce), fn=torch.scatter,
         aten=("scatter",), dtypes=NUMERIC),
    spec("scatter_add", examples(_scatter_add), fn=torch.scatter_add, dtypes=ALL),
    spec("scatter_reduce", examples(_scatter_reduce), fn=torch.scatter_reduce, dtypes=NUMERIC),
    spec("select_scatter", examples(_select_scatter), fn=torch.select_scatter, dtypes=ALL,
         ranks=(1, 4)),
    spec("slice_scatter", examples(_slice_scatter), fn=torch.slice_scatter, dtypes=ALL,
         ranks=(1, 4)),
    spec("diagonal_scatter", examples(_diagonal_scatter), fn=torch.diagonal_scatter, dtypes=ALL,
         ranks=(2, 4)),
    spec("as_strided_scatter", examples(_as_strided_scatter), fn=torch.as_strided_scatter,
         dtypes=ALL),
    spec("masked_scatter", examples(_masked_scatter), fn=torch.masked_scatter, dtypes=ALL),
    spec("index_put", examples(_index_put), fn=torch.index_put, dtypes=ALL, ranks=(1, 4)),
    spec("index_put_accumulate", examples(_index_put_accumulate), fn=torch.index_put,
         aten=("index_put",), dtypes=ALL, ranks=(1, 4),
         fixed={"accumulate": "a second spec measures False (see index_put); this one draws "
                              "values spread over duplicate indices, which only "
                              "accumulate=True makes deterministic"}),
    spec("index_put_mask", examples(_index_put_mask), fn=torch.index_put, aten=("index_put",),
         dtypes=ALL, ranks=(1, 4)),
    # x[i] = v in place on the input, as models write it
    spec("index_put_setitem", examples(_setitem), fn=_setitem_inplace, aten=("index_put",),
         dtypes=ALL, ranks=(1, 4),
         fixed={"accumulate": "x[i] = v always calls index_put_ with False; True is "
                              "measured through torch.index_put (see index_put_accumulate)"}),
    spec("index_add", examples(_index_add), fn=torch.index_add, dtypes=NUMERIC),
    spec("index_copy", examples(_index_copy), fn=torch.index_copy, dtypes=ALL),
    spec("index_reduce", examples(_index_reduce), fn=torch.index_reduce, dtypes=NUMERIC),
    spec("put", examples(lambda draw: _put(draw, accumulate=False)), fn=torch.put, dtypes=ALL),
    spec("put_accumulate", examples(lambda draw: _put(draw, accumulate=True)), fn=torch.put,
         aten=("put",), dtypes=ALL,
         fixed={"accumulate": "a second spec measures False (see put); this one draws "
                              "many, possibly duplicate, indices, which only accumulate=True "
                              "makes deterministic"}),
]

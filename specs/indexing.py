"""Indexing: selecting by index tensors and by slices."""

import math

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ABSENT, ALL, FLOAT, draw_scalar, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import dims, examples, shapes


def _source(draw, *, min_rank=1, max_rank=4, dtypes=ALL):
    return TensorArg(draw(shapes(min_rank=min_rank, max_rank=max_rank)),
                     draw(st.sampled_from(dtypes)))


def _index_select(draw):
    x = _source(draw)
    dim = draw(dims(x.rank))
    index = TensorArg((draw(st.integers(1, 5)),), "int64", 0, x.shape[dim])
    return (x, dim, index), {}


def _gather(draw):
    x = _source(draw)
    dim = draw(dims(x.rank))
    shape = tuple(draw(st.integers(1, side)) for side in x.shape)
    return (x, dim, TensorArg(shape, "int64", 0, x.shape[dim])), present(
        sparse_grad=draw(optional(st.booleans())))


def _select(draw):
    x = _source(draw, max_rank=5)
    dim = draw(dims(x.rank))
    return (x, dim, draw(st.integers(-x.shape[dim], x.shape[dim] - 1))), {}


def _narrow(draw):
    x = _source(draw)
    dim = draw(dims(x.rank))
    start = draw(st.integers(0, x.shape[dim] - 1))
    return (x, dim, start, draw(st.integers(1, x.shape[dim] - start))), {}


def _slice(draw):
    x = _source(draw)
    dim = draw(dims(x.rank))
    side = x.shape[dim]
    start = draw(st.integers(0, side - 1))
    return (x, dim, start, draw(st.integers(start + 1, side)), draw(st.integers(1, 3))), {}


def _masked_fill(draw):
    x = _source(draw, min_rank=0)
    return (x, TensorArg(x.shape, "bool"), draw(st.sampled_from([0, 1]))), {}


def _where(draw):
    x = _source(draw, min_rank=0)
    return (TensorArg(x.shape, "bool"), x, TensorArg(x.shape, x.dtype)), {}


def _masked_select(draw):
    x = _source(draw, min_rank=1, dtypes=FLOAT)
    return (x, TensorArg(x.shape, "bool")), {}


def _nonzero(draw):
    return (_source(draw, min_rank=0),), {}  # a 0-d tensor: one row of no coordinates


def _index_tensor(draw):
    x = _source(draw)
    index = TensorArg((draw(st.integers(1, 5)),), "int64", 0, x.shape[0])
    return (x, index), {}



def _index_tensors(draw):
    """x[i0, i1, ...]: up to three broadcasting index tensors, negative indices too."""
    x = _source(draw)
    k = draw(st.integers(1, min(x.rank, 3)))
    common = draw(shapes(min_rank=1, max_rank=2, max_side=3))
    idx = []
    for d in range(k):  # a 0-d index tensor would be read as an integer (select)
        rank = draw(st.integers(1, len(common)))
        tail = common[len(common) - rank:]
        shape = tuple(s if draw(st.booleans()) else 1 for s in tail)
        idx.append(TensorArg(shape, "int64", -x.shape[d], x.shape[d]))
    return (x, *idx), {}


def _index_mask(draw):
    """x[m] or x[:, m]: a mask over k dims, after `lead` full slices (a None slot each)."""
    x = _source(draw)  # a 0-d mask takes another path (unsqueeze + item)
    k = draw(st.integers(1, x.rank))
    lead = draw(st.integers(0, x.rank - k))
    return (x, TensorArg(x.shape[lead:lead + k], "bool"), lead), {}


def _index_dim(draw):
    """x[:, :, i]: an index tensor after leading full slices."""
    x = _source(draw, min_rank=2)
    dim = draw(st.integers(1, x.rank - 1))
    index = TensorArg(draw(shapes(min_rank=1, max_rank=2, max_side=4)), "int64", 0, x.shape[dim])
    return (x, index), {"dim": dim}


def _take(draw):
    x = _source(draw, min_rank=0)
    n = math.prod(x.shape)
    return (x, TensorArg(draw(shapes(max_rank=3)), "int64", -n, n)), {}


def _take_along_dim(draw):
    x = _source(draw)
    dim = draw(dims(x.rank))
    shape = tuple(draw(st.integers(1, 4)) if d == dim % x.rank else
                  (side if draw(st.booleans()) else 1) for d, side in enumerate(x.shape))
    return (x, TensorArg(shape, "int64", 0, x.shape[dim])), {"dim": dim}


def _take_along_flat(draw):
    x = _source(draw, min_rank=0)
    index = TensorArg((draw(st.integers(1, 6)),), "int64", 0, math.prod(x.shape))
    return (x, index), {}


def _any_rank(draw):
    return (_source(draw, min_rank=0),), {}


def _nonzero_static(draw):
    x = _source(draw, min_rank=0)
    fill = draw(optional(st.integers(-2, 2)))
    return (x,), {"size": draw(st.integers(0, 8)), **({} if fill is ABSENT else {"fill_value": fill})}


def _masked_fill_tensor(draw):
    x = _source(draw, min_rank=0)
    return (x, TensorArg(x.shape, "bool"), TensorArg((), x.dtype)), {}


def _index_fill(draw, *, tensor_value):
    x = _source(draw, min_rank=0)
    dim = draw(dims(x.rank))
    side = x.shape[dim] if x.rank else 1
    index = TensorArg((draw(st.integers(1, 5)),), "int64", -side, side)
    value = TensorArg((), x.dtype) if tensor_value else draw_scalar(draw, x.dtype)
    return (x, dim, index, value), {}


def _fill_diagonal(draw):
    dtype = draw(st.sampled_from(ALL))
    if draw(st.booleans()):  # matrices may be tall: wrap matters there
        shape = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    else:  # higher ranks need all sides equal
        shape = (draw(st.integers(1, 3)),) * draw(st.integers(3, 4))
    return (TensorArg(shape, dtype), draw_scalar(draw, dtype)), {"wrap": draw(st.booleans())}


def _fill_diagonal_inplace(x, value, wrap):
    return x.fill_diagonal_(value, wrap)



def _item(draw):
    x = _source(draw, min_rank=0, dtypes=FLOAT)
    return (x, tuple(draw(st.integers(0, side - 1)) for side in x.shape)), {}


SPECS = [
    spec("index_select", examples(_index_select), fn=torch.index_select, dtypes=ALL, ranks=(1, 4)),
    spec("gather", examples(_gather), fn=torch.gather, dtypes=ALL, ranks=(1, 4)),
    # top rank 5: q, k or v picked out of a fused [B, N, 3, H, D] projection
    spec("select", examples(_select), fn=torch.select, dtypes=ALL, ranks=(1, 5)),
    spec("narrow", examples(_narrow), fn=torch.narrow, dtypes=ALL, ranks=(1, 4)),
    spec("slice", examples(_slice),
         fn=lambda x, dim, start, end, step: torch.ops.aten.slice(x, dim, start, end, step),
         dtypes=ALL, ranks=(1, 4)),
    spec("masked_fill", examples(_masked_fill), fn=torch.masked_fill, dtypes=ALL),
    spec("masked_fill_tensor", examples(_masked_fill_tensor), fn=torch.masked_fill,
         aten=("masked_fill",), dtypes=ALL),
    # filed under its first tensor, the condition; x and y are drawn across ALL dtypes
    spec("where", examples(_where), fn=torch.where, dtypes=("bool",)),
    spec("masked_select", examples(_masked_select), fn=torch.masked_select, dtypes=FLOAT,
         ranks=(1, 4)),
    spec("nonzero", examples(_nonzero), fn=torch.nonzero, dtypes=ALL, ranks=(0, 4)),
    spec("nonzero_tuple", examples(_any_rank), fn=lambda x: torch.nonzero(x, as_tuple=True),
         aten=("nonzero_numpy",), dtypes=ALL),
    spec("nonzero_static", examples(_nonzero_static), fn=torch.nonzero_static, dtypes=ALL),
    spec("argwhere", examples(_any_rank), fn=torch.argwhere, dtypes=ALL),
    spec("index", examples(_index_tensor), fn=lambda x, i: x[i], dtypes=ALL, ranks=(1, 4),
         traces={"index": ("index",)},
         fixed={"indices": "the spec measures x[i], one index tensor on the leading dim; "
                           "index_tensors measures one to three broadcast index tensors "
                           "(negative too), index_dim None slots (full slices) before one"}),
    spec("index_tensors", examples(_index_tensors), fn=lambda x, *idx: x[idx], aten=("index",),
         dtypes=ALL, ranks=(1, 4)),
    spec("index_bool_mask", examples(_index_mask),
         fn=lambda x, m, lead: x[(slice(None),) * lead + (m,)], aten=("index",),
         dtypes=ALL, ranks=(1, 4)),
    spec("index_dim", examples(_index_dim),
         fn=lambda x, i, dim: x[(slice(None),) * dim + (i,)], aten=("index",), dtypes=ALL,
         ranks=(2, 4)),
    spec("take", examples(_take), fn=torch.take, dtypes=ALL),
    spec("take_along_dim", examples(_take_along_dim), fn=torch.take_along_dim, dtypes=ALL,
         ranks=(1, 4)),
    spec("take_along_dim_flat", examples(_take_along_flat), fn=torch.take_along_dim,
         aten=("take_along_dim",), dtypes=ALL),
    spec("index_fill", examples(lambda draw: _index_fill(draw, tensor_value=False)),
         fn=torch.index_fill, dtypes=ALL),
    spec("index_fill_tensor", examples(lambda draw: _index_fill(draw, tensor_value=True)),
         fn=torch.index_fill, aten=("index_fill",), dtypes=ALL),
    # in place on the input: fill_diagonal_ has no functional form
    spec("fill_diagonal", examples(_fill_diagonal), fn=_fill_diagonal_inplace, dtypes=ALL,
         ranks=(2, 4)),
    spec("item", examples(_item), fn=lambda x, where: x + x[where].item(), dtypes=FLOAT,
         ranks=(0, 4)),
]

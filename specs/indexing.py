"""Indexing: selecting by index tensors and by slices."""

import torch
from hypothesis import strategies as st

from opsweep.families import ALL, FLOAT, gap, spec
from opsweep.model import TensorArg
from opsweep.strategies import dims, examples, shapes


def _source(draw, *, min_rank=1, dtypes=ALL):
    return TensorArg(draw(shapes(min_rank=min_rank, max_rank=4)), draw(st.sampled_from(dtypes)))


def _index_select(draw):
    x = _source(draw)
    dim = draw(dims(x.rank))
    index = TensorArg((draw(st.integers(1, 5)),), "int64", 0, x.shape[dim])
    return (x, dim, index), {}


def _gather(draw):
    x = _source(draw)
    dim = draw(dims(x.rank))
    shape = tuple(draw(st.integers(1, side)) for side in x.shape)
    return (x, dim, TensorArg(shape, "int64", 0, x.shape[dim])), {}


def _select(draw):
    x = _source(draw)
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
    return (_source(draw, min_rank=1),), {}


def _index_tensor(draw):
    x = _source(draw)
    index = TensorArg((draw(st.integers(1, 5)),), "int64", 0, x.shape[0])
    return (x, index), {}


SPECS = [
    spec("index_select", examples(_index_select), fn=torch.index_select, dtypes=ALL, ranks=(1, 4)),
    spec("gather", examples(_gather), fn=torch.gather, dtypes=ALL, ranks=(1, 4)),
    spec("select", examples(_select), fn=torch.select, dtypes=ALL, ranks=(1, 4)),
    spec("narrow", examples(_narrow), fn=torch.narrow, aten=("slice",), dtypes=ALL,
         ranks=(1, 4)),
    spec("slice", examples(_slice),
         fn=lambda x, dim, start, end, step: torch.ops.aten.slice(x, dim, start, end, step),
         dtypes=ALL, ranks=(1, 4)),
    spec("masked_fill", examples(_masked_fill), fn=torch.masked_fill, dtypes=ALL),
    spec("where", examples(_where), fn=torch.where, dtypes=ALL),
    spec("masked_select", examples(_masked_select), fn=torch.masked_select, dtypes=FLOAT,
         ranks=(1, 4)),
    spec("nonzero", examples(_nonzero), fn=torch.nonzero, dtypes=ALL, ranks=(1, 4)),
    spec("index", examples(_index_tensor), fn=lambda x, i: x[i], dtypes=ALL, ranks=(1, 4),
         traces={"index": ("index",)}),
]

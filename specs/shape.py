"""Shape and view operators."""

import math

import torch
from hypothesis import strategies as st

from opsweep.families import ALL, spec
from opsweep.model import TensorArg
from opsweep.strategies import dims, examples, shapes


def _tensor(draw, *, min_rank=0, max_rank=4, dtypes=ALL):
    return TensorArg(draw(shapes(min_rank=min_rank, max_rank=max_rank)),
                     draw(st.sampled_from(dtypes)))


def _reshape(draw):
    x = _tensor(draw)
    n = math.prod(x.shape)
    target = [d for d in range(1, n + 1) if n % d == 0]
    first = draw(st.sampled_from(target))
    new = (first, n // first) if draw(st.booleans()) else (-1,)
    return (x, new), {}


def _permute(draw):
    x = _tensor(draw)
    return (x, tuple(draw(st.permutations(range(x.rank))))), {}


def _transpose(draw):
    x = _tensor(draw, min_rank=1)
    return (x, draw(dims(x.rank)), draw(dims(x.rank))), {}


def _cat(draw):
    dtype = draw(st.sampled_from(ALL))
    base = draw(shapes(min_rank=1, max_rank=4))
    dim = draw(dims(len(base)))
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        shape = list(base)
        shape[dim] = draw(st.integers(1, 4))
        parts.append(TensorArg(tuple(shape), dtype))
    return ([*parts], dim), {}


def _stack(draw):
    dtype = draw(st.sampled_from(ALL))
    base = draw(shapes(min_rank=0, max_rank=3))
    n = draw(st.integers(1, 3))
    return ([TensorArg(base, dtype) for _ in range(n)], draw(dims(len(base) + 1))), {}


def _squeeze(draw):
    x = _tensor(draw, min_rank=1)
    return (x, draw(dims(x.rank))), {}


def _unsqueeze(draw):
    x = _tensor(draw)
    return (x, draw(st.integers(-(x.rank + 1), x.rank))), {}


def _flatten(draw):
    x = _tensor(draw, min_rank=1)
    a, b = sorted((draw(st.integers(0, x.rank - 1)), draw(st.integers(0, x.rank - 1))))
    return (x,), {"start_dim": a, "end_dim": b}


def _expand(draw):
    x = _tensor(draw, max_rank=3)
    target = tuple(draw(st.integers(1, 4)) if side == 1 else side for side in x.shape)
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=1)))
    return (x, lead + target), {}


def _split(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    return (x, draw(st.integers(1, max(1, x.shape[dim]))), dim), {}


def _flip(draw):
    x = _tensor(draw, min_rank=1)
    return (x, (draw(dims(x.rank)),)), {}


def _repeat(draw):
    x = _tensor(draw, max_rank=3)
    reps = tuple(draw(st.integers(1, 3)) for _ in range(max(x.rank, 1) + draw(st.integers(0, 1))))
    return (x, reps), {}


SPECS = [
    spec("reshape", examples(_reshape), fn=torch.reshape, aten=("view",), dtypes=ALL,
         traces={"view": ("view", "_unsafe_view", "clone")}),
    spec("permute", examples(_permute), fn=torch.permute, dtypes=ALL),
    spec("transpose", examples(_transpose), fn=torch.transpose, dtypes=ALL, ranks=(1, 4)),
    spec("cat", examples(_cat), fn=torch.cat, dtypes=ALL, ranks=(1, 4)),
    spec("stack", examples(_stack), fn=torch.stack, dtypes=ALL, ranks=(0, 3)),
    spec("squeeze", examples(_squeeze), fn=torch.squeeze, dtypes=ALL, ranks=(1, 4)),
    spec("unsqueeze", examples(_unsqueeze), fn=torch.unsqueeze, dtypes=ALL),
    spec("flatten", examples(_flatten), fn=torch.flatten, dtypes=ALL,
         ranks=(1, 4)),
    spec("expand", examples(_expand), fn=lambda x, size: x.expand(size), dtypes=ALL,
         ranks=(0, 3)),
    spec("split", examples(_split), fn=torch.split, dtypes=ALL, ranks=(1, 4)),
    spec("flip", examples(_flip), fn=torch.flip, dtypes=ALL, ranks=(1, 4)),
    spec("repeat", examples(_repeat), fn=lambda x, reps: x.repeat(reps), dtypes=ALL,
         ranks=(0, 3)),
]

"""Scans and finite differences along a dimension: cumulative reductions,
their inverse (diff), numerical derivatives and integrals."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ALL, COMPLEX, FLOAT, NUMERIC, optional, reduction, spec, unary
from opsweep.model import TensorArg
from opsweep.specs.reductions import with_nans
from opsweep.catalog.strategies import dims, examples, shapes


def _diff(draw):
    """diff(x, n, dim, prepend, append): the extra tensors match x except along dim."""
    dtype = draw(st.sampled_from(ALL + COMPLEX))
    x = TensorArg(draw(shapes(min_rank=1)), dtype)
    kwargs = {}
    dim = -1
    if draw(st.booleans()):
        dim = kwargs["dim"] = draw(dims(x.rank))
    if draw(st.booleans()):
        kwargs["n"] = draw(st.integers(1, 2))
    for side in ("prepend", "append"):
        if draw(st.integers(0, 2)) == 0:
            shape = list(x.shape)
            shape[dim] = draw(st.integers(1, 3))
            kwargs[side] = TensorArg(tuple(shape), dtype)
    return (x,), kwargs


def _gradient(draw):
    """gradient(x, spacing, dim, edge_order): every differentiated side must
    exceed edge_order."""
    edge_order = draw(st.integers(1, 2))
    x = TensorArg(draw(shapes(min_rank=1, min_side=edge_order + 1)),
                  draw(st.sampled_from(NUMERIC + COMPLEX)))
    kwargs = {"edge_order": edge_order} if edge_order == 2 or draw(st.booleans()) else {}
    if draw(st.booleans()):
        kwargs["spacing"] = draw(st.sampled_from([0.5, 2.0]))
    if draw(st.booleans()):
        kwargs["dim"] = draw(dims(x.rank))
    return (x,), kwargs


SPECS = [
    reduction("cumsum", dim="one", keepdim=False, dtypes=ALL + COMPLEX, widen=True),
    reduction("cumsum_dtype", fn=torch.cumsum, aten=("cumsum",), dim="one", keepdim=False,
              dtypes=ALL, params={"dtype": st.sampled_from([torch.float64, torch.int64])}),
    reduction("cumprod", dim="one", keepdim=False, dtypes=ALL + COMPLEX, widen=True),
    with_nans(reduction("cummax", dim="one", keepdim=False, dtypes=ALL)),
    with_nans(reduction("cummin", dim="one", keepdim=False, dtypes=ALL)),
    with_nans(reduction("logcumsumexp", dim="one", keepdim=False, dtypes=FLOAT + COMPLEX)),
    unary("cumulative_trapezoid", dtypes=NUMERIC + COMPLEX, min_rank=1,
          params={"dx": optional(st.sampled_from([0.5, 2.0])), "dim": st.sampled_from([0, -1])}),
    spec("diff", examples(_diff), fn=torch.diff, dtypes=ALL + COMPLEX, ranks=(1, 4)),
    spec("gradient", examples(_gradient), fn=torch.gradient, dtypes=NUMERIC + COMPLEX,
         ranks=(1, 4)),
]

"""Matrix products and linear algebra."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.families import NUMERIC, gap, spec
from opsweep.model import TensorArg
from opsweep.strategies import examples

MM_DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64")


def _side(draw):
    return draw(st.integers(1, 5))


def _mm(draw):
    dtype = draw(st.sampled_from(MM_DTYPES))
    n, k, m = _side(draw), _side(draw), _side(draw)
    return (TensorArg((n, k), dtype), TensorArg((k, m), dtype)), {}


def _bmm(draw):
    dtype = draw(st.sampled_from(MM_DTYPES))
    b, n, k, m = _side(draw), _side(draw), _side(draw), _side(draw)
    return (TensorArg((b, n, k), dtype), TensorArg((b, k, m), dtype)), {}


def _matmul(draw):
    dtype = draw(st.sampled_from(("float32", "float64", "float16")))
    k = _side(draw)
    left = tuple(_side(draw) for _ in range(draw(st.integers(0, 2)))) + (k,)
    right = (k,) + tuple(_side(draw) for _ in range(draw(st.integers(0, 1))))
    return (TensorArg(left, dtype), TensorArg(right, dtype)), {}


def _linear(draw):
    dtype = draw(st.sampled_from(("float32", "float64", "float16", "bfloat16")))
    fin, fout = _side(draw), _side(draw)
    lead = tuple(_side(draw) for _ in range(draw(st.integers(0, 2))))
    bias = TensorArg((fout,), dtype) if draw(st.booleans()) else None
    return (TensorArg(lead + (fin,), dtype), TensorArg((fout, fin), dtype), bias), {}


def _addmm(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    n, k, m = _side(draw), _side(draw), _side(draw)
    return ((TensorArg((n, m), dtype), TensorArg((n, k), dtype), TensorArg((k, m), dtype)),
            {"beta": draw(st.sampled_from([1, 0.5])), "alpha": draw(st.sampled_from([1, 2]))})


def _cdist(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    d = _side(draw)
    return (TensorArg((_side(draw), d), dtype), TensorArg((_side(draw), d), dtype)), {}


def _square(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    n = draw(st.integers(1, 4))
    lead = tuple(_side(draw) for _ in range(draw(st.integers(0, 1))))
    return (TensorArg(lead + (n, n), dtype),), {}


def _dot(draw):
    dtype = draw(st.sampled_from(("float32", "float64", "int64")))
    n = _side(draw)
    return (TensorArg((n,), dtype), TensorArg((n,), dtype)), {}


SPECS = [
    spec("mm", examples(_mm), fn=torch.mm, dtypes=MM_DTYPES, ranks=(2, 2)),
    spec("bmm", examples(_bmm), fn=torch.bmm, dtypes=MM_DTYPES, ranks=(3, 3)),
    spec("matmul", examples(_matmul), fn=torch.matmul, ranks=(1, 3),
         dtypes=("float32", "float64", "float16")),
    spec("linear", examples(_linear), fn=F.linear, ranks=(1, 3)),
    spec("addmm", examples(_addmm), fn=torch.addmm, dtypes=("float32", "float64"), ranks=(2, 2)),
    spec("dot", examples(_dot), fn=torch.dot, dtypes=("float32", "float64", "int64"),
         ranks=(1, 1)),
    spec("cdist", examples(_cdist), fn=torch.cdist, dtypes=("float32", "float64"), ranks=(2, 2),
         gap=gap("no translation registered for aten::_cdist_forward", "no-translation")),
    spec("det", examples(_square), fn=torch.linalg.det, aten=("linalg_det",),
         dtypes=("float32", "float64"), ranks=(2, 3)),
    spec("inverse", examples(_square), fn=torch.linalg.inv, aten=("linalg_inv",),
         dtypes=("float32", "float64"), ranks=(2, 3)),
]

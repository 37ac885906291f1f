"""Normalization layers, as functional calls with drawn affine parameters."""

import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.families import spec
from opsweep.model import TensorArg
from opsweep.strategies import examples, shapes

NORM_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _layer_norm(draw):
    dtype = draw(st.sampled_from(NORM_DTYPES))
    shape = draw(shapes(min_rank=1, max_rank=4))
    k = draw(st.integers(1, len(shape)))
    normalized = shape[len(shape) - k:]
    affine = draw(st.booleans())
    weight = TensorArg(normalized, dtype) if affine else None
    bias = TensorArg(normalized, dtype) if affine else None
    return (TensorArg(shape, dtype), normalized, weight, bias), {}


def _batch_norm(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    c = draw(st.integers(1, 4))
    shape = (draw(st.integers(1, 3)), c, *draw(shapes(min_rank=0, max_rank=2)))
    stats = TensorArg((c,), dtype), TensorArg((c,), dtype, 0.5, 2.0)
    affine = (TensorArg((c,), dtype), TensorArg((c,), dtype)) if draw(st.booleans()) else (None, None)
    return (TensorArg(shape, dtype), *stats, *affine), {"training": False}


def _group_norm(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    groups = draw(st.integers(1, 3))
    c = groups * draw(st.integers(1, 2))
    shape = (draw(st.integers(1, 2)), c, *draw(shapes(min_rank=1, max_rank=2, min_side=2)))
    return (TensorArg(shape, dtype), groups, TensorArg((c,), dtype), TensorArg((c,), dtype)), {}


def _instance_norm(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *draw(shapes(min_rank=1, max_rank=2, min_side=2)))
    return (TensorArg(shape, dtype),), {}


def _normalize(draw):
    dtype = draw(st.sampled_from(NORM_DTYPES))
    shape = draw(shapes(min_rank=1, max_rank=4))
    return (TensorArg(shape, dtype),), {"dim": draw(st.integers(-len(shape), len(shape) - 1))}


SPECS = [
    spec("layer_norm", examples(_layer_norm), fn=F.layer_norm, dtypes=NORM_DTYPES, ranks=(1, 4),
         traces={"layer_norm": ("native_layer_norm",)}),
    spec("batch_norm", examples(_batch_norm), fn=F.batch_norm, dtypes=("float32", "float64"),
         ranks=(2, 4), traces={"batch_norm": ("_native_batch_norm_legit_no_training",)}),
    spec("group_norm", examples(_group_norm), fn=F.group_norm, dtypes=("float32", "float64"),
         ranks=(2, 4), traces={"group_norm": ("native_group_norm",)}),
    spec("instance_norm", examples(_instance_norm), fn=F.instance_norm,
         dtypes=("float32", "float64"), ranks=(3, 4)),
    spec("normalize", examples(_normalize), fn=F.normalize, aten=("linalg_vector_norm",),
         dtypes=NORM_DTYPES, ranks=(1, 4)),
]

"""Convolutions and pooling."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.families import spec
from opsweep.model import TensorArg
from opsweep.strategies import examples

CONV_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _conv(nd):
    def build(draw):
        dtype = draw(st.sampled_from(CONV_DTYPES))
        cin, groups = draw(st.sampled_from([(1, 1), (2, 1), (2, 2), (4, 2)]))
        cout = groups * draw(st.integers(1, 2))
        k = draw(st.integers(1, 3))
        spatial = tuple(draw(st.integers(k, 6)) for _ in range(nd))
        batch = draw(st.integers(1, 2))
        x = TensorArg((batch, cin, *spatial), dtype)
        w = TensorArg((cout, cin // groups, *([k] * nd)), dtype)
        b = TensorArg((cout,), dtype) if draw(st.booleans()) else None
        return (x, w, b), {"stride": draw(st.integers(1, 2)), "padding": draw(st.integers(0, 1)),
                           "groups": groups}
    return build


def _pool(nd, *, avg=False):
    def build(draw):
        dtype = draw(st.sampled_from(("float32", "float64", "float16")))
        k = draw(st.integers(1, 3))
        spatial = tuple(draw(st.integers(k, 6)) for _ in range(nd))
        x = TensorArg((draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial), dtype)
        kwargs = {"kernel_size": k, "stride": draw(st.integers(1, 2))}
        kwargs["padding"] = draw(st.integers(0, k // 2))
        kwargs["ceil_mode"] = draw(st.booleans())
        return (x,), kwargs
    return build


def _adaptive(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    x = TensorArg((1, draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 6))),
                  dtype)
    return (x, (draw(st.integers(1, 3)), draw(st.integers(1, 3)))), {}


SPECS = [
    spec("conv1d", examples(_conv(1)), fn=F.conv1d, dtypes=CONV_DTYPES, ranks=(3, 3),
         traces={"conv1d": ("convolution",)}),
    spec("conv2d", examples(_conv(2)), fn=F.conv2d, dtypes=CONV_DTYPES, ranks=(4, 4),
         traces={"conv2d": ("convolution",)}),
    spec("conv3d", examples(_conv(3)), fn=F.conv3d, dtypes=CONV_DTYPES, ranks=(5, 5),
         traces={"conv3d": ("convolution",)}),
    spec("max_pool2d", examples(_pool(2)), fn=F.max_pool2d, ranks=(4, 4),
         dtypes=("float32", "float64", "float16"),
         traces={"max_pool2d": ("max_pool2d_with_indices",)}),
    spec("avg_pool2d", examples(_pool(2)), fn=F.avg_pool2d, ranks=(4, 4),
         dtypes=("float32", "float64", "float16")),
    spec("adaptive_avg_pool2d", examples(_adaptive), fn=F.adaptive_avg_pool2d, ranks=(4, 4),
         dtypes=("float32", "float64")),
]

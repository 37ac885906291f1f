"""Pooling beyond the 2-d basics of conv_pool.py: 1-d and 3-d, indices, adaptive,
fractional and unpooling."""

import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import no_translation, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples

POOL_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _pool(nd, *, dilation=False, indices=False, avg=False, dtypes=POOL_DTYPES):
    """Max or average pooling over `nd` spatial dims; the batch dim is sometimes left out."""
    def build(draw):
        dtype = draw(st.sampled_from(dtypes))
        k, stride = draw(st.integers(1, 3)), draw(st.integers(1, 2))
        dil = draw(st.integers(1, 2)) if dilation else 1
        pad = draw(st.integers(0, k // 2))
        reach = dil * (k - 1) + 1
        lo = k if avg else max(1, reach - 2 * pad)  # avg_pool3d wants the kernel unpadded
        spatial = tuple(draw(st.integers(lo, 6)) for _ in range(nd))
        lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
        x = TensorArg((*lead, draw(st.integers(1, 3)), *spatial), dtype)
        kwargs = {"kernel_size": k, "stride": stride, "padding": pad,
                  "ceil_mode": draw(st.booleans())}
        if dilation:
            kwargs["dilation"] = dil
        if indices:
            kwargs["return_indices"] = True
        if avg:
            kwargs["count_include_pad"] = draw(st.booleans())
            if nd > 1 and draw(st.booleans()):
                kwargs["divisor_override"] = draw(st.integers(1, 3))
        return (x,), kwargs
    return build


def _adaptive(nd, *, indices=False):
    def build(draw):
        dtype = draw(st.sampled_from(POOL_DTYPES))
        lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
        spatial = tuple(draw(st.integers(1, 6)) for _ in range(nd))
        x = TensorArg((*lead, draw(st.integers(1, 3)), *spatial), dtype)
        # not all ones first: an all-ones output is traced as a mean
        out = tuple(draw(st.sampled_from([2, 1, 3])) for _ in range(nd))
        kwargs = {"return_indices": draw(st.booleans())} if indices else {}
        return (x, out[0] if nd == 1 else out), kwargs
    return build


def _unpool(nd, *, padded=False):
    def build(draw):
        dtype = draw(st.sampled_from(("float32", "float64")))
        k = draw(st.integers(1, 3))
        spatial = tuple(draw(st.integers(k, 6)) for _ in range(nd))
        x = TensorArg((draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial), dtype)
        args = (x, k, draw(st.integers(1, 2)))
        if padded:  # the pooling's padding, handed on to the unpooling
            args += (draw(st.integers(0, k // 2)),)
        return args, {}
    return build


def _fractional(nd):
    def build(draw):
        dtype = draw(st.sampled_from(("float32", "float64")))
        k = draw(st.integers(1, 3))
        out = tuple(draw(st.integers(1, 3)) for _ in range(nd))
        # 3-d wants the windows strictly inside the input, 2-d allows them to touch its end
        spatial = tuple(draw(st.integers(o + k - (nd == 2), 6)) for o in out)
        n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
        x = TensorArg((n, c, *spatial), dtype)
        samples = TensorArg((n, c, nd), dtype, 0.0, 1.0)  # fixed: the op becomes deterministic
        return (x, k), {"output_size": out, "_random_samples": samples}
    return build


def _unpooled(pool, unpool):
    """Unpool what `pool` picked, so the indices are always valid."""
    def fn(x, k, stride, padding=0):
        nd = x.dim() - 2
        return unpool(*pool(x, k, stride, padding, return_indices=True), k, stride, padding,
                      output_size=x.shape[-nd:])
    return fn


def _indices_fixed(plain):
    return {"return_indices": "the spec measures the form that returns the indices too "
                              f"(return_indices=True); {plain} measures return_indices=False"}


SPECS = [
    spec("max_pool1d", examples(_pool(1, dilation=True)), fn=F.max_pool1d, dtypes=POOL_DTYPES,
         ranks=(2, 3)),
    spec("max_pool1d_with_indices", examples(_pool(1, dilation=True, indices=True)),
         fn=F.max_pool1d, dtypes=POOL_DTYPES, ranks=(2, 3),
         fixed=_indices_fixed("max_pool1d")),
    spec("max_pool2d_with_indices", examples(_pool(2, dilation=True, indices=True)),
         fn=F.max_pool2d, dtypes=POOL_DTYPES, ranks=(3, 4),
         fixed=_indices_fixed("max_pool2d")),
    spec("max_pool3d", examples(_pool(3, dilation=True)), fn=F.max_pool3d, dtypes=POOL_DTYPES,
         ranks=(4, 5), traces={"max_pool3d": ("max_pool3d_with_indices",)}),
    spec("max_pool3d_with_indices", examples(_pool(3, dilation=True, indices=True)),
         fn=F.max_pool3d, dtypes=POOL_DTYPES, ranks=(4, 5),
         fixed=_indices_fixed("max_pool3d")),
    spec("avg_pool1d", examples(_pool(1, avg=True)), fn=F.avg_pool1d, dtypes=POOL_DTYPES,
         ranks=(2, 3)),
    spec("avg_pool3d", examples(_pool(3, avg=True, dtypes=("float32", "float64"))),
         fn=F.avg_pool3d, dtypes=("float32", "float64"),
         ranks=(4, 5)),
    spec("adaptive_avg_pool1d", examples(_adaptive(1)), fn=F.adaptive_avg_pool1d,
         dtypes=POOL_DTYPES, ranks=(2, 3)),
    spec("adaptive_avg_pool3d", examples(_adaptive(3)), fn=F.adaptive_avg_pool3d,
         dtypes=POOL_DTYPES, ranks=(4, 5)),
    spec("adaptive_max_pool1d", examples(_adaptive(1, indices=True)), fn=F.adaptive_max_pool1d,
         dtypes=POOL_DTYPES, ranks=(2, 3)),
    spec("adaptive_max_pool2d", examples(_adaptive(2, indices=True)), fn=F.adaptive_max_pool2d,
         dtypes=POOL_DTYPES, ranks=(3, 4)),
    spec("adaptive_max_pool3d", examples(_adaptive(3, indices=True)), fn=F.adaptive_max_pool3d,
         dtypes=POOL_DTYPES, ranks=(4, 5)),
    spec("max_unpool1d", examples(_unpool(1)), fn=_unpooled(F.max_pool1d, F.max_unpool1d),
         aten=("max_unpool2d",), dtypes=("float32", "float64"), ranks=(3, 3)),
    spec("max_unpool2d", examples(_unpool(2)), fn=_unpooled(F.max_pool2d, F.max_unpool2d),
         dtypes=("float32", "float64"), ranks=(4, 4)),
    spec("max_unpool3d", examples(_unpool(3, padded=True)), fn=_unpooled(F.max_pool3d, F.max_unpool3d),
         dtypes=("float32", "float64"), ranks=(5, 5)),
    spec("fractional_max_pool2d", examples(_fractional(2)), fn=F.fractional_max_pool2d,
         dtypes=("float32", "float64"), ranks=(4, 4), gap=no_translation("fractional_max_pool2d")),
    spec("fractional_max_pool3d", examples(_fractional(3)), fn=F.fractional_max_pool3d,
         dtypes=("float32", "float64"), ranks=(5, 5), gap=no_translation("fractional_max_pool3d")),
]

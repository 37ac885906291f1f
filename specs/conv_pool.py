"""Convolutions and pooling."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import no_translation, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples

CONV_DTYPES = ("float32", "float64", "float16", "bfloat16")
#: the pooling a model runs at every float dtype, bfloat16 included (torchvision and timm CNNs)
POOL_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _conv(nd, *, dilated=True):
    def build(draw):
        dtype = draw(st.sampled_from(CONV_DTYPES))
        cin, groups = draw(st.sampled_from([(1, 1), (2, 1), (2, 2), (4, 2)]))
        cout = groups * draw(st.integers(1, 2))
        k, padding = draw(st.integers(1, 3)), draw(st.integers(0, 1))
        dilation = draw(st.integers(1, 2)) if dilated else 1
        lo = max(1, dilation * (k - 1) + 1 - 2 * padding)  # the dilated kernel fits
        spatial = tuple(draw(st.integers(lo, 6)) for _ in range(nd))
        batch = draw(st.integers(1, 2))
        x = TensorArg((batch, cin, *spatial), dtype)
        w = TensorArg((cout, cin // groups, *([k] * nd)), dtype)
        b = TensorArg((cout,), dtype) if draw(st.booleans()) else None
        kwargs = {"stride": draw(st.integers(1, 2)), "padding": padding, "groups": groups}
        if dilated:
            kwargs["dilation"] = dilation
        return (x, w, b), kwargs
    return build


def _conv_transpose(nd, *, direct=False):
    def build(draw):
        dtype = draw(st.sampled_from(CONV_DTYPES))
        cin, groups = draw(st.sampled_from([(1, 1), (2, 1), (2, 2), (4, 2)]))
        cout = groups * draw(st.integers(1, 2))
        k = draw(st.integers(1, 3))
        stride, dilation = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        padding = draw(st.integers(0, (dilation * (k - 1)) // 2))
        output_padding = draw(st.integers(0, max(stride, dilation) - 1))
        spatial = tuple(draw(st.integers(1, 4)) for _ in range(nd))
        x = TensorArg((draw(st.integers(1, 2)), cin, *spatial), dtype)
        w = TensorArg((cin, cout // groups, *([k] * nd)), dtype)
        b = TensorArg((cout,), dtype) if draw(st.booleans()) else None
        if direct:  # torch.convolution: every argument positional, lists per spatial dim
            return (x, w, b, [stride] * nd, [padding] * nd, [dilation] * nd, True,
                    [output_padding] * nd, groups), {}
        return (x, w, b), {"stride": stride, "padding": padding, "output_padding": output_padding,
                           "groups": groups, "dilation": dilation}
    return build


def _convolution(draw):
    nd = draw(st.integers(1, 3))
    if draw(st.booleans()):
        return _conv_transpose(nd, direct=True)(draw)
    (x, w, b), kw = _conv(nd, dilated=False)(draw)
    k, pad = w.shape[2], kw["padding"]
    fits = min(x.shape[2:]) + 2 * pad >= 2 * (k - 1) + 1  # room for a dilated kernel
    dilation = draw(st.integers(1, 2)) if fits else 1
    return (x, w, b, [kw["stride"]] * nd, [kw["padding"]] * nd, [dilation] * nd, False,
            [0] * nd, kw["groups"]), {}


def _conv_tbc(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    k, cin, cout = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pad = draw(st.integers(0, 1))
    time = draw(st.integers(max(1, k - 2 * pad), 6))
    return (TensorArg((time, draw(st.integers(1, 2)), cin), dtype),
            TensorArg((k, cin, cout), dtype), TensorArg((cout,), dtype), pad), {}


def _slow_conv(nd, *, transposed=False, dilated=False):
    """Positional calls of the CPU convolution kernels: (x, w, kernel_size, bias, stride,
    padding[, output_padding][, dilation])."""
    def build(draw):
        dtype = draw(st.sampled_from(("float32", "float64")))
        cin, cout, k = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
        stride = draw(st.integers(1, 2))
        dilation = draw(st.integers(1, 2)) if dilated or transposed else 1
        padding = draw(st.integers(0, (dilation * (k - 1)) // 2 if transposed else k // 2))
        reach = dilation * (k - 1) + 1
        lo = 1 if transposed else max(1, reach - 2 * padding)
        spatial = tuple(draw(st.integers(lo, max(lo, 5))) for _ in range(nd))
        x = TensorArg((draw(st.integers(1, 2)), cin, *spatial), dtype)
        w = TensorArg((cin, cout, *([k] * nd)) if transposed else (cout, cin, *([k] * nd)), dtype)
        b = TensorArg((cout,), dtype) if draw(st.booleans()) else None
        args = [x, w, [k] * nd, b, [stride] * nd, [padding] * nd]
        if transposed:
            args.append([draw(st.integers(0, max(stride, dilation) - 1))] * nd)
        if dilated or transposed:
            args.append([dilation] * nd)
        return tuple(args), {}
    return build


def _pool(nd, *, avg=False):
    def build(draw):
        dtype = draw(st.sampled_from(POOL_DTYPES))
        k = draw(st.integers(1, 3))
        pad = draw(st.integers(0, k // 2))
        dilation = 1 if avg else draw(st.integers(1, 2))
        lo = k if avg else max(1, dilation * (k - 1) + 1 - 2 * pad)  # the dilated window fits
        spatial = tuple(draw(st.integers(lo, 6)) for _ in range(nd))
        x = TensorArg((draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial), dtype)
        kwargs = {"kernel_size": k, "stride": draw(st.integers(1, 2))}
        kwargs["padding"] = pad
        kwargs["ceil_mode"] = draw(st.booleans())
        if avg:
            kwargs["count_include_pad"] = draw(st.booleans())
            kwargs["divisor_override"] = draw(optional(st.integers(1, 3)))
        else:
            kwargs["dilation"] = dilation
        return (x,), present(**kwargs)
    return build


def _direct_fixed(nd):
    """aten::convolution's flags that F.convNd fixes: it never calls the transposed form."""
    why = (f"F.conv{nd}d always calls aten::convolution with transposed=False and "
           f"output_padding 0; conv_transpose{nd}d measures transposed=True with "
           f"output_padding drawn (and convolution draws both)")
    return {"transposed": why, "output_padding": why}


def _transposed_fixed(nd):
    return {"transposed": f"F.conv_transpose{nd}d always calls aten::convolution with "
                          f"transposed=True; conv{nd}d measures transposed=False (and "
                          f"convolution draws both)"}


def _adaptive(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    x = TensorArg((1, draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 6))),
                  dtype)
    return (x, (draw(st.integers(1, 3)), draw(st.integers(1, 3)))), {}


SPECS = [
    spec("conv1d", examples(_conv(1)), fn=F.conv1d, dtypes=CONV_DTYPES, ranks=(3, 3),
         traces={"conv1d": ("convolution",)}, fixed=_direct_fixed(1)),
    spec("conv2d", examples(_conv(2)), fn=F.conv2d, dtypes=CONV_DTYPES, ranks=(4, 4),
         traces={"conv2d": ("convolution",)}, fixed=_direct_fixed(2)),
    spec("conv3d", examples(_conv(3)), fn=F.conv3d, dtypes=CONV_DTYPES, ranks=(5, 5),
         traces={"conv3d": ("convolution",)}, fixed=_direct_fixed(3)),
    spec("conv_transpose1d", examples(_conv_transpose(1)), fn=F.conv_transpose1d,
         dtypes=CONV_DTYPES, ranks=(3, 3), traces={"conv_transpose1d": ("convolution",)},
         fixed=_transposed_fixed(1)),
    spec("conv_transpose2d", examples(_conv_transpose(2)), fn=F.conv_transpose2d,
         dtypes=CONV_DTYPES, ranks=(4, 4), traces={"conv_transpose2d": ("convolution",)},
         fixed=_transposed_fixed(2)),
    spec("conv_transpose3d", examples(_conv_transpose(3)), fn=F.conv_transpose3d,
         dtypes=CONV_DTYPES, ranks=(5, 5), traces={"conv_transpose3d": ("convolution",)},
         fixed=_transposed_fixed(3)),
    spec("convolution", examples(_convolution), fn=torch.convolution, dtypes=CONV_DTYPES,
         ranks=(3, 5)),
    spec("conv_tbc", examples(_conv_tbc), fn=torch.conv_tbc, dtypes=("float32", "float64"),
         ranks=(3, 3), gap=no_translation("conv_tbc")),
    spec("thnn_conv2d", examples(_slow_conv(2)), fn=torch.ops.aten.thnn_conv2d,
         dtypes=("float32", "float64"), ranks=(4, 4)),
    spec("slow_conv3d", examples(_slow_conv(3)), fn=torch.ops.aten.slow_conv3d,
         dtypes=("float32", "float64"), ranks=(5, 5)),
    spec("slow_conv3d_forward", examples(_slow_conv(3)),
         fn=torch.ops.aten.slow_conv3d_forward, dtypes=("float32", "float64"), ranks=(5, 5),
         gap=no_translation("slow_conv3d_forward")),
    spec("slow_conv_dilated2d", examples(_slow_conv(2, dilated=True)),
         fn=torch.ops.aten.slow_conv_dilated2d, dtypes=("float32", "float64"), ranks=(4, 4),
         gap=no_translation("slow_conv_dilated2d")),
    spec("slow_conv_dilated3d", examples(_slow_conv(3, dilated=True)),
         fn=torch.ops.aten.slow_conv_dilated3d, dtypes=("float32", "float64"), ranks=(5, 5),
         gap=no_translation("slow_conv_dilated3d")),
    spec("slow_conv_transpose2d", examples(_slow_conv(2, transposed=True)),
         fn=torch.ops.aten.slow_conv_transpose2d, dtypes=("float32", "float64"), ranks=(4, 4),
         gap=no_translation("slow_conv_transpose2d")),
    spec("slow_conv_transpose3d", examples(_slow_conv(3, transposed=True)),
         fn=torch.ops.aten.slow_conv_transpose3d, dtypes=("float32", "float64"), ranks=(5, 5),
         gap=no_translation("slow_conv_transpose3d")),
    spec("max_pool2d", examples(_pool(2)), fn=F.max_pool2d, ranks=(4, 4), dtypes=POOL_DTYPES,
         traces={"max_pool2d": ("max_pool2d_with_indices",)}),
    spec("avg_pool2d", examples(_pool(2, avg=True)), fn=F.avg_pool2d, ranks=(4, 4),
         dtypes=POOL_DTYPES),
    spec("adaptive_avg_pool2d", examples(_adaptive), fn=F.adaptive_avg_pool2d, ranks=(4, 4),
         dtypes=("float32", "float64")),
]

"""Resampling and rearranging: interpolate, grid_sample, affine_grid, pixel and
channel shuffles, padding modes, fold/unfold."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples

RS_DTYPES = ("float32", "float64", "float16", "bfloat16")
F64 = ("float32", "float64")


def _image(draw, nd, dtypes=RS_DTYPES, *, min_side=1, batch=None, channels=None):
    dtype = draw(st.sampled_from(dtypes))
    n = draw(st.integers(1, 2)) if batch is None else batch
    c = draw(st.integers(1, 3)) if channels is None else channels
    return TensorArg((n, c, *(draw(st.integers(min_side, 5)) for _ in range(nd))), dtype)


def _interpolate(nd, mode, dtypes=RS_DTYPES):
    def build(draw):
        x = _image(draw, nd, dtypes, min_side=2 if mode == "bicubic" else 1)
        kwargs = {"mode": mode}
        if draw(st.booleans()):
            kwargs["size"] = tuple(draw(st.integers(1, 6)) for _ in range(nd))
        else:
            kwargs["scale_factor"] = draw(st.sampled_from([2.0, 0.5, 1.5, 3.0]))
            if any(side * kwargs["scale_factor"] < 1 for side in x.shape[2:]):
                kwargs["scale_factor"] = 2.0
        if mode not in ("nearest", "nearest-exact", "area"):
            kwargs["align_corners"] = draw(st.booleans())
        return (x,), kwargs
    return build


def _grid_sample(nd, modes):
    def build(draw):
        x = _image(draw, nd, F64)
        out = tuple(draw(st.integers(1, 4)) for _ in range(nd))
        grid = TensorArg((x.shape[0], *out, nd), x.dtype, -1.2, 1.2)  # a little outside too
        return (x, grid), {"mode": draw(st.sampled_from(modes)),
                           "padding_mode": draw(st.sampled_from(["zeros", "border", "reflection"])),
                           "align_corners": draw(st.booleans())}
    return build


def _affine_grid(draw):
    nd = draw(st.integers(2, 3))
    dtype = draw(st.sampled_from(F64))
    n = draw(st.integers(1, 2))
    theta = TensorArg((n, nd, nd + 1), dtype)
    size = (n, draw(st.integers(1, 3)), *(draw(st.integers(1, 5)) for _ in range(nd)))
    return (theta, size), {"align_corners": draw(st.booleans())}


def _pixel_shuffle(draw):
    r = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(RS_DTYPES + ("int64",)))
    lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    c = draw(st.integers(1, 2)) * r * r
    return (TensorArg((*lead, c, draw(st.integers(1, 3)), draw(st.integers(1, 3))), dtype), r), {}


def _pixel_unshuffle(draw):
    r = draw(st.integers(1, 2))
    dtype = draw(st.sampled_from(RS_DTYPES + ("int64",)))
    lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    h, w = r * draw(st.integers(1, 3)), r * draw(st.integers(1, 3))
    return (TensorArg((*lead, draw(st.integers(1, 3)), h, w), dtype), r), {}


def _channel_shuffle(draw):
    groups = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(RS_DTYPES + ("int64",)))
    c = groups * draw(st.integers(1, 2))
    spatial = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2))))
    return (TensorArg((draw(st.integers(1, 2)), c, *spatial), dtype), groups), {}


def _pad(nd, mode, dtypes=RS_DTYPES):
    """`nd` padded trailing dims; the batch dim is sometimes left out. Reflection
    needs each pad smaller than its side, circular at most the side; constant
    padding may crop (negative pads) sides of 3 or more."""
    def build(draw):
        dtype = draw(st.sampled_from(dtypes))
        lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
        spatial = tuple(draw(st.integers(1, 5)) for _ in range(nd))
        x = TensorArg((*lead, draw(st.integers(1, 3)), *spatial), dtype)
        pads = []
        for side in reversed(spatial):  # F.pad lists the last dim first
            lo = -1 if mode == "constant" and side >= 3 else 0
            hi = min(3, {"reflect": side - 1, "circular": side}.get(mode, 3))
            pads += [draw(st.integers(lo, hi)) for _ in range(2)]
        kwargs = {"mode": mode}
        if mode == "constant":
            kwargs["value"] = draw(st.sampled_from([0.0, 1.5, -1.0]))
        return (x, tuple(pads)), kwargs
    return build


def _constant_pad_nd(draw):
    """Any rank and dtype; pads of the last k dims, cropping sides of 3 or more."""
    dtype = draw(st.sampled_from(RS_DTYPES + ("int64", "bool")))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 4))))
    k = draw(st.integers(1, len(shape)))
    pads = []
    for side in reversed(shape[len(shape) - k:]):
        pads += [draw(st.integers(-1 if side >= 3 else 0, 2)) for _ in range(2)]
    value = draw(st.sampled_from([0, 1])) if dtype in ("int64", "bool") else 0.5
    return (TensorArg(shape, dtype), pads, value), {}


def _fold(draw):
    dtype = draw(st.sampled_from(F64))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride, dilation = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.integers(0, 1))
    out = tuple(draw(st.integers(max(1, dilation * (kk - 1) + 1 - 2 * padding), 5)) for kk in k)
    blocks = 1
    for o, kk in zip(out, k):
        blocks *= (o + 2 * padding - dilation * (kk - 1) - 1) // stride + 1
    c = draw(st.integers(1, 2))
    lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    x = TensorArg((*lead, c * k[0] * k[1], blocks), dtype)
    return (x, out, k), {"dilation": dilation, "padding": padding, "stride": stride}


def _unfold(draw):
    dtype = draw(st.sampled_from(RS_DTYPES))  # convbert's span convolution: f16, bf16 too
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride, dilation = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.integers(0, 1))
    spatial = tuple(draw(st.integers(max(1, dilation * (kk - 1) + 1 - 2 * padding), 5)) for kk in k)
    lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    x = TensorArg((*lead, draw(st.integers(1, 2)), *spatial), dtype)
    return (x, k), {"dilation": dilation, "padding": padding, "stride": stride}


#: the sibling specs by the mode each measures, for the `mode=` reasons below
_UPSAMPLE = {1: {"nearest": "upsample_nearest1d", "linear": "upsample_linear1d"},
             2: {"nearest": "upsample_nearest2d", "bilinear": "upsample_bilinear2d",
                 "bicubic": "upsample_bicubic2d"},
             3: {"nearest": "upsample_nearest3d", "trilinear": "upsample_trilinear3d"}}
_PAD = {1: {"reflect": "reflection_pad1d", "replicate": "replication_pad1d"},
        2: {"constant": "pad_constant", "reflect": "reflection_pad2d",
            "replicate": "replication_pad2d", "circular": "pad_circular"},
        3: {"reflect": "reflection_pad3d", "replicate": "replication_pad3d"}}


def _one_mode(siblings, nd, mode):
    """The `fixed=` reason for a spec that measures one `mode` of F.interpolate/F.pad."""
    others = ", ".join(f"{m!r} by {name}" for m, name in siblings[nd].items() if m != mode)
    return {"mode": f"each mode lowers to a different aten operator and this spec measures "
                    f"{mode!r}; sibling specs measure other {nd}-d modes ({others})"}


def rs(name, build, fn, *, dtypes=RS_DTYPES, ranks=(3, 5), **fields):
    return spec(name, examples(build), fn=fn, dtypes=dtypes, ranks=ranks,
                **fields)


SPECS = [
    rs("upsample_nearest1d", _interpolate(1, "nearest"), F.interpolate, ranks=(3, 3),
       fixed=_one_mode(_UPSAMPLE, 1, "nearest")),
    rs("upsample_nearest2d", _interpolate(2, "nearest"), F.interpolate, ranks=(4, 4),
       fixed=_one_mode(_UPSAMPLE, 2, "nearest")),
    rs("upsample_nearest3d", _interpolate(3, "nearest"), F.interpolate, ranks=(5, 5),
       fixed=_one_mode(_UPSAMPLE, 3, "nearest")),
    rs("upsample_linear1d", _interpolate(1, "linear"), F.interpolate, ranks=(3, 3),
       fixed=_one_mode(_UPSAMPLE, 1, "linear")),
    rs("upsample_bilinear2d", _interpolate(2, "bilinear"), F.interpolate, ranks=(4, 4),
       fixed=_one_mode(_UPSAMPLE, 2, "bilinear")),
    rs("upsample_bicubic2d", _interpolate(2, "bicubic"), F.interpolate, ranks=(4, 4),
       fixed=_one_mode(_UPSAMPLE, 2, "bicubic")),
    rs("upsample_trilinear3d", _interpolate(3, "trilinear"), F.interpolate, ranks=(5, 5),
       fixed=_one_mode(_UPSAMPLE, 3, "trilinear")),
    rs("grid_sampler_2d", _grid_sample(2, ["bilinear", "nearest", "bicubic"]), F.grid_sample,
       dtypes=F64, ranks=(4, 4), aten=("grid_sampler_2d", "grid_sampler")),
    rs("grid_sampler_3d", _grid_sample(3, ["bilinear", "nearest"]), F.grid_sample,
       dtypes=F64, ranks=(5, 5), aten=("grid_sampler_3d", "grid_sampler")),
    rs("affine_grid_generator", _affine_grid, F.affine_grid, dtypes=F64, ranks=(3, 3)),
    rs("pixel_shuffle", _pixel_shuffle, F.pixel_shuffle, dtypes=RS_DTYPES + ("int64",),
       ranks=(3, 4)),
    rs("pixel_unshuffle", _pixel_unshuffle, F.pixel_unshuffle, dtypes=RS_DTYPES + ("int64",),
       ranks=(3, 4)),
    rs("channel_shuffle", _channel_shuffle, F.channel_shuffle, dtypes=RS_DTYPES + ("int64",),
       ranks=(3, 4)),
    rs("native_channel_shuffle", _channel_shuffle, torch.native_channel_shuffle,
       dtypes=RS_DTYPES + ("int64",), ranks=(3, 4)),
    rs("pad_constant", _pad(2, "constant"), F.pad, aten=("constant_pad_nd", "pad"),
       ranks=(3, 4), fixed=_one_mode(_PAD, 2, "constant")),
    rs("constant_pad_nd", _constant_pad_nd, torch.constant_pad_nd,
       dtypes=RS_DTYPES + ("int64", "bool"), ranks=(1, 4)),
    rs("reflection_pad1d", _pad(1, "reflect"), F.pad, ranks=(2, 3),
       fixed=_one_mode(_PAD, 1, "reflect")),
    rs("reflection_pad2d", _pad(2, "reflect"), F.pad, ranks=(3, 4),
       fixed=_one_mode(_PAD, 2, "reflect")),
    rs("reflection_pad3d", _pad(3, "reflect"), F.pad, ranks=(4, 5),
       fixed=_one_mode(_PAD, 3, "reflect")),
    rs("replication_pad1d", _pad(1, "replicate"), F.pad, ranks=(2, 3),
       fixed=_one_mode(_PAD, 1, "replicate")),
    rs("replication_pad2d", _pad(2, "replicate"), F.pad, ranks=(3, 4),
       fixed=_one_mode(_PAD, 2, "replicate")),
    rs("replication_pad3d", _pad(3, "replicate"), F.pad, ranks=(4, 5),
       fixed=_one_mode(_PAD, 3, "replicate")),
    rs("pad_circular", _pad(2, "circular"), F.pad, aten=("pad",), ranks=(3, 4),
       fixed=_one_mode(_PAD, 2, "circular")),
    rs("col2im", _fold, F.fold, dtypes=F64, ranks=(2, 3)),
    rs("im2col", _unfold, F.unfold, ranks=(3, 4)),
]

"""Fake quantization (float in, float out) and the quantized-tensor round trips that
PyTorch runs on CPU. torch.export cannot trace quantized tensors, so the round
trips are expected to stop at capture; they are measured all the same."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples, shapes

FQ_DTYPES = ("float32", "float64", "float16", "bfloat16")
#: (quant_min, quant_max) pairs: uint8, int8, 4-bit, ternary
RANGES = ((0, 255), (-128, 127), (0, 15), (-1, 1))
#: quantized dtype name -> zero-point range
QDTYPES = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-100, 100)}


#: why a float `scale` is drawn positive only
_SCALE = ("a quantization step is > 0 (observers clamp it to at least eps): eager does not "
          "check, but 0 divides by zero and negative, inf or nan steps quantize nothing; "
          "only positive steps are drawn")


def _per_tensor(*, tensor_qparams=False, dtypes=FQ_DTYPES):
    def build(draw):
        x = TensorArg(draw(shapes(min_rank=0, max_rank=4)), draw(st.sampled_from(dtypes)))
        qmin, qmax = draw(st.sampled_from(RANGES))
        scale = draw(st.sampled_from([0.1, 0.02, 1.0]))
        zp = draw(st.integers(qmin, qmax))
        if tensor_qparams:
            return (x, TensorArg((), "float32", scale, scale * 1.5),
                    TensorArg((), "int32", zp, zp + 1), qmin, qmax), {}
        return (x, scale, zp, qmin, qmax), {}
    return build


def _per_channel(*, dtypes=FQ_DTYPES):
    def build(draw):
        x = TensorArg(draw(shapes(min_rank=1, max_rank=4)), draw(st.sampled_from(dtypes)))
        axis = draw(st.integers(0, x.rank - 1))
        c = x.shape[axis]
        qmin, qmax = draw(st.sampled_from(RANGES))
        zp_dtype = draw(st.sampled_from(["int32", "float32"]))
        return (x, TensorArg((c,), "float32", 0.02, 0.5), TensorArg((c,), zp_dtype, qmin, qmax),
                axis, qmin, qmax), {}
    return build


def _fused_observer(draw):
    per_channel = draw(st.booleans())
    x = TensorArg(draw(shapes(min_rank=2 if per_channel else 1, max_rank=3)), "float32")
    c = x.shape[0] if per_channel else 1
    on = lambda: TensorArg((1,), "int64", draw(st.integers(0, 1)), 2)  # noqa: E731
    stats = (TensorArg((c,), "float32", -2.0, -1.0), TensorArg((c,), "float32", 1.0, 2.0),
             TensorArg((c,), "float32", 0.02, 0.5), TensorArg((c,), "int32", 0, 10))
    qmin, qmax = draw(st.sampled_from(RANGES))
    return (x, on(), on(), *stats, 0.01, qmin, qmax, 0 if per_channel else -1,
            per_channel, draw(st.booleans())), {}


def _quantize(*, per_channel=False):
    def build(draw):
        x = TensorArg(draw(shapes(min_rank=1 if per_channel else 0, max_rank=4)), "float32")
        qdtype = draw(st.sampled_from(sorted(QDTYPES)))
        lo, hi = QDTYPES[qdtype]
        if per_channel:
            axis = draw(st.integers(0, x.rank - 1))
            c = x.shape[axis]
            return (x, TensorArg((c,), "float64", 0.02, 0.5), TensorArg((c,), "int64", lo, hi),
                    axis, qdtype), {}
        return (x, draw(st.sampled_from([0.1, 0.02])), draw(st.integers(lo, hi)), qdtype), {}
    return build


def _qdtype(name):
    return getattr(torch, name)


def _roundtrip_tensor(x, scale, zp, qdtype):
    return torch.dequantize(torch.quantize_per_tensor(x, scale, zp, _qdtype(qdtype)))


def _roundtrip_channel(x, scales, zps, axis, qdtype):
    return torch.dequantize(torch.quantize_per_channel(x, scales, zps, axis, _qdtype(qdtype)))


def _int_repr(x, scale, zp, qdtype):
    return torch.quantize_per_tensor(x, scale, zp, _qdtype(qdtype)).int_repr()


def _channel_qparams(method):
    def fn(x, scales, zps, axis, qdtype):
        return getattr(torch.quantize_per_channel(x, scales, zps, axis, _qdtype(qdtype)), method)()
    return fn


def _dynamic(draw):
    x = TensorArg(draw(shapes(min_rank=1, max_rank=4)), "float32")
    return (x, draw(st.sampled_from(["quint8", "qint8"])), draw(st.booleans())), {}


def q(name, build, fn, *, dtypes=FQ_DTYPES, ranks=(0, 4), **fields):
    return spec(name, examples(build), fn=fn, dtypes=dtypes, ranks=ranks,
                **fields)


SPECS = [
    q("fake_quantize_per_tensor_affine", _per_tensor(), torch.fake_quantize_per_tensor_affine),
    q("fake_quantize_per_tensor_affine_tensor_qparams", _per_tensor(tensor_qparams=True),
      torch.fake_quantize_per_tensor_affine, aten=("fake_quantize_per_tensor_affine",)),
    q("fake_quantize_per_channel_affine", _per_channel(), torch.fake_quantize_per_channel_affine,
      ranks=(1, 4)),
    q("fake_quantize_per_tensor_affine_cachemask", _per_tensor(),
      torch.ops.aten.fake_quantize_per_tensor_affine_cachemask, fixed={"scale": _SCALE}),
    q("fake_quantize_per_channel_affine_cachemask", _per_channel(),
      torch.ops.aten.fake_quantize_per_channel_affine_cachemask, ranks=(1, 4)),
    q("fused_moving_avg_obs_fake_quant", _fused_observer, torch.fused_moving_avg_obs_fake_quant,
      dtypes=("float32",), ranks=(1, 3)),
    q("quantize_per_tensor", _quantize(), _roundtrip_tensor, dtypes=("float32",),
      aten=("quantize_per_tensor", "dequantize"), fixed={"scale": _SCALE}),
    q("quantize_per_channel", _quantize(per_channel=True), _roundtrip_channel,
      dtypes=("float32",), ranks=(1, 4), aten=("quantize_per_channel", "dequantize")),
    q("quantize_per_tensor_dynamic", _dynamic,
      lambda x, qdtype, reduce_range: torch.dequantize(
          torch.quantize_per_tensor_dynamic(x, _qdtype(qdtype), reduce_range)),
      dtypes=("float32",), ranks=(1, 4), aten=("quantize_per_tensor_dynamic", "dequantize")),
    q("int_repr", _quantize(), _int_repr, dtypes=("float32",)),
    q("q_per_channel_scales", _quantize(per_channel=True),
      _channel_qparams("q_per_channel_scales"), dtypes=("float32",), ranks=(1, 4)),
    q("q_per_channel_zero_points", _quantize(per_channel=True),
      _channel_qparams("q_per_channel_zero_points"), dtypes=("float32",), ranks=(1, 4)),
]

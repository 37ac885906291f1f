"""Ternary and miscellaneous pointwise math: clamping, interpolation, fused
multiply-add, NaN/inf predicates and repairs, complex parts."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import (ALL, BOOL, COMPLEX, EDGE_FLOATS, FLOAT, NUMERIC, binary, optional,
                              spec, unary)
from opsweep.model import TensorArg
from opsweep.catalog.strategies import broadcast_shapes, examples, shapes

F32_64 = ("float32", "float64")


def _operand(draw, dtype, shape):
    """A tensor operand; float ones draw their elements from EDGE_FLOATS one time in four."""
    picks = EDGE_FLOATS if dtype in FLOAT and draw(st.integers(0, 3)) == 0 else None
    return TensorArg(shape, dtype, choices=picks)


def _bound(draw, dtype):
    if dtype in FLOAT:
        return draw(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]))
    return draw(st.integers(-3, 3))


def _clamp(which, bounds):
    """`which`: 'both' (min and/or max, at least one), 'min' or 'max' (one
    positional bound); `bounds`: 'scalar' or 'tensor' (broadcasting to x)."""
    def build(draw):
        dtype = draw(st.sampled_from(NUMERIC))
        shape = draw(shapes())
        x = _operand(draw, dtype, shape)

        def one():
            if bounds == "scalar":
                return _bound(draw, dtype)
            return TensorArg(draw(broadcast_shapes(shape)), dtype, -1.5, 1.5)

        if which != "both":
            return (x, one()), {}
        present = draw(st.sampled_from([("min",), ("max",), ("min", "max")]))
        return (x,), {k: one() for k in present}
    return examples(build)


def _lerp(weight):
    def build(draw):
        dtype = draw(st.sampled_from(FLOAT + COMPLEX))
        shape = draw(shapes())
        start, end = TensorArg(shape, dtype), TensorArg(draw(broadcast_shapes(shape)), dtype)
        if draw(st.booleans()):
            start, end = end, start
        if weight == "scalar":
            w = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5]))
        else:
            w = TensorArg(draw(broadcast_shapes(shape)), dtype, 0.0, 1.0)
        return (start, end, w), {}
    return examples(build)


def _addc(dtypes, *, divisor: bool):
    """self + value * t1 (* or /) t2; any of the three may carry the full shape."""
    def build(draw):
        dtype = draw(st.sampled_from(dtypes))
        shape = draw(shapes())
        lead = draw(st.integers(0, 2))
        sides = [shape if i == lead else draw(broadcast_shapes(shape)) for i in range(3)]
        low, high = (0.5, 4.0) if divisor else (None, None)
        parts = (TensorArg(sides[0], dtype), TensorArg(sides[1], dtype),
                 TensorArg(sides[2], dtype, low, high))
        kwargs = {}
        if draw(st.booleans()):
            kwargs["value"] = draw(st.sampled_from([0.5, -1.0, 2.0] if dtype in FLOAT + COMPLEX
                                                   else [2, -1]))
        return parts, kwargs
    return examples(build)


NAN_TO_NUM = {k: optional(st.sampled_from(v)) for k, v in
              {"nan": [0.0, 2.0], "posinf": [1e4, 7.0], "neginf": [-1e4, -7.0]}.items()}

SPECS = [
    spec("clamp", _clamp("both", "scalar"), fn=torch.clamp, dtypes=NUMERIC),
    spec("clamp_tensor", _clamp("both", "tensor"), fn=torch.clamp, aten=("clamp",),
         dtypes=NUMERIC),
    spec("clip", _clamp("both", "scalar"), fn=torch.clip, dtypes=NUMERIC),
    spec("clip_tensor", _clamp("both", "tensor"), fn=torch.clip, aten=("clip",),
         dtypes=NUMERIC),
    spec("clamp_min", _clamp("min", "scalar"), fn=torch.clamp_min, dtypes=NUMERIC),
    spec("clamp_min_tensor", _clamp("min", "tensor"), fn=torch.clamp_min, aten=("clamp_min",),
         dtypes=NUMERIC),
    spec("clamp_max", _clamp("max", "scalar"), fn=torch.clamp_max, dtypes=NUMERIC),
    spec("clamp_max_tensor", _clamp("max", "tensor"), fn=torch.clamp_max, aten=("clamp_max",),
         dtypes=NUMERIC),
    spec("lerp", _lerp("scalar"), fn=torch.lerp, dtypes=FLOAT + COMPLEX),
    spec("lerp_tensor", _lerp("tensor"), fn=torch.lerp, aten=("lerp",), dtypes=FLOAT + COMPLEX),
    spec("addcmul", _addc(NUMERIC + COMPLEX, divisor=False), fn=torch.addcmul,
         dtypes=NUMERIC + COMPLEX),
    spec("addcdiv", _addc(FLOAT + COMPLEX, divisor=True), fn=torch.addcdiv,
         dtypes=FLOAT + COMPLEX),
    unary("nan_to_num", dtypes=ALL + COMPLEX, edges=EDGE_FLOATS, params=NAN_TO_NUM),
    unary("isnan", dtypes=ALL + COMPLEX, edges=EDGE_FLOATS),
    unary("isinf", dtypes=ALL + COMPLEX, edges=EDGE_FLOATS),
    unary("isfinite", dtypes=ALL + COMPLEX, edges=EDGE_FLOATS),
    unary("isposinf", dtypes=ALL, edges=EDGE_FLOATS),
    unary("isneginf", dtypes=ALL, edges=EDGE_FLOATS),
    unary("isreal", dtypes=ALL + COMPLEX, edges=EDGE_FLOATS),
    unary("signbit", dtypes=ALL, edges=EDGE_FLOATS),
    binary("complex", dtypes=F32_64, scalar_other=False, edges=EDGE_FLOATS),
    binary("polar", dtypes=F32_64, scalar_other=False, min_value=0.0, max_value=4.0,
           other_min_value=-4.0, other_max_value=4.0),
    unary("real", dtypes=FLOAT + COMPLEX),
    unary("imag", dtypes=COMPLEX),
    unary("conj", fn=lambda x: torch.conj(x).resolve_conj(), dtypes=COMPLEX),
    unary("conj_physical", dtypes=NUMERIC + BOOL + COMPLEX),
    unary("resolve_conj", dtypes=NUMERIC + BOOL + COMPLEX),
    unary("resolve_neg", fn=lambda x: torch.resolve_neg(torch.conj(x).imag), dtypes=COMPLEX),
]

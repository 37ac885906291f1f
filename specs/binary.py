"""Elementwise binary arithmetic, with broadcasting and Scalar overloads."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import (BOOL, COMPLEX, EDGE_FLOATS, FLOAT, INTEGRAL, NUMERIC, SIGNED_ZEROS,
                              binary, draw_scalar, optional, spec, unary)
from opsweep.model import TensorArg
from opsweep.catalog.strategies import broadcast_shapes, examples, shapes

ALPHA = {"alpha": optional(st.sampled_from([1, 2]))}


def _ldexp_int_exponent(draw):
    """ldexp's usual call: a float mantissa and an integer exponent tensor."""
    shape = draw(shapes())
    x = TensorArg(shape, draw(st.sampled_from(FLOAT)))
    e = TensorArg(draw(broadcast_shapes(shape)), draw(st.sampled_from(INTEGRAL)), -3, 4)
    return (x, e), {}


def _remainder(draw):
    """remainder(x, other) with a divisor of either sign (the result takes the divisor's
    sign, unlike fmod's), never zero (an integer division by zero raises); the divisor is
    a Python scalar (the Scalar overload) one example in four."""
    dtype = draw(st.sampled_from(NUMERIC))
    shape = draw(shapes())
    x = TensorArg(shape, dtype)
    lo, hi = (1, 5) if draw(st.booleans()) else (-5, -1)
    if draw(st.integers(0, 3)) == 0:
        return (x, draw_scalar(draw, dtype, lo, hi)), {}
    other = TensorArg(draw(broadcast_shapes(shape)), dtype, lo, hi)
    if draw(st.booleans()):  # broadcasting from either side
        x, other = TensorArg(other.shape, dtype), TensorArg(x.shape, dtype, lo, hi)
    return (x, other), {}


SPECS = [
    binary("add", dtypes=NUMERIC + COMPLEX, params=ALPHA),
    binary("sub", dtypes=NUMERIC + COMPLEX, params=ALPHA),
    binary("subtract", dtypes=NUMERIC + COMPLEX, params=ALPHA),
    binary("rsub", dtypes=NUMERIC + COMPLEX, params=ALPHA),
    binary("mul", dtypes=NUMERIC + BOOL + COMPLEX),
    binary("multiply", dtypes=NUMERIC + BOOL + COMPLEX),
    binary("div", dtypes=NUMERIC + BOOL + COMPLEX, other_min_value=0.5, other_max_value=4.0),
    binary("divide", dtypes=NUMERIC, other_min_value=1.0, other_max_value=4.0,
           params={"rounding_mode": optional(st.sampled_from(["trunc", "floor"]))}),
    binary("true_divide", dtypes=NUMERIC + BOOL + COMPLEX, other_min_value=0.5,
           other_max_value=4.0),
    binary("div_trunc", fn=lambda a, b: torch.div(a, b, rounding_mode="trunc"), aten=("div",),
           dtypes=NUMERIC, other_min_value=1.0, other_max_value=4.0,
           fixed={"rounding_mode": "a second spec measures the other value (see div_floor); "
                                   "None (true division) is measured by div"}),
    binary("div_floor", fn=lambda a, b: torch.div(a, b, rounding_mode="floor"), aten=("div",),
           dtypes=NUMERIC, other_min_value=1.0, other_max_value=4.0,
           fixed={"rounding_mode": "a second spec measures the other value (see div_trunc); "
                                   "None (true division) is measured by div"}),
    spec("remainder", examples(_remainder), fn=torch.remainder, dtypes=NUMERIC),
    unary("remainder_scalar_self", fn=lambda x, s: torch.remainder(s, x), aten=("remainder",),
          dtypes=NUMERIC, min_value=1, max_value=5, params={"s": st.sampled_from([-7, 3])}),
    binary("fmod", dtypes=NUMERIC, other_min_value=1, other_max_value=5),
    binary("floor_divide", dtypes=NUMERIC, other_min_value=1, other_max_value=5),
    binary("pow", dtypes=FLOAT + COMPLEX, min_value=0.1, max_value=4.0, other_min_value=-2.0,
           other_max_value=3.0),
    binary("pow_int", fn=torch.pow, aten=("pow",), dtypes=INTEGRAL, min_value=-4,
           max_value=5, other_min_value=0, other_max_value=4),
    unary("pow_scalar_base", fn=lambda x, base: torch.pow(base, x), aten=("pow",),
          dtypes=NUMERIC, min_value=0, max_value=4, params={"base": st.sampled_from([2, 0.5])}),
    binary("float_power", dtypes=NUMERIC + COMPLEX, min_value=0.1, max_value=4.0,
           other_min_value=-2.0, other_max_value=3.0),
    binary("atan2", dtypes=NUMERIC, scalar_other=False, edges=SIGNED_ZEROS),
    binary("arctan2", dtypes=NUMERIC, scalar_other=False, edges=SIGNED_ZEROS),
    binary("maximum", dtypes=NUMERIC + BOOL, scalar_other=False, edges=EDGE_FLOATS),
    binary("minimum", dtypes=NUMERIC + BOOL, scalar_other=False, edges=EDGE_FLOATS),
    binary("max_other", fn=torch.max, aten=("max",), dtypes=NUMERIC + BOOL,
           scalar_other=False, edges=EDGE_FLOATS),
    binary("min_other", fn=torch.min, aten=("min",), dtypes=NUMERIC + BOOL,
           scalar_other=False, edges=EDGE_FLOATS),
    binary("fmax", dtypes=NUMERIC + BOOL, scalar_other=False, edges=EDGE_FLOATS),
    binary("fmin", dtypes=NUMERIC + BOOL, scalar_other=False, edges=EDGE_FLOATS),
    binary("hypot", dtypes=FLOAT, scalar_other=False, edges=EDGE_FLOATS),
    binary("copysign", dtypes=NUMERIC + BOOL, edges=EDGE_FLOATS),
    binary("nextafter", dtypes=FLOAT, scalar_other=False, edges=EDGE_FLOATS),
    binary("heaviside", dtypes=NUMERIC + BOOL, scalar_other=False, edges=EDGE_FLOATS),
    binary("logaddexp", dtypes=FLOAT + COMPLEX, scalar_other=False, edges=EDGE_FLOATS),
    binary("logaddexp2", dtypes=FLOAT, scalar_other=False, edges=EDGE_FLOATS),
    binary("xlogy", dtypes=NUMERIC + BOOL, other_min_value=0.0, other_max_value=4.0,
           edges=EDGE_FLOATS),
    unary("xlogy_scalar_self", fn=lambda x, s: torch.xlogy(s, x), aten=("xlogy",),
          dtypes=NUMERIC, min_value=0.0, max_value=4.0, params={"s": st.sampled_from([0, 2.5])},
          edges=EDGE_FLOATS),
    binary("ldexp", dtypes=NUMERIC, scalar_other=False, other_min_value=-3, other_max_value=4),
    spec("ldexp_int_exponent", examples(_ldexp_int_exponent), fn=torch.ldexp, aten=("ldexp",)),
    binary("igamma", dtypes=FLOAT, scalar_other=False, min_value=0.1, max_value=5.0),
    binary("igammac", dtypes=FLOAT, scalar_other=False, min_value=0.1, max_value=5.0),
    binary("gcd", dtypes=INTEGRAL, scalar_other=False),
    binary("lcm", dtypes=INTEGRAL, scalar_other=False),
    binary("bitwise_and", dtypes=INTEGRAL + BOOL),
    binary("bitwise_or", dtypes=INTEGRAL + BOOL),
    binary("bitwise_xor", dtypes=INTEGRAL + BOOL),
    binary("bitwise_left_shift", dtypes=INTEGRAL, other_min_value=0, other_max_value=5),
    binary("bitwise_right_shift", dtypes=INTEGRAL, other_min_value=0, other_max_value=5),
    binary("logical_and", dtypes=NUMERIC + BOOL + COMPLEX, scalar_other=False),
    binary("logical_or", dtypes=NUMERIC + BOOL + COMPLEX, scalar_other=False),
    binary("logical_xor", dtypes=NUMERIC + BOOL + COMPLEX, scalar_other=False),
]

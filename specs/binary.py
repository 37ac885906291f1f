"""Elementwise binary arithmetic, with broadcasting and Scalar overloads."""

import torch
from hypothesis import strategies as st

from opsweep.families import FLOAT, INTEGRAL, NUMERIC, SIGNED_ZEROS, binary, optional

SPECS = [
    binary("add", params={"alpha": optional(st.sampled_from([1, 2]))}),
    binary("sub", params={"alpha": optional(st.sampled_from([1, 2]))}),
    binary("mul", dtypes=NUMERIC + ("bool",)),
    binary("div", dtypes=FLOAT, other_min_value=0.5, other_max_value=4.0),
    binary("div_trunc", fn=lambda a, b: torch.div(a, b, rounding_mode="trunc"), aten=("div",),
           dtypes=FLOAT, scalar_other=False, other_min_value=0.5, other_max_value=4.0),
    binary("remainder", dtypes=FLOAT + INTEGRAL, other_min_value=1, other_max_value=5),
    binary("fmod", dtypes=FLOAT + INTEGRAL, other_min_value=1, other_max_value=5),
    binary("pow", dtypes=FLOAT, min_value=0.1, max_value=4.0, other_min_value=-2.0,
           other_max_value=3.0),
    binary("atan2", dtypes=FLOAT, scalar_other=False, edges=SIGNED_ZEROS),
    binary("maximum", scalar_other=False),
    binary("minimum", scalar_other=False),
    binary("hypot", dtypes=("float32", "float64"), scalar_other=False),
    binary("bitwise_and", dtypes=INTEGRAL + ("bool",)),
    binary("bitwise_or", dtypes=INTEGRAL + ("bool",)),
    binary("bitwise_xor", dtypes=INTEGRAL + ("bool",)),
    binary("logical_and", dtypes=NUMERIC + ("bool",), scalar_other=False),
    binary("logical_or", dtypes=NUMERIC + ("bool",), scalar_other=False),
    binary("floor_divide", dtypes=FLOAT + INTEGRAL, other_min_value=1, other_max_value=5),
]

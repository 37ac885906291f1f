"""torch.nn.functional activations."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import activation, optional, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import dims, examples, shapes

#: aten::elu's scale/input_scale: F.elu passes 1 for both (selu is its own operator)
_ELU_INTERNAL = "an internal argument of aten::elu, not reachable from F.elu (always 1)"
_HALF_TO_FLOAT = ("eager CPU rejects True (softmax with half to float conversion is not "
                  "supported on CPU); the public call passes False")
#: rrelu in training draws random slopes: eager and the export cannot agree element-wise
_RRELU_TRAINING = ("True draws random slopes per call, so outputs cannot be compared with "
                   "eager; the spec measures the deterministic eval path")

SPECS = [
    activation("relu"),
    activation("relu6"),
    activation("leaky_relu", params={"negative_slope": optional(st.sampled_from([0.01, 0.2]))}),
    activation("elu", params={"alpha": optional(st.sampled_from([1.0, 0.5]))},
               fixed={"scale": _ELU_INTERNAL, "input_scale": _ELU_INTERNAL}),
    activation("selu"),
    activation("celu", params={"alpha": optional(st.sampled_from([1.0, 0.5, -1.0]))}),
    activation("gelu", params={"approximate": optional(st.sampled_from(["none", "tanh"]))}),
    activation("silu"),
    activation("mish"),
    activation("softplus", params={"beta": optional(st.sampled_from([1.0, 2.0])),
                                   "threshold": optional(st.sampled_from([20.0, 0.0]))}),
    activation("hardsigmoid"),
    activation("hardswish"),
    activation("hardtanh", params={"min_val": optional(st.sampled_from([-1.0, 0.0])),
                                   "max_val": optional(st.sampled_from([1.0, float("inf")]))}),
    activation("logsigmoid", aten=("log_sigmoid",)),
    activation("softmax", min_rank=1, params={"dim": st.sampled_from([-1, 0])},
               fixed={"half_to_float": _HALF_TO_FLOAT}),
    activation("log_softmax", min_rank=1, params={"dim": st.sampled_from([-1, 0])},
               fixed={"half_to_float": _HALF_TO_FLOAT}),
]


def _prelu(draw):
    dtype = draw(st.sampled_from(("float32", "float64", "float16", "bfloat16")))
    shape = draw(shapes(min_rank=1, max_rank=4))
    channels = shape[1] if len(shape) > 1 and draw(st.booleans()) else 1
    return (TensorArg(shape, dtype), TensorArg((channels,), dtype, 0.0, 0.5)), {}


def _glu(draw):
    dtype = draw(st.sampled_from(("float32", "float64", "float16", "bfloat16")))
    shape = list(draw(shapes(min_rank=1, max_rank=4, max_side=4)))
    dim = draw(dims(len(shape)))
    shape[dim] *= 2
    return (TensorArg(tuple(shape), dtype),), {"dim": dim}


def _rrelu_with_noise(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    shape = draw(shapes(min_rank=0, max_rank=4))
    lower, upper = draw(st.sampled_from([(0.125, 1 / 3), (0.1, 0.3), (0.0, 0.0)]))
    return (TensorArg(shape, dtype), TensorArg(shape, dtype), lower, upper), {}


SPECS += [
    activation("hardshrink", params={"lambd": optional(st.sampled_from([0.5, 1.0]))}),
    activation("softshrink", params={"lambd": optional(st.sampled_from([0.5, 0.0]))}),
    activation("threshold", params={"threshold": st.sampled_from([0.0, 0.5]),
                                    "value": st.sampled_from([0.0, -1.0])}),
    activation("rrelu", fn=lambda x, **kw: F.rrelu(x, training=False, **kw),
               params={"lower": optional(st.just(0.1)), "upper": optional(st.just(0.3))},
               aten=("rrelu", "rrelu_with_noise"), mode="inference",
               fixed={"training": _RRELU_TRAINING}),
    spec("rrelu_with_noise", examples(_rrelu_with_noise),
         fn=lambda x, noise, lo, hi: torch.ops.aten.rrelu_with_noise(x, noise, lo, hi, False),
         dtypes=("float32", "float64"), mode="inference", fixed={"training": _RRELU_TRAINING}),
    spec("rrelu_with_noise_functional", examples(_rrelu_with_noise),
         fn=lambda x, noise, lo, hi: torch.ops.aten.rrelu_with_noise_functional(
             x, noise, lo, hi, False), dtypes=("float32", "float64"),
         mode="inference", fixed={"training": _RRELU_TRAINING}),
    spec("prelu", examples(_prelu), fn=F.prelu, ranks=(1, 4)),
    spec("glu", examples(_glu), fn=F.glu, ranks=(1, 4)),
    activation("softmin", min_rank=1, params={"dim": st.sampled_from([-1, 0])},
               aten=("softmax",), fixed={"half_to_float": _HALF_TO_FLOAT}),
    activation("special_softmax", fn=torch.special.softmax, min_rank=1,
               params={"dim": st.sampled_from([-1, 0])}, traces={"special_softmax": ("softmax",)}),
    activation("special_log_softmax", fn=torch.special.log_softmax, min_rank=1,
               params={"dim": st.sampled_from([-1, 0])},
               traces={"special_log_softmax": ("log_softmax",)}),
    activation("log_sigmoid_forward", fn=torch.ops.aten.log_sigmoid_forward),
]

"""torch.nn.functional activations."""

from hypothesis import strategies as st

from opsweep.families import activation, optional

SPECS = [
    activation("relu"),
    activation("relu6"),
    activation("leaky_relu", params={"negative_slope": optional(st.sampled_from([0.01, 0.2]))}),
    activation("elu", params={"alpha": optional(st.sampled_from([1.0, 0.5]))}),
    activation("selu"),
    activation("celu"),
    activation("gelu", params={"approximate": optional(st.sampled_from(["none", "tanh"]))}),
    activation("silu"),
    activation("mish"),
    activation("softplus", params={"beta": optional(st.sampled_from([1.0, 2.0]))}),
    activation("hardsigmoid"),
    activation("hardswish"),
    activation("hardtanh"),
    activation("logsigmoid", aten=("log_sigmoid",)),
    activation("softmax", min_rank=1, params={"dim": st.sampled_from([-1, 0])}),
    activation("log_softmax", min_rank=1, params={"dim": st.sampled_from([-1, 0])}),
]

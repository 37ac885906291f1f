"""The dynamic axis ties only the inputs that really carry the batch.

A weight whose first side happens to equal the batch size used to be declared
dynamic with the batch: the exporter then fixed every shape and the run at the
second size failed ("Got invalid dimensions for input"), a failure of the plan,
not of the exporter. Shown here (torch 2.13.0) on `bilinear` with batch 1 and
out_features 1 and `_native_batch_norm_legit` with N = C = 2: the axis now
reports what the public call with the right plan does.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from opsweep.engine.fastpath import make_exporter
from opsweep.artifact.grade import dynamic_regressed
from opsweep.model import Example, Stage, TensorArg
from opsweep.engine.runner import (
    DynamicPlan,
    build_call,
    choose_plan,
    dynamic_shapes,
    materialize,
    resize,
    target_of,
)
from opsweep.engine.group import run_group

pytestmark = pytest.mark.integration

F64, F32 = "float64", "float32"
CASES = {  # spec -> (example with coincident sizes, the inputs that truly carry the batch)
    "bilinear": (Example((TensorArg((1, 3), F64), TensorArg((1, 2), F64),
                          TensorArg((1, 3, 2), F64), TensorArg((1,), F64)), seed=1), {0, 1}),
    "native_batch_norm_legit": (Example((
        TensorArg((2, 2, 3), F32), TensorArg((2,), F32), TensorArg((2,), F32),
        TensorArg((2,), F32), TensorArg((2,), F32), True, 0.1, 1e-5), seed=1), {0}),
}


def _public_call(spec, example, inputs: set[int]) -> tuple[list[np.ndarray], list[torch.Tensor]]:
    """torch.onnx.export with only `inputs` dynamic, run in onnxruntime at the second size:
    (onnxruntime's outputs, eager PyTorch's) -- independently of opsweep's runner."""
    target = target_of(spec, build_call(spec, example))
    traced_args, traced_kwargs = materialize(resize(example, frozenset(inputs), 2))
    grown_args, grown_kwargs = materialize(resize(example, frozenset(inputs), 3))
    tensors = [a for a in traced_args if isinstance(a, torch.Tensor)]
    grown = [a for a in grown_args if isinstance(a, torch.Tensor)]
    rest = [a for a in traced_args if not isinstance(a, torch.Tensor)]

    class Module(torch.nn.Module):
        def forward(self, *xs):
            return target(*xs, *rest)

    batch = torch.export.Dim("batch", min=2)
    shapes = (tuple({0: batch} if k in inputs else None for k in range(len(tensors))),)
    model = torch.onnx.export(Module().eval(), tuple(tensors), dynamo=True,
                              dynamic_shapes=shapes).model_proto
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: t.numpy() for i, t in zip(session.get_inputs(), grown)}
    expected = target(*grown_args, **grown_kwargs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    return session.run(None, feeds), [e for e in expected if isinstance(e, torch.Tensor)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_plan_ties_only_the_inputs_that_carry_the_batch(specs, name):
    spec = specs[name]
    example, truth = CASES[name]
    plan, _, why = choose_plan(spec, target_of(spec, build_call(spec, example)), example)
    assert plan is not None, why
    assert set(plan.inputs) == truth
    coincident = {k for k, t in enumerate(example.tensors) if t.shape[0] == example.tensors[0].shape[0]}
    assert coincident > truth  # the sizes do coincide: the old plan tied them all


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_axis_reports_what_the_public_call_with_the_right_plan_does(specs, name):
    spec = specs[name]
    example, truth = CASES[name]
    actual, expected = _public_call(spec, example, truth)  # exports, checks and runs: no raise
    assert [a.shape for a in actual] == [tuple(e.shape) for e in expected]
    (outcome,) = run_group(spec, [example], make_exporter(True), dynamic=True)
    assert outcome.stage.exported and outcome.dynamic is not None
    assert not dynamic_regressed(outcome), outcome.dynamic_error
    if outcome.stage is Stage.OK:  # static numerics pass: so do the dynamic ones, as above
        assert outcome.dynamic is Stage.OK
        for a, e in zip(actual, expected):
            np.testing.assert_allclose(a, e.numpy(), rtol=1e-4, atol=1e-5)


def test_tying_a_coincident_weight_was_a_false_failure(specs):
    """The old plan on bilinear: the weight declared dynamic with the batch fixes the
    model's shapes, so the run at the second size fails although the operator is fine."""
    spec = specs["bilinear"]
    example, _ = CASES["bilinear"]
    tied = DynamicPlan(frozenset(range(4)), 2, 3)
    target = target_of(spec, build_call(spec, example))
    traced = build_call(spec, resize(example, tied.inputs, 2))
    model = make_exporter(False).export(traced, traced.inputs,
                                        dynamic_shapes=dynamic_shapes(tied, 4))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    grown, _ = materialize(resize(example, tied.inputs, 3))
    target(*grown)  # eager PyTorch accepts the tied resize (out_features becomes 3) ...
    with pytest.raises(Exception, match="invalid dimensions"):  # ... the model does not
        session.run(None, {i.name: t.numpy() for i, t in zip(session.get_inputs(), grown)})

"""Numerics are a verdict on the model, not on the one input it was exported with (issue 50,
truth fault 2): a model traced from a data-dependent function can be a single constant that
returns the traced answer; compared only on the exported inputs it matches. The engine
compares each group on one further draw of the same signature with other values, so a
model that ignores its inputs fails numerics.

Reached under torch 2.15.0, onnx 1.23.2, onnxruntime 1.32.0.
"""

import pytest
import torch
from hypothesis import strategies as st

from opsweep.artifact.specgrade import spec_result
from opsweep.catalog.draw import PROFILES
from opsweep.engine.group import run_group
from opsweep.engine.runner import build_call
from opsweep.engine.torchscript import TorchScriptExporter
from opsweep.model import Example, Grade, Mismatch, OpSpec, Stage, TensorArg

pytestmark = pytest.mark.integration


def _through_python(x):
    return torch.tensor(x.tolist()) * 2  # the tracer records the list as a constant


def _constant_model_is_a_constant(op, example):
    """The public TorchScript trace of this call has no use of its input: the premise."""
    call = build_call(op, example)
    traced = torch.jit.trace(call, tuple(call.inputs), check_trace=False)
    other = torch.randn(3, 2, generator=torch.Generator().manual_seed(7))
    return torch.equal(traced(other), traced(*call.inputs))


def test_a_model_that_ignores_its_inputs_fails_numerics():
    op = OpSpec("through_python", ("mul",), st.nothing(), fn=_through_python)
    example = Example((TensorArg((3, 2), "float32"),), seed=3)
    assert _constant_model_is_a_constant(op, example)
    (outcome,) = run_group(op, [example], TorchScriptExporter())
    assert outcome.stage is Stage.NUMERICS and outcome.mismatch is Mismatch.VALUES
    assert "further draw" in outcome.error
    result = spec_result(op, [outcome], PROFILES["ci"], "digest", 1)
    assert result.grades.numerics is Grade.NONE


def test_a_model_that_uses_its_inputs_still_passes():
    op = OpSpec("twice", ("mul",), st.nothing(), fn=lambda x: x * 2)
    example = Example((TensorArg((3, 2), "float32"),), seed=3)
    (outcome,) = run_group(op, [example], TorchScriptExporter())
    assert outcome.stage is Stage.OK


@pytest.mark.usefixtures("outside_project")
def test_two_sweeps_record_the_same_error_bit_for_bit(tmp_path):
    """The recorded error does not make reruns noisy: the same draws at the same pins give
    the same artifact (bar regen_index), observed error and policy included, whether the
    sweep measures in workers or in its own process (--jobs 0: a float16 reduction's error
    depends on how many threads split it, and a worker measures with one)."""
    from opsweep.artifact import data as art
    from opsweep.cli.main import main

    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, jobs in zip(paths, ("2", "0")):
        assert main(["sweep", "--only", "sin", "softmax", "add", "--jobs", jobs, "--no-reuse",
                     "--out", str(path)]) == 0
    a, b = (art.load(p) for p in paths)
    assert art.same_measurements(a, b)
    assert a.policy == "opsweep v1"
    cells = a.specs["softmax"].errors
    assert cells and {c.dtype for c in cells} >= {"float32", "float16"}
    assert all(c.ulp is not None for c in cells if c.dtype in ("float16", "bfloat16"))

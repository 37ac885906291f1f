"""The TorchScript target's failure stages, each reached by a small real module through
the engine (one signature group, as the sweep runs it) and checked against the public
call ``torch.onnx.export(..., dynamo=False)`` made directly: the error type the stage
is read from is the one the public call raises.

Reached under torch 2.15.0, onnx 1.23.2, onnxruntime 1.32.0 (2026-12-03).
"""

import io

import onnx
import pytest
import torch
from hypothesis import strategies as st

from opsweep.engine.group import run_group
from opsweep.engine.runner import build_call
from opsweep.engine.torchscript import (
    TorchScriptExporter,
    classify_torchscript_error,
    opset_for,
)
from opsweep.model import Example, Mismatch, OpSpec, Stage, TensorArg

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def exporter():
    return TorchScriptExporter()


def _int_keyed(x):
    return {1: x}  # eager PyTorch returns it; torch.jit's tracer refuses a non-string key


def _stable_sort(x):
    return torch.sort(x, stable=True)


def spec(fn, name="probe"):
    return OpSpec(name, ("probe",), st.nothing(), fn=fn)


def run(op, exporter, *args, dynamic=False, **kwargs):
    example = Example(tuple(args), tuple(sorted(kwargs.items())), seed=3)
    (outcome,) = run_group(op, [example], exporter, dynamic=dynamic)
    return outcome, example


def public(op, example):
    """The public call on the very module and inputs the engine exported: the model, or
    what it raised."""
    call = build_call(op, example)
    buffer = io.BytesIO()
    try:
        torch.onnx.export(call, tuple(call.inputs), buffer, dynamo=False,
                          opset_version=opset_for())
    except Exception as exc:  # noqa: BLE001 - whatever it raised is the finding
        return exc
    return onnx.load_from_string(buffer.getvalue())


def f32(*shape, dtype="float32"):
    return TensorArg(shape, dtype)


def test_ok_and_the_opset_it_used(exporter):
    op = spec(torch.sin)
    outcome, example = run(op, exporter, f32(2, 3), dynamic=True)
    assert outcome.stage is Stage.OK and outcome.dynamic is Stage.OK
    model = public(op, example)
    assert [o.version for o in model.opset_import if o.domain == ""] == [exporter.opset]


def test_no_translation_is_the_symbolic_registry_having_nothing(exporter):
    op = spec(torch.searchsorted)
    outcome, example = run(op, exporter, f32(5), f32(3))
    assert outcome.stage is Stage.NO_TRANSLATION
    assert outcome.error.startswith("UnsupportedOperatorError:") and "aten::searchsorted" in outcome.error
    assert isinstance(public(op, example), torch.onnx.errors.UnsupportedOperatorError)


def test_translation_error_is_a_symbolic_refusal(exporter):
    op = spec(torch.nn.functional.interpolate)
    outcome, example = run(op, exporter, f32(1, 1, 4, 4), scale_factor=1.5, mode="area")
    assert outcome.stage is Stage.TRANSLATION_ERROR
    assert outcome.error.startswith("SymbolicValueError:")
    assert isinstance(public(op, example), torch.onnx.errors.SymbolicValueError)


def test_translation_error_from_another_exporter_error(exporter):
    op = spec(_stable_sort)
    outcome, example = run(op, exporter, f32(3, 4))
    assert outcome.stage is Stage.TRANSLATION_ERROR
    raised = public(op, example)
    assert type(raised) is torch.onnx.errors.OnnxExporterError
    assert classify_torchscript_error(raised) is Stage.TRANSLATION_ERROR


def test_capture_is_a_tracer_failure(exporter):
    op = spec(_int_keyed)
    outcome, example = run(op, exporter, f32(2, 3))
    assert outcome.stage is Stage.CAPTURE  # graded blocked: not an ONNX verdict
    raised = public(op, example)
    assert type(raised) is RuntimeError and not isinstance(raised, torch.onnx.errors.OnnxExporterError)


def test_raw_error_is_anything_else_escaping(exporter, capfd):
    op = spec(torch.sin)
    outcome, example = run(op, exporter, f32(2, 3, dtype="complex64"))
    # the C++ side prints both graphs to file descriptor 1 on this refusal ("ONNX graph
    # being constructed during exception"); a sweep's progress must not get them
    assert "graph" not in capfd.readouterr().out
    assert outcome.stage is Stage.RAW_ERROR
    assert outcome.error == "RuntimeError: ScalarType ComplexFloat is an unexpected tensor scalar type"
    raised = public(op, example)
    assert type(raised) is RuntimeError


def test_checker_rejects_what_it_exported(exporter):
    op = spec(torch.sin)
    outcome, example = run(op, exporter, f32(2, 3, dtype="int32"))
    assert outcome.stage is Stage.CHECKER and "ShapeInferenceError" in outcome.error
    model = public(op, example)  # the public call itself exports it
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.checker.check_model(model, full_check=True)


def test_runtime_refuses_what_it_exported(exporter):
    op = spec(torch.relu)
    outcome, _ = run(op, exporter, f32(2, 3, dtype="bfloat16"))
    assert outcome.stage is Stage.RUNTIME and "NOT_IMPLEMENTED" in outcome.error


def test_numerics_with_the_same_tolerances(exporter):
    op = spec(torch.cdist)
    outcome, _ = run(op, exporter, f32(5, 5, dtype="float64"), f32(2, 5, dtype="float64"))
    assert outcome.stage is Stage.NUMERICS and outcome.mismatch is Mismatch.VALUES
    assert "rtol=1e-07" in outcome.error


def test_the_dynamic_axis_goes_through_dynamic_axes(exporter):
    op = spec(torch.add)
    x, y = f32(3, 4), f32(3, 4)
    model = exporter.export(build_call(op, Example((x, y), seed=1)),
                            (torch.randn(3, 4), torch.randn(3, 4)),
                            dynamic_shapes=(({0: torch.export.Dim("batch")}, None),))
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in model.graph.input]
    assert dims == [["batch", 4], [3, 4]]
    outcome, _ = run(op, exporter, x, y, dynamic=True)
    assert outcome.stage is Stage.OK and outcome.dynamic is Stage.OK

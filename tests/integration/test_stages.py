"""Each failure stage, reached by a real operator in the installed torch.

Which torch showed it: every stage below was reached by the same operator and example under
torch 2.11.0, 2.13.0 and 2.15.0 (this file run in each, with onnx 1.23.2, onnxruntime 1.32.0
and onnxscript 0.7.2, on 2026-12-01). A bump that moves one of them fails here first.
"""

import pytest
import torch

from opsweep.engine.adapter import Exporter
from opsweep.model import Example, Stage, TensorArg
from opsweep.engine.group import run_group

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def exporter():
    return Exporter()


def run(spec, exporter, *args, **kwargs):
    example = Example(tuple(args), tuple(sorted(kwargs.items())), seed=3)
    (outcome,) = run_group(spec, [example], exporter)
    return outcome


def f32(*shape, **kw):
    return TensorArg(shape, "float32", **kw)


def test_ok(specs, exporter):
    assert run(specs["sin"], exporter, f32(2, 3)).stage is Stage.OK


def test_capture_torch_equal(specs, exporter):
    o = run(specs["equal"], exporter, f32(2), f32(2))
    assert o.stage is Stage.CAPTURE
    assert "aten.equal" in o.error


def test_no_translation_cdist(specs, exporter):
    o = run(specs["cdist"], exporter, f32(3, 2), f32(4, 2))
    assert o.stage is Stage.NO_TRANSLATION
    assert o.error.startswith("DispatchError: No ONNX function found") and "_cdist_forward" in o.error


def test_checker_cos_bfloat16(specs, exporter):
    o = run(specs["cos"], exporter, TensorArg((2, 3), "bfloat16"))
    assert o.stage is Stage.CHECKER
    assert "bfloat16" in o.error and o.signature == "bf16[2,3]"


def test_runtime_atan2_float64(specs, exporter):
    o = run(specs["atan2"], exporter, TensorArg((2,), "float64"), TensorArg((2,), "float64"))
    assert o.stage is Stage.RUNTIME
    assert "NOT_IMPLEMENTED" in o.error


def test_numerics_atan2_signed_zero(specs, exporter):
    o = run(specs["atan2"], exporter, f32(3, choices=(0.0,)), f32(3, choices=(-1.0,)))
    assert o.stage is Stage.NUMERICS
    assert "3/3 elements differ" in o.error and "6.28" in o.error


def test_translation_error_from_a_translation_that_raises(specs):
    def broken_sin(x):
        raise ValueError("this translation is broken on purpose")
    exporter = Exporter(custom_translation_table={torch.ops.aten.sin.default: broken_sin})
    o = run(specs["sin"], exporter, f32(2))
    assert o.stage is Stage.TRANSLATION_ERROR
    assert "broken on purpose" in o.error


def test_invalid_example_is_a_spec_bug_not_an_exporter_verdict(specs, exporter):
    o = run(specs["mm"], exporter, f32(2, 3), f32(2, 3))
    assert o.stage is Stage.INVALID


def test_one_export_serves_every_value_draw_of_a_signature(specs, exporter):
    calls = []

    class Counting(Exporter):
        def export(self, module, args):
            calls.append(1)
            return super().export(module, args)

    group = [Example((f32(4),), seed=s) for s in range(5)]
    outcomes = run_group(specs["sin"], group, Counting())
    assert [o.stage for o in outcomes] == [Stage.OK] * 5 and len(calls) == 1

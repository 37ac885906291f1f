"""The fast path must give the same outcome as the public call, stage for stage."""

import pytest
import torch

from opsweep.adapter import PUBLIC_PATH, Exporter
from opsweep.draw import PROFILES, draw_examples, group_by_signature
from opsweep.fastpath import FAST_PATH, FastExporter, fast_path_available, make_exporter
from opsweep.model import Example, Stage, TensorArg
from opsweep.runner import build_call, run_group

pytestmark = pytest.mark.integration


def f(*shape, dtype="float32", **kw):
    return TensorArg(shape, dtype, **kw)


# (spec, args) reaching every stage in torch 2.13
CASES = [
    ("sin", (f(2, 3),), Stage.OK),
    ("equal", (f(2), f(2)), Stage.CAPTURE),
    ("cdist", (f(3, 2), f(4, 2)), Stage.NO_TRANSLATION),
    ("cos", (f(2, 3, dtype="bfloat16"),), Stage.CHECKER),
    ("atan2", (f(2, dtype="float64"), f(2, dtype="float64")), Stage.RUNTIME),
    ("atan2", (f(3, choices=(0.0,)), f(3, choices=(-1.0,))), Stage.NUMERICS),
]


@pytest.fixture(scope="module")
def exporters():
    assert fast_path_available(), "torch 2.13 has the internals the fast path needs"
    return Exporter(), FastExporter()


@pytest.mark.parametrize("name, args, stage", CASES, ids=[c[2].value for c in CASES])
def test_same_outcome_at_every_stage(specs, exporters, name, args, stage):
    public, fast = exporters
    example = Example(args, seed=5)
    expected = run_group(specs[name], [example], public)
    assert expected[0].stage is stage
    assert run_group(specs[name], [example], fast) == expected


def test_same_outcome_for_a_translation_that_raises(specs):
    def broken(x):
        raise ValueError("broken on purpose")
    table = {torch.ops.aten.sin.default: broken}
    example = Example((f(2),))
    public = run_group(specs["sin"], [example], Exporter(table))
    fast = run_group(specs["sin"], [example], FastExporter(table))
    assert public == fast and public[0].stage is Stage.TRANSLATION_ERROR


@pytest.mark.parametrize("name", ["softmax", "gelu", "layer_norm", "conv2d", "max_pool2d",
                                  "index_select", "cat", "sum", "where", "batch_norm"])
def test_same_graphs_and_outcomes_on_drawn_examples(specs, exporters, name):
    public, fast = exporters
    spec = specs[name]
    for group in group_by_signature(draw_examples(spec, PROFILES["ci"]))[:3]:
        assert run_group(spec, group, fast) == run_group(spec, group, public)
        call = build_call(spec, group[0])
        try:
            want = public.export(call, call.inputs)
        except Exception:
            continue
        got = fast.export(call, call.inputs)
        assert [n.op_type for n in got.graph.node] == [n.op_type for n in want.graph.node]
        assert got.opset_import == want.opset_import


def test_fallback_is_the_public_call(monkeypatch):
    import torch.onnx._internal.exporter._decomp as decomp
    monkeypatch.delattr(decomp, "create_onnx_friendly_decomposition_table")
    from opsweep.sweep import SweepConfig
    assert not fast_path_available()
    assert SweepConfig(PROFILES["ci"]).exporter_path == PUBLIC_PATH  # and the fingerprint says so
    assert make_exporter(fast=False).path == PUBLIC_PATH
    monkeypatch.undo()
    assert SweepConfig(PROFILES["ci"]).exporter_path == FAST_PATH

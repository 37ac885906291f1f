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


def _without_metadata(model) -> bytes:
    """The model's bytes without doc strings and metadata properties (which carry stack
    traces and node provenance, not what onnxruntime runs)."""
    import onnx
    model = onnx.ModelProto.FromString(model.SerializeToString())

    def clean(holder):
        del holder.metadata_props[:]
        holder.doc_string = ""
        for node in holder.node:
            clean_node(node)

    def clean_node(node):
        del node.metadata_props[:]
        node.doc_string = ""
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                clean(attribute.g)
    del model.metadata_props[:]
    model.doc_string = ""
    clean(model.graph)
    for function in model.functions:
        del function.metadata_props[:]
        for node in function.node:
            clean_node(node)
    return model.SerializeToString()


#: specs whose first signatures skip the decomposition (one output, several outputs taken
#: by item, a reduction), and specs whose graph the table or the CIA kernels decompose
SKIPPED = ["sin", "topk", "sort", "amax", "mm", "cat"]
DECOMPOSED = ["softmax", "layer_norm", "conv2d", "batch_norm", "reshape", "linear", "max_pool2d",
              "native_batch_norm", "fractional_max_pool2d"]


@pytest.mark.parametrize("name", SKIPPED + DECOMPOSED)
def test_a_skipped_decomposition_gives_the_same_model_and_outcomes(specs, name):
    """The shortcut against the full decomposition, static and with the dynamic axis: the
    same ONNX model (bar metadata) and the same outcomes; and it is taken exactly where
    :func:`decomposes_to_itself` says, so a test on a decomposed spec cannot pass vacuously."""
    from opsweep.runner import choose_plan, dynamic_shapes, target_of
    skip, full = FastExporter(), FastExporter(skip_identity=False)
    spec = specs[name]
    for group in group_by_signature(draw_examples(spec, PROFILES["ci"]))[:2]:
        assert run_group(spec, group, skip, dynamic=True) == run_group(spec, group, full,
                                                                       dynamic=True)
        call = build_call(spec, group[0])
        before = skip.skipped
        got = _attempt(skip, call)
        assert (skip.skipped > before) is (name in SKIPPED), f"{name}: skip not as expected"
        assert got == _attempt(full, call)
        plan, traced, _ = choose_plan(spec, target_of(spec, call), group[0])
        if plan is not None:
            shapes = dynamic_shapes(plan, len(traced.inputs))
            assert _attempt(skip, traced, shapes) == _attempt(full, traced, shapes)
    assert not full.skipped


def _attempt(exporter, call, shapes=None) -> tuple[str, object]:
    """The model without its metadata, or the export's error line."""
    from opsweep.runner import error_line
    inputs = tuple(t.clone() for t in call.inputs)
    try:
        model = exporter.export(call, inputs, **({"dynamic_shapes": shapes} if shapes else {}))
    except Exception as exc:
        return "error", error_line(exc)
    return "model", _without_metadata(model)


class _InPlace(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y.add_(1)
        return y


class _UnusedItem(torch.nn.Module):
    def forward(self, x):
        return torch.topk(x.sin(), 2).values  # the decomposition drops the unused indices


class _View(torch.nn.Module):
    def forward(self, x):
        return x.transpose(0, 1) * 2


class _Cond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))


class _Buffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(3))

    def forward(self, x):
        self.count.add_(1)
        return x.sin() + self.count


class _Plain(torch.nn.Module):
    def forward(self, x):
        values, indices = torch.topk(x.sin(), 2)
        return values * x.amax(dim=1, keepdim=True), indices


class _BatchNorm(torch.nn.Module):
    def forward(self, x):  # native_batch_norm's Python kernels make it _legit_functional
        return torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)[0]


@pytest.mark.parametrize("module, expected", [
    (_Plain(), True), (_UnusedItem(), False), (_InPlace(), False), (_View(), False),
    (_Cond(), False), (_Buffer(), False), (_BatchNorm(), False),
], ids=["plain", "unused-item", "in-place", "view", "higher-order", "buffer-mutation",
        "python-kernel"])
def test_which_programs_decompose_to_themselves(module, expected):
    from opsweep.fastpath import _DECOMP_CACHE, decomposes_to_itself
    exporter = FastExporter()
    exporter.export(_Plain(), (torch.ones(2, 3),))  # fills the registry's tables
    program = torch.export.export(module, (torch.ones(2, 3),))
    assert decomposes_to_itself(program, _DECOMP_CACHE[id(exporter.registry)][3]) is expected

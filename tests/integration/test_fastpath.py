"""The fast path must give the same outcome as the public call, stage for stage."""

import pytest
import torch

from opsweep.engine.adapter import PUBLIC_PATH, Exporter
from opsweep.engine.sweepconfig import SweepConfig, Tuning
from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.engine.fastpath import (FAST_PATH, FastExporter, exporter_path, fast_path_available,
                                     make_exporter)
from opsweep.model import Example, Stage, TensorArg
from opsweep.engine.group import run_group
from opsweep.engine.runner import build_call

from ..factories import recording

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


@pytest.fixture(scope="module")
def public_static():
    """The public call's static export of a drawn group's first example (the model, or what
    the export raised), by (spec, group index). A group's public run exports exactly that
    example (its first valid one) once; the tests that compare with the public call's model
    read it here instead of making the public call do the same export again (some 0.7 s of
    CPU an export: the public call rebuilds its registry and tables on each)."""
    return {}


def _public_run(public_static, public, spec, index, group, **kw):
    """`run_group` through the public call, keeping its static export of the group's first
    example in `public_static`."""
    with recording(public) as made:
        outcomes = run_group(spec, group, public, **kw)
    if outcomes[0].stage is not Stage.INVALID:  # the run exported group[0], and once statically
        (result,) = [r for _, shapes, r in made if shapes is None]
        public_static[spec.name, index] = result
    return outcomes


def _public_model(public_static, public, spec, index, group):
    """The public call's static model of `group`'s first example (raises what it raised):
    the one its public run made, else exported now."""
    if (spec.name, index) not in public_static:
        call = build_call(spec, group[0])
        try:
            public_static[spec.name, index] = public.export(call, call.inputs)
        except Exception as exc:
            public_static[spec.name, index] = exc
    result = public_static[spec.name, index]
    if isinstance(result, Exception):
        raise result
    return result


@pytest.mark.parametrize("name", ["softmax", "gelu", "layer_norm", "conv2d", "max_pool2d",
                                  "index_select", "cat", "sum", "where", "batch_norm"])
def test_same_graphs_and_outcomes_on_drawn_examples(specs, exporters, public_static, name):
    public, fast = exporters
    spec = specs[name]
    for index, group in enumerate(group_by_signature(draw_examples(spec, PROFILES["ci"]))[:3]):
        assert run_group(spec, group, fast) == _public_run(public_static, public, spec, index,
                                                           group)
        call = build_call(spec, group[0])
        try:
            want = _public_model(public_static, public, spec, index, group)
        except Exception:
            continue
        got = fast.export(call, call.inputs)
        assert [n.op_type for n in got.graph.node] == [n.op_type for n in want.graph.node]
        assert got.opset_import == want.opset_import


def _stack_traces(model) -> list[str]:
    return [p.value for node in model.graph.node for p in node.metadata_props
            if p.key == "pkg.torch.onnx.stack_trace" and p.value]


@pytest.mark.parametrize("name", ["layer_norm", "softmax"])
def test_the_fast_path_records_no_stack_traces_and_changes_nothing_else(specs, public_static,
                                                                      name):
    """Without stack traces (SweepConfig.stack_traces off), the fast path's model is the one
    it makes with them bar their metadata, static and dynamic, captured and traced once, and
    the public call's bar metadata and the names of symbolic sizes; torch's switch is back
    as it was after each export. (The public call's static model of a group is the one its
    public run made, where a test here made that run: the same export of the same example.)"""
    from torch.fx import config as fx_config
    spec = specs[name]
    public, bare, kept = Exporter(), FastExporter(), FastExporter(options=Tuning(traces=True))
    dynamic = 0
    for index, group in enumerate(group_by_signature(draw_examples(spec, PROFILES["ci"]))[:3]):
        for module, shapes in _attempts(spec, group):
            extra = {} if shapes is None else {"dynamic_shapes": shapes}
            dynamic += shapes is not None
            want = (public.export(module, module.inputs, **extra) if shapes is not None
                    else _public_model(public_static, public, spec, index, group))
            got = bare.export(module, module.inputs, **extra)
            also = kept.export(module, module.inputs, **extra)
            assert _stack_traces(want) and _stack_traces(also) and not _stack_traces(got)
            assert _without_metadata(got) == _without_metadata(also)  # only the traces differ
            assert _renamed_dims(("model", _without_metadata(got))) == \
                _renamed_dims(("model", _without_metadata(want)))
            assert fx_config.do_not_emit_stack_traces is False
    assert dynamic and bare.traced_once > 0 and kept.traced_once > 0  # both took part


def test_fallback_is_the_public_call(monkeypatch):
    import torch.onnx._internal.exporter._decomp as decomp
    monkeypatch.delattr(decomp, "create_onnx_friendly_decomposition_table")
    assert not fast_path_available()
    assert exporter_path(SweepConfig(PROFILES["ci"]).fast) == PUBLIC_PATH  # the fingerprint says so
    assert make_exporter(fast=False).path == PUBLIC_PATH
    monkeypatch.undo()
    assert exporter_path(SweepConfig(PROFILES["ci"]).fast) == FAST_PATH


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
    from opsweep.engine.runner import choose_plan, dynamic_shapes, target_of
    skip, full = FastExporter(), FastExporter(options=Tuning(skip=False))
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
    from opsweep.engine.runner import error_line
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
    from opsweep.engine.fastpath import _DECOMP_CACHE, decomposes_to_itself
    exporter = FastExporter()
    exporter.export(_Plain(), (torch.ones(2, 3),))  # fills the registry's tables
    program = torch.export.export(module, (torch.ones(2, 3),))
    assert decomposes_to_itself(program, _DECOMP_CACHE[id(exporter.registry)][3]) is expected


def _renamed_dims(attempt: tuple[str, object]) -> tuple[str, object]:
    """An attempt's model with its symbolic dimensions named by first appearance: a program
    traced once numbers its unbacked sizes from another start (nonzero's length is u1 where
    the re-trace's is u0), which names a dimension and changes nothing onnxruntime runs."""
    import onnx
    if attempt[0] != "model":
        return attempt
    model = onnx.ModelProto.FromString(attempt[1])
    names: dict[str, str] = {}

    def rename(graph):
        for info in [*graph.input, *graph.output, *graph.value_info]:
            for dim in info.type.tensor_type.shape.dim:
                if dim.HasField("dim_param"):
                    dim.dim_param = names.setdefault(dim.dim_param, f"d{len(names)}")
        for node in graph.node:
            for attribute in node.attribute:
                if attribute.type == onnx.AttributeProto.GRAPH:
                    rename(attribute.g)
    rename(model.graph)
    return "model", model.SerializeToString()


def _attempts(spec, group):
    """(module, dynamic shapes) of a group's first example: static, then with the dynamic axis
    where it applies."""
    from opsweep.engine.runner import choose_plan, dynamic_shapes, target_of
    call = build_call(spec, group[0])
    plan, traced, _ = choose_plan(spec, target_of(spec, call), group[0])
    return [(call, None)] + ([(traced, dynamic_shapes(plan, len(traced.inputs)))] if plan else [])


FAILING = ["equal", "fractional_max_pool2d"]


#: specs whose graph holds a python decomposition of the table (not a CompositeImplicitAutograd one)
PYTHON_TABLE = ["nan_to_num", "std_mean", "index_fill"]


@pytest.mark.parametrize("name", ["softmax", "conv2d", "native_batch_norm",
                                  "fractional_max_pool2d"] + PYTHON_TABLE
                         + ["lstm", "sin", "equal", "nonzero"])
def test_a_single_trace_gives_the_same_model_or_error(specs, name):
    """Traced once, straight to the decomposed graph, against captured and then decomposed:
    the same ONNX model (bar metadata and the names of symbolic sizes), static and with the
    dynamic axis; where the single
    trace fails, the public way's own error."""
    from opsweep.engine.fastpath import _kind
    once, public = FastExporter(), FastExporter(options=Tuning(single=False))
    spec = specs[name]
    for group in group_by_signature(draw_examples(spec, PROFILES["ci"]))[:2]:
        got, before = [], once.traced_once
        for module, shapes in _attempts(spec, group):
            once._needs_retrace[_kind(module), shapes is not None] = True  # as after a re-trace
            got.append(_attempt(once, module, shapes))
        want = [_attempt(public, module, shapes) for module, shapes in _attempts(spec, group)]
        assert [_renamed_dims(a) for a in got] == [_renamed_dims(a) for a in want]
        # traced once wherever it worked
        assert once.traced_once - before == sum(kind == "model" for kind, _ in got)
    # where both fail (equal at capture, fractional_max_pool2d at translation), the single
    # trace failed too and the public way ran; elsewhere the test cannot pass vacuously
    assert (once.traced_once > 0) is (name not in FAILING)
    assert not public.traced_once


def test_the_single_trace_follows_a_retrace(specs):
    """Taken for the next export of a kind whose last export re-traced, and only then; the
    sweep's outcomes are those of an exporter that never takes it."""
    once, public = FastExporter(), FastExporter(options=Tuning(single=False))
    for name, decomposes in [("softmax", True), ("sin", False)]:
        spec = specs[name]
        groups = group_by_signature(draw_examples(spec, PROFILES["ci"]))[:3]
        start = (once.retraced, once.traced_once)
        for group in groups:
            assert run_group(spec, group, once, dynamic=True) == run_group(spec, group, public,
                                                                           dynamic=True)
        retraced, traced = once.retraced - start[0], once.traced_once - start[1]
        if decomposes:  # the first static and the first dynamic export re-trace
            assert (retraced, traced) == (2, 2 * len(groups) - 2)
        else:
            assert (retraced, traced) == (0, 0)


def test_a_kind_whose_single_traces_keep_failing_goes_the_public_way(specs):
    """fractional_max_pool2d decomposes, then has no translation: after SINGLE_TRACE_FAILURES
    single traces failed in a row, its exports are not traced once again."""
    from opsweep.engine.fastpath import SINGLE_TRACE_FAILURES
    once, public = FastExporter(), FastExporter(options=Tuning(single=False))
    spec = specs["fractional_max_pool2d"]
    for group in group_by_signature(draw_examples(spec, PROFILES["ci"]))[:4]:
        got = run_group(spec, group, once)
        assert got == run_group(spec, group, public)
        assert {o.stage for o in got} == {Stage.NO_TRANSLATION}
    assert (once.traced_once, once.fell_back) == (0, SINGLE_TRACE_FAILURES)
    assert once.retraced == public.retraced == 4  # the public way, every time


@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_rnn_programs_are_not_traced_once_where_the_rnn_patch_plays_a_part(specs, name):
    """The exporter's RNN patch decomposes LSTM and GRU with a while_loop in a dynamic capture
    (the single trace would take the table's unrolled decomposition instead: the catalog-wide
    run found gru's and lstm's dynamic outcomes changed). So a dynamic export of them is never
    traced once, and every group's outcomes are the public way's."""
    once, public = FastExporter(), FastExporter(options=Tuning(single=False))
    spec = specs[name]
    for group in group_by_signature(draw_examples(spec, PROFILES["ci"]))[:3]:
        assert run_group(spec, group, once, dynamic=True) == run_group(spec, group, public,
                                                                       dynamic=True)
        kinds = {dynamic for (_, dynamic), wanted in once._needs_retrace.items() if wanted}
        assert True not in kinds

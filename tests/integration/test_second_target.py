"""A second target costs only what it can change: the shortcut (stock outcomes
wherever the table cannot touch the graph) gives exactly the outcomes of
measuring the second target in full."""

import importlib.util
from pathlib import Path

import pytest
import torch
from onnxscript import opset18 as op

from opsweep.engine.adapter import Exporter
from opsweep.artifact.data import STOCK
from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.engine.fastpath import FastExporter, Trace, unchanged_by
from opsweep.engine.exporters import exporters_for
from opsweep.targets import configured
from opsweep.model import Stage
from opsweep.engine.group import run_targets

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "custom_translations.py"


def _example_table():
    spec = importlib.util.spec_from_file_location("custom_translations_under_test", EXAMPLES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TABLE


def broken_norm(self, p=None, dim=None, keepdim=False):
    raise ValueError("broken on purpose")


def vdot(self, other):
    return op.ReduceSum(op.Mul(self, other), keepdims=0)


#: keys torch decomposes on the way, so they are in neither the captured nor the
#: decomposed graph: aten.norm.ScalarOpt_dim inside frobenius_norm and pairwise_distance,
#: aten.vdot inside linalg_vecdot. The table turns those decompositions off.
INNER = {torch.ops.aten.norm.ScalarOpt_dim: broken_norm, torch.ops.aten.vdot.default: vdot}
SAMPLE = ["sin", "add", "softmax", "hypot", "fmax", "fmin", "detach_copy", "fft_fftfreq",
          "frobenius_norm", "pairwise_distance", "linalg_vecdot", "layer_norm", "where"]


@pytest.fixture(scope="module")
def exporters():
    stock = FastExporter()
    tables = {"example": FastExporter(_example_table()), "inner": FastExporter(INNER)}
    stock.watch({k.name() for e in tables.values() for k in e.custom_translation_table})
    return {STOCK: stock} | tables


@pytest.mark.parametrize("name", SAMPLE)
def test_shortcut_gives_the_full_measurement(specs, exporters, name):
    spec = specs[name]
    for group in group_by_signature(draw_examples(spec, PROFILES["ci"]))[:2]:
        full = run_targets(spec, group, exporters, dynamic=True, shortcut=False)
        short = run_targets(spec, group, exporters, dynamic=True)
        assert short == full


def test_a_key_reached_only_inside_a_decomposition_is_measured(specs, exporters):
    spec = specs["frobenius_norm"]
    group = group_by_signature(draw_examples(spec, PROFILES["ci"]))[0]
    got = run_targets(spec, group, exporters, dynamic=True)
    trace = exporters[STOCK].last_trace
    assert "aten::norm.ScalarOpt_dim" in trace.decomposed - trace.before - trace.after
    assert {o.stage for o in got[STOCK]} == {Stage.OK}
    assert {o.stage for o in got["inner"]} == {Stage.TRANSLATION_ERROR}  # the table's own verdict
    assert got["example"] is got[STOCK]  # untouched: the stock outcomes themselves


def test_a_key_in_the_decomposed_graph_is_measured(specs, exporters):
    spec = specs["hypot"]
    group = group_by_signature(draw_examples(spec, PROFILES["ci"]))[0]
    got = run_targets(spec, group, exporters)
    assert {o.stage for o in got[STOCK]} == {Stage.NO_TRANSLATION}
    assert Stage.NO_TRANSLATION not in {o.stage for o in got["example"]}
    assert got["inner"] is got[STOCK]


def test_no_trace_no_shortcut():
    table = {torch.ops.aten.sin.default: vdot}
    assert not unchanged_by(table, None)  # the public call cannot tell: measure in full
    assert Exporter(table).last_trace is None
    assert not unchanged_by({torch.ops.aten.sin: vdot}, Trace(True))  # a packet: cannot tell
    assert unchanged_by(table, Trace(False))  # capture failed: the table plays no part
    assert not unchanged_by(table, Trace(True, before=frozenset({"aten::sin"})))
    assert unchanged_by(table, Trace(True, frozenset({"aten::cos"}), frozenset({"aten::cos"})))


def test_sweep_exporters_watch_every_table_key():
    exporters = exporters_for(configured([f"{EXAMPLES}:TABLE"]), True)
    assert exporters[STOCK]._recorder.watched == {k.name() for k in _example_table()}


@pytest.mark.parametrize("name", ["frobenius_norm", "pairwise_distance", "linalg_vecdot"])
def test_watching_leaves_the_stock_outcome_alone(specs, exporters, name):
    """The watched decompositions run through a recording wrapper: same outcomes
    as an exporter that watches nothing (and as the public call)."""
    spec = specs[name]
    group = group_by_signature(draw_examples(spec, PROFILES["ci"]))[0]
    watched = run_targets(spec, group, {STOCK: exporters[STOCK]}, dynamic=True)[STOCK]
    assert exporters[STOCK].last_trace.decomposed  # the wrappers ran
    assert watched == run_targets(spec, group, {STOCK: FastExporter()}, dynamic=True)[STOCK]
    assert watched == run_targets(spec, group, {STOCK: Exporter()}, dynamic=True)[STOCK]

"""The cell covering with real torch: every (dtype, rank) cell eager PyTorch accepts is
drawn under ci, rank 0 and the empty tensor included where the operator takes them
(`nonzero` at rank 0), a cell eager refuses carries eager's own error, and a small sweep
measures the added cells (the artifact's outcomes are filed under them)."""

import json

import pytest
import torch

from opsweep.artifact import data as art
from opsweep.catalog import cells as C
from opsweep.catalog.draw import PROFILES, draw_examples, plan_for
from opsweep.catalog.eager import eager_error
from opsweep.catalog.load import load_catalog
from opsweep.cli.main import main

pytestmark = pytest.mark.integration

CI = PROFILES["ci"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(check_draws=False).specs


@pytest.mark.parametrize("name", ["nonzero", "add", "layer_norm", "linear", "mm"])
def test_every_accepted_cell_is_drawn_and_every_drawn_example_runs_eagerly(catalog, name):
    spec = catalog[name]
    plan = plan_for(spec, CI)
    drawn = draw_examples(spec, CI)
    accepted = {c for c, s in plan.status.items() if s in (C.DRAWN, C.ADDED)}
    assert accepted <= {C.cell_of(e) for e in drawn}
    for cell in plan.added:  # what was added runs in eager PyTorch, as the sweep will run it
        assert eager_error(spec, cell) is None


#: the cells the public model set's transformers and CNNs called that no spec drew (the
#: scoreboard's commonest reasons for an unknown prediction): attention's rank-5 and rank-6
#: views, batched products at rank 4, a broadcast bias row, pooling at bfloat16
MODEL_CELLS = [("view", "float32", 5), ("view", "bfloat16", 6), ("unsafe_view", "float16", 4),
               ("unsafe_view", "float32", 6), ("permute", "float16", 5), ("permute", "float32", 6),
               ("expand", "int64", 3), ("expand", "bfloat16", 5), ("unbind", "float32", 5),
               ("transpose", "float16", 5), ("select", "bfloat16", 5), ("squeeze", "float32", 5),
               ("clone", "float16", 6), ("stack", "float32", 4), ("matmul", "bfloat16", 4),
               ("linear", "float32", 4), ("addmm", "float16", 1), ("baddbmm", "bfloat16", 3),
               ("max_pool2d", "bfloat16", 4), ("avg_pool2d", "bfloat16", 4), ("im2col", "float16", 4)]


@pytest.mark.parametrize("name,dtype,rank", MODEL_CELLS)
def test_the_cells_real_models_call_are_drawn(catalog, name, dtype, rank):
    drawn = draw_examples(catalog[name], CI)
    assert C.Cell(dtype, rank) in {C.cell_of(e) for e in drawn}


def test_rank_0_and_the_empty_tensor_are_drawn_where_the_operator_takes_them(catalog):
    drawn = {C.cell_of(e) for e in draw_examples(catalog["nonzero"], CI)}
    assert {C.Cell(d, 0) for d in catalog["nonzero"].dtypes} <= drawn
    assert any(c.empty for c in drawn)
    x = torch.tensor(3.0)  # the operator really takes rank 0: one row of no coordinates
    assert torch.nonzero(x).shape == (1, 0)


def test_a_refused_cell_carries_eagers_error_and_is_not_drawn(catalog):
    spec = catalog["mm"]  # declared rank 2: its rank 0 and 1 cells are asked of eager anyway
    plan = plan_for(spec, CI)
    one = C.Cell("float32", 1)
    assert plan.status[one] == C.UNSETTLED  # a reranked example: the rewrite could be at fault
    with pytest.raises(RuntimeError) as raised:
        torch.mm(torch.ones(3), torch.ones(3))
    assert plan.error[one].startswith("RuntimeError: ")
    assert str(raised.value).splitlines()[0].split(",")[0] in plan.error[one]
    assert one not in {C.cell_of(e) for e in draw_examples(spec, CI)}


def test_the_coverage_command_prints_each_specs_cells(capsys):
    assert main(["coverage", "--cells", "--json", "nonzero", "mm"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["spec"] for r in rows] == ["mm", "nonzero"]  # the catalog's order
    mm, nonzero = rows
    assert "f32/0" in nonzero["cells"]["drawn"] + nonzero["cells"]["added"]
    assert nonzero["counts"]["refused"] == nonzero["counts"]["unsettled"] == 0
    assert mm["errors"]["f32/1"].startswith("RuntimeError: mm: self must be a matrix")


def test_a_sweep_measures_the_added_cells(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no project configuration: the stock target alone
    out = tmp_path / "a.json"
    # the static outcomes alone: the cells are what the test looks at, not the dynamic axis
    assert main(["sweep", "--only", "nonzero", "--jobs", "0", "--quiet", "--no-reuse",
                 "--no-dynamic", "--no-cache", "--out", str(out)]) == 0
    result = art.load(out).target("stock").specs["nonzero"]
    measured = {(c.dtype, c.rank) for c in result.outcomes}
    spec = load_catalog(check_draws=False).specs["nonzero"]
    assert {(d, 0) for d in spec.dtypes} <= measured
    assert {(d, r) for d in spec.dtypes for r in range(5)} <= measured

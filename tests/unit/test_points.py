"""The history's order (no step moves a pin backwards), the pick-two comparison, "full
since" along that order, and the dtype matrix's visible counts."""

import re

from opsweep.artifact import records as history
from opsweep.artifact.grade import FailureGroup, StageCount
from opsweep.artifact.points import forward, order
from opsweep.artifact.records import Record
from opsweep.model import Stage
from opsweep.page.detail import releases
from opsweep.page.dtypes import dtype_row
from opsweep.page.history import render as render_history


def point(torch, script, codes, onnx="1.23.2"):
    fp = {"torch": torch, "onnx": onnx, "onnxruntime": "1.32.0", "onnxscript": script,
          "hypothesis": "6.170.17", "opset": 20, "exporter": "dynamo"}
    return Record(torch, fp, "ci", 25, "2026-12-01T00:00:00+00:00", {"stock": codes}, {})


def labelled(rs):
    rs = sorted(rs, key=lambda r: tuple(history.version_key(v) for _, v in r.pins))
    return [r.__class__(**{**r.__dict__, "label": history.point_label(r, rs)}) for r in rs]


# the case: an older onnxscript measured at torch 2.14.1 beside the chain
POINTS = labelled([
    point("2.11.0", "0.7.2", {"mean": "ffff", "bucketize": "ffff"}),
    point("2.13.0", "0.7.2", {"mean": "ffff", "bucketize": "ffff"}),
    point("2.14.1", "0.6.2", {"mean": "pfff", "bucketize": "ffff"}),
    point("2.14.1", "0.7.2", {"mean": "ffff", "bucketize": "ffff"}),
    point("2.15.0", "0.7.2", {"mean": "ffff", "bucketize": "fpff"}),
])


def test_no_step_of_the_chain_moves_a_pin_backwards_and_the_odd_point_sits_beside():
    found = order(POINTS)
    assert [r.name for r in found.chain] == ["2.11.0", "2.13.0", "2.14.1 (onnxscript 0.7.2)", "2.15.0"]
    assert all(forward(a, b) for a, b in zip(found.chain, found.chain[1:]))
    assert [(s.name, at.name) for s, at in found.beside] == [
        ("2.14.1 (onnxscript 0.6.2)", "2.14.1 (onnxscript 0.7.2)")]
    steps = history.bumps(POINTS)
    assert [b.beside for b in steps] == [False, False, False, True]
    assert not any("backwards" in m for b in steps if not b.beside for m in b.moved)
    assert steps[-1].moved == ("onnxscript 0.7.2 → 0.6.2 (backwards)",)
    # the chain's steps invent nothing: mean's regression lives only beside the chain
    chained = [c for b in steps[:-1] for c in b.changes["stock"]]
    assert [(c.op, c.axis, c.kind) for c in chained] == [("bucketize", "runtime", "regression")]


def test_full_since_walks_back_along_the_chain():
    _, since = releases(POINTS, "mean")
    assert since is not None and since.version == "2.11.0"  # not the point beside the chain
    assert releases(POINTS, "bucketize")[1].version == "2.11.0"
    assert history.removed_in(POINTS, "mean") == ""


def test_a_reader_can_compare_any_two_points():
    page = render_history(POINTS)
    pairs = re.findall(r'<section class="opsweep-pair" data-from="(\d)" data-to="(\d)">', page)
    assert sorted(pairs) == [(str(i), str(j)) for i in range(5) for j in range(5) if i < j]
    names = re.findall(r'<option value="\d"[^>]*>torch ([^<]+)</option>', page)[:5]
    first, last = names.index("2.11.0"), names.index("2.15.0")
    block = page.split(f'data-from="{first}" data-to="{last}">', 1)[1].split("</section>", 1)[0]
    assert 'regression <strong data-kind="regression">1</strong>' in block
    assert '<li data-op="bucketize" data-axis="runtime">' in block
    assert "<ul>" in block and "\n- " not in block  # a list, not raw markdown in a paragraph
    # no parentheses nested in the point's name (issue 34: "2.14.1 (2.14.1 (onnxscript 0.6.2))")
    assert "| 2.14.1 (onnxscript 0.6.2), beside 2.14.1 (onnxscript 0.7.2) | 2.14.1 |" in page


def test_dtype_cells_show_their_counts_and_mark_one_example():
    groups = [FailureGroup("float16", 1, Stage.NUMERICS, "E", 19, "f16[2]", 2)]
    outcomes = [StageCount("float16", 1, Stage.NUMERICS, 19), StageCount("float16", 1, Stage.OK, 14),
                StageCount("float32", 1, Stage.OK, 1)]
    row = dtype_row("x", [], groups, outcomes)
    cells = dict(zip(row.columns, row.cells, strict=True))
    assert cells["float16"].text == "num 19/33" and not cells["float16"].thin
    assert cells["float32"].text == "ok 1 (thin)" and "thin" in cells["float32"].css
    assert cells["bool"].text == ""

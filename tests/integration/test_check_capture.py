"""`opsweep check`'s capture of dynamic-shape models, for real (torch.export, the
exporter's decomposition, the committed artifact): shape queries are counted apart from
operator uses, and a model whose dynamic capture fails is looked up from a static one."""

from pathlib import Path

import pytest
import torch

from opsweep.artifact import data as art
from opsweep.catalog.load import exclusions
from opsweep.check.models import load_model
from opsweep.check.report import FAILING_P, UNKNOWN_P, to_data, to_markdown
from opsweep.check.run import check
from opsweep.check.uses import SHAPE_QUERIES, capture

ROOT = Path(__file__).parents[2]
MODELS = Path(__file__).parent / "models" / "dynamic.py"


@pytest.fixture(scope="module")
def artifact():
    return art.load(ROOT / "docs" / "onnx_support_measured.json")


def test_a_dynamic_capture_files_its_shape_queries_apart(artifact):
    case = load_model(f"{MODELS}:flatten")
    # the graph really holds a size query of the dynamic batch
    program = torch.export.export(case.model, case.inputs, dynamic_shapes=case.dynamic_shapes)
    decomposed = program.run_decompositions()
    assert any(getattr(n.target, "__name__", "").startswith("sym_size")
               for n in decomposed.graph.nodes)
    found = capture(case)
    assert not found.error and not found.fallback
    assert dict(found.queries).get("aten::sym_size.int", 0) >= 1
    assert found.uses and not {u.op for u in found.uses} & SHAPE_QUERIES
    report = check(case, artifact, exclusions(), export=False)
    assert all(v.use.op not in SHAPE_QUERIES for v in report.verdicts)
    data = to_data(report)
    assert data["capture"]["shape_queries"]["aten::sym_size.int"] >= 1
    assert "Shape queries (not operator uses" in to_markdown([report])
    # the model's other uses (reshape's view, linear, relu) are measured at their cells
    # in the committed table: with the size query out, nothing is left unknown
    assert data["counts"]["not measured"] == 0, data["uses"]
    assert UNKNOWN_P not in report.prediction.values(), report.prediction


def test_a_failed_dynamic_capture_falls_back_to_a_static_one(artifact):
    case = load_model(f"{MODELS}:branchy")
    with pytest.raises(Exception):  # the dynamic capture really fails
        for strict in (False, True):
            torch.export.export(case.model, case.inputs, dynamic_shapes=case.dynamic_shapes,
                                strict=strict)
    found = capture(case)
    assert not found.error and found.fallback and "\n" not in found.fallback
    assert {"linear", "relu"} <= {u.op for u in found.uses}  # batch 3: the relu branch
    report = check(case, artifact, exclusions(), export=False)
    assert report.verdicts and report.prediction["dynamic"] == FAILING_P
    text = to_markdown([report])
    assert f"uses from a static capture: the dynamic one failed: {found.fallback}"[:60] in text
    assert to_data(report)["capture"]["fallback"] == found.fallback
    # the real export agrees on the dynamic axis: the public call relaxes the batch to the
    # example's branch, which gives the wrong answer at a batch of 6
    real = check(case, artifact, exclusions())
    assert real.reality.dynamic == "fail" and real.reality.stage == "ok"
    assert {u.key for u in real.capture.uses} == {u.key for u in found.uses}


def test_a_model_without_dynamic_shapes_whose_capture_fails_still_says_so(tmp_path):
    source = tmp_path / "broken.py"
    source.write_text("import torch\n\nclass M(torch.nn.Module):\n"
                      "    def forward(self, x):\n"
                      "        if x.sum() > 0:  # data-dependent: no capture\n"
                      "            return x * 2\n"
                      "        return x\n\n"
                      "def broken():\n"
                      "    return {'model': M(), 'inputs': (torch.ones(3),)}\n")
    found = capture(load_model(f"{source}:broken"))
    assert found.error.startswith("capture: ") and not found.fallback and not found.uses


def test_a_packet_without_a_listing_row_joins_the_specs_that_trace_it(artifact):
    """`_softmax` has no listing row: the softmax spec calls it as its declared packet (its
    recorded arguments name `_softmax.default`), so a model's use of it is measured; a
    packet no spec calls stays not measured, in the full artifact and in its cell table."""
    from opsweep.artifact.tables import compact
    from opsweep.check.table import NOT_MEASURED, lookup, measuring
    from opsweep.check.uses import Use
    assert "_softmax" not in artifact.operators
    assert "softmax" in measuring(artifact, "_softmax")
    uses = [Use("_softmax", "aten::_softmax.default", "float32", 2, 1, "n"),
            Use("_no_such_packet", "aten::_no_such_packet.default", "float32", 2, 1, "m")]
    small = compact(artifact)
    assert small.specs["softmax"].arguments == {"_softmax.default": {}}  # names, no values
    for table in (artifact, small):
        found, missing = lookup(table, uses, {})
        assert found.status != NOT_MEASURED and found.measured > 0 and "softmax" in found.specs
        assert missing.status == NOT_MEASURED and not missing.specs

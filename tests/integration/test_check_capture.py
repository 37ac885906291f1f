"""`opsweep check`'s capture of dynamic-shape models, for real (torch.export, the
exporter's decomposition, the committed artifact): shape queries are counted apart from
operator uses, and a model whose dynamic capture fails is looked up from a static one."""

from pathlib import Path

import pytest
import torch

from opsweep.catalog.load import exclusions
from opsweep.capture.cases import load_model
from opsweep.check.report import FAILING_P, UNKNOWN_P, to_data, to_markdown
from opsweep.check.run import check
from opsweep.capture.uses import SHAPE_QUERIES, capture

ROOT = Path(__file__).parents[2]
MODELS = Path(__file__).parent / "models" / "dynamic.py"


@pytest.fixture(scope="module")
def artifact(committed_artifact):
    return committed_artifact  # loaded once per worker (conftest.py)


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
    from opsweep.capture.uses import Use
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


def _decomposed_calls(case, namespace: str) -> list:
    """(target, original_aten) of the decomposed graph's calls in `namespace`."""
    from opsweep.capture.uses import decompose
    program = decompose(torch.export.export(case.model, case.inputs))
    return [(str(n.target), n.meta.get("original_aten")) for n in program.graph.nodes
            if n.op == "call_function" and getattr(n.target, "namespace", "") == namespace]


def test_a_call_a_decomposition_made_is_looked_up_as_the_operator_the_model_called(artifact):
    """The exporter decomposes torch.lgamma into prims::lgamma: the use is lgamma's, whose
    spec measured that very decomposition failing (no translation), so the prediction is
    that the export fails, and the real export agrees. It used to be listed as an
    untestable call while the prediction said fine."""
    case = load_model(f"{MODELS}:lgamma")
    made = _decomposed_calls(case, "prims")
    assert made and all(str(orig) == "aten.lgamma.default" for _, orig in made), made
    found = capture(case)
    assert not found.other and ("lgamma", "float32", 2) in {u.key for u in found.uses}
    report = check(case, artifact, exclusions())
    assert report.prediction["export"] == FAILING_P, report.prediction
    assert report.reality.export == "fail" and report.reality.op == "lgamma"
    assert not report.gaps  # the table and the real export agree


def test_an_int32_cumsum_s_conversion_is_cumsum_s_use(artifact):
    """transformers' position ids: an int32 cumsum decomposes into an int64 cumsum and a
    prims::convert_element_type of its input; the conversion is the int32 cumsum's."""
    case = load_model(f"{MODELS}:positions")
    assert [str(orig) for _, orig in _decomposed_calls(case, "prims")] == [
        "aten.cumsum.default"]
    found = capture(case)
    assert not found.other
    assert {("cumsum", "int32", 2), ("cumsum", "int64", 2)} <= {u.key for u in found.uses}
    report = check(case, artifact, exclusions(), export=False)
    assert "prims" not in to_markdown([report])


def test_a_prims_call_the_model_makes_itself_leaves_the_prediction_unknown(artifact):
    """No aten operator made it, so no spec measured it: the table cannot say fine."""
    case = load_model(f"{MODELS}:direct_prims")
    found = capture(case)
    assert found.other == ("prims::lgamma",) and "lgamma" not in {u.op for u in found.uses}
    report = check(case, artifact, exclusions(), export=False)
    assert set(report.prediction.values()) == {UNKNOWN_P}, report.prediction
    assert "Calls no spec measures (outside aten, made by no aten operator's decomposition): " \
           "`prims::lgamma`" in to_markdown([report])


def test_a_default_overload_s_missing_translation_is_its_uses_failure(artifact):
    """A use names a default overload without its suffix (``aten::kthvalue``) and the
    exporter's error with it (``overload='default'``): the same overload, so the table's
    failing examples at the use's cell are the use's. They were taken for another
    overload's, and the advice said "never measured at float32 rank 2 (float32 at rank 0,
    1, 2, 3, 4 only)"."""
    from opsweep.check.table import FAILING
    report = check(load_model(f"{MODELS}:ranked"), artifact, exclusions(), export=False)
    found = {v.use.op: v for v in report.verdicts}
    for op in ("kthvalue", "cummax", "cummin"):
        v = found[op]
        assert v.use.overload == f"aten::{op}" and (v.use.dtype, v.use.rank) == ("float32", 2)
        assert v.status == FAILING and v.measured > 0 and v.passed == 0, v.why
        assert v.failures and v.failures[0].stage == "no-translation"
        assert "never measured" not in v.why
    assert report.prediction["export"] == FAILING_P

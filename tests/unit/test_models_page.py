"""The models page's view and render (opsweep.page.models) on hand-made records, the render
step that writes it only when the project has a models record, and the navigation entry
that follows it (opsweep.page.mkdocs_nav)."""

import json

from pathlib import Path

import pytest

from opsweep.artifact import checked
from opsweep.errors import DataFileError
from opsweep.files import Layout
from opsweep.page import mkdocs_nav
from opsweep.page import models as page
from opsweep.page.site import render_models

KEY = {"stack": {"torch": "2.15.0"}, "opset": 20, "model": "", "opsweep": "0",
       "tolerance_policy": "builtin", "export": True}


def entry(name, source, verdict, said, uses=(), reality=None, **more):
    return {"name": name, "source": source, "uses": list(uses), "verdict": verdict,
            "prediction": said, "reality": reality or {"op": "", "node": "", "error": ""},
            "check_fingerprint": KEY, **more}


def use(op, dtype, count=1, failures=()):
    return {"op": op, "dtype": dtype, "rank": 2, "count": count,
            "status": "measured failing" if failures else "measured fine",
            "failures": [{"axis": a, "snippet": f"repro of {op} <{a}>"} for a in failures]}


FINE3 = {"export": "fine", "runtime": "fine", "numerics": "fine"}
PASS3 = {"export": "pass", "runtime": "pass", "numerics": "pass"}
RECORD = {"models_version": 2, "models": [
    entry("ok", "examples/models/plain.py:mlp_f32", PASS3, FINE3,
          [use("linear", "float16", 3), use("add", "float32"), use("eq", "bool", 9)]),
    entry("bad <i>", "mylib.vision:build", {**PASS3, "runtime": "fail", "numerics": "not reached"},
          {**FINE3, "runtime": "failing"}, [use("conv2d", "bfloat16", failures=("runtime",))],
          {"op": "onnx::Conv", "node": "node_Conv_1", "error": "InferenceError: bfloat16"}),
    {"name": "gone", "source": "saved/model.pt2", "uses": [], "lost": "worker killed by SIGSEGV",
     "check_fingerprint": KEY},
]}


def test_a_row_per_model_from_the_record():
    view = page.build(RECORD, {"conv2d"})
    ok, bad, gone = view.rows
    assert (ok.family, ok.dtype, ok.codes, ok.op) == ("plain", "float16", "pppp"[:3] + "-", "")
    assert (bad.family, bad.dtype, bad.codes) == ("vision", "bfloat16", "pfn-")
    # the checker named an ONNX node: the table's failing use on that axis, with its repro
    assert (bad.op, bad.node, bad.linked, bad.repro) == (
        "conv2d", "node_Conv_1 (onnx::Conv)", True, "repro of conv2d <runtime>")
    assert (gone.family, gone.lost, gone.codes) == ("saved program", "worker killed by SIGSEGV",
                                                    "----")
    assert view.families == ("plain", "saved program", "vision")
    assert view.dtypes == ("bfloat16", "float16") and view.targets == ("stock",)
    assert "No pin set's models history record yet" in view.history
    assert "torch 2.15.0, opset 20" in view.stack


def test_an_operator_without_a_page_is_named_not_linked():
    (_, bad, _) = page.build(RECORD, set()).rows
    assert bad.op == "conv2d" and not bad.linked
    text = page.render(page.build(RECORD, set()))
    assert "<code>conv2d</code>" in text and 'href="../operators/conv2d/"' not in text


def test_the_page_escapes_every_name_and_says_what_the_record_lacks():
    text = page.render(page.build(RECORD, {"conv2d"}))
    assert "<i>" not in text and "bad &lt;i&gt;" in text
    assert "repro of conv2d &lt;runtime&gt;" in text and "<runtime>" not in text
    assert 'href="../operators/conv2d/"' in text and 'id="repro-bad-i"' in text
    assert "not checked: worker killed by SIGSEGV" in text
    assert "the verdicts above are this record's pin set only" in text
    assert "No TorchScript verdicts in this record yet" in text
    assert "No miss" in text  # the runtime failure was predicted


def test_two_pin_sets_are_said_so():
    other = json.loads(json.dumps(RECORD))
    other["models"][0]["check_fingerprint"]["stack"]["torch"] = "2.14.0"
    view = page.build(other, set())
    assert "2 pin sets" in view.history and "torch 2.14.0" in view.stack


def test_a_bad_record_is_named():
    broken = {"models_version": 2, "models": [{"name": "x", "uses": "no"}]}
    with pytest.raises(DataFileError, match=r"models\[0\]\.uses"):
        page.build(broken, set(), "docs/models_checked.json")


def test_the_render_step_writes_the_page_only_with_a_record(tmp_path):
    layout = Layout(page=str(tmp_path / "supported_operators.md"),
                    models=str(tmp_path / "models_checked.json"))
    assert not render_models(layout) and not (tmp_path / "models.md").exists()
    assert "models.md" not in " ".join(layout.under(tmp_path).rendered(tmp_path))
    (tmp_path / "models_checked.json").write_text(json.dumps(RECORD), "utf-8")
    (tmp_path / "operators").mkdir()
    (tmp_path / "operators" / "conv2d.md").write_text("conv2d", "utf-8")
    assert render_models(layout)
    assert 'href="../operators/conv2d/"' in (tmp_path / "models.md").read_text("utf-8")
    assert layout.models_page in layout.rendered(tmp_path)
    (tmp_path / "models_checked.json").unlink()  # the record gone: its page too
    assert not render_models(layout) and not (tmp_path / "models.md").exists()


def test_a_hand_written_models_page_is_never_removed(tmp_path):
    layout = Layout(page=str(tmp_path / "supported_operators.md"),
                    models=str(tmp_path / "models_checked.json"))
    (tmp_path / "models.md").write_text("# Our models\n", "utf-8")
    assert not render_models(layout) and (tmp_path / "models.md").exists()


def test_the_navigation_lists_the_models_page_only_when_it_exists(tmp_path):
    nav = [{"Home": "index.md"}, {"Models": "models.md"}, {"Other": "other.md"}]
    config = {"docs_dir": str(tmp_path), "nav": nav}
    assert mkdocs_nav.NavPlugin().on_config(dict(config))["nav"] == [nav[0], nav[2]]
    (tmp_path / "models.md").write_text("# Models\n", "utf-8")
    assert mkdocs_nav.NavPlugin().on_config(dict(config))["nav"] == nav


def test_a_record_of_the_previous_version_reads_as_the_stock_target_alone():
    """A models_version 2 record (the committed one as it was before it had TorchScript
    verdicts: the same entries without their targets) still loads: every entry is the stock
    exporter's, and the page says there are no TorchScript verdicts."""
    committed = Path(__file__).parents[2] / "docs" / "models_checked.json"
    now = json.loads(committed.read_text("utf-8"))
    assert now["models_version"] == 3 and checked.target_names(now["models"]) == \
        ("stock", "torchscript")  # the committed scoreboard: checked with TorchScript too
    data = {"models_version": 2, "models": [
        {**{k: v for k, v in m.items() if k != "targets"},
         "check_fingerprint": {k: v for k, v in m["check_fingerprint"].items()
                               if k != "targets"}} for m in now["models"]]}
    assert checked.from_data(data, committed)
    assert checked.target_names(data["models"]) == ("stock",)
    first = data["models"][0]
    assert checked.target_entry(first, "stock") == first
    assert checked.target_entry(first, "torchscript") is None
    view = page.build(RECORD, {"linear"})
    assert view.targets == ("stock",) and view.torchscript.startswith("No TorchScript verdicts")
    assert all(r.codes == r.codes.strip() and " " not in r.codes for r in view.rows)


def test_other_targets_verdicts_show_where_they_differ_from_the_stock_ones():
    ts = {"measured": True, "prediction": {**FINE3, "export": "failing"},
          "verdict": {"export": "fail", "runtime": "not reached", "numerics": "not reached"},
          "reality": {"op": "", "node": "", "error": "UnsupportedOperatorError: erfc"},
          "uses": [use("erfc", "float32", failures=("export",))], "failed": True}
    data = {"models_version": 3, "models": [
        entry("m", "a.py:m", PASS3, FINE3, [use("erfc", "float32")],
              targets={"torchscript": ts, "opset18": {**ts, "verdict": PASS3}}),
        entry("n", "a.py:n", PASS3, FINE3, [use("add", "float32")])]}
    view = page.build(data, set())
    assert view.targets == ("stock", "opset18", "torchscript")
    m, n = view.rows
    assert m.codes == "ppp- ppp- fnn-" and n.codes == "ppp-  "  # n: stock only
    assert m.cells[0].others == (("torchscript", "fail"),)  # opset18 agrees with stock
    assert [(x.axis, x.passes) for x in m.lose] == [("export", "stock")] and not n.lose
    html = page.render(view)
    assert 'data-targets="stock|opset18|torchscript"' in html and 'data-v="ppp- ppp- fnn-"' in html
    assert '<small class="opsweep-other-target">torchscript: fail</small>' in html
    assert "1 model was checked with the TorchScript exporter" in view.torchscript
    seen = [t for e in data["models"] if (t := checked.target_entry(e, "torchscript"))]
    assert [e["name"] for e in seen] == ["m"] and seen[0]["verdict"]["export"] == "fail"
    assert seen[0]["uses"][0]["failures"][0]["axis"] == "export"  # the target's uses

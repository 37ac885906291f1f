"""Two models records compared (artifact.models_diff) and the bot's "Models" section made
of the result (bot.comment): records written out by hand, in the shape `opsweep check
--json` writes (validated against the schema), whose answers are known."""

import json

import pytest

from opsweep.artifact.models_diff import Failure, load_diff, models_diff
from opsweep.errors import DataFileError

OK = {"export": "pass", "runtime": "pass", "numerics": "pass"}
STACK = {"onnx": "1.23.2", "onnxruntime": "1.32.0", "onnxscript": "0.7.2", "exporter": "dynamo",
         "dynamic": True, "hypothesis": "6.170.17"}


def entry(name, verdict=OK, *, torch="2.15.0", stage="ok", node="", op="", error="",
          dynamic_stage="", dynamic_error="", ops=("convolution", "relu"), lost=""):
    """One model's entry as the check writes it (version 2: with its check fingerprint)."""
    key = {"stack": {**STACK, "torch": torch}, "opset": 20, "model": "", "opsweep": "0.9.0",
           "tolerance_policy": "builtin", "export": True}
    if lost:
        return {"name": name, "source": f"m.py:{name}", "lost": lost, "uses": [],
                "verdict": None, "failed": True, "check_fingerprint": key}
    return {"name": name, "source": f"m.py:{name}", "uses": [{"op": o} for o in ops],
            "verdict": verdict, "failed": verdict is not None and "fail" in verdict.values(),
            "reality": {"stage": stage, "node": node, "op": op, "error": error,
                        "dynamic_stage": dynamic_stage, "dynamic_error": dynamic_error},
            "check_fingerprint": key}


def record(*entries):
    return {"models_version": 2, "models": list(entries)}


def test_a_pin_move_gives_each_model_s_transitions_with_where_it_fails():
    base = record(entry("resnet50"), entry("vit"), entry("bert", {**OK, "dynamic": "fail"}),
                  entry("gpt2"), entry("t5"), entry("gone"), entry("crashy"))
    new = record(
        entry("resnet50", {**OK, "numerics": "fail"}, torch="2.16.0", stage="numerics",
              node="convolution_12", op="convolution", error="max abs 0.3 > 1e-05"),
        entry("vit", {"export": "fail", "runtime": "not reached", "numerics": "not reached"},
              torch="2.16.0", stage="no-translation", node="gelu_3", op="gelu",
              error="no translation for aten::gelu"),
        entry("bert", {**OK, "dynamic": "pass"}, torch="2.16.0"),
        entry("gpt2", torch="2.16.0"),
        entry("t5", {**OK, "dynamic": "fail"}, torch="2.16.0", dynamic_stage="translation-error",
              dynamic_error="GuardOnDataDependentSymNode"),
        entry("crashy", torch="2.16.0", lost="worker killed by SIGABRT"),
        entry("llama", {**OK, "numerics": "fail"}, torch="2.16.0", stage="numerics"))
    d = models_diff(base, new)
    assert [(t.name, t.status) for t in d.transitions] == [
        ("resnet50", "regression"), ("vit", "regression"), ("crashy", "lost"),
        ("bert", "improvement"), ("t5", "changed"), ("llama", "added"), ("gone", "removed")]
    assert d.unchanged == 1  # gpt2
    assert d.models == 7  # the new record's: gpt2 + six with a transition, not gone
    assert d.pins == {"torch": "2.16.0", "onnx": "1.23.2", "onnxruntime": "1.32.0",
                      "onnxscript": "0.7.2"}
    assert d.moved == ("torch 2.15.0 → 2.16.0",)
    resnet, vit, crashy, bert, t5, llama, gone = d.transitions
    (numerics,) = resnet.axes
    assert (numerics.axis, numerics.old, numerics.new, numerics.kind) == \
        ("numerics", "pass", "fail", "regression")
    assert numerics.where == Failure("numerics", "convolution_12", "convolution",
                                     "max abs 0.3 > 1e-05")
    assert [(a.axis, a.new, a.where is not None) for a in vit.axes] == [
        ("export", "fail", True), ("runtime", "not reached", False),
        ("numerics", "not reached", False)]
    assert vit.failures() == (Failure("no-translation", "gelu_3", "gelu",
                                      "no translation for aten::gelu"),)
    assert crashy.lost == "worker killed by SIGABRT" and crashy.failures() == ()
    assert [(a.axis, a.old, a.new) for a in crashy.axes] == [
        ("export", "pass", None), ("runtime", "pass", None), ("numerics", "pass", None)]
    assert [(a.axis, a.old, a.new, a.kind) for a in bert.axes] == [
        ("dynamic", "fail", "pass", "improvement")]
    # a model that gains a dynamic axis which fails: neither a regression nor an improvement
    assert [(a.axis, a.old, a.new, a.kind) for a in t5.axes] == [
        ("dynamic", None, "fail", "changed")]
    assert t5.failures() == (Failure("translation-error", error="GuardOnDataDependentSymNode"),)
    assert llama.added and [a.new for a in llama.axes] == ["pass", "pass", "fail"]
    assert llama.failures() == (Failure("numerics"),)  # no diverging node in the record
    assert gone.removed and [a.old for a in gone.axes] == ["pass", "pass", "pass"]


def test_records_that_agree_have_no_transition_and_a_lost_model_stays_shown():
    same = record(entry("a"), entry("b", {**OK, "numerics": "fail"}, stage="numerics"),
                  entry("c", lost="no report within 900 s"))
    d = models_diff(same, same)
    assert [(t.name, t.status) for t in d.transitions] == [("c", "lost")]
    assert d.unchanged == 2 and d.moved == ()
    # lost before, checked now: shown with its verdicts, neither better nor worse
    again = models_diff(same, record(entry("a"), entry("b", {**OK, "numerics": "fail"},
                                                        stage="numerics"), entry("c")))
    (c,) = again.transitions
    assert c.status == "changed" and c.was_lost == "no report within 900 s" and not c.lost
    assert [(a.old, a.new) for a in c.axes] == [(None, "pass")] * 3


def test_no_base_record_makes_every_model_added_and_a_version_1_record_reads_too():
    v1 = {"models_version": 1, "models": [
        {"name": "m", "uses": [{"op": "sin"}], "verdict": {"export": "pass", "runtime": "fail",
                                                          "numerics": "not reached"},
         "fingerprint": {"torch": "2.13.0", "onnx": "1.23.2", "opset": 20}}]}
    d = models_diff(None, v1)
    (m,) = d.transitions
    assert m.status == "added" and m.failures() == ()  # no reality: nothing says where
    assert d.pins == {"torch": "2.13.0", "onnx": "1.23.2"} and d.old_pins == {}


def test_a_record_that_is_not_one_is_refused_naming_the_file_and_the_field(tmp_path):
    good = tmp_path / "base.json"
    good.write_text(json.dumps(record(entry("a"))))
    bad = record(entry("a"))
    bad["models"][0]["reality"]["node"] = 7
    path = tmp_path / "models_checked.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(DataFileError, match=r"models_checked.json at models\[0\].reality.node: "
                                            "expected a string"):
        load_diff(good, path)
    path.write_text(json.dumps({"models_version": 2, "models": [
        {"name": "a", "uses": [], "verdict": {"export": "ok"}}]}))
    with pytest.raises(DataFileError, match=r"models_checked.json at models\[0\].verdict"):
        load_diff(good, path)
    path.write_text("{not json")
    with pytest.raises(DataFileError, match="models_checked.json: cannot read the models record"):
        load_diff(None, path)
    # a version-2 entry without its check fingerprint fails the schema
    path.write_text(json.dumps({"models_version": 2, "models": [{"name": "a", "uses": []}]}))
    with pytest.raises(DataFileError, match="models_checked.json"):
        load_diff(good, path)



def with_targets(e, **targets):
    """The entry as a version-3 record holds it: its other targets' checks, by name; each
    a (verdict, reality) pair as `opsweep check --targets` writes them."""
    e["targets"] = {name: {"measured": True, "prediction": {}, "verdict": v, "uses": [],
                           "failed": "fail" in v.values(), "reality": {"stage": "ok", **real}}
                    for name, (v, real) in targets.items()}
    return e


def v3(*entries):
    return {"models_version": 3, "models": list(entries)}


def test_each_target_s_verdicts_move_on_their_own_and_a_new_target_is_counted_not_listed():
    """TorchScript's regression is its own transition (the stock verdicts did not move);
    a target only the new record checked is counted, one only the base checked named."""
    ts_fail = ({"export": "fail", "runtime": "not reached", "numerics": "not reached"},
               {"stage": "translation-error", "node": "cdist_1", "op": "cdist",
                "error": "Unsupported: ONNX export of operator cdist"})
    base = v3(with_targets(entry("a"), torchscript=(OK, {}), **{"m:T": (OK, {})}),
              with_targets(entry("b"), torchscript=(OK, {})),
              with_targets(entry("gone"), torchscript=(OK, {})))
    new = v3(with_targets(entry("a", torch="2.16.0"), torchscript=ts_fail,
                          opset18=({**OK, "numerics": "fail"}, {"stage": "numerics"})),
             with_targets(entry("b", torch="2.16.0"), torchscript=(OK, {}),
                          opset18=(OK, {})),
             with_targets(entry("c", torch="2.16.0"), torchscript=ts_fail),
             entry("crashy", torch="2.16.0", lost="worker killed by SIGSEGV"))
    base["models"].append(entry("crashy", lost="worker killed by SIGSEGV"))
    d = models_diff(base, new)
    assert [(t.name, t.target, t.status) for t in d.transitions] == [
        ("a", "torchscript", "regression"), ("crashy", "stock", "lost"),
        ("c", "stock", "added"), ("gone", "stock", "removed")]
    (a,) = d.of_status("regression")
    assert [(x.axis, x.old, x.new) for x in a.axes] == [
        ("export", "pass", "fail"), ("runtime", "pass", "not reached"),
        ("numerics", "pass", "not reached")]
    assert a.failures() == (Failure("translation-error", "cdist_1", "cdist",
                                    "Unsupported: ONNX export of operator cdist"),)
    assert d.unchanged == 1  # b: the same verdicts with every target both records checked
    assert d.models == 4
    assert d.first == (("opset18", 2, 1),)  # a fails numerics at opset 18; crashy: no verdict
    assert d.dropped == ("m:T",)
    # the stock record of before (version 2) against the new: every other target is new
    d2 = models_diff(record(entry("a"), entry("b")), new)
    assert [(t.name, t.status) for t in d2.transitions] == [("crashy", "lost"), ("c", "added")]
    assert d2.first == (("opset18", 2, 1), ("torchscript", 3, 2)) and d2.dropped == ()


def test_the_section_names_the_target_of_a_transition_and_counts_a_new_one():
    from opsweep.bot.comment import models_json, models_markdown

    from .test_comment import _inert
    ts_fail = ({**OK, "numerics": "fail"}, {"stage": "numerics", "node": "mm_3", "op": "mm"})
    base = v3(with_targets(entry("a"), torchscript=(OK, {})))
    new = v3(with_targets(entry("a", torch="2.16.0"), torchscript=ts_fail,
                          **{"x:<b>T</b>": (OK, {})}))
    d = models_diff(base, new)
    body = models_markdown(d, None, None)
    assert ("- **regression** `a` with `torchscript`: numerics pass → **fail** at "
            "`torch 2.16.0`; first diverging node `mm_3` (`aten::mm`)") in body
    assert ("First checked with `x:<b>T</b>`: 1 model(s), 0 failing an axis (no base "
            "verdicts to move from).") in body
    assert "<b>" not in _inert(body)  # a table's name is data the pull request chose
    data = models_json(d)
    assert data["transitions"][0]["target"] == "torchscript"
    assert data["first"] == [{"target": "x:<b>T</b>", "models": 1, "failing": 0}]


# --- the comment's section ------------------------------------------------------------------

def _pin_move():
    base = record(entry("resnet50"), entry("vit"), entry("crashy"), entry("gone"))
    new = record(
        entry("resnet50", {**OK, "numerics": "fail"}, torch="2.16.0", stage="numerics",
              node="/layer3/layer3.0/conv1/Conv", op="convolution"),
        entry("vit", torch="2.16.0"),
        entry("crashy", torch="2.16.0", lost="worker killed by SIGSEGV"),
        entry("added <b>x</b> @octo", {"export": "fail", "runtime": "not reached",
                                       "numerics": "not reached"}, torch="2.16.0",
              stage="checker", node="n_1", op="onnx::Conv", error="[ONNXRuntimeError] `x`"))
    return models_diff(base, new)


def test_the_section_lists_each_transition_with_the_pins_and_the_first_failing_node():
    from opsweep.bot.comment import models_markdown

    from .test_comment import _inert
    body = models_markdown(_pin_move(), None, None)
    assert body.startswith("### Models\n")
    assert ("Checked at `torch 2.16.0`, `onnx 1.23.2`, `onnxruntime 1.32.0`, `onnxscript 0.7.2` "
            "(moved: `torch 2.15.0 → 2.16.0`): 1 regression; 1 lost; 1 added; 1 removed; "
            "1 unchanged.") in body
    assert ("- **regression** `resnet50`: numerics pass → **fail** at `torch 2.16.0`; first "
            "diverging node `/layer3/layer3.0/conv1/Conv` (`aten::convolution`)") in body
    assert ("- **lost** `crashy`: machine failure, no verdict at `torch 2.16.0`: "
            "`worker killed by SIGSEGV` (before: export pass, runtime pass, numerics pass)") in body
    assert ("- added `added <b>x</b> @octo`: export **fail**, runtime not reached, numerics "
            "not reached at `torch 2.16.0`; fails in `checker` at node `n_1` (`onnx::Conv`): "
            "`` [ONNXRuntimeError] `x` ``") in body
    assert "- removed `gone`: no longer checked (before: export pass" in body
    assert "`vit`" not in body  # unchanged: counted, not listed
    # regressions first, then lost, added, removed
    assert body.index("`resnet50`") < body.index("`crashy`") < body.index("added <b>") < \
        body.index("`gone`")
    left = _inert(body)
    assert "<b>" not in left and "@octo" not in left


def test_the_section_names_the_operator_transitions_a_changed_model_uses():
    from opsweep.artifact import data as art
    from opsweep.artifact.diff import diff
    from opsweep.bot.comment import models_markdown
    from opsweep.model import Stage

    from ..factories import FP, result
    before = art.make_artifact(FP, "ci", 25, 0, {"convolution": result(["convolution"], Stage.OK),
                                                 "tan": result(["tan"], Stage.OK)})
    after = art.make_artifact(FP, "ci", 25, 0, {
        "convolution": result(["convolution"], Stage.OK, Stage.NUMERICS),
        "tan": result(["tan"], Stage.OK, Stage.NUMERICS)})
    body = models_markdown(_pin_move(), diff(before, after), after)
    assert "`resnet50` uses 1 operator(s) whose grade moved:" in body
    assert "`convolution` numerics: full → partial (regression)" in body and "`tan`" not in body
    assert "example_for('convolution'" in body  # the regression's repro snippet
    assert "`gone` uses" not in body  # a removed model's operators are not its concern now


def test_the_section_is_cut_to_its_limit_regressions_first():
    from opsweep.bot.comment import models_markdown
    base = record(*(entry(f"m{i:03}") for i in range(300)))
    new = record(*(entry(f"m{i:03}", {**OK, "numerics": "fail"}, torch="2.16.0",
                         stage="numerics", node="n" * 200) for i in range(300)))
    body = models_markdown(models_diff(base, new), None, None, limit=5_000)
    assert len(body) <= 5_000 and "`m000`" in body and "`m299`" not in body
    assert body.rstrip().endswith("more: the job summary lists every model.*")
    whole = models_markdown(models_diff(base, new), None, None, limit=10**9)
    assert "`m299`" in whole


def test_the_section_says_so_when_nothing_moved_or_the_base_has_no_record():
    from opsweep.bot.comment import models_first_markdown, models_markdown
    same = record(entry("a"), entry("b"))
    assert "every one of the 2 models keeps its verdicts" in \
        models_markdown(models_diff(same, same), None, None)
    first = models_first_markdown(_first(), "docs/models_checked.json")
    assert first == ("### Models\n\nNo models record on the base yet (`docs/models_checked.json`): "
                     "this run checked 3 model(s) at `torch 2.16.0`, `onnx 1.23.2`, "
                     "`onnxruntime 1.32.0`, `onnxscript 0.7.2`, 1 failing an axis, 1 lost to a "
                     "machine failure; their verdict transitions are shown from the next "
                     "regeneration on.\n")


def _first():
    return models_diff(None, record(
        entry("a", torch="2.16.0"), entry("b", lost="worker killed by SIGABRT", torch="2.16.0"),
        entry("c", {**OK, "numerics": "fail"}, stage="numerics", torch="2.16.0")))


def test_the_section_is_kept_whole_when_the_operator_transitions_fill_the_comment():
    from dataclasses import replace

    from opsweep.artifact.diff import diff
    from opsweep.bot.comment import GITHUB_COMMENT_LIMIT, models_markdown, to_markdown
    from opsweep.bot.publish import NOTE_ROOM, comment_body

    from .test_diff import artifacts
    old, new = artifacts()
    d = diff(old, new)
    many = replace(d, transitions=d.transitions * 2000)
    section = models_markdown(_pin_move(), many, new)
    assert len(to_markdown(many, new)) + len(section) > GITHUB_COMMENT_LIMIT  # would not fit
    body = comment_body(many, new, section, title="grade transitions", history="", account=None)
    assert body.endswith(section) and len(body) + NOTE_ROOM <= GITHUB_COMMENT_LIMIT
    assert "*Cut at GitHub's comment limit" in body  # the operator transitions were cut
    # without a models section the operator transitions keep the whole limit, as before
    assert comment_body(many, new, "", title="grade transitions", history="",
                        account=None) == to_markdown(many, new)


def test_the_check_page_shows_the_section_s_lines_as_the_bot_writes_them():
    """docs/check.md, "In the review bot": its example lines are this diff's."""
    from pathlib import Path

    from opsweep.bot.comment import models_markdown
    base = record(entry("resnet50"), entry("big_one"), entry("bert", {**OK, "dynamic": "fail"}))
    new = record(entry("resnet50", {**OK, "numerics": "fail"}, torch="2.16.0", stage="numerics",
                       node="convolution_12", op="convolution"),
                 entry("big_one", torch="2.16.0", lost="worker killed by SIGABRT"),
                 entry("bert", {**OK, "dynamic": "pass"}, torch="2.16.0"))
    lines = models_markdown(models_diff(base, new), None, None).splitlines()[4:]
    page = (Path(__file__).parents[2] / "docs" / "check.md").read_text("utf-8")
    assert len(lines) == 3 and "```text\n" + "\n".join(lines) + "\n```" in page


def test_the_section_follows_which_side_has_a_models_record(tmp_path):
    """Both records: the transitions; the result's only: one line; the base's only: one
    line saying the committed record is left as it is; neither: no section."""
    from opsweep.bot.publish import models_section
    from opsweep.files import Layout
    layout = Layout()
    committed, measured = tmp_path / "base.json", tmp_path / "new.json"
    committed.write_text(json.dumps(record(entry("a"))))
    measured.write_text(json.dumps(record(entry("a", {**OK, "numerics": "fail"}, torch="2.16.0",
                                                stage="numerics"))))
    files = {layout.models: measured}
    both, full = models_section(files, layout, committed, None, None)
    assert "- **regression** `a`: numerics pass → **fail**" in both and full == both
    first, _ = models_section(files, layout, tmp_path / "none.json", None, None)
    assert "No models record on the base yet (`docs/models_checked.json`)" in first
    gone, _ = models_section({}, layout, committed, None, None)
    assert gone == ("### Models\n\nThis run wrote no models record: the committed "
                    "`docs/models_checked.json` is left as it is (no model was checked at "
                    "these pins).\n")
    assert models_section({}, layout, tmp_path / "none.json", None, None) == ("", "")


def test_the_diff_command_adds_the_models_section_and_a_model_regression_exits_1(tmp_path,
                                                                                 capsys):
    """`opsweep diff OLD NEW --models OLD_RECORD NEW_RECORD`: the operator transitions, then
    the bot's "Models" section; a model that passed an axis and fails it now is a regression
    (exit 1) even when no operator moved."""
    from opsweep.artifact import data as art
    from opsweep.cli.main import main

    from ..factories import FP
    same = art.make_artifact(FP, "ci", 25, 0, {})
    a = tmp_path / "a.json"
    art.save(a, same)
    base, worse, better = (tmp_path / f"{n}.json" for n in ("base", "worse", "better"))
    base.write_text(json.dumps(record(entry("resnet50"), entry("vit", {**OK, "runtime": "fail"}))))
    worse.write_text(json.dumps(record(
        entry("resnet50", {**OK, "numerics": "fail"}, torch="2.16.0", stage="numerics",
              node="convolution_12", op="convolution", error="max abs 0.3 > 1e-05"),
        entry("vit", {**OK, "runtime": "fail"}, torch="2.16.0"))))
    better.write_text(json.dumps(record(entry("resnet50", torch="2.16.0"),
                                        entry("vit", torch="2.16.0"))))
    assert main(["diff", str(a), str(a), "--models", str(base), str(worse)]) == 1
    text = capsys.readouterr().out
    assert "### Models" in text and "resnet50" in text and "convolution_12" in text
    assert text.index("### Models") > 0  # after the operator part
    assert main(["diff", str(a), str(a), "--models", str(base), str(better)]) == 0
    assert "vit" in capsys.readouterr().out
    assert main(["diff", str(a), str(a), "--json", "--models", str(base), str(worse)]) == 1
    data = json.loads(capsys.readouterr().out)["models"]
    assert data["moved"] == ["torch 2.15.0 → 2.16.0"] and data["counts"]["regression"] == 1
    (resnet,) = [t for t in data["transitions"] if t["model"] == "resnet50"]
    assert resnet["axes"] == [{"axis": "numerics", "old": "pass", "new": "fail",
                               "where": {"stage": "numerics", "node": "convolution_12",
                                         "op": "convolution", "error": "max abs 0.3 > 1e-05"}}]
    assert main(["diff", str(a), str(a)]) == 0 and "### Models" not in capsys.readouterr().out
    (tmp_path / "bad.json").write_text('{"models_version": 2, "models": [{"name": 3}]}')
    assert main(["diff", str(a), str(a), "--models", str(base), str(tmp_path / "bad.json")]) == 2
    assert "bad.json" in capsys.readouterr().err

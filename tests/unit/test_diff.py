import json
from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.cli.main import main
from opsweep.artifact.diff import classify, diff
from opsweep.model import Grade, Stage
from opsweep.bot.comment import GITHUB_COMMENT_LIMIT, MARKER, to_json, to_markdown

from ..factories import FP, result

G = Grade


@pytest.mark.parametrize("old, new, kind", [
    (G.NONE, G.FULL, "improvement"), (G.PARTIAL, G.FULL, "improvement"),
    (G.NONE, G.PARTIAL, "improvement"), (G.BLOCKED, G.NONE, "improvement"),
    (G.BLOCKED, G.FULL, "improvement"),
    (G.FULL, G.PARTIAL, "regression"), (G.FULL, G.NONE, "regression"),
    (G.PARTIAL, G.NONE, "regression"), (G.FULL, G.BLOCKED, "regression"),
    (G.NONE, G.BLOCKED, "regression"),
    (G.FULL, G.FULL, None), (G.SKIPPED, G.FULL, "changed"),
])
def test_classification(old, new, kind):
    assert classify(old, new) == kind


def artifacts():
    old = art.make_artifact(FP, "ci", 25, 0, {
        "sin": result(["sin"], Stage.OK, Stage.OK),
        "cdist": result(["cdist"], Stage.NO_TRANSLATION),
        "gone": result(["gone"], Stage.OK),
    })
    new_fp = replace(FP, torch="2.14.1")
    new = art.make_artifact(new_fp, "ci", 25, 0, {
        "sin": result(["sin"], Stage.OK, Stage.TRANSLATION_ERROR),
        "cdist": result(["cdist"], Stage.OK),
        "fresh": result(["fresh"], Stage.OK),
    })
    return old, new


def test_transitions_per_axis_with_the_failures_that_changed():
    d = diff(*artifacts())
    assert d.fingerprint_changes == ("torch 2.13.0 → 2.14.1",)
    (reg,) = d.regressions
    assert (reg.op, reg.axis, reg.old, reg.new) == ("sin", "export", G.FULL, G.PARTIAL)
    assert [g.stage for g in reg.failures] == [Stage.TRANSLATION_ERROR]
    (imp,) = d.improvements
    assert (imp.op, imp.old, imp.new) == ("cdist", G.NONE, G.FULL)
    assert [g.stage for g in imp.failures] == [Stage.NO_TRANSLATION]  # what went away
    assert [t.op for t in d.of_kind("newly measured")] == ["fresh"]
    assert [t.op for t in d.of_kind("no longer measured")] == ["gone"]


def test_markdown_names_stage_error_smallest_example_and_a_snippet():
    old, new = artifacts()
    text = to_markdown(diff(old, new), new)
    assert text.startswith(MARKER)
    assert "Environment: `torch 2.13.0 → 2.14.1`." in text
    assert "<code>sin</code> export: full → partial" in text
    assert "translation-error ×1 — E: x" in text
    assert "example_for('sin', 'f32[1]')" in text and "dynamo=True" in text
    assert "`cdist` export: none → full (fixed: `float32 rank 1: no-translation" in text


def test_json_and_counts():
    data = to_json(diff(*artifacts()))
    assert data["counts"] == {"regression": 1, "improvement": 1, "measured anew": 0,
                              "newly measured": 1, "no longer measured": 1, "changed": 0}
    json.dumps(data)


def test_markdown_is_cut_at_the_comment_limit():
    old, new = artifacts()
    d = diff(old, new)
    many = replace(d, transitions=d.transitions * 2000)
    text = to_markdown(many, new)
    assert len(text) <= GITHUB_COMMENT_LIMIT and "job summary" in text
    assert text.startswith(MARKER)


def test_cli_exit_status_tells_regressions(tmp_path, capsys):
    old, new = artifacts()
    a, b = tmp_path / "old.json", tmp_path / "new.json"
    art.save(a, old)
    art.save(b, new)
    assert main(["diff", str(a), str(b)]) == 1
    assert main(["diff", str(a), str(a)]) == 0
    out = tmp_path / "d.json"
    assert main(["diff", str(a), str(b), "--json", "--out", str(out)]) == 1
    assert json.loads(out.read_text())["counts"]["regression"] == 1
    (tmp_path / "bad.json").write_text("{}")
    assert main(["diff", str(a), str(tmp_path / "bad.json")]) == 2


def test_a_bump_of_an_exporter_pin_alone_is_named_in_the_comment():
    old, _ = artifacts()
    new = replace(old, fingerprint=replace(FP, onnxscript="0.7.3", onnxruntime="1.33.0"))
    d = diff(old, new)
    assert d.fingerprint_changes == ("onnxruntime 1.32.0 → 1.33.0", "onnxscript 0.7.2 → 0.7.3")
    assert "Environment: `onnxruntime 1.32.0 → 1.33.0`, `onnxscript 0.7.2 → 0.7.3`." in \
        to_markdown(d, new)


def test_a_kind_reads_as_its_value_wherever_it_is_shown():
    import json

    from opsweep.artifact.diff import KINDS_ORDER, Kind
    assert [str(k) for k in KINDS_ORDER] == ["regression", "improvement", "measured anew",
                                             "newly measured", "no longer measured", "changed"]
    assert f"{Kind.NEWLY_MEASURED}" == "newly measured" and Kind.REGRESSION == "regression"
    assert json.dumps({Kind.CHANGED: [Kind.IMPROVEMENT]}) == '{"changed": ["improvement"]}'
    assert {k for k in Kind if k.whole_operator} == {Kind.NEWLY_MEASURED, Kind.NO_LONGER_MEASURED}


def test_the_stages_that_fail_an_axis_are_those_grading_counts_against_it():
    from opsweep.artifact.grade import AXES, FAILS, Counts, grade
    for stage in set(Stage) - {Stage.CAPTURE}:
        grades = grade([Counts({Stage.OK: 1, stage: 1})])
        below = {a for a in AXES if getattr(grades, a) not in (Grade.FULL, None)}
        assert below == {a for a, stages in FAILS.items() if stage in stages}, stage
    # capture is filed under export, and blocks it when no example got past it
    assert Stage.CAPTURE in FAILS["export"]
    assert grade([Counts({Stage.CAPTURE: 2})]).export is Grade.BLOCKED

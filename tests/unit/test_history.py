"""History records and their view. Keyed by the whole pin set: onnxscript moving alone is
a point of its own, each bump names the pins that moved and each transition's smallest
failing example, and specs a torch no longer has are recorded with the point from which
they are gone."""

import json
import shutil
from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.artifact import records as history
from opsweep.page.history import render as render_history
from opsweep.artifact.data import STOCK
from opsweep.errors import ArtifactError, DataFileError
from opsweep.model import Stage

from ..factories import FP, T, result, with_target

OLD_SCRIPT = replace(FP, onnxscript="0.7.1")


def measured(fingerprint, sin, absent=None):
    return art.make_artifact(fingerprint, "ci", 25, 0, {"sin": result(["sin"], *sin),
                                                        "cos": result(["cos"], Stage.OK)},
                             absent=absent)


def test_an_onnxscript_bump_alone_is_a_point_of_its_own_named_by_the_pin_that_moved(tmp_path):
    first = history.write(measured(OLD_SCRIPT, (Stage.OK,)), tmp_path)
    second = history.write(measured(FP, (Stage.OK, Stage.NO_TRANSLATION)), tmp_path)
    assert first != second and second.name == (
        "torch-2.13.0+onnx-1.23.2+onnxruntime-1.32.0+onnxscript-0.7.2+hypothesis-6.170.17.json")
    records = history.load_all(tmp_path)
    assert [r.name for r in records] == ["2.13.0 (onnxscript 0.7.1)", "2.13.0 (onnxscript 0.7.2)"]
    [bump] = history.bumps(records)
    assert bump.moved == ("onnxscript 0.7.1 → 0.7.2",)
    [change] = bump.changes["stock"]
    assert (change.op, change.kind, change.example) == ("sin", "regression", "f32[1] (no-translation)")
    page = render_history(records)
    assert "### torch 2.13.0 (onnxscript 0.7.1) → 2.13.0 (onnxscript 0.7.2)" in page
    assert "Pins moved: <code>onnxscript 0.7.1 → 0.7.2</code>." in page
    assert ('<li data-op="sin" data-axis="export"><a href="../operators/sin/">sin'
            '</a> export: full → partial (smallest failing example: '
            '<code>f32[1] (no-translation)</code>)</li>') in page


def test_the_smallest_failing_example_is_kept_per_operator_and_axis():
    r = history.record(measured(FP, (Stage.NUMERICS, Stage.NO_TRANSLATION, Stage.OK,
                                     Stage.TRANSLATION_ERROR)))
    assert r.failing == {"sin": {"export": "f32[1] (no-translation)",  # f32[3] is larger
                                 "numerics": "f32[0] (numerics)"}}


def test_a_legacy_record_is_read_and_rewritten_in_place_not_doubled(tmp_path):
    path = history.write(measured(FP, (Stage.OK,)), tmp_path)
    legacy = tmp_path / "torch-2.13.0.json"
    shutil.move(path, legacy)
    assert [r.name for r in history.load_all(tmp_path)] == ["2.13.0"]
    assert history.write(measured(FP, (Stage.NO_TRANSLATION,)), tmp_path) == legacy
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torch-2.13.0.json"]
    shutil.copy(legacy, tmp_path / ("torch-2.13.0+onnx-1.23.2+onnxruntime-1.32.0+onnxscript-0.7.2"
                                    "+hypothesis-6.170.17.json"))
    with pytest.raises(DataFileError, match="the same pin set as torch-2.13.0"):
        history.load_all(tmp_path)


def test_a_record_from_before_hypothesis_was_a_pin_keeps_its_name(tmp_path):
    """Records of schema-4 artifacts name no hypothesis: their file name leaves it out,
    and they still load beside records that name it."""
    path = history.write(measured(replace(FP, hypothesis="unknown"), (Stage.OK,)), tmp_path)
    assert path.name == "torch-2.13.0+onnx-1.23.2+onnxruntime-1.32.0+onnxscript-0.7.2.json"
    history.write(measured(replace(FP, torch="2.14.1"), (Stage.OK,)), tmp_path)
    assert [r.version for r in history.load_all(tmp_path)] == ["2.13.0", "2.14.1"]


def test_a_record_named_after_other_pins_than_it_holds_is_refused(tmp_path):
    path = history.write(measured(FP, (Stage.OK,)), tmp_path)
    data = json.loads(path.read_text())
    data["fingerprint"]["onnxscript"] = "0.9.0"
    path.write_text(json.dumps(data))
    with pytest.raises(DataFileError, match=r"onnxscript-0\.7\.2\+hypothesis-6\.170\.17\.json at torch.*file name"):
        history.load(path)


def test_a_spec_gone_from_torch_is_recorded_and_shown_removed_from_that_point(tmp_path):
    why = "aten::cos not in torch 2.14.1's operator listing"
    history.write(measured(FP, (Stage.OK,)), tmp_path)
    newer = measured(replace(FP, torch="2.14.1"), (Stage.OK,), absent={"cos": why})
    newer = art.make_artifact(newer.fingerprint, "ci", 25, 0, {"sin": newer.specs["sin"]},
                              absent={"cos": why})
    history.write(newer, tmp_path)
    history.write(art.make_artifact(replace(FP, torch="2.15.0"), "ci", 25, 0,
                                    {"sin": newer.specs["sin"]}, absent={"cos": why}), tmp_path)
    records = history.load_all(tmp_path)
    assert records[1].absent == {"cos": why}
    assert history.removed_in(records, "cos") == "2.14.1"
    assert history.removed_in(records[1:], "cos") == ""  # absent in every record: no release known
    assert history.removed_in(records, "sin") == ""
    first, second = history.bumps(records)
    assert first.removed == (("cos", why),) and second.removed == ()
    page = render_history(records)
    assert "Not present any more (removed in torch 2.14.1, so not measured):" in page
    assert f"<li>spec <code>cos</code>: {why}</li>" in page.replace("&#39;", "'")


# --- records, their files and the view ---------------------------------------------------

def test_history_records_round_trip_order_by_release_and_render(tmp_path):
    old = with_target({"sin": result(["sin"], Stage.OK), "cos": result(["cos"], Stage.NO_TRANSLATION)},
                      {"cos": result(["cos"], Stage.OK)})
    newer = replace(FP, torch="2.14.1+cu130")
    new = with_target({"sin": result(["sin"], Stage.OK, Stage.NO_TRANSLATION),
                       "cos": result(["cos"], Stage.OK)},
                      {"cos": result(["cos"], Stage.OK)}, fingerprint=newer)
    pins = "+onnx-1.23.2+onnxruntime-1.32.0+onnxscript-0.7.2+hypothesis-6.170.17.json"
    assert history.write(new, tmp_path).name == "torch-2.14.1" + pins
    assert history.write(old, tmp_path).name == "torch-2.13.0" + pins
    records = history.load_all(tmp_path)
    assert [r.version for r in records] == ["2.13.0", "2.14.1"]  # 2.14 after 2.13, not before
    assert records[0].targets[STOCK] == {"cos": "n---", "sin": "fff-"}
    [bump] = history.bumps(records)
    assert [(c.op, c.axis, c.kind) for c in bump.changes[STOCK]] == [
        ("sin", "export", "regression"), ("cos", "export", "improvement")]
    assert bump.changes[T.name] == ()
    page = render_history(records)
    assert "### torch 2.13.0 → 2.14.1" in page and ">sin</a> export: full → partial" in page
    assert ('| [`sin`](operators/sin.md) | <b class="g-f">f<i>ull</i></b><b class="g-f">f<i>ull</i></b>'
            '<b class="g-f">f<i>ull</i></b><b class="g-x">-<i> n/a</i></b> | <b class="g-p">p<i>artial'
            '</i></b>') in page
    assert f"## Operators whose grades changed, with `{T.name}`" in page
    history.write(new, tmp_path)  # measuring a version again replaces its record
    assert len(history.load_all(tmp_path)) == 2


def test_a_record_that_says_the_same_keeps_its_file_and_its_date(tmp_path):
    from datetime import datetime, timezone
    day = [datetime(2026, 11, d, 12, tzinfo=timezone.utc) for d in (1, 2, 3)]
    a = with_target({"sin": result(["sin"], Stage.OK)}, {})
    path = history.write(a, tmp_path, now=day[0])
    before = path.read_bytes()
    assert history.load(path).generated_at == "2026-11-01T12:00:00+00:00"
    assert history.write(replace(a, regen_index=7), tmp_path, now=day[1]) == path
    assert path.read_bytes() == before  # same grades: not even the date moves
    history.write(with_target({"sin": result(["sin"], Stage.OK, Stage.CHECKER)}, {}), tmp_path,
                  now=day[2])
    assert history.load(path).generated_at == "2026-11-03T12:00:00+00:00"


def test_version_key_orders_releases():
    versions = ["2.14.1", "2.9.1", "2.14.0", "2.14.0rc1", "2.13.0"]
    assert sorted(versions, key=history.version_key) == ["2.9.1", "2.13.0", "2.14.0rc1", "2.14.0",
                                                         "2.14.1"]


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.update(history_version=9), "history_version"),
    (lambda d: d["targets"]["stock"].update(sin="fff"), "targets.stock.sin"),
    (lambda d: d.update(torch="2.99.0"), "torch"),
    (lambda d: d["targets"].pop("stock"), "targets"),
])
def test_bad_history_records_are_refused_naming_the_field(tmp_path, edit, field):
    path = history.write(with_target({"sin": result(["sin"], Stage.OK)}, {}), tmp_path)
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(DataFileError, match=rf"torch-2\.13\.0\+onnx-.*\.json at {field}\b"):
        history.load(path)


def test_shard_artifacts_make_no_history_record(tmp_path):
    shard = replace(with_target({"sin": result(["sin"], Stage.OK)}, {}), shard=(1, 2))
    with pytest.raises(ArtifactError, match="shard"):
        history.write(shard, tmp_path)


def test_a_target_new_at_the_latest_point_and_a_catalog_change_are_no_transition(tmp_path):
    """The round's re-measure: a target measured first at the newest point is "measured
    at one point only", not every operator changed; a grade that moved where the specs
    measuring it changed is counted measured anew, apart from the changed table."""
    old = art.make_artifact(FP, "ci", 25, 0, {"sin": result(["sin"], Stage.OK),
                                              "cos": result(["cos"], Stage.OK)})
    newer = replace(FP, torch="2.14.1")
    moved = replace(result(["cos"], Stage.OK, Stage.NO_TRANSLATION), digest="fedcba9876543210")
    new = with_target({"sin": result(["sin"], Stage.OK, Stage.NO_TRANSLATION), "cos": moved},
                      {"cos": result(["cos"], Stage.OK)}, fingerprint=newer)
    history.write(old, tmp_path)
    history.write(new, tmp_path)
    page = render_history(history.load_all(tmp_path))
    stock = page.split("## Operators whose grades changed\n")[1].split("## ")[0]
    assert "1 of them changed grade between points measured by the same specs" in stock
    assert "1 more moved only where the specs measuring them changed" in stock
    assert "[`sin`]" in stock and "[`cos`]" not in stock
    with_table = page.split(f"## Operators whose grades changed, with `{T.name}`")[1]
    assert "Measured at one point only (torch 2.14.1): nothing to compare yet." in with_table
    assert "| Operator |" not in with_table

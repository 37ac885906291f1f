import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.data import Fingerprint
from opsweep.errors import ArtifactError
from opsweep.artifact.grade import StageCount
from opsweep.model import Stage

from ..factories import FP, changed_paths, result


@pytest.fixture
def artifact():
    return art.make_artifact(FP, "ci", 25, 3, {
        "sin": result(["sin"], Stage.OK, Stage.OK),
        "cos": result(["cos"], Stage.OK, Stage.CHECKER),
        "sin_alt": result(["sin", "abs"], Stage.NO_TRANSLATION),
    })


def test_round_trip_is_identity(tmp_path, artifact):
    path = tmp_path / "a.json"
    art.save(path, artifact)
    loaded = art.load(path)
    assert loaded == artifact
    assert art.canonical_bytes(loaded) == path.read_bytes()


def test_outcome_counts_round_trip_and_must_add_up(tmp_path, artifact):
    assert artifact.specs["cos"].outcomes == (StageCount("float32", 1, Stage.CHECKER, 1),
                                              StageCount("float32", 1, Stage.OK, 1))
    data = art.to_data(artifact)
    data["specs"]["cos"]["outcomes"][0]["count"] = 2  # a hand edit
    with pytest.raises(ArtifactError, match=r"specs\.cos\.outcomes.*stage counts"):
        art.from_data(data)
    data = art.to_data(artifact)
    data["specs"]["cos"]["outcomes"] = [{"dtype": "float16", "rank": 1, "stage": "checker",
                                         "count": 1}, data["specs"]["cos"]["outcomes"][1]]
    with pytest.raises(ArtifactError, match=r"specs\.cos\.outcomes.*failure groups"):
        art.from_data(data)
    old = art.to_data(artifact)  # schema 4 had neither outcomes nor hypothesis: both unknown
    old["schema_version"] = 4
    del old["fingerprint"]["hypothesis"]
    for spec in old["specs"].values():
        del spec["outcomes"]
    migrated = art.from_data(old)
    assert migrated.fingerprint.hypothesis == "unknown"
    assert all(r.outcomes is None for r in migrated.specs.values())


def test_operators_pool_every_spec_that_declares_them(artifact):
    sin = artifact.operators["sin"]
    assert sin.specs == ("sin", "sin_alt")
    assert sin.grades.export.value == "partial"
    assert artifact.operators["abs"].grades.export.value == "none"


def test_canonical_bytes_are_sorted_and_stable(artifact):
    data = art.canonical_bytes(artifact)
    assert data == art.canonical_bytes(artifact)
    parsed = json.loads(data)
    assert list(parsed) == sorted(parsed)
    assert list(parsed["operators"]) == sorted(parsed["operators"])


def _write(tmp_path, data):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("fingerprint"), "(top level)"),
    (lambda d: d.update(schema_version=99), "schema_version"),
    (lambda d: d.update(profile="weekly"), "profile"),
    (lambda d: d["fingerprint"].update(opset="20"), "fingerprint.opset"),
    (lambda d: d["specs"]["cos"].update(export="fulll"), "specs.cos.export"),
    (lambda d: d["specs"]["cos"]["stages"].update(exploded=1), "specs.cos.stages"),
    (lambda d: d["specs"]["cos"]["failures"][0].update(rank=-1), "specs.cos.failures.0.rank"),
    (lambda d: d["specs"]["sin"].update(aten_ops=[]), "specs.sin.aten_ops"),
    (lambda d: d["operators"]["sin"].update(export="full"), "operators.sin.export"),
    (lambda d: d["operators"].pop("abs"), "operators.abs"),
    (lambda d: d["operators"].update(tan=d["operators"]["sin"]), "operators.tan"),
])
def test_every_validation_error_names_the_file_and_field(tmp_path, artifact, mutate, field):
    data = json.loads(art.canonical_bytes(artifact))
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(ArtifactError) as info:
        art.load(path)
    assert info.value.field == field
    assert str(path) in str(info.value) and field in str(info.value)


def test_not_json_names_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"schema_version": 1,\n  oops}')
    with pytest.raises(ArtifactError, match=r"broken.json at line 2 column 3: not valid JSON"):
        art.load(path)


def test_missing_file(tmp_path):
    with pytest.raises(ArtifactError, match="no such file"):
        art.load(tmp_path / "nope.json")


def test_failed_write_leaves_the_old_artifact_and_no_temp_file(tmp_path, artifact, monkeypatch):
    path = tmp_path / "a.json"
    art.save(path, artifact)
    before = path.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        art.save(path, artifact)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_save_refuses_what_it_would_not_load(tmp_path, artifact):
    bad = art.make_artifact(FP, "weekly", 25, 0, artifact.specs)
    with pytest.raises(ArtifactError, match="profile"):
        art.save(tmp_path / "x.json", bad)
    assert not (tmp_path / "x.json").exists()


def test_shard_marker_round_trips(tmp_path, artifact):
    sharded = art.make_artifact(FP, "ci", 25, 3, artifact.specs, (2, 3))
    art.save(tmp_path / "s.json", sharded)
    assert art.load(tmp_path / "s.json").shard == (2, 3)
    assert "shard" not in json.loads(art.canonical_bytes(artifact))


def test_absent_specs_round_trip_ungraded_and_never_beside_a_measurement(tmp_path, artifact):
    why = "aten::cholesky not in torch 2.15.0's operator listing"
    absent = art.make_artifact(FP, "ci", 25, 3, artifact.specs, absent={"cholesky": why})
    art.save(tmp_path / "a.json", absent)
    loaded = art.load(tmp_path / "a.json")
    assert loaded.absent == {"cholesky": why} and "cholesky" not in loaded.operators
    assert "absent" not in json.loads(art.canonical_bytes(artifact))  # nothing absent: no field
    data = json.loads(art.canonical_bytes(absent))
    data["absent"]["sin"] = "gone"
    (tmp_path / "b.json").write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match=r"b\.json.*absent\.sin.*also measured"):
        art.load(tmp_path / "b.json")
    data["absent"] = {"cholesky": ""}
    (tmp_path / "c.json").write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match=r"c\.json.*absent"):
        art.load(tmp_path / "c.json")


def test_fingerprint_changes():
    new = Fingerprint("2.14.1", "1.23.2", "1.32.0", "0.7.2", 20, "dynamo-fast", hypothesis="6.170.17")
    assert art.fingerprint_changes(FP, new) == ["torch 2.13.0 → 2.14.1", "exporter dynamo → dynamo-fast"]


def as_version_2(artifact):
    """The artifact as opsweep wrote it at schema version 2: with the run's time and
    every spec's reuse decision in it."""
    data = json.loads(art.canonical_bytes(artifact))
    data.update(schema_version=2, generated_at="2026-11-29T00:00:00+00:00")
    tables = [data["specs"]] + [t["specs"] for t in data["targets"].values()]
    for table in tables:
        for spec in table.values():
            spec["reuse"] = {"reused": False, "reason": "--no-reuse"}
    return data


def test_a_version_2_artifact_loads_without_its_bookkeeping(tmp_path, artifact):
    data = as_version_2(artifact)
    assert art.from_data(data, "v2.json") == artifact
    assert data["schema_version"] == 2 and "reuse" in data["specs"]["sin"]  # the input is untouched
    data["operators"]["sin"]["export"] = "full"  # a hand edit is still refused, by field
    with pytest.raises(ArtifactError, match="v2.json at operators.sin.export"):
        art.from_data(data, "v2.json")


def test_the_committed_artifact_loads_and_saves_without_bookkeeping(tmp_path):
    committed = Path(__file__).resolve().parents[2] / "docs" / "onnx_support_measured.json"
    loaded = art.load(committed)
    art.save(tmp_path / "a.json", loaded)
    text = (tmp_path / "a.json").read_text()
    assert '"reuse"' not in text and '"generated_at"' not in text
    assert json.loads(text)["schema_version"] == art.SCHEMA_VERSION
    assert art.same_measurements(art.load(tmp_path / "a.json"), loaded)


def test_the_header_is_all_that_separates_two_equal_measurements(artifact):
    later = replace(artifact, regen_index=artifact.regen_index + 1)
    assert art.same_measurements(artifact, later) and artifact != later
    changed = art.make_artifact(FP, "ci", 25, 3, {**artifact.specs,
                                                  "cos": result(["cos"], Stage.OK, Stage.OK)})
    assert not art.same_measurements(artifact, changed)


def test_one_changed_spec_moves_only_its_own_lines_its_operators_and_the_header(artifact):
    specs = {**artifact.specs, "cos": result(["cos"], Stage.OK, Stage.OK)}
    after = art.make_artifact(FP, "ci", 25, 4, specs)
    assert changed_paths(art.canonical_bytes(artifact), art.canonical_bytes(after)) == {
        ("specs", "cos"), ("operators", "cos"), ("regen_index",)}
    again = replace(artifact, regen_index=4)
    assert changed_paths(art.canonical_bytes(artifact), art.canonical_bytes(again)) == {
        ("regen_index",)}


# --- a custom target is written as what differs from the stock target (schema 4) ----------

TABLE = art.Translations("tables.py", "TABLE", "fedcba9876543210", ("aten::cos",))


@pytest.fixture
def with_target(artifact):
    specs = dict(artifact.specs)
    target = {**{n: r for n, r in specs.items() if n != "sin_alt"},  # sin_alt not measured
              "cos": result(["cos"], Stage.OK, Stage.OK)}  # the table fixes cos
    return art.make_artifact(FP, "ci", 25, 3, specs, targets={TABLE.name: (TABLE, target)})


def test_a_target_is_written_as_its_difference_from_stock(tmp_path, with_target):
    data = json.loads(art.canonical_bytes(with_target))
    written = data["targets"][TABLE.name]
    assert sorted(written["specs"]) == ["cos"] and written["absent"] == ["sin_alt"]
    assert sorted(written["operators"]) == ["cos", "sin"]  # sin loses sin_alt; abs follows the specs
    art.save(tmp_path / "a.json", with_target)
    loaded = art.load(tmp_path / "a.json")
    assert loaded == with_target  # readers see the complete results
    assert sorted(loaded.target(TABLE.name).specs) == ["cos", "sin"]
    assert art.canonical_bytes(loaded) == (tmp_path / "a.json").read_bytes()


def test_every_target_is_held_alike_and_asked_by_name(with_target):
    stock, table = with_target.target(art.STOCK), with_target.target(TABLE.name)
    assert with_target.target_names == (art.STOCK, TABLE.name)
    assert tuple(with_target.results.values()) == (stock, table)
    assert (stock.name, stock.entry, stock.absent) == (art.STOCK, None, "")
    assert (table.name, table.entry) == (TABLE.name, TABLE)
    assert with_target.specs is stock.specs and with_target.operators is stock.operators
    assert with_target.others == (table,) and with_target.target("nope:TABLE") is None
    assert with_target.grades("cos", TABLE.name) == table.operators["cos"].grades


def test_the_committed_artifact_re_serialises_byte_identically():
    committed = Path(__file__).resolve().parents[2] / "docs" / "onnx_support_measured.json"
    loaded = art.load(committed)
    assert loaded.target_names[0] == art.STOCK and len(loaded.target_names) > 1
    text = committed.read_text("utf-8")
    if '"schema_version": 5,' in text:  # measured before the observed error (schema 6)
        assert loaded.policy == "" and all(r.errors is None for r in loaded.specs.values())
        text = text.replace('"schema_version": 5,', f'"schema_version": {art.SCHEMA_VERSION},')
    assert art.canonical_bytes(loaded).decode("utf-8") == text


def test_a_target_equal_to_stock_writes_nothing_but_its_fingerprint(artifact):
    same = art.make_artifact(FP, "ci", 25, 3, dict(artifact.specs),
                             targets={TABLE.name: (TABLE, dict(artifact.specs))})
    written = json.loads(art.canonical_bytes(same))["targets"][TABLE.name]
    assert written["specs"] == {} and written["operators"] == {} and "absent" not in written
    assert art.from_data(json.loads(art.canonical_bytes(same))) == same


def as_version_3(artifact):
    """The artifact as schema version 3 wrote it: every target in full."""
    data = json.loads(art.canonical_bytes(artifact))
    data["schema_version"] = 3
    for t in artifact.others:
        name = t.name
        data["targets"][name]["specs"] = {n: art.spec_to_data(r) for n, r in t.specs.items()}
        data["targets"][name]["operators"] = art._operators_out(t.operators)
        data["targets"][name].pop("absent", None)
    return data


def test_a_version_3_artifact_reads_as_complete_results(with_target):
    data = as_version_3(with_target)
    assert len(data["targets"][TABLE.name]["specs"]) == 2
    assert art.from_data(data, "v3.json") == with_target
    data["targets"][TABLE.name]["operators"]["cos"]["export"] = "none"
    with pytest.raises(ArtifactError, match=r"v3.json at targets\..*\.operators\.cos\.export"):
        art.from_data(data, "v3.json")


def test_a_hand_edited_difference_is_refused(with_target):
    data = json.loads(art.canonical_bytes(with_target))
    data["targets"][TABLE.name]["absent"] = ["nosuch"]
    with pytest.raises(ArtifactError, match=r"absent.*'nosuch' is not a spec of the stock target"):
        art.from_data(data, "a.json")
    data = json.loads(art.canonical_bytes(with_target))
    del data["targets"][TABLE.name]["operators"]["cos"]  # cos differs, so it must be written
    with pytest.raises(ArtifactError, match=r"operators\.cos.*missing"):
        art.from_data(data, "a.json")

import json
import os

import pytest

from opsweep import artifact as art
from opsweep.artifact import Fingerprint, Reuse, SpecResult
from opsweep.errors import ArtifactError
from opsweep.grade import (Counts, dynamic_counts, dynamic_failures, failure_groups, grade,
                           stage_counts)
from opsweep.model import Outcome, Stage

FP = Fingerprint("2.13.0", "1.23.2", "1.32.0", "0.7.2", 20, "dynamo")


def result(ops, *stages, nondeterministic=False, dynamic=()):
    """A spec result from outcome stages; `dynamic` gives the dynamic stage of each
    outcome in order (None: not re-exported)."""
    dynamic = tuple(dynamic) + (None,) * (len(stages) - len(dynamic))
    outs = [Outcome(s, f"f32[{i}]", "float32", 1, i, "" if s is Stage.OK else "E: x",
                    d, "" if d in (None, Stage.OK) else "D: y")
            for i, (s, d) in enumerate(zip(stages, dynamic))]
    counts = stage_counts(outs)
    dyn, regressed = dynamic_counts(outs)
    return SpecResult(tuple(ops), "unary", "ci", len(outs), counts, failure_groups(outs),
                      grade([Counts(counts, nondeterministic, dyn, regressed)]), nondeterministic,
                      None, Reuse(False, "measured"), "0123456789abcdef", len(outs), dyn,
                      regressed, dynamic_failures(outs))


@pytest.fixture
def artifact():
    return art.make_artifact(FP, "ci", 25, 3, {
        "sin": result(["sin"], Stage.OK, Stage.OK),
        "cos": result(["cos"], Stage.OK, Stage.CHECKER),
        "sin_alt": result(["sin", "abs"], Stage.NO_TRANSLATION),
    }, "2026-11-29T00:00:00+00:00")


def test_round_trip_is_identity(tmp_path, artifact):
    path = tmp_path / "a.json"
    art.save(path, artifact)
    loaded = art.load(path)
    assert loaded == artifact
    assert art.canonical_bytes(loaded) == path.read_bytes()


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
    sharded = art.make_artifact(FP, "ci", 25, 3, artifact.specs, "t", (2, 3))
    art.save(tmp_path / "s.json", sharded)
    assert art.load(tmp_path / "s.json").shard == (2, 3)
    assert "shard" not in json.loads(art.canonical_bytes(artifact))


def test_fingerprint_changes():
    new = Fingerprint("2.14.1", "1.23.2", "1.32.0", "0.7.2", 20, "dynamo-fast")
    assert art.fingerprint_changes(FP, new) == ["torch 2.13.0 → 2.14.1", "exporter dynamo → dynamo-fast"]


def test_gap_check_statuses():
    assert art.gap_check("r", Stage.NO_TRANSLATION, {Stage.NO_TRANSLATION: 3}).status == "confirmed"
    assert art.gap_check("r", Stage.NO_TRANSLATION, {Stage.OK: 3}).status == "stale"
    moved = art.gap_check("r", Stage.NO_TRANSLATION, {Stage.CHECKER: 1, Stage.OK: 2})
    assert moved.status == "moved" and moved.measured == (Stage.CHECKER,)


import pytest

from opsweep.artifact import data as art
from opsweep.errors import ArtifactError, UsageError
from opsweep.sweep.journal import Journal
from opsweep.model import Stage
from opsweep.artifact.shard import assign, merge, parse_shard

from ..factories import FP, result


def test_parse_shard():
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "2-4", "", "a/b"):
        with pytest.raises(UsageError, match="--shard"):
            parse_shard(bad)


def test_assignment_is_deterministic_complete_and_balanced():
    costs = {f"s{i}": (i * 7) % 23 + 1 for i in range(200)}
    owner = assign(costs, 3)
    assert owner == assign(dict(reversed(list(costs.items()))), 3)
    assert set(owner) == set(costs) and set(owner.values()) == {1, 2, 3}
    loads = [sum(c for n, c in costs.items() if owner[n] == k) for k in (1, 2, 3)]
    assert max(loads) - min(loads) <= max(costs.values())


def part(specs, index, count, **kw):
    fields = dict(fingerprint=FP, profile="ci", examples=25, regen_index=1)
    fields.update(kw)
    return art.make_artifact(fields["fingerprint"], fields["profile"], fields["examples"],
                             fields["regen_index"], specs, (index, count))


A = {"sin": result(["sin"], Stage.OK)}
B = {"cos": result(["cos"], Stage.CHECKER), "sin_alt": result(["sin"], Stage.NO_TRANSLATION)}


def test_merge_rebuilds_the_single_artifact():
    merged = merge([("a", part(A, 1, 2)), ("b", part(B, 2, 2))])
    single = art.make_artifact(FP, "ci", 25, 1, {**A, **B})
    assert art.canonical_bytes(merged) == art.canonical_bytes(single)
    assert merged.operators["sin"].specs == ("sin", "sin_alt")


@pytest.mark.parametrize("parts, message", [
    ([("a", part(A, 1, 2)), ("b", part(B, 2, 2, profile="nightly"))], "b at profile"),
    ([("a", part(A, 1, 2)), ("b", part(B, 2, 2, regen_index=2))], "b at regen_index"),
    ([("a", part(A, 1, 2)), ("b", part(A, 2, 2))], "b at specs.sin: also measured by a"),
    ([("a", part(A, 1, 2)), ("b", part(B, 1, 2))], "b at shard.index"),
    ([("a", part(A, 1, 2)), ("b", part(B, 2, 3))], "b at shard.count"),
])
def test_merge_refuses_mismatches(parts, message):
    with pytest.raises(ArtifactError, match=message):
        merge(parts)


def test_merge_refuses_fingerprint_mismatch_and_missing_shards():
    from dataclasses import replace
    with pytest.raises(ArtifactError, match="b at fingerprint"):
        merge([("a", part(A, 1, 2)), ("b", part(B, 2, 2, fingerprint=replace(FP, torch="2.14.1")))])
    with pytest.raises(UsageError, match="shard\\(s\\) 2/2 missing"):
        merge([("a", part(A, 1, 2))])
    with pytest.raises(ArtifactError, match="not a shard artifact"):
        merge([("a", art.make_artifact(FP, "ci", 25, 1, A))])


HEADER = {"run": 1}


def test_journal_resumes_ignores_a_torn_line_and_sets_aside_other_runs(tmp_path):
    path = tmp_path / "a.json.checkpoint.jsonl"
    j = Journal(path, HEADER).open()
    j.record("sin", A["sin"])
    j.close(finished=False)
    with open(path, "a") as f:
        f.write('{"spec": "cos", "resu')  # killed mid-write
    again = Journal(path, HEADER).open()
    assert list(again.done) == ["sin"] and again.done["sin"] == A["sin"]
    again.record("cos", B["cos"])
    again.close(finished=False)
    assert list(Journal(path, HEADER).open().done) == ["sin", "cos"]
    other = Journal(path, {"run": 2}).open()
    assert other.discarded and other.done == {}
    other.close(finished=True)
    assert not path.exists()


def test_journal_corruption_in_the_middle_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "j.jsonl"
    j = Journal(path, HEADER).open()
    j.record("sin", A["sin"])
    j.record("cos", B["cos"])
    j.close(finished=False)
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"export": "full"', '"export": "fantastic"')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ArtifactError, match="line 2 at export"):
        Journal(path, HEADER).open()


def test_the_run_log_keeps_every_decision_beside_the_artifact(tmp_path):
    from opsweep.sweep.journal import read_run, run_path, write_run
    from opsweep.sweep.reuse import Decision
    from opsweep.sweep.targets import Key
    path = run_path(tmp_path / "a.json")
    assert path.name == "a.json.run.jsonl"  # not *.json: never taken for an artifact
    decisions = {"stock": {"sin": Decision(True, "unchanged fingerprint and spec"),
                           "cos": Decision(False, "machine failure", ": float32 rank 1 "
                                           "export: WorkerLost: timed out during export")}}
    write_run(path, {"regen_index": 4}, decisions, {Key("stock", "cos")})
    header, lines = read_run(path)
    assert header == {"regen_index": 4}
    assert lines == [
        {"target": "stock", "spec": "cos", "reused": False, "why": "machine failure",
         "reason": "machine failure: float32 rank 1 export: WorkerLost: timed out during export",
         "resumed": True},
        {"target": "stock", "spec": "sin", "reused": True, "why": "unchanged fingerprint and spec",
         "reason": "unchanged fingerprint and spec", "resumed": False}]
    path.write_text("{not json\n")
    with pytest.raises(ArtifactError, match="a.json.run.jsonl.*not a readable run log"):
        read_run(path)


def test_merge_keeps_the_specs_the_measured_torch_does_not_have():
    why = "aten::qr not in torch 2.15.0's operator listing"
    gone = art.make_artifact(FP, "ci", 25, 1, B, (2, 2), absent={"qr": why})
    merged = merge([("a", part(A, 1, 2)), ("b", gone)])
    assert merged.absent == {"qr": why}
    assert art.canonical_bytes(merged) == art.canonical_bytes(
        art.make_artifact(FP, "ci", 25, 1, {**A, **B}, absent={"qr": why}))

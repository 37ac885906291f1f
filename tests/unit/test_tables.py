"""Cell tables (opsweep.artifact.tables): the compact artifact `opsweep check` ships with,
which table a check uses for the installed torch, and what --against VERSION resolves."""

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.artifact import tables
from opsweep.artifact.data import Breakage
from opsweep.errors import ArtifactError
from opsweep.model import Stage

from ..factories import FP, result, with_target


def _artifact():
    stock = {"add": replace(result(["add"], Stage.OK, Stage.RUNTIME),
                            arguments={"aten::add.Tensor": {"alpha": {"type": "Scalar",
                                                                      "classes": ["one"]}}}),
             "relu": result(["relu"], Stage.OK, Stage.OK, Stage.NUMERICS)}
    return replace(with_target(stock, {"add": result(["add"], Stage.OK, Stage.OK)}),
                   policy="opsweep v1")


@pytest.mark.parametrize("installed, chosen, below, above", [
    ("2.15.0", "2.15.0", "", ""),
    ("2.15.0+cpu", "2.15.0", "", ""),  # a local build of a measured release is that release
    ("2.14.1", "2.13.0", "2.13.0", "2.15.0"),  # between two: the nearest below, both named
    ("2.16.0.dev20261201", "2.15.0", "2.15.0", ""),
    ("2.12.0", "2.13.0", "", "2.13.0"),  # older than every measured one: the nearest above
    ("", "2.15.0", "", ""),  # no torch installed: the newest measured
])
def test_the_table_for_the_installed_torch_is_its_own_else_the_nearest(installed, chosen, below,
                                                                       above):
    choice = tables.choose(installed, ["2.15.0", "2.13.0"])
    assert (choice.chosen, choice.below, choice.above) == (chosen, below, above)
    said = choice.sentence()
    assert f"packaged table for torch {chosen}" in said
    if below or above:
        assert f"below is {below or 'none'}, above {above or 'none'}" in said
        assert f"the prediction is torch {chosen}'s" in said


def test_no_packaged_table_at_all_is_said():
    with pytest.raises(ValueError, match="carries no measured table"):
        tables.choose("2.15.0", [])


def test_against_a_version_resolves_its_packaged_table_or_names_the_measured_ones():
    found = {"2.13.0": Path("a"), "2.15.0": Path("b")}
    assert tables.resolve("2.15.0+cpu", found) == Path("b")
    with pytest.raises(ValueError, match=r"torch 2\.14\.1 has no packaged table \(measured: "
                                         r"2\.13\.0, 2\.15\.0\)"):
        tables.resolve("2.14.1", found)


def test_a_table_keeps_what_check_joins_on_and_drops_the_rest(tmp_path):
    artifact = _artifact()
    path = tables.write(artifact, tmp_path, "0.3.0", "0.2.0")
    assert path.name == f"torch-{FP.torch}.json.gz"
    table = tables.load(path)
    assert (table.opsweep, table.measured_by, table.torch) == ("0.3.0", "0.2.0", FP.torch)
    got = table.artifact
    assert got.target_names == ("stock",)  # the other targets are dropped
    assert got.fingerprint == artifact.fingerprint and got.policy == "opsweep v1"
    assert got.operators == artifact.operators  # derived again from the kept spec results
    # each spec's arguments keep the overloads it called (what check joins a packet with no
    # listing row on), without the values its draws reached
    assert got.specs["add"] == replace(artifact.specs["add"],
                                       arguments={"aten::add.Tensor": {}})
    assert got.specs["relu"] == replace(artifact.specs["relu"], arguments=None)
    assert got.specs["add"].failures and got.specs["add"].outcomes


def test_the_same_artifact_gives_the_same_bytes(tmp_path):
    one = tables.to_bytes(_artifact(), "0.3.0")
    assert one == tables.to_bytes(_artifact(), "0.3.0")
    assert one[4:8] == b"\0\0\0\0"  # no time in the gzip header


def test_a_shard_or_a_broken_pin_set_makes_no_table(tmp_path):
    shard = replace(_artifact(), shard=(0, 2))
    with pytest.raises(ValueError, match="assemble the shards first"):
        tables.write(shard, tmp_path, "0.3.0")
    broken = art.make_artifact(FP, "ci", 25, 0, {}, broken=Breakage("stock", "import", "E: no"))
    with pytest.raises(ValueError, match="breaks the exporter"):
        tables.write(broken, tmp_path, "0.3.0")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("case, field, words", [
    ("not gzip", "", "not a gzip-compressed table"),
    ("not json", "", "not readable JSON"),
    ("an artifact", "table_version", "reads cell tables of version 1"),
    ("no opsweep", "opsweep", "not a short string"),
    ("a hand edit", "operators.add.runtime", "does not follow from the spec results"),
    ("huge", "", "larger than"),
])
def test_a_file_that_is_not_a_table_is_refused_naming_the_field(case, field, words, tmp_path,
                                                                monkeypatch):
    path = tmp_path / "torch-2.15.0.json.gz"
    good = json.loads(gzip.decompress(tables.to_bytes(_artifact(), "0.3.0")))
    data = {"not json": b"{", "an artifact": json.dumps(good["artifact"]).encode(),
            "no opsweep": json.dumps({**good, "opsweep": 3}).encode()}.get(case)
    if case == "a hand edit":
        good["artifact"]["operators"]["add"]["runtime"] = "full"
        data = json.dumps(good).encode()
    if case == "huge":
        monkeypatch.setattr(tables, "MAX_BYTES", 1000)
        data = json.dumps(good).encode()
    path.write_bytes(b"plain text" if case == "not gzip" else gzip.compress(data))
    with pytest.raises(ArtifactError) as raised:
        tables.load(path)
    text = str(raised.value)
    assert str(path) in text and words in text and field in text, text


def test_packaged_lists_the_tables_by_torch_oldest_first(tmp_path):
    for name in ("torch-2.15.0.json.gz", "torch-2.9.1.json.gz", "torch-2.13.0.json.gz",
                 "notes.txt", "torch-.json.gz"):
        (tmp_path / name).write_bytes(b"")
    assert list(tables.packaged(tmp_path)) == ["2.9.1", "2.13.0", "2.15.0"]
    assert tables.packaged(tmp_path / "missing") == {}


def test_opsweep_carries_a_table_of_the_committed_artifacts_torch():
    """The committed table is the committed artifact's (its torch, its measurements):
    regenerated by `opsweep tables docs/onnx_support_measured.json` after a re-measure."""
    root = Path(__file__).resolve().parents[2]
    committed = json.loads((root / "docs" / "onnx_support_measured.json").read_text())
    path = tables.packaged()[committed["fingerprint"]["torch"].split("+")[0]]
    data = json.loads(gzip.decompress(path.read_bytes()))
    assert data["artifact"]["fingerprint"] == committed["fingerprint"]
    assert sorted(data["artifact"]["specs"]) == sorted(committed["specs"])
    for name, spec in committed["specs"].items():
        kept = data["artifact"]["specs"][name]
        assert {k: v for k, v in spec.items() if k != "arguments"} == \
            {k: v for k, v in kept.items() if k != "arguments"}, name
        assert set(kept.get("arguments", {})) == {
            o for o in spec.get("arguments", {}) if "." in o and not o.startswith("~")}, name

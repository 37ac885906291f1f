"""Every file opsweep reads as data is validated against its JSON Schema, and a bad one
is a DataFileError (ArtifactError for an artifact) naming the file and the field."""

import json
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep import files
from opsweep.page import documented
from opsweep.artifact import records as history
from opsweep.catalog import links
from opsweep.errors import ArtifactError, DataFileError
from opsweep.artifact.grade import AXES
from opsweep.model import Stage

from ..factories import FP, result

ROOT = Path(__file__).resolve().parents[2]


def _artifact(tmp_path):
    path = tmp_path / "a.json"
    art.save(path, art.make_artifact(FP, "ci", 25, 0, {"sin": result(["sin"], Stage.OK)}))
    data = json.loads(path.read_text())
    data["examples"] = "25"
    path.write_text(json.dumps(data))
    return lambda: art.load(path), r"a\.json at examples: '25' is not of type 'integer'"


def _history(tmp_path):
    path = history.write(art.make_artifact(FP, "ci", 25, 0, {"sin": result(["sin"], Stage.OK)}),
                         tmp_path)
    data = json.loads(path.read_text())
    data["failing"] = {"sin": {"export": 3}}
    path.write_text(json.dumps(data))
    return lambda: history.load(path), r"onnxscript-0\.7\.2\+hypothesis-6\.170\.17\.json at failing\.sin\.export: 3 is not"


def _documented(tmp_path):
    path = tmp_path / "documented.json"
    path.write_text(json.dumps({"source": "torch-2.8.0", "since_opset": {"add": 9},
                                "claims": {}}))
    return (lambda: documented.load(path),
            r"documented\.json at \(top level\): Additional properties .*'claims' was unexpected")


def _links(tmp_path):
    path = links.cache_path(tmp_path, "2.13.0")
    path.write_text(json.dumps({"sin": {"qualname": "torch.sin", "url": 3, "alias_of": None}}))
    return (lambda: links.cached(["sin"], "2.13.0", tmp_path),
            r"doc-links-torch-2\.13\.0\.json at sin\.url: 3 is not of type 'string'")


@pytest.mark.parametrize("bad", [_artifact, _history, _documented, _links])
def test_a_bad_data_file_is_one_error_type_naming_file_and_field(tmp_path, bad):
    read, message = bad(tmp_path)
    with pytest.raises(DataFileError, match=message) as info:
        read()
    assert isinstance(info.value, ArtifactError) == (bad is _artifact)


@pytest.mark.parametrize("text, message", [
    ("{", r"x\.json at line 1 column 2: not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, r"x\.json: not readable JSON"),
    ('{"a": 1' + "0" * 5000 + "}", r"x\.json: not readable JSON"),
])
def test_unreadable_json_names_the_file(tmp_path, text, message):
    (tmp_path / "x.json").write_text(text)
    with pytest.raises(DataFileError, match=message):
        files.read_json(tmp_path / "x.json")


def test_a_missing_file_says_how_to_make_it(tmp_path):
    with pytest.raises(DataFileError, match="no such file; run scripts/recompute_documented.py"):
        documented.load(tmp_path / "none.json")


def test_the_history_schema_states_what_the_code_writes():
    schema = files.validator("history").schema["properties"]
    assert schema["history_version"] == {"const": history.HISTORY_VERSION}
    assert schema["axes"] == {"const": list(AXES)}
    code = schema["targets"]["additionalProperties"]["additionalProperties"]["pattern"]
    assert code == "^[fpnbs-]{4}$" and set(history.CODES.values()) == set("fpnbs-")
    assert len(AXES) == 4


def test_the_committed_data_files_are_valid():
    assert len(history.load_all(ROOT / "docs" / "history")) >= 2
    assert len(documented.load(ROOT / "docs" / "data" / "documented.json")[1]) > 300
    for path in (ROOT / "docs" / "data").glob("doc-links-torch-*.json"):
        assert files.load(path, "links")


def test_a_claims_file_that_would_be_refused_is_never_written(tmp_path):
    path = tmp_path / "documented.json"
    documented.save(path, {"add": 9}, "torch-2.8.0")
    before = path.read_bytes()
    with pytest.raises(DataFileError, match=r"documented\.json at since_opset\.sub: 'nine'"):
        documented.save(path, {"add": 9, "sub": "nine"}, "torch-2.8.0")
    assert path.read_bytes() == before
    assert documented.load(path) == ("torch-2.8.0", {"add": 9})

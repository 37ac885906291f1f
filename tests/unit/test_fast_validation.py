"""The compiled validator (jsonschema-rs) is only a shortcut: on every document the tests
can reach it must give the reference implementation's verdict (jsonschema), and with it
absent (the bot's hash-pinned install) validation gives the same errors."""

import json
from pathlib import Path

import pytest

from opsweep import files
from opsweep.artifact import data as art
from opsweep.artifact import records as history
from opsweep.errors import ArtifactError

ROOT = Path(__file__).resolve().parents[2]
ARTIFACT = ROOT / "docs" / "onnx_support_measured.json"
#: specs whose results carry every part a result can have (failure groups with only_with,
#: arguments, dynamic failures, nondeterminism, a gap)
SPECS = ("avg_pool2d", "cdist", "dropout")
#: every how many places of the trimmed document one is broken (each way): about 400
#: documents, each walked by the reference validator in about 8 ms
STRIDE = 7


def _trimmed() -> dict:
    """The committed artifact cut to a few specs and operators (the schema checks no
    reference between them), each target's difference cut likewise."""
    data = json.loads(ARTIFACT.read_text())
    data["specs"] = {k: v for k, v in data["specs"].items() if k in SPECS}
    ops = {op for v in data["specs"].values() for op in v.get("aten_ops", ())}
    data["operators"] = {k: v for k, v in data["operators"].items() if k in ops or
                         k in list(data["operators"])[:3]}
    for target in data["targets"].values():
        for key in ("specs", "operators"):
            if isinstance(target.get(key), dict):
                target[key] = {k: v for k, v in target[key].items() if k in data[key]}
    return data


def _first_two(node):
    """`node` with every list cut to its first two items: all `_paths` walks into, so the
    broken places (and the documents' verdicts there) are the same, while each reference
    walk of a whole document takes half the time."""
    if isinstance(node, dict):
        return {key: _first_two(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_first_two(value) for value in node[:2]]
    return node


def _paths(node, here=()):
    yield here
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*here, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:2]):
            yield from _paths(value, (*here, i))


def _mutations(data):
    """Each place of the document broken in the ways a hand edit or a bad writer breaks
    it: removed, of another type, null, or given a key nobody defined."""
    for n, path in enumerate(_paths(data)):
        if not path or n % STRIDE:
            continue
        *parent_path, last = path
        for how in ("drop", "type", "null", "extra"):
            doc = json.loads(json.dumps(data))
            parent = doc
            for key in parent_path:
                parent = parent[key]
            value = parent[last]
            if how == "drop":
                if isinstance(parent, list):
                    continue
                del parent[last]
            elif how == "type":
                parent[last] = 12345 if isinstance(value, str) else "x"
            elif how == "null":
                parent[last] = None
            elif isinstance(value, dict):
                value["no_such_field"] = 1
            else:
                continue
            yield f"{how} {'.'.join(map(str, path))}", doc


def _reference_valid(doc, schema="artifact") -> bool:
    return not any(True for _ in files.validator(schema).iter_errors(doc))


@pytest.mark.skipif(files.jsonschema_rs is None, reason="jsonschema-rs is not installed")
def test_the_compiled_validator_agrees_with_the_reference_on_every_broken_place():
    whole = _trimmed()
    fast = files.fast_validator("artifact")
    assert fast.is_valid(whole) and _reference_valid(whole)
    data = _first_two(whole)
    assert fast.is_valid(data) and _reference_valid(data)
    assert list(_paths(data)) == list(_paths(whole))  # the same places are broken
    checked, rejected, disagree = 0, 0, []
    for what, doc in _mutations(data):
        checked += 1
        reference = _reference_valid(doc)
        rejected += not reference
        if fast.is_valid(doc) != reference:
            disagree.append(what)
    assert not disagree, disagree[:20]
    assert checked > 300 and rejected > checked // 2, (checked, rejected)


@pytest.mark.skipif(files.jsonschema_rs is None, reason="jsonschema-rs is not installed")
def test_the_committed_files_are_valid_to_both():
    for path, schema in [(ARTIFACT, "artifact"), (ROOT / "docs/data/documented.json", "documented"),
                         *((p, "history") for p in (ROOT / "docs/history").glob("*.json")),
                         *((p, "links") for p in (ROOT / "docs/data").glob("doc-links-*.json"))]:
        doc = json.loads(path.read_text())
        assert files.fast_validator(schema).is_valid(doc), path.name
        if schema != "artifact":  # the artifact's whole walk takes the reference ~13 s
            assert _reference_valid(doc, schema), path.name


def test_without_the_compiled_validator_the_errors_are_the_same(tmp_path, monkeypatch):
    path = tmp_path / "a.json"
    data = _trimmed()
    data["specs"]["cdist"]["examples"] = "25"
    path.write_text(json.dumps(data))
    with pytest.raises(ArtifactError) as fast:
        art.load(path)
    monkeypatch.setattr(files, "jsonschema_rs", None)
    files.fast_validator.cache_clear()
    try:
        with pytest.raises(ArtifactError) as slow:
            art.load(path)
        assert str(fast.value) == str(slow.value)
        assert "a.json at specs.cdist.examples: '25' is not of type 'integer'" in str(slow.value)
        record = next((ROOT / "docs/history").glob("*.json"))
        assert history.load(record)  # valid documents still load the slow way
    finally:
        files.fast_validator.cache_clear()

"""Artifact strings are data a pull request chose: none of them may render as markup,
HTML, a mention, a cross-reference, a link or a heading in the bot's comment."""

import re
from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.diff import diff
from opsweep.model import Stage
from opsweep.artifact.shard import partial_reason
from opsweep.bot.comment import to_markdown
from opsweep.errors import ArtifactError
from opsweep.page.templates import code

from ..factories import FP, result

HOSTILE = ["<b>bold</b>", "@octo/team", "owner/repo#5", "[click](https://evil.example/x)",
           "\n# Heading", "**strong**", "`tick` ``two``", "https://evil.example/y"]
NAME = "op_" + "".join(HOSTILE).replace("\n", " ")


def _hostile_result(ops, *stages):
    r = result(ops, *stages)
    failures = tuple(replace(g, example=f"f32[{i}] {HOSTILE[i % len(HOSTILE)]}",
                             error=" ".join(HOSTILE)) for i, g in enumerate(r.failures))
    return replace(r, failures=failures)


def _inert(body: str) -> str:
    """The comment with every code span, <code> element and code fence removed: what is
    left is what GitHub would interpret as markdown."""
    body = re.sub(r"(?ms)^(`{3,})python\n.*?^\1$", "", body)
    body = re.sub(r"<code>[^<]*</code>", "", body)
    out, i = [], 0
    while i < len(body):
        m = re.compile(r"`+").match(body, i)
        if m:
            close = body.find(m.group(0), m.end())
            while close != -1 and body[close + len(m.group(0)):close + len(m.group(0)) + 1] == "`":
                close = body.find(m.group(0), close + 1)
            if close != -1:
                i = close + len(m.group(0))
                continue
        out.append(body[i])
        i += 1
    return "".join(out)


@pytest.fixture
def hostile(tmp_path):
    old = art.make_artifact(replace(FP, onnx="1.0"), "ci", 25, 0, {
        NAME: result([NAME], Stage.OK), "cdist": result(["cdist"], Stage.NO_TRANSLATION)})
    new = art.make_artifact(replace(FP, onnx="1.1", torch="2.14.1"), "ci", 25, 0, {
        NAME: _hostile_result([NAME], Stage.OK, Stage.TRANSLATION_ERROR),
        "cdist": result(["cdist"], Stage.OK), "[x](https://e.example)": result(["@team"], Stage.OK)})
    # names (since issue 48) and fingerprint strings (since issue 30) have a strict pattern in
    # the schema, so such an artifact no longer loads (tests/unit/test_hostile_names.py); the
    # comment still shows them inert, should one get this far
    with pytest.raises(ArtifactError, match="does not match"):
        art.save(tmp_path / "new.json", new)
        art.load(tmp_path / "new.json")
    return (replace(old, fingerprint=replace(old.fingerprint, onnx="1.0 @octo/team")),
            replace(new, fingerprint=replace(new.fingerprint, onnx="1.1 <img src=x>",
                                             torch="2.14.1 #5")))


def test_no_artifact_string_escapes_a_code_span(hostile):
    old, new = hostile
    body = to_markdown(diff(old, new), new)
    left = _inert(body)
    for needle in ("@octo", "@team", "<b>", "<img", "owner/repo#5", "](https", "evil.example",
                   "**strong**", "#5"):
        assert needle not in left, (needle, left)
    assert not re.search(r"(?m)^#\s*Heading", body)
    assert "&lt;b&gt;bold&lt;/b&gt;" in body  # the name is shown, escaped, in <summary>


@pytest.mark.parametrize("text", ["plain", "a`b", "``x``", "`", " lead", "x\ny", ""])
def test_code_span_holds_any_text(text):
    span = code(text)
    fence = re.match(r"`+", span).group(0)
    inner = span[len(fence):-len(fence)]
    assert span.endswith(fence) and fence not in inner.replace("`" * (len(fence) + 1), "")
    assert "\n" not in span


def test_a_partial_artifact_is_named_partial():
    old = art.make_artifact(FP, "ci", 25, 0, {n: result([n], Stage.OK) for n in ("a", "b", "c")})
    shard = replace(old, shard=(1, 2))
    few = art.make_artifact(FP, "ci", 25, 0, {"a": result(["a"], Stage.OK)})
    assert "shard 1/2" in partial_reason(old, shard)
    assert "2 spec(s) measured before are missing (b, c)" in partial_reason(old, few)
    assert partial_reason(old, few, catalog=frozenset({"a"})) == ""  # b and c left the catalog
    assert partial_reason(old, old) == "" and partial_reason(None, few) == ""


def test_diff_refuses_a_partial_artifact(tmp_path, capsys):
    """Defect 7: `--shard` with `--only` merged to 2 specs and diff called it clean."""
    from opsweep.cli.main import main
    whole = art.make_artifact(FP, "ci", 25, 0, {n: result([n], Stage.OK)
                                                 for n in ("sin", "cos", "relu")})
    few = art.make_artifact(FP, "ci", 25, 0, {n: result([n], Stage.OK) for n in ("sin", "cos")})
    paths = {}
    for name, a in {"whole": whole, "few": few, "shard": replace(few, shard=(1, 2))}.items():
        paths[name] = tmp_path / f"{name}.json"
        art.save(paths[name], a)
    assert main(["diff", str(paths["whole"]), str(paths["few"])]) == 2
    assert "not a whole sweep: 1 spec(s) measured before are missing (relu)" in capsys.readouterr().err
    assert main(["diff", str(paths["whole"]), str(paths["shard"])]) == 2
    assert "shard 1/2" in capsys.readouterr().err
    assert main(["diff", str(paths["few"]), str(paths["whole"])]) == 0


@pytest.mark.parametrize("version", ["../../../x", "2.13.0/../../x", "2.13.0\x00", "a/b", "", ".."])
def test_history_refuses_a_version_that_is_not_a_version(tmp_path, version):
    from opsweep.artifact import records as history
    from opsweep.errors import ArtifactError
    a = art.make_artifact(replace(FP, torch=version), "ci", 25, 0, {"sin": result(["sin"], Stage.OK)})
    with pytest.raises(ArtifactError, match="not a version string"):
        history.write(a, tmp_path / "history")
    assert not any(tmp_path.rglob("*.json"))


@pytest.mark.parametrize("version", ["2.13.0", "2.14.0rc1", "2.15.0+cu128", "2.16.0.dev20261101"])
def test_history_accepts_real_versions(tmp_path, version):
    from opsweep.artifact import records as history
    a = art.make_artifact(replace(FP, torch=version), "ci", 25, 0, {"sin": result(["sin"], Stage.OK)})
    assert history.write(a, tmp_path).parent == tmp_path


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": ' * 5000 + "1" + "}" * 5000,
                                  '{"schema_version": ' + "9" * 10_000 + "}",
                                  '{"examples": 1' + "0" * 400 + "}"])
def test_hostile_json_is_a_clean_artifact_error(tmp_path, text):
    from opsweep.errors import ArtifactError
    path = tmp_path / "evil.json"
    path.write_text(text)
    with pytest.raises(ArtifactError, match="evil.json"):
        art.load(path)


def test_too_many_shards_are_refused_before_measuring():
    """Defect 11: --shard 1/300 used to fail only when the measured shard was saved."""
    import json
    from importlib.resources import files

    from opsweep.errors import UsageError
    from opsweep.artifact.shard import MAX_SHARDS, parse_shard
    schema = json.loads(files("opsweep").joinpath("schema/artifact.schema.json").read_text())
    assert schema["properties"]["shard"]["properties"]["count"]["maximum"] == MAX_SHARDS
    assert parse_shard(f"1/{MAX_SHARDS}") == (1, MAX_SHARDS)
    with pytest.raises(UsageError, match="at most 256 shards"):
        parse_shard("1/300")


def test_a_models_record_that_is_not_one_is_refused_naming_the_field(tmp_path):
    from opsweep.artifact import checked
    from opsweep.errors import DataFileError
    path = tmp_path / "models_checked.json"
    path.write_text('{"models_version": 1, "models": [{"name": "m", "verdict": {"export": "ok"}, '
                    '"uses": []}]}')
    with pytest.raises(DataFileError, match=r"models_checked.json at models\[0\].verdict"):
        checked.load(path)

"""The models history (opsweep.artifact.models_history): one slim record per pin set, built
from real entries of the committed scoreboard record (docs/models_checked.json), written,
read back and refused in one line; `opsweep history models`; and the models page showing
each model's verdicts across two pin sets and the one transition between them."""

import json
import os
from dataclasses import fields
from pathlib import Path

import pytest

from opsweep import config, files
from opsweep.artifact import models_history as mh
from opsweep.cli.main import main
from opsweep.errors import DataFileError
from opsweep.files import Layout
from opsweep.page import models as page
from opsweep.page.site import render_models

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = json.loads((ROOT / "docs/models_checked.json").read_text("utf-8"))


def _sample() -> dict:
    """Four real entries: two passing, one failing at runtime (an operator named by the
    table's failing use), one lost to a machine failure."""
    models = COMMITTED["models"]
    picked = [next(m for m in models if (m.get("verdict") or {}).get("runtime") == "pass"),
              next(m for m in models if (m.get("verdict") or {}).get("runtime") == "fail"),
              next(m for m in models if m.get("lost")),
              [m for m in models if (m.get("verdict") or {}).get("export") == "pass"][-1]]
    return json.loads(json.dumps({"models_version": COMMITTED["models_version"],
                                  "models": picked}))


def _stock(codes: str) -> str:
    """A page row's letters for the stock exporter (the row carries each other target's
    after them, for the page's target select; the Across column is the stock exporter's)."""
    return codes.split(" ")[0]


def _at(record: dict, torch: str) -> dict:
    """The same record standing for a check at another torch (test input)."""
    other = json.loads(json.dumps(record))
    for m in other["models"]:
        m["check_fingerprint"]["stack"]["torch"] = torch
    return other


def test_a_record_keeps_what_the_page_shows_and_round_trips(tmp_path):
    data = _sample()
    r = mh.from_models(data, "models_checked.json")
    assert r.stack == data["models"][0]["check_fingerprint"]["stack"] and r.opset == 20
    rows = {row.name: row for row in page.build(data, set()).rows}
    for m in r.models:  # one piece of code: the page's row and the record agree
        row = rows[m.name]
        assert (m.codes, m.lost, m.op, m.node, m.error) == (
            _stock(row.codes), row.lost, row.op, row.node, row.error)
    failing = r.models[1]
    assert failing.verdict["runtime"] == "fail" and failing.op and failing.error
    assert r.models[2].lost and r.models[2].verdict is None
    path = mh.write(r, tmp_path)
    stack = r.stack
    assert path.name == (f"torch-{stack['torch']}+onnx-{stack['onnx']}+onnxruntime-"
                         f"{stack['onnxruntime']}+onnxscript-{stack['onnxscript']}+hypothesis-"
                         f"{stack['hypothesis']}.json")
    text = path.read_text("utf-8")
    assert len(text.splitlines()) == 2 + len(r.models)  # a line per model
    assert "uses" not in text and "capture" not in text  # slim: no operator use
    assert mh.load(path) == r
    data = json.loads(text)  # valid to both validators (the compiled one where installed)
    assert files.validator("models_history").is_valid(data)
    fast = files.fast_validator("models_history")
    assert fast is None or fast.is_valid(data)


def test_the_schema_states_what_the_code_writes():
    schema = files.validator("models_history").schema
    assert schema["properties"]["models_history_version"] == {"enum": list(mh.READS)}
    assert mh.READS[-1] == mh.MODELS_HISTORY_VERSION
    model = schema["$defs"]["model"]["properties"]
    assert set(model) == {f.name for f in fields(mh.Verdicts)}
    assert schema["$defs"]["verdicts"]["propertyNames"] == {"enum": list(mh.AXES)}


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.update(models_history_version=3), "models_history_version"),
    (lambda d: d["models"][1]["verdict"].update(runtime="maybe"), "models.1.verdict"),
    (lambda d: d["models"][0].update(uses=[]), "models.0"),
    (lambda d: d.update(opset="20"), "opset"),
    (lambda d: d["stack"].update(torch="2.14.1"), "stack"),  # not the file's pins
    (lambda d: d["stack"].update(onnx="../x"), "stack.onnx"),  # no file is named so
    (lambda d: d["models"].append(dict(d["models"][0])), "models"),  # a name twice
])
def test_a_bad_record_is_refused_naming_the_file_and_the_field(tmp_path, edit, field):
    path = mh.write(mh.from_models(_sample()), tmp_path)
    data = json.loads(path.read_text("utf-8"))
    edit(data)
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(DataFileError) as exc:
        mh.load(path)
    assert exc.value.field == field and exc.value.path == path
    assert str(exc.value).startswith(f"{path} at {field}: ") and "\n" not in str(exc.value)


def test_the_wrong_kind_of_file_is_named(tmp_path):
    operators = next((ROOT / "docs/history").glob("torch-*.json"))
    for source, kind in [(operators, "an operator history record"),
                         (ROOT / "docs/models_checked.json", "opsweep history models")]:
        path = tmp_path / operators.name
        path.write_bytes(source.read_bytes())
        with pytest.raises(DataFileError, match=r"at models_history_version: expected one of \(1, 2\), "
                           rf"found None \(.*{kind}"):
            mh.load(path)
    (tmp_path / operators.name).write_text("{", "utf-8")
    with pytest.raises(DataFileError, match="not valid JSON"):
        mh.load(tmp_path / operators.name)


def test_a_models_record_of_several_pin_sets_is_refused():
    data = _sample()
    data["models"][1:] = _at(data, "2.14.1")["models"][1:]
    with pytest.raises(DataFileError, match=r"at models: its entries were checked at 2 pin "
                       r"sets \(torch 2\.15\.0, opset 20; torch 2\.14\.1, opset 20\)"):
        mh.from_models(data, "m.json")
    no_export = _sample()
    no_export["models"][0]["check_fingerprint"]["export"] = False
    with pytest.raises(DataFileError, match="2 pin sets .*--no-export"):
        mh.from_models(no_export, "m.json")
    old = _sample()
    del old["models"][3]["check_fingerprint"]
    old["models_version"] = 1
    with pytest.raises(DataFileError, match=r"m.json at models\[3\]\.check_fingerprint: no pin"):
        mh.from_models(old, "m.json")


def test_a_check_whose_export_ran_at_other_pins_than_its_table_is_refused():
    """`opsweep check --json` at torch 2.13.0 against the 2.15.0 table: the verdicts are
    2.13.0's, the predictions 2.15.0's; the record belongs to neither pin set."""
    data = _sample()
    data["table"] = {"moved": [["torch", "2.15.0", "2.13.0+cpu"]], "installed": {}}
    with pytest.raises(DataFileError, match=r"m.json at table.moved: checked against a table "
                       r"of other pins \(torch 2\.13\.0\+cpu installed, 2\.15\.0 measured\)"):
        mh.from_models(data, "m.json")
    data["table"]["moved"] = []  # installed as measured: recorded
    assert mh.from_models(data, "m.json").version == "2.15.0"


def test_a_pin_no_file_can_be_named_after_is_refused_before_any_path_is_built(tmp_path):
    data = _at(_sample(), "../../escape")
    with pytest.raises(DataFileError, match=r"^m.json at models\[0\]\.check_fingerprint\."
                       r"stack\.torch: '../../escape' is not a version string"):
        mh.from_models(data, "m.json")
    assert list(tmp_path.rglob("*")) == []


def test_writing_a_pin_set_replaces_its_record_and_leaves_the_others(tmp_path):
    other = mh.write(mh.from_models(_at(_sample(), "2.14.1")), tmp_path)
    os.utime(other, (1, 1))
    before = other.read_bytes()
    data = _sample()
    current = mh.write(mh.from_models(data), tmp_path)
    data["models"][0]["verdict"]["dynamic"] = "fail"
    assert mh.write(mh.from_models(data), tmp_path) == current  # replaced, not doubled
    assert mh.load(current).models[0].verdict["dynamic"] == "fail"
    assert other.read_bytes() == before and other.stat().st_mtime == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([current.name, other.name])


def test_the_history_command_writes_a_record_checked_elsewhere(tmp_path, capsys):
    models = tmp_path / "checked_at_2.13.json"
    models.write_text(json.dumps(_at(_sample(), "2.13.0")), "utf-8")
    out = tmp_path / "history" / "models"
    assert main(["history", "models", "--models", str(models), "--dir", str(out)]) == 0
    (written,) = out.iterdir()
    assert written.name.startswith("torch-2.13.0+onnx-") and str(written) in capsys.readouterr().out
    assert mh.load(written).version == "2.13.0"
    mixed = _sample()
    mixed["models"][0] = _at(mixed, "2.13.0")["models"][0]
    models.write_text(json.dumps(mixed), "utf-8")
    assert main(["history", "models", "--models", str(models), "--dir", str(out)]) != 0
    assert "checked at 2 pin sets" in capsys.readouterr().err
    assert list(out.iterdir()) == [written]


def test_the_history_command_renders_the_projects_models_page_with_the_new_pin_set(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("pyproject.toml").write_text("[tool.opsweep]\nversion = 1\n")
    layout = Layout.of(config.load(Path("pyproject.toml")))
    Path(layout.models).parent.mkdir(parents=True)
    Path(layout.models).write_text(json.dumps(_sample()), "utf-8")  # checked at 2.15.0
    mh.write(mh.from_models(_sample()), Path(layout.models_history))
    elsewhere = tmp_path / "checked_at_2.13.json"
    elsewhere.write_text(json.dumps(_at(_sample(), "2.13.0")), "utf-8")
    wrong = tmp_path / "elsewhere"  # not where the project's page reads its pin sets
    assert main(["history", "models", "--models", str(elsewhere), "--dir", str(wrong),
                 "--render"]) == 2
    assert "--render: the project's models page reads its pin sets from" in \
        capsys.readouterr().err and not wrong.exists()  # refused before anything is written
    assert not Path(layout.models_page).exists()
    assert main(["history", "models", "--models", str(elsewhere), "--dir",
                 layout.models_history, "--render"]) == 0
    assert f"rendered {layout.models_page}" in capsys.readouterr().out
    text = Path(layout.models_page).read_text("utf-8")
    assert "torch 2.13.0" in text and "torch 2.15.0" in text  # both pin sets across


def test_records_are_ordered_by_release_not_by_name(tmp_path):
    for torch in ("2.15.0", "2.9.1", "2.13.0"):
        mh.write(mh.from_models(_at(_sample(), torch)), tmp_path)
    assert [r.name for r in mh.load_all(tmp_path)] == ["2.9.1", "2.13.0", "2.15.0"]
    assert mh.load_all(tmp_path / "none") == []


def _two_pin_sets(root: Path) -> tuple[dict, Layout]:
    """The project's record at 2.15.0, and a history of 2.14.1 (one verdict other, one
    model not checked there) and 2.15.0."""
    data = _sample()
    (root / "docs").mkdir()
    (root / "docs/models_checked.json").write_text(json.dumps(data), "utf-8")
    layout = Layout().under(root)
    older = _at(data, "2.14.1")
    older["models"][1]["verdict"]["runtime"] = "pass"  # fails at 2.15.0
    older["models"][1]["verdict"]["numerics"] = "pass"
    del older["models"][3]
    for record in (older, data):
        mh.write(mh.from_models(record), Path(layout.models_history))
    return data, layout


def test_the_page_shows_each_models_verdicts_across_pin_sets_and_the_transitions(tmp_path):
    data, layout = _two_pin_sets(tmp_path)
    failing = data["models"][1]
    assert failing["verdict"]["numerics"] == "not reached"
    view = page.build(data, set(), "m", mh.load_all(Path(layout.models_history)))
    assert view.points == ("2.14.1", "2.15.0")
    assert [(t.model, t.axis, t.old, t.new, t.before, t.after) for t in view.transitions] == [
        (failing["name"], "runtime", "pass", "fail", "2.14.1", "2.15.0"),
        (failing["name"], "numerics", "pass", "not reached", "2.14.1", "2.15.0")]
    ok, bad, lost, last = view.rows
    was = mh.codes({**failing["verdict"], "runtime": "pass", "numerics": "pass"})
    assert ok.across == (_stock(ok.codes),) * 2 and bad.across == (was, _stock(bad.codes))
    assert lost.across == ("lost", "lost") and last.across == ("not checked", _stock(last.codes))
    assert "1 model changed verdict between consecutive pin sets (2 transitions: runtime 1, " \
           "numerics 1)" in view.history and "torch 2.14.1, 2.15.0" in view.history

    assert render_models(layout)
    text = Path(layout.models_page).read_text("utf-8")
    assert "one pin set" not in text and "## Verdicts across pin sets" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "→" in line]
    assert len(rows) == 2  # the two transitions, nothing else
    assert f"| {failing['name']} | runtime | pass → fail | torch 2.14.1 → 2.15.0 |" in rows
    assert f"<code>not checked · {_stock(last.codes)}</code>" in text
    assert f"<code>{_stock(ok.codes)} · {_stock(ok.codes)}</code>" in text


def test_one_or_no_pin_set_recorded_is_said_so(tmp_path):
    data = _sample()
    assert "No pin set's models history record yet" in page.build(data, set()).history
    one = mh.load_all(Path(mh.write(mh.from_models(data), tmp_path)).parent)
    view = page.build(data, set(), "m", one)
    assert "one pin set recorded (torch 2.15.0)" in view.history
    assert view.points == () and view.rows[0].across == ()
    assert "Across pin sets" not in page.render(view)

"""`opsweep check --jobs N` isolates each model in a worker: a model that kills its
process costs that model alone. And the models record is reused by fingerprint: a second
run at the same pins and model code checks nothing again; an edited model file re-checks
that model only. Tiny plain models, real torch, exporter and onnxruntime, and the table
opsweep ships (a cell table: cheap to load)."""

import json
import os
from pathlib import Path

from opsweep.artifact import checked
from opsweep.artifact import tables
from opsweep.cli import main
from opsweep.cli.assemble import check_models
from opsweep.files import Layout

HERE = Path(__file__).parent / "models"
CRASHING = HERE / "crashing.py"
TABLE = sorted(tables.packaged().values())[-1]
#: the models step checking here, one model after another: for the tests of what is reused
#: (the step's own workers have their tests below), so that no worker pool is set up
INLINE = 1


def test_a_model_that_aborts_in_its_worker_costs_only_itself(tmp_path, capsys):
    order = ["good_one", "aborts", "good_two"]
    record = tmp_path / "record.json"
    code = main(["check", *(f"{CRASHING}:{n}" for n in order), "--jobs", "2", "--record",
                 str(record), "--artifact", str(TABLE)])
    captured = capsys.readouterr()
    assert code == 1  # a machine failure is not a passing model
    data = json.loads(record.read_text())
    # the report keeps the order the models were given, whatever order they finished in
    assert [m["source"] for m in data["models"]] == [f"{CRASHING}:{n}" for n in order]
    one, lost, two = data["models"]
    for good in (one, two):
        assert good["verdict"] == {"export": "pass", "runtime": "pass", "numerics": "pass"}
        assert not good["failed"] and "lost" not in good
        assert {u["op"] for u in good["uses"]} >= {"linear", "relu"}
    assert lost["lost"] == "worker killed by SIGABRT" and lost["failed"]
    assert lost["verdict"] is None and lost["uses"] == []
    checked.from_data(data)  # what the bot reads: schema-valid, the lost model included
    # the terminal report says it in a line (which model, which signal), the others in full
    text = " ".join(captured.out.split())
    assert (f"{CRASHING}:aborts: machine failure: worker killed by SIGABRT while checking it; "
            "no verdict") in text
    assert text.count("Your model exports, runs and matches PyTorch") == 2
    assert "leaked semaphore" not in captured.err


def test_jobs_must_be_positive(capsys):
    assert main(["check", f"{CRASHING}:good_one", "--jobs", "0"]) == 2
    assert "--jobs must be >= 1, got 0" in capsys.readouterr().err


def _project(root: Path) -> dict[str, Path]:
    """A project listing two models, each in a file of its own that logs each build."""
    files = {}
    for name in ("first", "second"):
        path = root / f"{name}.py"
        path.write_text(
            "from pathlib import Path\n\nimport torch\n\n\n"
            "def build():\n"
            "    with open(Path(__file__).with_name('builds.txt'), 'a') as log:\n"
            f"        log.write('{name}\\n')\n"
            "    torch.manual_seed(0)\n"
            "    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())\n"
            f"    return {{'model': model, 'inputs': (torch.randn(2, 4),), 'name': '{name}'}}\n")
        files[name] = path
    listed = ", ".join(f'"{p.as_posix()}:build"' for p in files.values())
    (root / "pyproject.toml").write_text(f"[tool.opsweep]\nmodels = [{listed}]\n")
    return files


def _builds(root: Path) -> list[str]:
    log = root / "builds.txt"
    built = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return built


def test_the_main_commands_models_are_reused_by_fingerprint(tmp_path):
    artifact = tables.load(TABLE).artifact
    layout, files = Layout(), _project(tmp_path)
    record = tmp_path / layout.models
    first = check_models(tmp_path, layout, artifact, jobs=INLINE)
    assert (first.checked, first.reused) == (2, 0)
    assert sorted(_builds(tmp_path)) == ["first", "second"]
    written = record.read_bytes()
    data = json.loads(written)
    assert data["models_version"] == 2
    key = data["models"][0]["check_fingerprint"]
    assert key["stack"]["torch"] == artifact.fingerprint.torch and key["opset"] == 20
    assert key["model"].startswith("sha256:") and key["export"] is True

    again = check_models(tmp_path, layout, artifact, jobs=INLINE)  # unchanged pins and model code
    assert (again.checked, again.reused) == (0, 2)
    assert _builds(tmp_path) == []  # no model was even built
    assert record.read_bytes() == written  # the record stays byte for byte

    files["second"].write_text(files["second"].read_text() + "# edited\n")
    edited = check_models(tmp_path, layout, artifact, jobs=INLINE)
    assert (edited.checked, edited.reused) == (1, 1)
    assert _builds(tmp_path) == ["second"]
    after = json.loads(record.read_text())["models"]
    assert after[0] == data["models"][0]  # the first model's entry, as it was
    assert after[1]["check_fingerprint"]["model"] != data["models"][1]["check_fingerprint"]["model"]


def test_another_stack_another_check_or_a_lost_model_is_not_reused(tmp_path, capsys):
    from dataclasses import replace

    from opsweep.check.fingerprint import fingerprint, reusable
    from opsweep.cli.check import previous_entries
    from opsweep.policy import builtin
    artifact = tables.load(TABLE).artifact
    files = _project(tmp_path)
    source = f"{files['first'].as_posix()}:build"
    record = tmp_path / "record.json"
    # the table alone (cheap), under the test's own project (not the checkout's targets)
    table = ["--artifact", str(TABLE), "--no-export",
             "--pyproject", str(tmp_path / "pyproject.toml")]
    first = main(["check", source, *table, "--record", str(record)])
    capsys.readouterr()
    assert _builds(tmp_path) == ["first"]
    assert main(["check", source, *table, "--reuse", str(record), "--json"]) == first
    out = capsys.readouterr()
    assert "0 models checked, 1 reused from" in out.err and _builds(tmp_path) == []
    assert json.loads(out.out)["models"] == json.loads(record.read_text())["models"]
    previous = previous_entries(record)
    label = builtin().label
    assert reusable(previous, source, fingerprint(source, artifact, label, False)) is not None
    moved = replace(artifact, fingerprint=replace(artifact.fingerprint, onnxruntime="0.0.1"))
    assert reusable(previous, source, fingerprint(source, moved, label, False)) is None
    # with the real export it is another check: the --no-export entry is not its answer
    assert reusable(previous, source, fingerprint(source, artifact, label, True)) is None
    assert reusable(previous, source, fingerprint(source, artifact, "mine v2", False)) is None
    data = json.loads(record.read_text())
    data["models"][0]["lost"] = "worker killed by SIGSEGV"
    record.write_text(json.dumps(data))
    assert reusable(previous_entries(record), source,
                    fingerprint(source, artifact, label, False)) is None


def test_a_bad_previous_record_is_one_line(tmp_path, capsys):
    bad = tmp_path / "old.json"
    bad.write_text(json.dumps({"models_version": 2, "models": [{"name": "x", "uses": [],
                                                                "failed": False}]}))
    assert main(["check", f"{CRASHING}:good_one", "--no-export", "--reuse", str(bad),
                 "--artifact", str(TABLE)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--reuse" in err and "check_fingerprint" in err, err
    assert main(["check", f"{CRASHING}:good_one", "--reuse", str(bad), "--against",
                 str(TABLE), "--artifact", str(TABLE)]) == 2
    assert "--reuse with --against" in capsys.readouterr().err


def test_an_unreadable_models_record_is_refused_and_kept(tmp_path):
    """The main command's models step never rewrites a committed record it cannot read:
    it stops with one line naming the file and the field, the file stays byte for byte,
    and no model is built (deleting the file is the way to check every model again)."""
    import pytest

    from opsweep.errors import UsageError
    artifact = tables.load(TABLE).artifact
    layout = Layout()
    _project(tmp_path)
    record = tmp_path / layout.models
    record.parent.mkdir(parents=True, exist_ok=True)
    for broken in (b'{"models_version": 2, "models": "none"}\n', b"{not json\n"):
        record.write_bytes(broken)
        with pytest.raises(UsageError) as refused:
            check_models(tmp_path, layout, artifact)
        message = str(refused.value)
        assert layout.models in message and "\n" not in message
        assert "delete it" in message
        assert record.read_bytes() == broken
        assert _builds(tmp_path) == []


def test_the_models_step_with_workers_writes_what_the_main_command_reuses(tmp_path):
    """scripts/check_scoreboard.py's path: check_models with jobs checks each model in a
    worker; the main command's step (one job) then reuses every entry, building nothing."""
    artifact = tables.load(TABLE).artifact
    layout, _ = Layout(), _project(tmp_path)
    first = check_models(tmp_path, layout, artifact, jobs=2)
    assert (first.checked, first.reused) == (2, 0)
    assert sorted(_builds(tmp_path)) == ["first", "second"]  # built in the workers
    written = (tmp_path / layout.models).read_bytes()
    names = [m["name"] for m in json.loads(written)["models"]]
    assert names == ["first", "second"]  # in the order listed, whichever finished first
    again = check_models(tmp_path, layout, artifact)
    assert (again.checked, again.reused) == (0, 2) and _builds(tmp_path) == []
    assert (tmp_path / layout.models).read_bytes() == written


def test_the_main_commands_models_step_isolates_each_model(tmp_path):
    """The main command's models step (no jobs given) checks every model in a worker: a
    model that kills its process (the scoreboard has three, segfaulting in onnxruntime at
    float16) is that model's machine failure, recorded, and the command goes on."""
    order = ["good_one", "aborts"]
    listed = ", ".join(f'"{CRASHING.as_posix()}:{n}"' for n in order)
    (tmp_path / "pyproject.toml").write_text(f"[tool.opsweep]\nmodels = [{listed}]\n")
    layout = Layout()
    done = check_models(tmp_path, layout, tables.load(TABLE).artifact)
    assert (done.checked, done.reused) == (2, 0)
    good, lost = json.loads((tmp_path / layout.models).read_text())["models"]
    assert good["verdict"]["export"] == "pass" and "lost" not in good
    assert lost["lost"] == "worker killed by SIGABRT" and lost["failed"]


def test_a_model_whose_uses_read_otherwise_in_a_re_measured_table_is_joined_again(tmp_path):
    """The table re-measured at unchanged pins (the fingerprint is the same): a model whose
    uses the new table answers otherwise keeps its real export and capture (neither depends
    on the table; it is not even built) and takes the new table's verdicts, counts and
    prediction, exactly what checking it again gives; a model whose uses read as before is
    reused as it was."""
    from dataclasses import replace

    from opsweep.artifact.data import make_artifact
    artifact = tables.load(TABLE).artifact
    layout, files = Layout(), _project(tmp_path)
    files["second"].write_text(files["second"].read_text().replace(
        "torch.nn.ReLU()", "torch.nn.Tanh()"))
    first = check_models(tmp_path, layout, artifact, jobs=INLINE)
    assert (first.checked, first.reused) == (2, 0)
    _builds(tmp_path)
    before = {m["name"]: m for m in json.loads((tmp_path / layout.models).read_text())["models"]}
    assert {u["op"] for u in before["second"]["uses"]} >= {"tanh"}
    assert "tanh" not in {u["op"] for u in before["first"]["uses"]}
    # the same pins, another measurement: tanh's spec no longer drew anything at float32
    tanh = artifact.specs["tanh"]
    drawn = replace(tanh, outcomes=tuple(c for c in tanh.outcomes if c.dtype != "float32"),
                    failures=tuple(g for g in tanh.failures if g.dtype != "float32"))
    moved = make_artifact(artifact.fingerprint, artifact.profile, artifact.examples,
                          artifact.regen_index, {**artifact.specs, "tanh": drawn},
                          policy=artifact.policy)
    assert moved.fingerprint == artifact.fingerprint
    again = check_models(tmp_path, layout, moved, jobs=INLINE)
    assert (again.checked, again.reused, again.rejoined) == (0, 2, 1)
    assert "1 of them joined with the re-measured table again" in again.line()
    assert _builds(tmp_path) == []  # no model was built: the exports stand
    after = {m["name"]: m for m in json.loads((tmp_path / layout.models).read_text())["models"]}
    assert after["first"] == before["first"]
    (use,) = [u for u in after["second"]["uses"] if u["op"] == "tanh"]
    assert use["status"] == "not measured" and after["second"]["prediction"]["export"] == "unknown"
    for kept in ("reality", "verdict", "capture", "check_fingerprint", "outcome"):
        assert after["second"][kept] == before["second"][kept]
    # what checking it again against the re-measured table gives, field for field
    (files["second"].parent / layout.models).unlink()
    fresh = check_models(tmp_path, layout, moved, jobs=INLINE)
    assert fresh.checked == 2
    checked = {m["name"]: m for m in json.loads((tmp_path / layout.models).read_text())["models"]}
    for field in ("uses", "counts", "prediction", "gaps", "failed", "verdict"):
        assert after["second"][field] == checked["second"][field], field


def test_the_models_step_keeps_its_pin_sets_verdicts_and_leaves_the_others(tmp_path):
    """The models step writes the models history record of the pin set it checked at (a
    reused check rewrites it the same) and never touches another pin set's record; the
    models page shows the model's verdicts at both and the transition between them."""
    from dataclasses import replace

    from opsweep.artifact import models_history

    artifact = tables.load(TABLE).artifact
    layout, files = Layout(), _project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.opsweep]\nmodels = ["{files["first"].as_posix()}:build"]\n')
    history = tmp_path / layout.models_history
    done = check_models(tmp_path, layout, artifact, jobs=1)
    (current,) = history.iterdir()
    assert done.history == f"{layout.models_history}/{current.name}"
    assert done.history in done.line()
    entry = json.loads((tmp_path / layout.models).read_text())["models"][0]
    now = models_history.load(current)
    assert now.version == artifact.fingerprint.torch.split("+")[0]
    assert now.stack == entry["check_fingerprint"]["stack"] and now.opset == 20
    assert [(m.name, m.source, m.verdict) for m in now.models] == [
        ("first", entry["source"], entry["verdict"])]
    assert entry["verdict"]["runtime"] == "pass" and _builds(tmp_path) == ["first"]

    # another pin set's record (test input: the same model, failing at runtime at 2.14.1)
    (was,) = now.models
    older = replace(now, stack={**now.stack, "torch": "2.14.1"},
                    models=(replace(was, verdict={**was.verdict, "runtime": "fail"}),))
    other = models_history.write(older, history)
    os.utime(other, (1, 1))
    kept, written = other.read_bytes(), current.read_bytes()
    current.unlink()
    again = check_models(tmp_path, layout, artifact, jobs=1)
    assert (again.checked, again.reused) == (0, 1) and _builds(tmp_path) == []
    assert current.read_bytes() == written  # this pin set's record, written again
    assert other.read_bytes() == kept and other.stat().st_mtime == 1  # the other untouched
    text = (tmp_path / "docs/models.md").read_text()
    assert f"| first | runtime | fail → pass | torch 2.14.1 → {now.version} |" in text
    assert f"<code>{older.models[0].codes} · {was.codes}</code>" in text

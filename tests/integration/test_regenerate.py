"""Reuse, resume after a killed sweep, and shard + merge, end to end."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.cli.main import main
from opsweep.artifact.account import UNCHANGED
from opsweep.sweep.journal import journal_path, read_run, run_path

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("outside_project")]
SPECS = ["t_relu", "t_neg", "t_sin", "cdist"]
# every sweep here measures a second target too, so reuse, shards and resume cover targets
TABLE = f"{Path(__file__).resolve().parents[2] / 'examples' / 'custom_translations.py'}:TABLE"
# float32-only specs, so the test does not move when the catalog's specs grow
USER_SPECS = """
from dataclasses import replace
from opsweep.catalog.families import activation, unary

F32 = dict(dtypes=("float32",), max_rank=2)
SPECS = [replace(activation("relu", **F32), name="t_relu"),
         replace(unary("neg", **F32), name="t_neg"),
         replace(unary("sin", **F32), name="t_sin")]
"""


@pytest.fixture(scope="module")
def user_specs(tmp_path_factory):
    d = tmp_path_factory.mktemp("specs")
    (d / "pinned.py").write_text(USER_SPECS)
    return d


@pytest.fixture(autouse=True)
def _specs_dir(user_specs, monkeypatch):
    monkeypatch.setenv("OPSWEEP_TEST_SPECS", str(user_specs))


def sweep(out, *extra, only=SPECS):
    assert main(["sweep", "--only", *only, "--jobs", "0", "--quiet", "--out", str(out),
                 "--translations", TABLE,
                 "--specs", os.environ["OPSWEEP_TEST_SPECS"], *map(str, extra)]) == 0
    return art.load(out)


def decisions(out, target="stock"):
    """spec -> (reused, reason), from the run log the sweep left beside the artifact."""
    _, lines = read_run(run_path(out))
    return {e["spec"]: (e["reused"], e["reason"]) for e in lines if e["target"] == target}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory, user_specs):
    out = tmp_path_factory.mktemp("base") / "a.json"
    assert main(["sweep", "--only", *SPECS, "--jobs", "0", "--quiet", "--out", str(out),
                 "--translations", TABLE, "--specs", str(user_specs)]) == 0
    return out, art.load(out)


def test_second_run_reuses_full_grades_and_advances_the_rotation(baseline, tmp_path):
    first_path, first = baseline
    out = tmp_path / "a.json"
    out.write_bytes(first_path.read_bytes())
    second = sweep(out)
    assert second.regen_index == first.regen_index + 1
    reuse = decisions(out)
    assert set(reuse) == set(second.specs)
    for name in ("t_relu", "t_neg", "t_sin", "cdist"):  # cdist is none: carried all the same
        expected = "rotation" if reuse[name][1].startswith("rotation") else UNCHANGED
        assert reuse[name][1].startswith(expected)
        assert reuse[name][0] == (expected == UNCHANGED)
    assert {op: r.grades for op, r in second.operators.items()} == \
        {op: r.grades for op, r in first.operators.items()}
    target = decisions(out, TABLE)
    assert {n: r[0] for n, r in target.items()} == {n: r[0] for n, r in reuse.items()}
    # the committed file holds measurements only: equal ones, equal bytes but the header
    assert art.same_measurements(first, second)
    assert '"reuse"' not in out.read_text()


def test_a_changed_translation_table_is_re_measured_and_the_stock_target_reused(tmp_path):
    table = tmp_path / "table.py"
    table.write_bytes(Path(TABLE.rsplit(":", 1)[0]).read_bytes())
    out = tmp_path / "a.json"
    run = ["sweep", "--only", "t_relu", "--jobs", "0", "--quiet", "--out", str(out),
           "--translations", f"{table}:TABLE", "--specs", os.environ["OPSWEEP_TEST_SPECS"]]
    assert main(run) == 0
    first = art.load(out)
    table.write_text(table.read_text() + "\n# edited\n")
    assert main(run) == 0
    second = art.load(out)
    name = f"{table}:TABLE"
    assert second.target(name).entry.digest != first.target(name).entry.digest
    assert decisions(out, name)["t_relu"] == (False, "translation table changed")
    if not decisions(out)["t_relu"][1].startswith("rotation"):
        assert decisions(out)["t_relu"][0]


def test_no_reuse_remeasures_everything(baseline, tmp_path):
    out = tmp_path / "a.json"
    out.write_bytes(baseline[0].read_bytes())
    again = sweep(out, "--no-reuse")
    assert {r for _, r in decisions(out).values()} == {"--no-reuse"}
    assert set(decisions(out)) == set(again.specs)


def test_corrupt_previous_is_refused_naming_file_and_field(baseline, tmp_path, capsys):
    out = tmp_path / "a.json"
    data = json.loads(baseline[0].read_text())
    data["specs"]["t_sin"]["export"] = "mostly"
    out.write_text(json.dumps(data))
    before = out.read_bytes()
    assert main(["sweep", "--only", "sin", "--jobs", "0", "--out", str(out),
                 "--specs", os.environ["OPSWEEP_TEST_SPECS"]]) == 1
    err = capsys.readouterr().err
    assert f"{out} at specs.t_sin.export" in err and "--no-reuse" in err
    assert out.read_bytes() == before  # the bad file is left for the user to look at
    assert sweep(out, "--no-reuse", only=["t_sin"]).specs["t_sin"].grades.export is not None


def test_only_carries_the_unselected_specs(baseline, tmp_path):
    out = tmp_path / "a.json"
    out.write_bytes(baseline[0].read_bytes())
    again = sweep(out, only=["t_neg"])
    assert set(again.specs) == set(SPECS)
    assert decisions(out)["cdist"] == (True, "not selected (--only)")


def test_shards_merge_to_the_single_machine_artifact(baseline, tmp_path):
    parts = [tmp_path / f"part{i}.json" for i in (1, 2, 3)]
    for i, part in enumerate(parts, start=1):
        sweep(part, "--shard", f"{i}/3")
    sizes = [len(art.load(p).specs) for p in parts]
    assert sum(sizes) == len(SPECS) and max(sizes) < len(SPECS)
    for p in parts:  # a spec's targets travel together
        a = art.load(p)
        assert set(a.target(TABLE).specs) == set(a.specs)
    merged = tmp_path / "merged.json"
    assert main(["merge", *map(str, parts), "--out", str(merged)]) == 0
    assert merged.read_bytes() == baseline[0].read_bytes()  # byte for byte
    for i, p in enumerate(parts, start=1):  # each shard's run log covers its own specs
        assert set(decisions(p)) == set(art.load(p).specs)
        assert read_run(run_path(p))[0]["shard"] == [i, 3]


def test_a_killed_sweep_resumes_to_the_same_artifact(baseline, tmp_path, capsys):
    """The sweep killed (in its own process, with its workers) after two specs; the next run
    (here in this process and inline: the checkpoint does not depend on --jobs) resumes.

    A killed process removes none of its temporary directories (the workers' output
    directory, multiprocessing's own for the set-up server's socket): the killed sweep is
    given a temporary directory of the test's, so what it leaves stays there, not in the
    system's."""
    out = tmp_path / "a.json"
    args = ["sweep", "--only", *SPECS, "--quiet", "--specs", os.environ["OPSWEEP_TEST_SPECS"],
            "--translations", TABLE, "--out", str(out)]
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "opsweep", *args, "--jobs", "1"],
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "TMPDIR": str(temporary)})
    journal = journal_path(out)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= 3:  # header + 2 specs
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, as a lost runner would
    proc.wait()
    assert not out.exists() and journal.exists()
    # what the killed sweep could not clean up is in the directory it was given
    assert list(temporary.glob("opsweep-output-*")) and list(temporary.glob("pymp-*"))
    capsys.readouterr()
    code = main([*args, "--jobs", "0"])
    result = capsys.readouterr()
    assert code == 0, result.err
    resumed = re.search(r"resumed  (\d+) specs from the checkpoint", result.out)
    assert resumed and int(resumed.group(1)) >= 2, result.out
    assert not journal.exists()
    assert out.read_bytes() == baseline[0].read_bytes()
    _, lines = read_run(run_path(out))
    assert sum(e["resumed"] for e in lines) == int(resumed.group(1))

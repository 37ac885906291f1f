"""Whole sweeps through the CLI, in isolated worker processes. (A crash and a hang recorded
while the sweep goes on: test_unchanged_pins.py's first sweep.)"""

import multiprocessing
import os
import textwrap

import pytest

from opsweep.artifact import data as art
from opsweep.catalog.load import load_catalog
from opsweep.cli.main import main

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("outside_project")]


def test_two_ci_sweeps_are_byte_identical(tmp_path):
    outs = [tmp_path / "one.json", tmp_path / "two.json"]
    for out in outs:
        # combinations: its capture error quotes a set of symbols, ordered by string hashing
        assert main(["sweep", "--only", "sin", "atan2", "cdist", "equal", "combinations", "--jobs", "2",
                     "--quiet", "--out", str(out)]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()  # no timestamp, no run bookkeeping
    a = art.load(outs[0])
    grades = {op: r.grades.export.value for op, r in a.operators.items()}
    assert {k: grades[k] for k in ("atan2", "cdist", "equal")} == \
        {"atan2": "full", "cdist": "none", "equal": "blocked"}
    assert "combinations" in grades
    assert grades["sin"] in ("full", "partial")  # complex sin has no translation in 2.13
    assert a.operators["atan2"].grades.numerics.value == "partial"
    assert a.specs["cdist"].gap.status == "confirmed"
    assert a.fingerprint.exporter == "dynamo-fast" and a.fingerprint.opset == 20
    assert a.profile == "ci" and a.examples == 25
    # the cell covering: sin's 25 draws and an example for each cell they missed, so every
    # listed dtype at every rank from 0 to the spec's top has outcomes, and no cell is left
    spec = load_catalog(check_draws=False).specs["sin"]
    sin = a.specs["sin"]
    assert sin.examples > 25 and sin.cells == {}
    assert {(c.dtype, c.rank) for c in sin.outcomes} == {
        (d, r) for d in spec.dtypes for r in range(spec.ranks[1] + 1)}


def test_bad_input_exits_with_a_clear_message_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "a.json"
    assert main(["sweep", "--only", "no_such_spec", "--out", str(out)]) == 1
    assert "spec 'no_such_spec': no such spec" in capsys.readouterr().err
    assert not out.exists()


GONE = '''
import torch
from dataclasses import replace
from opsweep.catalog.families import spec, unary
from opsweep.catalog.strategies import examples

SPECS = [
    replace(unary("sin"), name="gone_op", aten_ops=("no_such_op_xyz",)),
    spec("gone_callable", examples(lambda d: ((), {})), fn=lambda: torch.no_such_fn_xyz(),
         aten=("sin",)),
]
'''


def test_specs_this_torch_lacks_are_recorded_absent_not_measured(tmp_path, spec_dir):
    """The catalog follows torch: what the installed torch does not have is no failure."""
    (spec_dir / "gone.py").write_text(textwrap.dedent(GONE))
    out = tmp_path / "a.json"
    assert main(["sweep", "--only", "gone_op", "gone_callable", "relu", "--specs", str(spec_dir),
                 "--no-dynamic", "--jobs", "0", "--out", str(out)]) == 0
    a = art.load(out)
    assert set(a.specs) == {"relu"}
    assert a.absent["gone_op"].startswith("aten::no_such_op_xyz not in torch ")
    assert a.absent["gone_callable"].startswith("torch.no_such_fn_xyz does not exist in torch ")


PIDS = '''
import os
from pathlib import Path

import torch
from opsweep.catalog.families import unary

HERE = Path(__file__).parent
with open(HERE / "loads.txt", "a") as handle:  # once per process that loads this module
    handle.write(f"{os.getpid()}\\n")


def _logged_sin(x):
    if torch.compiler.is_exporting():  # each process that exports the spec (not the cell
        with open(HERE / "calls.txt", "a") as handle:  # covering's child, asking eager)
            handle.write(f"{os.getpid()}\\n")
    return torch.sin(x)


SPECS = [unary("sin_seen", fn=_logged_sin, aten=("sin",), dtypes=("float32",), max_rank=2)]
'''


def _sweep_logging_pids(spec_dir, out, *options) -> tuple[set[str], set[str]]:
    """Sweep sin_seen with `options`: (PIDs of the processes that loaded the spec module,
    PIDs of the workers that ran it), this process left out."""
    (spec_dir / "seen.py").write_text(textwrap.dedent(PIDS))
    for log in ("loads.txt", "calls.txt"):
        (spec_dir / log).write_text("")
    assert main(["sweep", "--only", "sin_seen", "--specs", str(spec_dir), "--jobs", "2",
                 "--quiet", "--no-reuse", "--out", str(out), *options]) == 0
    me = str(os.getpid())
    return tuple(set((spec_dir / log).read_text().split()) - {me}
                 for log in ("loads.txt", "calls.txt"))


def test_recycled_and_forked_workers_give_the_same_artifact(tmp_path, spec_dir):
    """--recycle N replaces each worker after N groups, and every worker is a fork of one
    process that loaded the catalog and built the exporters once (where forkserver exists):
    no worker loads the spec module itself. Never recycled, recycled, or spawned afresh
    (--spawn, each worker setting itself up): the same artifact, byte for byte."""
    forking = "forkserver" in multiprocessing.get_all_start_methods()
    outs, every = {}, {"kept": 0, "recycled": 4}
    for name in ("kept", "recycled", "spawned"):
        options = ("--recycle", str(every[name]), *(("--spawn",) if name == "spawned" else ()))
        outs[name] = tmp_path / f"{name}.json"
        loads, workers = _sweep_logging_pids(spec_dir, outs[name], *options)
        groups = art.load(outs[name]).specs["sin_seen"].signatures
        tasks = 1 + groups  # the canary, the groups
        assert tasks >= 9  # so that recycled, more than the two workers run it
        # two workers when never recycled; else one more each time a worker has run N groups
        least = -(-groups // every[name]) if every[name] else 0  # each runs N groups at most
        assert len(workers) <= 2 if name == "kept" else len(workers) >= least > 2, \
            (workers, tasks)
        # a spawned worker sets itself up (seconds each): recycled after a third of the
        # groups, the fewest set-ups that still take more than two workers
        every.setdefault("spawned", -(-groups // 3))
        if name == "spawned" or not forking:
            assert workers <= loads, (loads, workers)
        else:  # only the server loaded it
            assert len(loads) == 1 and not loads & workers, (loads, workers)
    assert outs["kept"].read_bytes() == outs["recycled"].read_bytes() == outs["spawned"].read_bytes()


def test_recycle_must_not_be_negative(tmp_path, capsys):
    assert main(["sweep", "--only", "sin", "--recycle", "-1", "--out", str(tmp_path / "a.json")]) == 2
    assert "--recycle must be >= 0, got -1" in capsys.readouterr().err

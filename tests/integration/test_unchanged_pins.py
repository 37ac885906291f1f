"""Issue 38: at an unchanged fingerprint and spec digest a regeneration re-measures only
the rotating tenth and the results whose failures the machine caused (a worker killed by
a signal, an export past --timeout), and writes the artifact a --no-reuse sweep writes.

The first sweep is also the engine's proof that a crash and a hang are recorded and the
sweep goes on (a worker that segfaults, one the kernel kills, one past --timeout; the specs
after them measured by the workers that replaced them)."""

import contextlib
import io
import textwrap

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.account import UNCHANGED, read_run, run_path
from opsweep.cli.main import main
from opsweep.sweep.reuse import in_rotation

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("outside_project")]

SPECS = '''
import os
import signal
import time

import torch
from dataclasses import replace
from hypothesis import strategies as st
from opsweep.catalog.families import activation, unary
from opsweep.model import Example, OpSpec, TensorArg

F32 = dict(dtypes=("float32",), max_rank=1)


def _segfault_when_exporting(x):
    if torch.compiler.is_exporting():
        os.kill(os.getpid(), signal.SIGSEGV)
    return torch.sin(x)


def _killed_when_exporting(x):  # what the kernel's out-of-memory killer does to a worker
    if torch.compiler.is_exporting():
        os.kill(os.getpid(), signal.SIGKILL)
    return torch.sin(x)


def _hang_when_exporting(x):
    if torch.compiler.is_exporting():
        time.sleep(600)
    return torch.cos(x)


SPECS = [
    unary("crashy", fn=_segfault_when_exporting, aten=("sin",), dtypes=("float32",), max_rank=0),
    unary("killed", fn=_killed_when_exporting, aten=("sin",), dtypes=("float32",), max_rank=0),
    # one example: a group's budget is --timeout plus a second per example (engine.pool.budget),
    # so that a hang of the 25 a unary spec draws would be waited for 25 s longer each sweep
    OpSpec("hangs", ("cos",), st.just(Example((TensorArg((), "float32"),))),
           fn=_hang_when_exporting, dtypes=("float32",), ranks=(0, 0)),
    replace(activation("relu", **F32), name="u_relu"),
    replace(unary("neg", **F32), name="u_neg"),
    replace(unary("sin", dtypes=("float32", "complex64"), max_rank=1), name="u_sin_complex"),
]
'''
# u_sin_complex is partial (complex sin has no translation) and cdist none: the old rule
# re-measured both on every run
ONLY = ["crashy", "killed", "hangs", "u_relu", "u_neg", "u_sin_complex", "cdist"]
MACHINE = {"crashy", "killed", "hangs"}


def sweep(out, spec_dir, *extra):
    assert main(["sweep", "--only", *ONLY, "--specs", str(spec_dir), "--jobs", "2",
                 "--timeout", "6", "--no-dynamic", "--quiet", "--out", str(out), *extra]) == 0
    return art.load(out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    spec_dir = tmp_path_factory.mktemp("specs")
    (spec_dir / "unchanged.py").write_text(textwrap.dedent(SPECS))
    out = tmp_path_factory.mktemp("run") / "a.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        first = sweep(out, spec_dir, "--no-reuse")
    second = sweep(out, spec_dir)
    _, log = read_run(run_path(out))
    return first, second, {e["spec"]: e for e in log if e["target"] == "stock"}, printed.getvalue()


def test_the_first_run_recorded_one_machine_failure_of_each_kind(runs):
    """A crash and a hang are recorded and the sweep goes on (this was test_sweep's
    test_crash_and_hang_are_recorded_and_the_sweep_goes_on, on a sweep of its own)."""
    first, _, _, said = runs
    for name, error in (("crashy", "worker killed by SIGSEGV"),
                        ("killed", "worker killed by SIGKILL"), ("hangs", "timed out")):
        assert set(first.specs[name].stages) == {art.Stage.RAW_ERROR}, name
        assert {f.error for f in first.specs[name].failures} == \
            {f"WorkerLost: {error} during export"}
    assert first.operators["cdist"].grades.export.value == "none"
    assert first.specs["u_sin_complex"].grades.export.value == "partial"
    # measured after the crashes (specs go in name order), by the workers that replaced them
    assert first.specs["u_relu"].grades.export.value == "full"
    assert "wrote" in said


def test_only_the_rotation_and_machine_failures_are_re_measured(runs):
    _, second, log, _ = runs
    assert set(log) == set(ONLY)
    for name, entry in log.items():
        if name in MACHINE:
            assert entry["why"] == "machine failure" and "WorkerLost" in entry["reason"], entry
        elif in_rotation(name, second.regen_index):
            assert entry["why"] == "rotation", entry
        else:  # partial and none included: nothing that could change them moved
            assert entry["reused"] and entry["why"] == UNCHANGED, entry
    assert sum(e["reused"] for e in log.values()) >= 3


def test_the_carried_run_writes_what_a_no_reuse_run_writes(runs):
    first, second, _, _ = runs
    assert second.regen_index == first.regen_index + 1
    assert art.same_measurements(first, second)

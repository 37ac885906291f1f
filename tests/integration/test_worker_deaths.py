"""Workers that die together, one while the pool replaces another, or as they take their
group: the sweep replaces them, records each group a worker was running as the machine
failure of the target whose model it was measuring, measures the group's other targets
again, measures everything else, and finishes. What the workers print goes to the run
log, never to the terminal.

One sweep per start method (forked from the set-up server, or spawned) of a project of
these specs only does it all, as the README's command does, in a process of its own: a
sweep that hangs is stopped by the bounded wait of `_sweep`, and its terminal output is
what a user would see. Specs run in
name order, two workers at a time, and every death is made certain, never timed:

1. a_together: both workers abort at once (its two groups wait for each other, a file
   each, then abort);
2. b_poisoned: both replacements die as they take its two groups (a value in each
   example kills the worker that unpickles it, the instant that worker takes the group);
3. c_killed, d_poisoned: one worker dies as it takes d_poisoned's group; the other,
   exporting c_killed's, is killed as soon as the first is dead, while the pool is
   replacing it;
4. e_noisy: a worker prints onnxruntime's assertion text on fd 2, then aborts;
5. f_after: measured by the workers that replaced them all.

The sweep measures the TorchScript target too: a dynamo export that crashed its worker is
the stock target's failure; the TorchScript target of the same groups is measured again in
another worker (issue 50's first truth fault)."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.account import read_run, run_path

pytestmark = pytest.mark.integration

#: The longest the sweep may take before it counts as hung: it takes a minute or two on a
#: busy machine, and no group's budget (--timeout 8, two targets) comes near it.
HUNG_AFTER = 600

HEAD = '''
import os
import signal
import time
from pathlib import Path

import torch
from hypothesis import strategies as st
from opsweep.model import Example, OpSpec, TensorArg

HERE = Path(__file__).parent


def _wait_for(condition):
    """Waits on a condition another process makes true (looked at every 10 ms)."""
    while not condition():
        time.sleep(0.01)


def _dead(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def spec(name, fn, groups, *extra):
    """`groups` signatures (0-d tensors of as many dtypes) of fn(x, *extra): every cell of
    the spec (its dtypes at rank 0, no side to empty) is drawn, so the cell covering adds
    no group of its own."""
    dtypes = ("float32", "float64")[:groups]
    return OpSpec(name, ("add",), st.sampled_from([Example((TensorArg((), d), *extra))
                                                   for d in dtypes]),
                  fn=fn, dtypes=dtypes, ranks=(0, 0))
'''

SPECS = HEAD + '''

def _claim():
    """The k-th group to arrive claims slot k (an exclusive create: no two claim the same)."""
    k = 0
    while True:
        try:
            os.close(os.open(HERE / f"slot-{k}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return k
        except FileExistsError:
            k += 1


def _abort_with_partner(x):
    """The dynamo export (never the TorchScript one) aborts once its partner has arrived."""
    if torch.compiler.is_exporting():
        k = _claim()
        _wait_for((HERE / f"slot-{k ^ 1}").exists)
        os.abort()
    return x + 1


class Poison:
    """Kills the worker that unpickles it: that worker writes MARKER-PID here, then aborts."""

    def __init__(self, marker):
        self.marker = marker

    def __repr__(self):
        return "Poison()"

    def __reduce__(self):
        path = f"{HERE}/{self.marker}-"
        return (exec, (f"import os; open({path!r} + str(os.getpid()), 'w').close(); "
                       "os.abort()", {}))


def _killed_after_d(x):
    if torch.compiler.is_exporting():
        _wait_for(lambda: any(_dead(p.name.split("-")[1]) for p in HERE.glob("d-*")))
        os.kill(os.getpid(), signal.SIGKILL)
    return x + 1


def _say_then_abort(x):
    """As onnxruntime does: the C library's assertion text on fd 2, then abort."""
    if torch.compiler.is_exporting():
        os.write(1, b"worker stdout: nobody asked\\n")
        os.write(2, ASSERTION.encode() + b"\\n")
        os.abort()
    return x + 1


SPECS = [spec("a_together", _abort_with_partner, 2),
         spec("b_poisoned", lambda x, _: x + 1, 2, Poison("b")),
         spec("c_killed", _killed_after_d, 1),
         spec("d_poisoned", lambda x, _: x + 1, 1, Poison("d")),
         spec("e_noisy", _say_then_abort, 1),
         spec("f_after", lambda x: x + 1, 2)]
'''

#: What onnxruntime's abort prints (libstdc++'s assertion, through libc, on fd 2).
ASSERTION = ("bits/random.h:2143: std::normal_distribution<_RealType>"
             "::param_type::param_type(_RealType, _RealType) [with _RealType = float]: "
             "Assertion '_M_stddev > 0' failed.")
TS = "torchscript"


#: A project of these specs only (no built-in catalog for each worker to load), measured
#: for the TorchScript target too.
PROJECT = """[project]
name = "deaths"
version = "0"

[tool.opsweep]
catalog = "none"
specs = ["specs"]
torchscript = true
"""


def _sweep(project: Path, out: Path, mode: str) -> subprocess.CompletedProcess:
    """The project's sweep in a process group of its own, stopped (and the test failed)
    if it has not finished within HUNG_AFTER seconds."""
    command = [sys.executable, "-m", "opsweep", "sweep", "--jobs", "2", "--timeout", "8",
               "--no-dynamic", "--no-reuse", "--out", str(out),
               *(("--spawn",) if mode == "spawned" else ())]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True, start_new_session=True,
                               cwd=project)
    try:
        stdout, stderr = process.communicate(timeout=HUNG_AFTER)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"the sweep hung (stopped after {HUNG_AFTER} s)\n{stdout}\n{stderr}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.fixture(scope="module", params=["forked", "spawned"])
def swept(request, tmp_path_factory):
    """(the finished sweep, its artifact, the run log's header, the spec directory)."""
    root = tmp_path_factory.mktemp(request.param)
    (root / "pyproject.toml").write_text(PROJECT)
    spec_dir = root / "specs"
    spec_dir.mkdir()
    (spec_dir / "deaths.py").write_text(f"ASSERTION = {ASSERTION!r}\n" + textwrap.dedent(SPECS))
    out = root / "a.json"
    done = _sweep(root, out, request.param)
    assert done.returncode == 0, done.stderr[-3000:]
    return done, art.load(out), read_run(run_path(out))[0], spec_dir


def _errors(a: art.Artifact, name: str, target: str = art.STOCK) -> set[str]:
    return {f.error for f in a.target(target).specs[name].failures}  # type: ignore[union-attr]


def _export(a: art.Artifact, name: str, target: str) -> str:
    return a.target(target).specs[name].grades.export.value  # type: ignore[union-attr]


def test_workers_that_die_together_are_each_their_groups_machine_failure(swept):
    _, a, _, spec_dir = swept
    assert a.specs["a_together"].signatures == 2
    assert set(a.specs["a_together"].stages) == {art.Stage.RAW_ERROR}
    assert _errors(a, "a_together") == {"WorkerLost: worker killed by SIGABRT during export"}
    assert sorted(p.name for p in spec_dir.glob("slot-*")) == ["slot-0", "slot-1"]


def test_replacements_that_die_as_they_take_their_groups_lose_only_those(swept):
    """A worker lost before it started the group: every target's examples are lost (no
    verdict, re-measured next time), each taken once, by a worker of its own."""
    _, a, _, spec_dir = swept
    for target in (art.STOCK, TS):
        result = a.target(target).specs["b_poisoned"]  # type: ignore[union-attr]
        assert (result.signatures, set(result.stages)) == (2, {art.Stage.LOST})
        assert _errors(a, "b_poisoned", target) == {
            "WorkerLost: worker killed by SIGABRT during reference"}
    assert len(list(spec_dir.glob("b-*"))) == 2


def test_a_worker_killed_while_the_pool_replaces_another(swept):
    _, a, _, _ = swept
    assert _errors(a, "c_killed") == {"WorkerLost: worker killed by SIGKILL during export"}
    assert _errors(a, "d_poisoned") == {"WorkerLost: worker killed by SIGABRT during reference"}


def test_the_crash_belongs_to_the_target_whose_model_crashed(swept):
    """The dynamo export crashed its worker; the TorchScript export of the same groups,
    not reached then, was measured again in another worker, and exports."""
    _, a, _, _ = swept
    for name in ("a_together", "c_killed", "e_noisy"):
        assert _export(a, name, art.STOCK) == "none", name
        assert _export(a, name, TS) == "full", (name, _errors(a, name, TS))


def test_everything_after_the_deaths_is_measured(swept):
    _, a, _, _ = swept
    assert {_export(a, "f_after", t) for t in (art.STOCK, TS)} == {"full"}
    assert a.specs["f_after"].signatures == 2


def test_a_workers_own_output_goes_to_the_run_log_not_the_terminal(swept):
    """What a worker writes to its file descriptors 1 and 2 (onnxruntime's assertion text
    before it aborts) never reaches the sweep's terminal; the run log keeps it."""
    done, a, header, _ = swept
    terminal = done.stdout + done.stderr
    assert "_M_stddev" not in terminal and "nobody asked" not in terminal, terminal
    logged = "\n".join(header["worker_output"])
    assert ASSERTION in logged and "worker stdout: nobody asked" in logged, logged
    assert _errors(a, "e_noisy") == {"WorkerLost: worker killed by SIGABRT during export"}

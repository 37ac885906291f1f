"""catalog.isolated.in_child: the cell covering asks eager PyTorch in a forked child, so
that a crash costs the child, not the sweep's process."""

import os
import select
import signal
import sys
import time

import pytest

from opsweep.catalog.isolated import ChildLost, NotSent, OneChild, in_child


def test_the_value_comes_back():
    assert in_child(lambda: {"pid": os.getpid(), "x": [1, 2.5]})["x"] == [1, 2.5]
    assert in_child(os.getpid) != os.getpid()


def test_an_exception_is_raised_here():
    def fails():
        raise ValueError("eager said no")
    with pytest.raises(ValueError, match="eager said no"):
        in_child(fails)


def test_a_crash_costs_the_child_only():
    def segfault():
        os.kill(os.getpid(), signal.SIGSEGV)
    with pytest.raises(ChildLost, match="killed by SIGSEGV"):
        in_child(segfault)
    assert in_child(lambda: "still here") == "still here"


def test_a_silent_child_is_killed_at_the_deadline():
    with pytest.raises(ChildLost, match="no answer within 0.5 s"):
        in_child(lambda: time.sleep(120), timeout=0.5)


POISONED = '''
import os, sys
from hypothesis import strategies as st
from opsweep.catalog.draw import PROFILES, draw_with_cells
from opsweep.model import Example, OpSpec, TensorArg


class Poison:
    """Aborts the process that unpickles it (a value of a spec's example can be anything)."""

    def __reduce__(self):
        return (os.abort, ())


spec = OpSpec("poisoned", ("add",), st.just(Example((TensorArg((2,), "float32"), Poison()))),
              fn=lambda x, _: x + 1, dtypes=("float32", "float64"), ranks=(1, 1))
examples, cells = draw_with_cells(spec, PROFILES["ci"])
print(len(examples), sorted(cells))
'''


def test_a_value_that_runs_code_when_unpickled_never_reaches_the_sweeps_process(tmp_path):
    """The attack: an example value whose unpickling aborts (as the worker-death specs'
    poison does). The cell covering builds new cells' examples from it (float64, the empty
    tensor) and asks eager about them in a child; only eager's error lines come back, so
    the drawing process lives and the new cells are added."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", POISONED], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    count, _ = done.stdout.split(" ", 1)
    assert int(count) >= 3  # the drawn float32 example, the float64 one and the empty one


def test_a_child_forked_after_pytorch_used_its_thread_pool_still_computes():
    """Rendering the pages computes with PyTorch in the process before the cell covering
    forks its child: the child's first parallel region waited forever on the parent's
    pool (the render hung, each spec until the deadline)."""
    import torch
    a = torch.randn(512, 512)
    assert torch.isfinite((a @ a).sum() + torch.randn(100000).sin().sum())  # the pool, used

    def compute():
        b = torch.randn(512, 512)
        return float((b @ b).sum() + torch.randn(100000).sin().sum())
    assert isinstance(in_child(compute, timeout=120), float)


def test_a_crashing_child_s_output_is_kept_off_the_terminal(capfd, tmp_path):
    """What a dying child prints (libc's assertion text, a fault handler's dump) is the
    child's: it never reaches the sweep's terminal (issue 48), and the ChildLost carries
    its last lines instead."""
    import faulthandler

    def aborts():
        os.write(2, b"x.cpp:12: void f(): Assertion '_M_stddev > 0' failed.\n")
        print("half a line", flush=True)
        os.abort()
    dump = (tmp_path / "faulthandler").open("w+b")
    was = faulthandler.is_enabled()
    faulthandler.enable(file=dump)  # as pytest's own plugin enables it, on another fd
    try:
        with pytest.raises(ChildLost, match="killed by SIGABRT") as lost:
            in_child(aborts)
    finally:
        faulthandler.disable()
        if was:  # a handler back on the process's standard error, as pytest had one
            faulthandler.enable(file=sys.__stderr__)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    dump.seek(0)
    assert dump.read() == b""  # the parent's fault handler did not dump the child's stack
    assert "Assertion '_M_stddev > 0' failed." in lost.value.output
    assert "Assertion" not in str(lost.value)  # the recorded reason stays one line


# --- OneChild: one forked child for many requests (a drawing's specs) --------------------

def _pid_and(x):
    return os.getpid(), x * 2


def test_one_child_answers_every_request_and_raises_their_exceptions_here():
    def handle(request):
        if request == "fail":
            raise ValueError("eager said no")
        return _pid_and(request)
    with OneChild(handle) as child:
        answers = [child.ask(k) for k in range(5)]
        with pytest.raises(ValueError, match="eager said no"):
            child.ask("fail")
        after = child.ask(7)
    pids = {pid for pid, _ in answers} | {after[0]}
    assert [x for _, x in answers] == [0, 2, 4, 6, 8] and after[1] == 14
    assert len(pids) == 1 and pids != {os.getpid()}  # one child, not this process


def test_a_crash_costs_its_request_and_the_next_request_forks_anew(capfd):
    def handle(request):
        if request == "crash":
            os.write(2, b"x.cpp:12: Assertion '_M_stddev > 0' failed.\n")
            os.abort()
        if request == "hang":
            time.sleep(120)
        print(f"answered {request}", flush=True)
        return os.getpid()
    with OneChild(handle, timeout=0.5) as child:
        first = child.ask(1)
        with pytest.raises(ChildLost, match="killed by SIGABRT") as lost:
            child.ask("crash")
        # what the child printed while it ran that request, not what it printed before
        assert "Assertion '_M_stddev > 0' failed." in lost.value.output
        assert "answered 1" not in lost.value.output
        second = child.ask(2)
        with pytest.raises(ChildLost, match="no answer within 0.5 s"):
            child.ask("hang")
        third = child.ask(3)
    assert len({first, second, third, os.getpid()}) == 4
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # the children's output never reached this terminal
    with pytest.raises(ChildProcessError):
        os.waitpid(third, os.WNOHANG)  # closed: the last child was waited for


def test_closing_after_an_interrupted_request_kills_the_busy_child():
    """^C while the child computes: leaving the block must not wait for that computation."""
    started = []

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    child = OneChild(lambda request: os.getpid() if request is None else time.sleep(request))
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            with child:
                started.append(child.ask(None))
                signal.setitimer(signal.ITIMER_REAL, 0.3)
                child.ask(600)  # interrupted by the alarm while the child sleeps
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    with pytest.raises(ChildProcessError):
        os.waitpid(started[0], os.WNOHANG)  # killed and waited for, at once


class _Aborts:
    """Aborts the process that unpickles it."""

    def __reduce__(self):
        return (os.abort, ())


def test_a_request_that_kills_the_child_as_it_is_unpickled_costs_the_child_only():
    with OneChild(lambda request: "answered") as child:
        with pytest.raises(ChildLost, match="killed by SIGABRT"):
            child.ask(_Aborts())
        assert child.ask("plain") == "answered"
        with pytest.raises(NotSent, match="pickle"):
            child.ask(lambda: None)  # a lambda cannot be pickled: never sent
        assert child.ask("plain") == "answered"


def test_eager_asked_inline_gives_the_plans_of_a_child_per_spec():
    """The run's one drawing of the catalog (tests/conftest.py) asks eager inline within a
    child of its own; a sweep asks it in a forked child per spec. The plans are the same:
    for specs whose new cells eager accepts, and for specs where it refuses a cell's
    example (the cell unsettled, with eager's error). The crash that only a child survives
    does not happen in the built-in catalog: were it to, that drawing would fail, not
    differ."""
    from opsweep.catalog import cells, draw
    from opsweep.catalog.load import load_catalog
    specs = [load_catalog(check_draws=False).specs[n]
             for n in ("sin", "atan2", "cumsum", "where", "glu", "sdpa_float_mask")]
    forked = [draw.plan_for(s, draw.PROFILES["ci"]) for s in specs]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(draw, "in_child", lambda fn, timeout=None: fn())
        inline = [draw.plan_for(s, draw.PROFILES["ci"]) for s in specs]
    assert inline == forked
    assert sum(p.count(cells.ADDED) for p in forked) > 0  # eager accepted new cells
    assert sum(p.count(cells.UNSETTLED) for p in forked) > 0  # and refused some examples


def _own_descriptors(_request=None) -> list[str]:
    """The descriptors the calling process holds (the listing's own, closed by the time it
    returns, left out)."""
    def is_open(fd: int) -> bool:
        try:
            os.fstat(fd)
            return True
        except OSError:
            return False
    return sorted(x for x in os.listdir("/proc/self/fd") if is_open(int(x)))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="Linux's /proc")
def test_the_children_hold_no_pipe_of_their_parent_s():
    """A fork server stops when the last writer of its pipe is gone, and the sweep waits for
    it: a child that held a copy of that pipe (as a child forked anew after a crash mid-sweep
    did) hung the sweep's end. A pipe made before the child, closed here while the child is
    alive: its reader sees the end at once; and each kind of child holds its standard
    streams and its own pipes, nothing else."""
    read, write = os.pipe()
    with OneChild(_own_descriptors) as child:
        held = child.ask(None)  # forked now, after the pipe
        os.close(write)
        ready, _, _ = select.select([read], [], [], 60)  # the end, or a minute without it
        assert ready and os.read(read, 1) == b""
        assert len(held) == 5, held  # 0, 1, 2, its requests and its replies
    os.close(read)
    assert len(in_child(_own_descriptors)) == 5  # in_child is a OneChild asked once

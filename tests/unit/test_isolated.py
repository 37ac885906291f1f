"""catalog.isolated.in_child: the cell covering asks eager PyTorch in a forked child, so
that a crash costs the child, not the sweep's process."""

import os
import signal
import sys
import time

import pytest

from opsweep.catalog.isolated import ChildLost, in_child


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

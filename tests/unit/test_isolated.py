"""catalog.isolated.in_child: the cell covering asks eager PyTorch in a forked child, so
that a crash costs the child, not the sweep's process."""

import os
import signal
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

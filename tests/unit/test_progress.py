"""The sweep's progress display: bounded plain lines, an ETA from measured specs only,
and the choice of display by where stderr goes."""

import io
import os
import pty
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.cli.progress import Bar, Lines, Silent, Tally, clock, display
from opsweep.sweep.driver import SpecDone

COMMITTED = Path(__file__).parents[2] / "docs" / "onnx_support_measured.json"


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def results():
    """A real measured SpecResult (relu: 25 examples), as measured and as reused."""
    relu = art.load(COMMITTED).specs["relu"]
    return (relu, False), (relu, True)


def events(result, total, start=1, target=art.STOCK):
    result, reused = result
    return [SpecDone(f"s{i}", i, total, result, target, reused) for i in range(start, total + 1)]


def test_clock_format():
    assert [clock(s) for s in (0, 59.6, 61, 3600 * 2 + 62, None, -3)] == \
        ["0:00:00", "0:01:00", "0:01:01", "2:01:02", "-:--:--", "0:00:00"]


def test_plain_lines_are_bounded_in_rate_and_end_on_the_last_state(results):
    measured, _ = results
    now = Clock()
    out = io.StringIO()
    lines = Lines(out, interval=30, tally=Tally(now))
    for done in events(measured, 1000):  # one spec every 0.1 s: 100 s in all
        now.t += 0.1
        lines(done)
    lines.close()
    printed = out.getvalue().splitlines()
    assert printed[0].startswith("opsweep: [   1/1000]")
    assert printed[-1].startswith("opsweep: [1000/1000] 100%")
    assert len(printed) <= 2 + 100 // 30  # first, one per 30 s, last; not one per spec
    assert "ETA 0:00:00" in printed[-1] and "measured 1000" in printed[-1]


def test_close_prints_the_state_a_bounded_line_held_back(results):
    measured, _ = results
    now = Clock()
    out = io.StringIO()
    lines = Lines(out, interval=30, tally=Tally(now))
    for done in events(measured, 10)[:3]:
        now.t += 1
        lines(done)
    assert len(out.getvalue().splitlines()) == 1
    lines.close()  # e.g. interrupted: the last state is not lost
    assert out.getvalue().splitlines()[-1].startswith("opsweep: [ 3/10]")


def test_eta_follows_measured_specs_not_the_burst_of_reused_ones(results):
    measured, reused = results
    now = Clock()
    tally = Tally(now)
    now.t = 10.0  # the workers start
    for done in events(reused, 520)[:500]:  # reused results arrive at once
        tally.add(done)
    assert tally.eta() is None and tally.examples_per_second() is None
    for done in events(measured, 520, start=501)[:10]:
        now.t += 2.0  # a spec every 2 s
        tally.add(done)
    assert (tally.reused, tally.measured, tally.done) == (500, 10, 510)
    assert tally.eta() == pytest.approx(10 * 2.0)
    assert tally.examples_per_second() == pytest.approx(25 / 2.0)
    now.t += 5.0  # between events, the estimate counts down
    assert tally.eta() == pytest.approx(15.0)


def test_the_last_spec_names_its_target_and_grades(results):
    measured, _ = results
    tally = Tally(Clock())
    tally.add(SpecDone("relu", 1, 2, measured[0], "examples/custom_translations.py:TABLE"))
    assert tally.last == "relu @TABLE full/partial/full/full"


#: what a live display writes last when it stops: the cursor shown again
SHOW_CURSOR = b"\x1b[?25h"


def _read_all(fd: int) -> str:
    """Everything the stopped bar wrote to the terminal: read until its last write, the
    cursor shown again, has come through (one read may return only the first write, seen
    on a loaded machine: the cursor-hiding sequence alone; and the terminal may pass the
    rest on later than any fixed quiet time)."""
    import select
    import time
    chunks, deadline = b"", time.monotonic() + 120
    while SHOW_CURSOR not in chunks and time.monotonic() < deadline:
        if select.select([fd], [], [], 1.0)[0]:
            chunks += os.read(fd, 65536)
    return chunks.decode()


def test_display_by_destination(results):
    assert isinstance(display(quiet=True, stream=io.StringIO()), Silent)
    assert isinstance(display(stream=io.StringIO()), Lines)  # a pipe, a CI log
    master, slave = pty.openpty()
    try:
        with open(slave, "w", closefd=False) as tty:
            bar = display(stream=tty)
            assert isinstance(bar, Bar)
            bar(events(results[0], 2)[0])
            bar.close()
        drawn = _read_all(master)
    finally:
        os.close(master)
        os.close(slave)
    assert "1/2" in drawn and "━" in drawn and "ETA" in drawn


@pytest.mark.parametrize("interval", ["0", "-5", "nan"])
def test_a_bad_interval_is_refused_naming_the_flag(interval, capsys):
    from opsweep.cli.main import EXIT_USAGE, main
    assert main(["sweep", "--progress-interval", interval, "--only", "relu"]) == EXIT_USAGE
    assert "--progress-interval must be > 0 seconds" in capsys.readouterr().err


def test_what_the_workers_are_busy_with_updates_the_bar_but_prints_no_line(results):
    from opsweep.sweep.driver import SpecsRunning
    stream = io.StringIO()
    lines = Lines(stream, interval=0.0)
    lines(SpecsRunning(("abs", "relu @TABLE")))
    assert stream.getvalue() == "" and lines.tally.running == ("abs", "relu @TABLE")
    lines(events(results[0], 2)[0])
    assert stream.getvalue().count("\n") == 1 and lines.tally.done == 1

"""The sweep's progress display, for the CLI (the library never prints).

On a terminal: one live bar (rich) with done/total, examples per second,
elapsed time, an estimate of what is left, and how many specs were reused or
measured. Anywhere else (CI logs, GitHub Actions, a pipe): plain lines at a
bounded rate, the first and the last event and at most one line per
`interval` seconds between them, so a job log stays readable. Quiet: nothing.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from opsweep.artifact.grade import AXES
from opsweep.targets import short

#: Plain-line mode: at most one line per this many seconds (besides the first and the last).
DEFAULT_INTERVAL = 30.0
#: The rate (and so the ETA) follows the last this many measured specs: reused results
#: arrive in a burst before anything is measured, and spec costs drift through the catalog.
RATE_WINDOW = 32


def _reused(done) -> bool:
    """Whether a finished spec was carried over rather than measured in this run."""
    return bool(done.reused)


def label(done) -> str:
    """`name grades`, with `@TABLE` after the name for a translation-table target."""
    r = done.result
    grades = "/".join(getattr(r.grades, a).value if getattr(r.grades, a) else "-" for a in AXES)
    table = short(done.target)
    name = f"{done.name} @{table}" if table else done.name
    return f"{name} {grades}"


def clock(seconds: float | None) -> str:
    """`h:mm:ss`, or `-:--:--` when unknown."""
    if seconds is None:
        return "-:--:--"
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


@dataclass
class Tally:
    """What the display shows, updated on every finished spec."""

    now: Callable[[], float] = time.monotonic
    started: float = 0.0
    done: int = 0
    total: int = 0
    reused: int = 0
    measured: int = 0
    last: str = "drawing examples, starting workers…"
    running: tuple[str, ...] = ()  # what the workers are busy with, one spec per worker
    _window: deque = field(default_factory=lambda: deque(maxlen=RATE_WINDOW))

    def __post_init__(self) -> None:
        self.started = self.now()

    def add(self, done) -> bool:
        """Take one event; False when it only says what the workers are busy with."""
        if not hasattr(done, "result"):  # sweep.SpecsRunning
            self.running = tuple(done.names)
            return False
        self.done, self.total, self.last = done.index, done.total, label(done)
        if _reused(done):
            self.reused += 1
        else:
            self.measured += 1
            self._window.append((self.now(), done.result.examples))
        return True

    def elapsed(self) -> float:
        return self.now() - self.started

    def _span(self) -> tuple[int, int, float]:
        """(specs, examples, seconds) the rate is measured over."""
        w = self._window
        if len(w) >= 2:
            return len(w) - 1, sum(n for _, n in list(w)[1:]), w[-1][0] - w[0][0]
        if w:  # one measured spec: count from the start (the pool's start-up included)
            return 1, w[0][1], w[0][0] - self.started
        return 0, 0, 0.0

    def examples_per_second(self) -> float | None:
        specs, examples, seconds = self._span()
        return examples / seconds if specs and seconds > 0 else None

    def eta(self) -> float | None:
        """Seconds left: the remaining specs at the recent rate, counted down since the
        last measured spec. None before anything was measured."""
        if self.done >= self.total and self.total:
            return 0.0
        specs, _, seconds = self._span()
        if not specs or seconds <= 0:
            return None
        since = self.now() - self._window[-1][0]
        return max(0.0, (self.total - self.done) * seconds / specs - since)

    def line(self) -> str:
        width = len(str(self.total))
        percent = 100 * self.done // self.total if self.total else 0
        return (f"opsweep: [{self.done:>{width}}/{self.total}] {percent:>3}%  {self.counts_text}"
                f"  {self.speed_text}  elapsed {self.elapsed_text}  ETA {self.eta_text}"
                f"  last {self.last}")

    @property
    def speed_text(self) -> str:
        rate = self.examples_per_second()
        return f"{rate:.1f} ex/s" if rate is not None else "- ex/s"

    @property
    def counts_text(self) -> str:
        return f"reused {self.reused}  measured {self.measured}"

    @property
    def elapsed_text(self) -> str:
        return clock(self.elapsed())

    @property
    def eta_text(self) -> str:
        return clock(self.eta())


class Lines:
    """Plain progress lines, bounded in rate: the first event, then at most one line
    per `interval` seconds, and the last state when the sweep ends."""

    def __init__(self, stream: TextIO, interval: float = DEFAULT_INTERVAL,
                 tally: Tally | None = None) -> None:
        self.stream, self.interval = stream, interval
        self.tally = tally or Tally()
        self._printed_at: float | None = None
        self._pending = False

    def __call__(self, done) -> None:
        if not self.tally.add(done):
            return  # lines follow finished specs only, so a job log stays bounded
        now = self.tally.now()
        if self._printed_at is None or now - self._printed_at >= self.interval \
                or self.tally.done >= self.tally.total:
            self._print(now)
        else:
            self._pending = True

    def _print(self, now: float) -> None:
        print(self.tally.line(), file=self.stream, flush=True)
        self._printed_at, self._pending = now, False

    def close(self) -> None:
        if self._pending:
            self._print(self.tally.now())


class Bar:
    """One live bar on a terminal (rich), redrawn twice a second from the tally, so
    elapsed time and the ETA move between specs; below it the counts and the last spec,
    then what each worker is measuring now. Three lines, each within 80 columns."""

    def __init__(self, console, tally: Tally | None = None) -> None:
        # rich: only a live display needs it (the bot's job installs none)
        from rich.live import Live

        self.tally = tally or Tally()
        self.live = Live(self, console=console, refresh_per_second=2, transient=False)
        self.live.start()

    def __rich__(self):
        # rich: only a live display needs it (the bot's job installs none)
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        t = self.tally
        top = Table.grid(padding=(0, 1))
        top.add_row(Text("opsweep", style="bold"),
                    ProgressBar(total=t.total or None, completed=t.done, width=20),
                    f"{t.done}/{t.total or '?'}", f"{t.speed_text}  elapsed {t.elapsed_text}"
                    f"  ETA {t.eta_text}")
        below = Text(f"        {t.counts_text}  last {t.last}", style="dim",
                     no_wrap=True, overflow="ellipsis")
        now = Text(f"        now {', '.join(t.running) or '-'}", style="dim", no_wrap=True,
                   overflow="ellipsis")
        return Group(top, below, now)

    def __call__(self, done) -> None:
        self.tally.add(done)

    def close(self) -> None:
        self.live.refresh()
        self.live.stop()


class Silent:
    def __call__(self, done) -> None:
        pass

    def close(self) -> None:
        pass


def display(quiet: bool = False, interval: float = DEFAULT_INTERVAL,
            stream: TextIO | None = None):
    """The display for this run: nothing, a live bar on a terminal, plain lines elsewhere."""
    stream = sys.stderr if stream is None else stream
    if quiet:
        return Silent()
    if stream.isatty():
        # rich: only a live display needs it (the bot's job installs none)
        from rich.console import Console
        console = Console(file=stream)
        if console.is_terminal and not console.is_dumb_terminal:
            return Bar(console)
    return Lines(stream, interval)

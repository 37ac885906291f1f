"""Workers forked from a process that is already set up.

A worker's set-up (import torch, onnx, onnxruntime and onnxscript, load the catalog,
build one exporter per target) takes seconds, and a spawned worker's interpreter start
and exit more (its last collection walks all of torch; docs/performance.md). The
sweep starts two workers, then a fresh one each time a worker is recycled
(`SweepConfig.recycle`): some sixty set-ups on the main command.

With the ``forkserver`` start method (Linux), one server process does that set-up once:
it imports this module first (multiprocessing's *preload*), which runs the workers'
set-up with the arguments this process put in its environment, and every worker is
then a fork of the server, inheriting that set-up and sharing the server's pages until
it writes them. `engine.worker.init` sees that the set-up it inherited is the one it
was asked for and keeps it; anything else (no server, another set-up, another working
directory) sets up as a spawned worker does. What a worker measures depends only on its
set-up, not on how it started: ``tests/integration/test_sweep.py`` proves the two give
the same artifact byte for byte.

The server is multiprocessing's one fork server of this process: started for one pool
with that pool's set-up and stopped with it, so the next pool (another set-up) starts
its own. Where the start method or the server's private controls are missing, workers
are spawned as before.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opsweep.engine.sweepconfig import SweepConfig
from opsweep.engine.procpool import capture_output
from opsweep.engine.worker import decode, encode, init

#: the environment variable that carries a set-up to the server process
ENV = "OPSWEEP_WORKER_SETUP"
#: the one that names the file the server's output goes to (none: the terminal)
OUTPUT_ENV = "OPSWEEP_WORKER_OUTPUT"


def _server() -> Any:
    """multiprocessing's fork server, when this platform has it and its controls are the
    ones used here; else None."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    from multiprocessing import forkserver  # only where the platform has the start method
    server = getattr(forkserver, "_forkserver", None)
    needed = ("ensure_running", "set_forkserver_preload", "_stop")
    return server if all(hasattr(server, name) for name in needed) else None


def _started(setup: SweepConfig, output: Path | None) -> Any:
    """The fork server, (re)started with `setup`, its output going to a file in `output`;
    None where there is none to start."""
    server = _server()
    if server is None:
        return None
    server._stop()  # one started before knows nothing of this set-up
    handed = {ENV: encode(setup)}
    if output is not None:
        handed[OUTPUT_ENV] = str(output / "server.txt")
    saved = {name: os.environ.get(name) for name in (ENV, OUTPUT_ENV)}
    os.environ.update(handed)
    try:
        server.set_forkserver_preload([__name__])
        server.ensure_running()  # the server reads the environment as it starts
    except OSError:  # no socket or process for it here
        return None
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return server


@contextmanager
def worker_context(setup: SweepConfig, preload: bool = True,
                   output: Path | None = None) -> Iterator[Any]:
    """The multiprocessing context to start workers with: a fork server set up with
    `setup` (`preload`, where available), else spawn. With `output`, what the server
    prints goes to a file there, not to the terminal."""
    server = _started(setup, output) if preload else None
    try:
        yield multiprocessing.get_context("spawn" if server is None else "forkserver")
    finally:
        if server is not None:
            server._stop()


@contextmanager
def preloaded(modules: list[str]) -> Iterator[Any]:
    """The multiprocessing context of workers forked from a server that imported
    `modules` once (torch and the exporter's stack, for `opsweep check --jobs`: about 5 s
    of CPU a worker does not spend again), where the platform has the fork server; else
    spawn. The server is stopped on the way out, its preload set back."""
    server = _server()
    before = list(getattr(server, "_preload_modules", None) or ["__main__"])
    if server is not None:
        server._stop()
        server.set_forkserver_preload(modules)
        try:
            server.ensure_running()
        except OSError:  # no socket or process for it here
            server.set_forkserver_preload(before)
            server = None
    try:
        yield multiprocessing.get_context("spawn" if server is None else "forkserver")
    finally:
        if server is not None:
            server._stop()
            server.set_forkserver_preload(before)


def _set_up_server() -> None:
    """In the server process, as it imports this module: its output to the file named,
    then the workers' set-up, once."""
    output = os.environ.pop(OUTPUT_ENV, None)
    setup = decode(os.environ.pop(ENV))
    if setup is None:
        return
    if output is not None:
        capture_output(output)
    init(setup)
    # the server writes nothing and owns nothing to release: when its pool stops it, it
    # exits at once instead of tearing down torch (about 1.5 s each pool)
    atexit.register(os._exit, 0)


if ENV in os.environ:  # the server (worker.decode tells it from any other process)
    try:  # whatever fails here, the workers set up themselves
        _set_up_server()
    except BaseException:  # noqa: BLE001 -- a preload that raises would stop the server
        pass

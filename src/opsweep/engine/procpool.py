"""A pool of worker processes that outlives its workers: any number of them may die at
once, at any moment (running a task, taking one, idle, starting), and every task still
ends, in a bounded time.

Each worker has a pipe of its own to the sweep's process, and the pool hands a task only
to a worker it knows to be idle: when a worker dies, the pool knows exactly which task it
held (none, if it was idle or starting), and nothing a dead worker held can stall another
(the workers share no queue and no lock). One thread of the sweep's process watches
every worker's pipe and process at once (`multiprocessing.connection.wait`):

* a result completes its task's future, read before the worker's exit is looked at (a
  worker that sent its result and then died loses nothing);
* a worker that died completes the future of the task it held with `WorkerDied`, and is
  replaced at once;
* a task past its time limit has its worker killed, and completes with `TaskTimedOut`;
* a worker not ready within `start_timeout` is killed; after `start_tries` workers in a
  row died before they were ready, every waiting task completes with `WorkersCannotStart`
  instead of the pool starting workers forever;
* `stop` completes every task not finished with `PoolStopped`.

So a task is queued, or held by one live worker under its time limit, or finished: its
future always completes. With `output`, a worker's file descriptors 1 and 2 go to a file
of its own in that directory, so what the C and C++ libraries under it print (onnxruntime's
assertion text before it aborts) never reaches the sweep's terminal.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

#: What a worker sends once its set-up is done.
READY = "ready"
#: How long a dead or killed worker's process is waited for before the pool moves on.
_REAP_SECONDS = 5.0


class WorkerDied(Exception):
    """The worker holding the task died (`exitcode`: -N for signal N)."""

    def __init__(self, exitcode: int | None) -> None:
        super().__init__(f"worker exited with code {exitcode}")
        self.exitcode = exitcode


def describe_exit(exc: BaseException) -> str:
    """A dead worker in words: the signal that killed it, else how it exited."""
    code = getattr(exc, "exitcode", None)
    if isinstance(code, int) and code < 0:
        try:
            return f"worker killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"worker killed by signal {-code}"
    return f"worker exited ({type(exc).__name__}: {exc})"


class TaskTimedOut(Exception):
    """The task overran its time limit; its worker was killed."""


class WorkersCannotStart(Exception):
    """Workers kept dying before they were ready: no task can run."""


class PoolStopped(Exception):
    """The pool stopped before the task finished."""


@dataclass(eq=False)
class _Task:
    future: Future
    function: Callable
    args: tuple
    timeout: float | None


@dataclass(eq=False)
class _Worker:
    process: Any  # multiprocessing's process object
    conn: Connection
    started: float
    ready: bool = False
    task: _Task | None = None
    deadline: float = float("inf")
    done: int = 0


@dataclass(eq=False)
class _State:
    """What the pool's thread keeps (only that thread changes `workers` and `dying`)."""

    queue: deque = field(default_factory=deque)
    workers: list = field(default_factory=list)
    dying: list = field(default_factory=list)  # exited or killed, not reaped yet
    failed_starts: int = 0
    broken: BaseException | None = None
    stopping: bool = False
    count: int = 0  # workers started so far (names their output files)


class ProcessPool:
    """`workers` processes of `context`, each set up by `initializer(*initargs)` and
    replaced after `max_tasks` tasks (0: never)."""

    def __init__(self, context, workers: int, *, max_tasks: int = 0,
                 initializer: Callable | None = None, initargs: Iterable = (),
                 output: Path | None = None, start_timeout: float = 600.0,
                 start_tries: int | None = None) -> None:
        self._context, self._size, self._max_tasks = context, workers, max_tasks
        self._initializer, self._initargs = initializer, tuple(initargs)
        self._output, self._start_timeout = output, start_timeout
        self._start_tries = start_tries if start_tries is not None else 2 * workers + 1
        self._state = _State()
        self._lock = threading.Lock()
        self._wake_in, self._wake_out = os.pipe()
        os.set_blocking(self._wake_out, False)
        self._thread = threading.Thread(target=self._loop, name="opsweep-pool", daemon=True)
        self._thread.start()

    # --- the sweep's side -----------------------------------------------------------

    def submit(self, function: Callable, timeout: float | None, *args: Any) -> Future:
        """Run `function(*args)` in a worker, within `timeout` seconds once it starts."""
        future: Future = Future()
        with self._lock:
            state = self._state
            if state.stopping:
                raise PoolStopped("the pool was stopped")
            if state.broken is not None:
                future.set_exception(state.broken)
                return future
            state.queue.append(_Task(future, function, args, timeout))
        self._wake()
        return future

    def stop(self) -> None:
        """Stop every worker; every task not finished completes with `PoolStopped`."""
        with self._lock:
            if self._wake_out < 0:  # stopped already
                return
            self._state.stopping = True
        self._wake()
        self._thread.join()
        with self._lock:
            os.close(self._wake_in)
            os.close(self._wake_out)
            self._wake_out = -1

    def _wake(self) -> None:
        with self._lock:
            if self._wake_out < 0:  # stopped
                return
            try:
                os.write(self._wake_out, b"!")
            except BlockingIOError:  # the pipe is full: the thread is awake anyway
                pass

    # --- the pool's thread ----------------------------------------------------------

    def _loop(self) -> None:
        state = self._state
        try:
            while not state.stopping:
                self._fill()
                self._hand_out()
                self._watch(self._next_deadline())
                self._expire()
        except BaseException as exc:  # noqa: BLE001 -- no future may be left waiting
            self._fail_waiting(PoolStopped(f"the pool's thread failed: {type(exc).__name__}: "
                                           f"{exc}"))
        finally:
            self._shut_down()

    def _fill(self) -> None:
        """Start workers up to the pool's size, unless starting them is hopeless."""
        state = self._state
        while state.broken is None and len(state.workers) < self._size:
            if state.failed_starts >= self._start_tries:
                self._break(WorkersCannotStart(
                    f"{state.failed_starts} workers in a row died before they were ready"))
                return
            try:
                state.workers.append(self._start())
            except (OSError, EOFError) as exc:
                state.failed_starts += 1
                if state.failed_starts >= self._start_tries:
                    self._break(WorkersCannotStart(f"a worker could not be started: {exc}"))

    def _start(self) -> _Worker:
        ours, theirs = self._context.Pipe(duplex=True)
        output = None
        if self._output is not None:
            output = str(self._output / f"worker-{self._state.count}.txt")
        self._state.count += 1
        process = self._context.Process(
            target=serve, name="opsweep-worker", daemon=False,
            args=(theirs, self._initializer, self._initargs, self._max_tasks, output))
        try:
            process.start()
        finally:
            theirs.close()
        return _Worker(process, ours, time.monotonic())

    def _hand_out(self) -> None:
        """Each idle worker that is ready takes the next task. A task is running once its
        worker has it whole; one a worker could not take (it has just died, its exit is
        seen next) goes back to the front of the queue."""
        for worker in self._state.workers:
            if not worker.ready or worker.task is not None:
                continue
            task = self._next_task()
            if task is None:
                return
            try:
                worker.conn.send((task.function, task.args))
            except (OSError, EOFError):
                with self._lock:
                    self._state.queue.appendleft(task)
                continue
            except Exception as exc:  # noqa: BLE001 -- the task cannot be pickled
                task.future.set_exception(exc)
                continue
            task.future.set_running_or_notify_cancel()
            worker.task = task
            worker.deadline = time.monotonic() + task.timeout if task.timeout else float("inf")

    def _next_task(self) -> _Task | None:
        with self._lock:
            return self._state.queue.popleft() if self._state.queue else None

    def _next_deadline(self) -> float | None:
        """Seconds until the next time limit (a task's, or a starting worker's)."""
        now = time.monotonic()
        limits = [w.deadline if w.task is not None else w.started + self._start_timeout
                  for w in self._state.workers if w.task is not None or not w.ready]
        if self._state.dying:
            limits.append(now + 0.5)  # look at the dying again soon, to reap them
        limits = [limit for limit in limits if limit != float("inf")]
        return max(0.0, min(limits) - now) if limits else None

    def _watch(self, timeout: float | None) -> None:
        """Wait for a message, an exit, a wake-up or `timeout`; then handle what came."""
        state = self._state
        conns = {w.conn: w for w in state.workers}
        sentinels = {w.process.sentinel: w for w in state.workers}
        ready = wait([self._wake_in, *conns, *sentinels], timeout)
        if self._wake_in in ready:
            os.read(self._wake_in, 4096)
        for item in ready:
            if item in conns:
                self._receive(conns[item])
        for item in ready:
            if item in sentinels:
                self._exited(sentinels[item])
        self._reap()

    def _receive(self, worker: _Worker) -> None:
        """Every message the worker has sent; a closed pipe means it is gone."""
        if not self._drain(worker):
            self._exited(worker)

    def _drain(self, worker: _Worker) -> bool:
        """Handle the messages waiting in the worker's pipe; False if the pipe is closed."""
        try:
            while worker in self._state.workers and worker.conn.poll(0):
                try:
                    message = worker.conn.recv()
                except (OSError, EOFError):
                    raise
                except Exception as exc:  # noqa: BLE001 -- read whole, but not unpicklable here
                    message = (False, RuntimeError(f"the task's result could not be read: "
                                                   f"{type(exc).__name__}: {exc}"))
                self._message(worker, message)
        except (OSError, EOFError):
            return False
        return True

    def _message(self, worker: _Worker, message: Any) -> None:
        if message == READY:
            worker.ready, self._state.failed_starts = True, 0
            return
        task, worker.task, worker.deadline = worker.task, None, float("inf")
        worker.done += 1
        if task is not None:
            ok, value = message
            task.future.set_result(value) if ok else task.future.set_exception(value)
        if self._max_tasks and worker.done >= self._max_tasks:
            self._retire(worker)  # it exits by itself now; a fresh one replaces it at once

    def _exited(self, worker: _Worker) -> None:
        """The worker's process ended (or its pipe closed): its last messages first, then
        the task it held, if any, completes with WorkerDied."""
        if worker not in self._state.workers:
            return
        self._drain(worker)
        if worker not in self._state.workers:  # retired by its last message
            return
        worker.process.join(_REAP_SECONDS)
        self._lose(worker, WorkerDied(worker.process.exitcode))

    def _expire(self) -> None:
        """Kill the workers past a time limit: a task's, or their set-up's."""
        now = time.monotonic()
        for worker in list(self._state.workers):
            if worker.task is not None and now >= worker.deadline:
                self._kill(worker)
                self._lose(worker, TaskTimedOut(f"over {worker.task.timeout:.0f}s"))
            elif not worker.ready and now >= worker.started + self._start_timeout:
                self._kill(worker)
                self._lose(worker, None)

    def _lose(self, worker: _Worker, error: BaseException | None) -> None:
        """The worker is gone: its task completes with `error`, a replacement comes next."""
        self._retire(worker)
        if not worker.ready:
            self._state.failed_starts += 1
        if worker.task is not None and error is not None:
            worker.task.future.set_exception(error)
            worker.task = None

    def _retire(self, worker: _Worker) -> None:
        self._state.workers.remove(worker)
        self._state.dying.append(worker)
        worker.conn.close()

    def _reap(self) -> None:
        """Collect the exit of each worker that has ended (no zombie is left behind)."""
        for worker in list(self._state.dying):
            if worker.process.exitcode is not None:
                self._state.dying.remove(worker)

    @staticmethod
    def _kill(worker: _Worker) -> None:
        try:
            worker.process.kill()
        except (OSError, ValueError):  # already gone
            pass

    def _break(self, error: BaseException) -> None:
        """No task can run any more: the waiting ones, and any submitted later, fail."""
        with self._lock:
            self._state.broken = error
        self._fail_waiting(error)

    def _fail_waiting(self, error: BaseException) -> None:
        with self._lock:
            queue, self._state.queue = self._state.queue, deque()
        for task in queue:
            if not task.future.done():
                task.future.set_exception(error)

    def _shut_down(self) -> None:
        """Every worker stopped (an idle one told to leave, a busy one killed), every
        future completed."""
        state = self._state
        stopped = PoolStopped("the pool was stopped")
        for worker in list(state.workers):
            if worker.task is None:
                try:
                    worker.conn.send(None)
                except (OSError, EOFError, ValueError):
                    self._kill(worker)
            else:
                self._kill(worker)
                worker.task.future.set_exception(stopped)
                worker.task = None
            self._retire(worker)
        self._fail_waiting(stopped)
        deadline = time.monotonic() + _REAP_SECONDS
        for worker in state.dying:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.exitcode is None:
                self._kill(worker)
                worker.process.join(_REAP_SECONDS)
        state.dying.clear()


# --- the worker's side ------------------------------------------------------------------

def serve(conn: Connection, initializer: Callable | None, initargs: tuple, max_tasks: int,
          output: str | None) -> None:
    """A worker: its output to `output`, its set-up, then one task at a time from `conn`
    until it has run `max_tasks` (0: no limit), is told to leave, or the pool is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the sweep's to handle
    if output is not None:
        capture_output(output)
    if initializer is not None:
        initializer(*initargs)
    try:
        conn.send(READY)
    except OSError:  # the pool stopped while this worker was setting up
        _leave()
    done = 0
    while not max_tasks or done < max_tasks:
        try:
            message = conn.recv()
        except EOFError:  # the pool is gone
            break
        except Exception as exc:  # noqa: BLE001 -- a task that cannot be unpickled here
            _reply(conn, False, exc)
            done += 1
            continue
        if message is None:
            break
        function, args = message
        try:
            value, ok = function(*args), True
        except BaseException as exc:  # noqa: BLE001 -- the task's, sent back
            value, ok = exc, False
        _reply(conn, ok, value)
        done += 1
    _leave()


def _reply(conn: Connection, ok: bool, value: Any) -> None:
    try:
        conn.send((ok, value))
    except (OSError, EOFError):
        _leave()
    except Exception as exc:  # noqa: BLE001 -- a result that cannot be pickled
        conn.send((False, RuntimeError(f"the task's {'result' if ok else 'error'} could "
                                       f"not be sent back: {type(exc).__name__}: {exc}")))


def _leave() -> None:
    """Exit at once: what a worker holds is torn down by the system faster than by the
    interpreter (torch's modules and objects), and it writes nothing that needs it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)


def capture_output(path: str) -> None:
    """This process's file descriptors 1 and 2 (and so Python's own streams, and whatever
    C or C++ code under it prints) go to the file `path`, appended, line by line."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass

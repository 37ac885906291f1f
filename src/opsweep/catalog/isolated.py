"""A function run in a forked child, so that a crash of eager PyTorch (a segfault, an
abort) on an example the cell covering builds costs the child, never the sweep's process
(which draws the examples). The child sends its result back pickled through a pipe; the
parent waits at most `timeout` seconds for it (a child that takes longer is killed).

What the child prints (libc's assertion text as onnxruntime or PyTorch aborts, a fault
handler's dump of its stack) is the child's own: it goes to a file of the child's, never
to the sweep's terminal, and a `ChildLost` carries its last lines (`ChildLost.output`).

`OneChild` serves such calls from one forked child, one after another (a request that
crashes it costs it alone: the next request forks a new one); `in_child` is a OneChild
asked once. The cell covering (catalog/draw.py) asks through `in_child`, a child per
spec: a fork of a process as large as a sweep's costs some 15 ms of system time on each
side, but draw.py's bytes are part of every spec's digest (sweep.reuse.spec_digest), and
one child for a whole drawing, tried, moved every digest, so that the committed artifact
would have been measured anew and its history's "full since" would have started again."""

from __future__ import annotations

import faulthandler
import gc
import os
import pickle
import select
import signal
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from typing import IO, Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


#: how much of a lost child's output its ChildLost keeps (its start and its end)
OUTPUT_KEPT = 4_000


class ChildLost(Exception):
    """The child died or went silent before it sent a result: the reason, in one line;
    `output`, the end of what the child printed."""

    def __init__(self, reason: str, output: str = "") -> None:
        super().__init__(reason)
        self.output = output


def in_child(fn: Callable[[], T], timeout: float = 300.0) -> T:
    """`fn()` computed in a forked child; its exception raised here; ChildLost when the
    child died without a result (by a signal, say) or took longer than `timeout`. (A
    OneChild asked once: `fn` itself never travels, the child has it from the fork.)"""
    child: OneChild[None, T] = OneChild(lambda _request: fn(), timeout)
    with child:
        return child.ask(None)


class NotSent(Exception):
    """A request that cannot be pickled: the child never saw it."""


class OneChild(Generic[R, T]):
    """`handle(request)` computed in one forked child for request after request (`ask`),
    as `in_child` computes a function: the request is sent pickled and the result comes
    back pickled, its exception is raised here, and a child that dies or takes longer than
    `timeout` seconds on a request is a ChildLost of that request, its `output` what the
    child printed while it ran. The child is forked at the first request (its state is this
    process's at that moment: what `handle` reads must exist by then) and again at the
    first after a loss; `close` ends it (a with-block closes it too). A request that cannot
    be pickled is NotSent, the child untouched."""

    def __init__(self, handle: Callable[[R], T], timeout: float = 300.0) -> None:
        self._handle, self._timeout = handle, timeout
        self._pid: int | None = None
        self._to = self._back = -1
        self._printed: IO[bytes] | None = None
        self._busy = False  # a request sent, its answer not read (an interrupted `ask`)

    def __enter__(self) -> OneChild[R, T]:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def ask(self, request: R) -> T:
        try:
            sent = pickle.dumps(request)
        except Exception as exc:  # noqa: BLE001 - whatever pickling raises: said as one
            raise NotSent(f"{type(exc).__name__}: {exc}") from exc
        self.start()
        assert self._pid is not None and self._printed is not None
        printed_before = os.fstat(self._printed.fileno()).st_size
        self._busy = True
        try:
            try:
                _write_frame(self._to, sent)
            except BrokenPipeError:
                raise ChildLost("") from None  # it died since the last request: said below
            frame = _read_frame(self._back, self._timeout)
        except ChildLost as lost:
            reason = str(lost)
            status = self._stop(kill=True)
            if not reason and os.WIFSIGNALED(status):
                reason = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
            lost.args = (reason or f"exited {os.waitstatus_to_exitcode(status)} with no result",)
            lost.output = self._take_output(printed_before)
            self._printed_close()
            raise lost from None
        self._busy = False
        ok, value = pickle.loads(frame)
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """End the child (it exits once its requests stop; killed when an `ask` was
        interrupted before its answer) and wait for it."""
        if self._pid is not None:
            self._stop(kill=self._busy)
        self._printed_close()

    def start(self) -> None:
        """Fork the child now, if none is running (`ask` forks it when it must)."""
        if self._pid is not None:
            return
        requests, to_child = os.pipe()  # (read end, write end)
        from_child, replies = os.pipe()
        self._printed_close()
        self._printed = tempfile.TemporaryFile()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(to_child)
            os.close(from_child)
            code = 0
            try:
                _own_output(self._printed.fileno())
                _hold_only(requests, replies)
                _one_thread()
                _serve(requests, replies, self._handle)
            except BaseException:  # noqa: BLE001 - nothing can be sent: the parent says so
                code = 1
            finally:
                os._exit(code)
        os.close(requests)
        os.close(replies)
        self._pid, self._to, self._back = pid, to_child, from_child

    def _stop(self, kill: bool) -> int:
        """Close the pipes (the child reads the end of its requests and exits), kill it
        first with `kill`; its wait status."""
        assert self._pid is not None
        if kill:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.close(self._to)
        os.close(self._back)
        _, status = os.waitpid(self._pid, 0)
        self._pid, self._busy = None, False
        return status

    def _take_output(self, start: int) -> str:
        """What the child printed from `start` on (see `_kept`)."""
        assert self._printed is not None
        return _kept(self._printed, start)

    def _printed_close(self) -> None:
        if self._printed is not None:
            self._printed.close()
            self._printed = None


_LENGTH = struct.Struct("<Q")


def _serve(read: int, write: int, handle: Callable[[Any], Any]) -> None:
    """The child's loop: a request in, its result (or exception) out, until the parent
    closes its end."""
    while True:
        try:
            frame = _read_frame(read, None)
        except ChildLost:  # the parent closed its end: no more requests
            return
        try:
            payload = pickle.dumps((True, handle(pickle.loads(frame))))
        except BaseException as exc:  # noqa: BLE001 - sent to the parent, raised there
            payload = pickle.dumps((False, exc))
        _write_frame(write, payload)


def _write_frame(fd: int, payload: bytes) -> None:
    data = memoryview(_LENGTH.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data):]


def _read_frame(fd: int, timeout: float | None) -> bytes:
    """One length-prefixed frame from `fd`; ChildLost("") at the end of the pipe, ChildLost
    naming the wait once `timeout` seconds have passed without the whole frame."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = _LENGTH.unpack(_read_exact(fd, _LENGTH.size, deadline, timeout))
    return _read_exact(fd, size, deadline, timeout)


def _read_exact(fd: int, size: int, deadline: float | None, timeout: float | None) -> bytes:
    chunks, have = [], 0
    while have < size:
        if deadline is not None:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                raise ChildLost(f"no answer within {timeout:g} s")
        chunk = os.read(fd, min(size - have, 1 << 20))
        if not chunk:
            raise ChildLost("")
        chunks.append(chunk)
        have += len(chunk)
    return b"".join(chunks)


def _kept(printed: IO[bytes], start: int = 0) -> str:
    """What the child printed (from offset `start`): all of it, or its start and its end
    (the first error line and a fault handler's dump) when longer than `OUTPUT_KEPT`."""
    size = os.fstat(printed.fileno()).st_size - start
    printed.seek(start)
    if size <= OUTPUT_KEPT:
        return printed.read().decode("utf-8", "replace")
    head = printed.read(OUTPUT_KEPT // 2)
    printed.seek(start + size - OUTPUT_KEPT // 2)
    tail = printed.read()
    return (head.decode("utf-8", "replace") + f"\n[... {size - OUTPUT_KEPT:,} bytes ...]\n"
            + tail.decode("utf-8", "replace"))


def _own_output(fd: int) -> None:
    """The child's standard output and error, and a fault handler if the parent had one
    (pytest's, PYTHONFAULTHANDLER), onto the file `fd`."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    # Python's own streams too, wherever the parent had pointed them (a test's capture)
    sys.stdout = sys.stderr = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    if faulthandler.is_enabled():
        faulthandler.enable(file=2)


def _hold_only(*keep: int) -> None:
    """The child keeps its standard streams and the descriptors `keep` open, none other of
    its parent's: a pipe the parent waits to see closed (a fork server's, that stops when
    its last writer is gone) must not stay open in a child that outlives the wait. Objects
    of the parent's that name a descriptor are never finalized here (frozen out of the
    collector: that number may be the child's own by then)."""
    gc.freeze()
    low = 3
    for fd in sorted(k for k in keep if k >= low):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, _FD_LIMIT)


#: past the highest descriptor this process may hold (the kernel closes the range at once
#: where it can, else each is closed in turn: the limit, not the largest number)
_FD_LIMIT = max(os.sysconf("SC_OPEN_MAX"), 1024) if hasattr(os, "sysconf") else 65536


def _one_thread() -> None:
    """A forked child runs PyTorch on one thread: the parent's intra-op thread pool (once
    PyTorch computed anything there, as rendering the pages does) is not in the child, and
    the child's first parallel region would wait on it forever."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)

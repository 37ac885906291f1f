"""A function run in a forked child, so that a crash of eager PyTorch (a segfault, an
abort) on an example the cell covering builds costs the child, never the sweep's process
(which draws the examples). The child sends its result back pickled through a pipe; the
parent waits at most `timeout` seconds for it (a child that takes longer is killed).

What the child prints (libc's assertion text as onnxruntime or PyTorch aborts, a fault
handler's dump of its stack) is the child's own: it goes to a file of the child's, never
to the sweep's terminal, and a `ChildLost` carries its last lines (`ChildLost.output`)."""

from __future__ import annotations

import faulthandler
import os
import pickle
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from typing import IO, Any, TypeVar

T = TypeVar("T")


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
    child died without a result (by a signal, say) or took longer than `timeout`."""
    read, write = os.pipe()
    printed = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read)
        code = 0
        _own_output(printed.fileno())
        _one_thread()
        try:
            try:
                payload = pickle.dumps((True, fn()))
            except BaseException as exc:  # noqa: BLE001 - sent to the parent, raised there
                payload = pickle.dumps((False, exc))
            with os.fdopen(write, "wb") as out:
                out.write(payload)
        except BaseException:  # noqa: BLE001 - nothing can be sent: the parent says so
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with printed:
        try:
            return _collect(pid, read, timeout)
        except ChildLost as lost:
            lost.output = _kept(printed)
            raise


def _kept(printed: IO[bytes]) -> str:
    """What the child printed: all of it, or its start and its end (the first error line
    and a fault handler's dump) when longer than `OUTPUT_KEPT`."""
    size = os.fstat(printed.fileno()).st_size
    printed.seek(0)
    if size <= OUTPUT_KEPT:
        return printed.read().decode("utf-8", "replace")
    head = printed.read(OUTPUT_KEPT // 2)
    printed.seek(size - OUTPUT_KEPT // 2)
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


def _one_thread() -> None:
    """A forked child runs PyTorch on one thread: the parent's intra-op thread pool (once
    PyTorch computed anything there, as rendering the pages does) is not in the child, and
    the child's first parallel region would wait on it forever."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _collect(pid: int, read: int, timeout: float) -> Any:
    chunks, deadline, reason = [], time.monotonic() + timeout, ""
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([read], [], [], max(left, 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                reason = f"no answer within {timeout:g} s"
                break
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
        _, status = os.waitpid(pid, 0)
    if reason or not chunks:
        if not reason and os.WIFSIGNALED(status):
            reason = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
        raise ChildLost(reason or f"exited {os.waitstatus_to_exitcode(status)} with no result")
    ok, value = pickle.loads(b"".join(chunks))
    if not ok:
        raise value
    return value

"""A function run in a forked child, so that a crash of eager PyTorch (a segfault, an
abort) on an example the cell covering builds costs the child, never the sweep's process
(which draws the examples). The child sends its result back pickled through a pipe; the
parent waits at most `timeout` seconds for it (a child that takes longer is killed)."""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class ChildLost(Exception):
    """The child died or went silent before it sent a result: the reason, in one line."""


def in_child(fn: Callable[[], T], timeout: float = 300.0) -> T:
    """`fn()` computed in a forked child; its exception raised here; ChildLost when the
    child died without a result (by a signal, say) or took longer than `timeout`."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read)
        code = 0
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
    return _collect(pid, read, timeout)


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

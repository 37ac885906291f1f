"""The process's standard streams, Python's and, below them, C's own buffered streams,
which native code (torch's C++ side, onnxruntime) writes through. Stdlib only: the
command line's exit uses it without importing the measuring stack."""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import Any


@functools.cache
def _libc() -> Any:
    """The process's C library, loaded once (every TorchScript export flushes it twice)."""
    try:
        return ctypes.CDLL(None)
    except OSError:  # no C library to ask: nothing buffered there
        return None


def flush() -> None:
    """Python's standard streams flushed, then every C stdio stream's buffer (fflush(NULL)),
    each written where it points now. A stream that cannot take it (a closed pipe, a
    closed file) is passed over: nothing more can reach it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    libc = _libc()
    if libc is not None and hasattr(libc, "fflush"):
        libc.fflush(None)

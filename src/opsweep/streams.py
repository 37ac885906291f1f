"""The process's standard streams below Python: C's own buffered streams, which native
code (torch's C++ side, onnxruntime) writes through. Stdlib only: the command line's exit
uses it without importing the measuring stack."""

from __future__ import annotations

import ctypes
import functools
from typing import Any


@functools.cache
def _libc() -> Any:
    """The process's C library, loaded once (every TorchScript export flushes it twice)."""
    try:
        return ctypes.CDLL(None)
    except OSError:  # no C library to ask: nothing buffered there
        return None


def flush_c() -> None:
    """fflush(NULL): every C stdio stream's buffer written out (where it points now)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "fflush"):
        libc.fflush(None)

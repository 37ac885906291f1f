"""A pooled sweep's own directories (its phase files', its workers' output), and the removal
of those its killed sweeps left.

A sweep that ends, however it fails, removes its directory on the way out. One killed
outright (SIGKILL, the kernel's OOM killer) cannot, and the directory sits in shared
memory (/dev/shm: RAM) until the machine restarts (the output directory, on disk, until
the temporary directory is cleaned). So a sweep owns its directory by a lock:
its `OWNER` file, locked (``flock``) by the sweep for as long as it lives. The kernel lets
such a lock go only when the last descriptor of it closes, that is when the owner has died,
however it died; a PID would say nothing across PID namespaces (containers sharing one
/dev/shm), nor after its number is reused. Each pooled sweep, as it starts, removes every
directory of the same place and prefix whose lock it can take. A directory with
no lock file (an older engine's, or one whose owner has not yet put its lock in place) is
left alone: the lock file appears already locked (made aside, locked, then renamed in), so
no sweep can take a live directory for a dead one.

Standard library only: the sweep's start, and tests' stand-in sweeps, import nothing else.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

PHASES_PREFIX = "opsweep-phases-"
OUTPUT_PREFIX = "opsweep-output-"
#: the lock file a live sweep holds in its directory
OWNER = "owner.lock"


@contextmanager
def owned_directory(root: str | os.PathLike | None, prefix: str) -> Iterator[str]:
    """A new directory named `prefix`... in `root` (None: the system's temporary
    directory), owned by this process until the block ends, then removed; first, the
    directories of dead sweeps of that place and prefix are removed."""
    place = os.fspath(root) if root is not None else tempfile.gettempdir()
    remove_dead(place, prefix)
    path = tempfile.mkdtemp(prefix=prefix, dir=place)
    try:
        handle = _own(path)
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
        raise
    try:
        yield path
    finally:
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(handle)


def _own(path: str) -> int:
    """The lock file of `path`, made aside, locked, then renamed to OWNER; its descriptor
    (not inherited by any program this process starts)."""
    fd, aside = tempfile.mkstemp(prefix=".owner-", dir=path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: no one else has it
        os.replace(aside, os.path.join(path, OWNER))
    except BaseException:
        os.close(fd)
        raise
    return fd


def remove_dead(place: str, prefix: str) -> None:
    """Remove the directories `prefix`... in `place` whose owner has died. Only
    real directories of this user are looked at (a shared /dev/shm holds other users'
    entries, and a link could point anywhere); what cannot be read or removed (a race with
    another sweep doing the same) is left as it is."""
    try:
        names = sorted(n for n in os.listdir(place) if n.startswith(prefix))
    except OSError:
        return
    for name in names:
        path = os.path.join(place, name)
        try:
            found = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
            continue
        try:
            fd = os.open(os.path.join(path, OWNER), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # not a directory, no lock file yet, not ours to read
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its sweep is alive (or another sweep is removing it)
            os.close(fd)
            continue
        try:  # dead, and this process holds the lock while it removes the directory
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)

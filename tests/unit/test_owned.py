"""A sweep's own directories outlive nothing that made them: a sweep killed outright
(SIGKILL, the machine's OOM killer) cannot remove its `opsweep-phases-*` directory, which
sits in shared memory (/dev/shm) until the machine restarts, nor its workers'
`opsweep-output-*` directory; the next pooled sweep removes them. A directory whose sweep is alive is never touched, whichever PID namespace that sweep
runs in: its owner holds a lock on it for as long as it lives, and the kernel lets the lock
go only when every descriptor of it is closed."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from opsweep.engine.owned import OUTPUT_PREFIX, OWNER, PHASES_PREFIX, owned_directory

#: a sweep's set-up in a process of its own: its phase directory made, its path printed,
#: then it waits (to be killed, or until its stdin closes)
HOLDER = textwrap.dedent("""
    import sys
    from opsweep.engine.owned import owned_directory
    with owned_directory(sys.argv[1], sys.argv[2]) as path:
        print(path, flush=True)
        sys.stdin.read()
""")


def _holder(root, prefix):
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(root), prefix],
                               stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    path = process.stdout.readline().strip()  # made and locked before it is printed
    assert path, "the holder printed no directory"
    return process, path


@pytest.mark.parametrize("prefix", [PHASES_PREFIX, OUTPUT_PREFIX])
def test_a_killed_sweep_s_directory_is_removed_by_the_next_and_a_live_one_kept(tmp_path,
                                                                              prefix):
    killed, stale = _holder(tmp_path, prefix)
    (tmp_path / stale / "0-3").write_text("stock|export")  # a file it left
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    alive, held = _holder(tmp_path, prefix)
    try:
        with owned_directory(tmp_path, prefix) as mine:
            assert os.path.basename(mine).startswith(prefix)
            assert os.path.isdir(mine)
            assert not os.path.exists(stale), "the killed sweep's directory is still there"
            assert os.path.isdir(held), "a live sweep's directory was removed"
        assert not os.path.exists(mine)  # a sweep that ends removes its own
    finally:
        alive.stdin.close()
        assert alive.wait(timeout=60) == 0
    assert not os.path.exists(held)
    assert os.listdir(tmp_path) == []


def test_what_is_not_a_sweep_s_directory_is_left_alone(tmp_path):
    """Only `opsweep-phases-*` directories with an owner's lock file: anything else in the
    shared directory (another program's, an older opsweep's without a lock) stays."""
    (tmp_path / "opsweep-phases-old").mkdir()  # an older engine's: no lock file, no owner
    (tmp_path / "other").mkdir()
    (tmp_path / "opsweep-phases-file").write_text("not a directory")
    with owned_directory(tmp_path, PHASES_PREFIX):
        pass
    assert sorted(os.listdir(tmp_path)) == ["opsweep-phases-file", "opsweep-phases-old", "other"]


def test_the_lock_is_in_place_before_the_directory_is_seen_with_it(tmp_path):
    """The lock file appears under its name already locked (made aside, locked, then
    renamed in): a sweep starting between the two can never take a live directory for a
    dead one."""
    import fcntl
    with owned_directory(tmp_path, PHASES_PREFIX) as path:
        with open(os.path.join(path, OWNER), "rb") as handle:
            with pytest.raises(BlockingIOError):
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_link_named_like_a_phase_directory_is_not_followed(tmp_path):
    """A shared /dev/shm lets anyone make entries there: a link to a directory that holds
    an unlocked lock file is not a dead sweep's directory."""
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / OWNER).write_text("")
    (target / "keep").write_text("yes")
    place = tmp_path / "shm"
    place.mkdir()
    (place / "opsweep-phases-planted").symlink_to(target)
    with owned_directory(place, PHASES_PREFIX):
        pass
    assert (target / "keep").read_text() == "yes"
    assert os.listdir(place) == ["opsweep-phases-planted"]

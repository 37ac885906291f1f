"""`opsweep.cli.main.leave`: the command's quick exit skips the teardown of every module,
and nothing else the interpreter's own exit does that anyone could see."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent("""
    import atexit, ctypes, sys, tempfile, threading
    from pathlib import Path
    from opsweep.cli.main import leave

    out = Path(sys.argv[1])
    # a temporary directory left to its finalizer, as a command's may be
    kept = tempfile.TemporaryDirectory()
    (out / "tempdir").write_text(kept.name)
    atexit.register(lambda: (out / "atexit").write_text("ran"))
    go = threading.Event()

    def late():  # released by threading's exit hooks (concurrent.futures' kind), then joined
        go.wait()
        (out / "thread").write_text("x" * 1_000_000)

    threading.Thread(target=late).start()
    threading._register_atexit(go.set)
    for n in range(100_000):  # more than any pipe's buffer, never flushed by hand
        print(f"line {n}")
    sys.stderr.write("the last words\\n")
    ctypes.CDLL(None).printf(b"from C\\n")  # into C's buffer, as native code writes
    leave(int(sys.argv[2]))
    """)


def _leave(tmp_path, code):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as piped
    return subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), str(code)],
                          capture_output=True, text=True, check=False, env=env)


def test_leave_exits_with_the_code_after_every_visible_duty(tmp_path):
    done = _leave(tmp_path, 3)
    assert done.returncode == 3, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 100_001 and lines[-2:] == ["line 99999", "from C"]
    assert done.stderr == "the last words\n"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert len((tmp_path / "thread").read_text()) == 1_000_000  # the thread was joined
    assert not Path((tmp_path / "tempdir").read_text()).exists()  # its finalizer ran


def test_leave_with_success(tmp_path):
    done = _leave(tmp_path, 0)
    assert done.returncode == 0 and done.stdout.endswith("line 99999\nfrom C\n")


def test_the_command_exits_through_leave_with_main_s_code(tmp_path):
    """`python -m opsweep` keeps main's exit codes and messages: a missing artifact is an
    error (exit 1) naming the file."""
    missing = tmp_path / "missing.json"
    done = subprocess.run([sys.executable, "-m", "opsweep", "render", "--onnx-report",
                           str(missing), "--out", str(tmp_path / "page.md")],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert str(missing) in done.stderr

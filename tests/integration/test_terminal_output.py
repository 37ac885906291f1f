"""What a person running the sweep sees: no foreign log lines, progress at a
bounded rate off a terminal, a live bar on one, a summary that says what next."""

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from opsweep.artifact import data as art

pytestmark = pytest.mark.integration

# dropout and index_add fail at run time in onnxruntime (ratio out of range, ScatterND),
# the failures opsweep records as the `runtime` stage and onnxruntime used to log as well
SPECS = ["dropout", "index_add", "relu", "abs"]
ORT_LOG = re.compile(r"\[[EWIV]:onnxruntime:")
PROGRESS = re.compile(r"^opsweep: \[\s*(\d+)/(\d+)\] ")


def outside_tox() -> dict[str, str]:
    """This environment, as a user's shell outside `tox -e proptest_onnx` would have it."""
    return {k: v for k, v in os.environ.items() if k != "TOX_ENV_NAME"}


def sweep(*args: str, cwd: Path, env: dict | None = None,
          ) -> tuple[subprocess.CompletedProcess, float]:
    """The sweep in `cwd`, a directory with no [tool.opsweep] configuration: the stock
    target only (this repository's own configuration adds the torchscript target)."""
    cmd = [sys.executable, "-m", "opsweep", "sweep", "--jobs", "2", "--no-dynamic", *args]
    started = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=cwd,
                            env=env or outside_tox(), stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr[-3000:]
    return result, time.monotonic() - started


def test_stderr_carries_only_bounded_progress_and_the_artifact_keeps_the_errors(tmp_path):
    out = tmp_path / "a.json"
    # a 300 s interval within the 600 s timeout: at most 3 lines, fewer than one per spec
    result, seconds = sweep("--only", *SPECS, "--progress-interval", "300", "--out", str(out),
                            cwd=tmp_path)
    # nothing else on stderr: no resource-tracker warning of a worker's leaked semaphore
    # either (tests/integration/test_worker_semaphores.py holds its cause fixed)
    lines = result.stderr.splitlines()
    assert not [line for line in lines if ORT_LOG.search(line)]
    assert lines and all(PROGRESS.match(line) for line in lines), result.stderr[-3000:]
    # the first, the last, at most one per interval between them: not one line per spec
    assert len(lines) <= 2 + seconds // 300 < len(SPECS)
    assert PROGRESS.match(lines[-1]).groups() == (str(len(SPECS)), str(len(SPECS)))
    assert "measured 4" in lines[-1] and "ETA 0:00:00" in lines[-1]
    dropout = art.load(out).specs["dropout"]
    errors = {f.error for f in dropout.failures if f.stage is art.Stage.RUNTIME}
    assert any(e.startswith("Fail: [ONNXRuntimeError] : 1 : FAIL : Non-zero status code "
                            "returned while running Dropout node") for e in errors)
    summary = result.stdout.splitlines()
    assert len(summary) <= 24  # one screen
    assert f" wrote      {out} (the artifact)" in summary
    assert f" next       opsweep render --onnx-report {out}   # the support page" in summary


def test_verbose_brings_onnxruntime_and_exporter_logging_back(tmp_path):
    result, _ = sweep("--only", "dropout", "--verbose", "--quiet",
                      "--out", str(tmp_path / "a.json"), cwd=tmp_path)
    assert re.search(r"\[E:onnxruntime:, sequential_executor\.cc:\d+ ExecuteKernel\] "
                     r"Non-zero status code returned while running Dropout node", result.stderr)
    assert not PROGRESS.search(result.stderr)  # --quiet: no progress


def run_in_a_terminal(cmd: list[str], cwd: Path, columns: int = 80) -> str:
    """Run `cmd` with stdin, stdout and stderr on a pseudo-terminal; what it drew."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in outside_tox().items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, close_fds=True, cwd=cwd,
                            env=env | {"TERM": "xterm-256color", "COLUMNS": str(columns)})
    os.close(slave)
    drawn = b""
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(master)
        proc.kill() if proc.poll() is None else None
        proc.wait()
    assert proc.returncode == 0, drawn.decode(errors="replace")[-3000:]
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn.decode(errors="replace"))


def test_on_a_terminal_one_live_bar_within_80_columns(tmp_path):
    out = tmp_path / "a.json"
    text = run_in_a_terminal([sys.executable, "-m", "opsweep", "sweep", "--only", "relu",
                              "abs", "sin", "cos", "--jobs", "2", "--no-dynamic", "--out", str(out)],
                             cwd=tmp_path)
    frames = [f for f in re.split(r"[\r\n]+", text) if f.strip()]
    bars = [f for f in frames if re.match(r"opsweep [━╸╺ ]+ \d+/(\d+|\?) ", f)]
    assert bars and bars[-1].startswith("opsweep ━━") and " 4/4 " in bars[-1], frames[-20:]
    # the elapsed time, however long a busy machine took (not "under ten minutes")
    assert "ETA 0:00:00" in bars[-1] and re.search(r"elapsed \d+:\d\d:\d\d", bars[-1])
    assert any("reused 0  measured 4  last " in f for f in frames)
    # what each worker is measuring, while it does
    busy = r"(abs|cos|relu|sin)"
    assert any(re.search(rf"^\s+now {busy}(, {busy})?\s*$", f) for f in frames), frames[-20:]
    assert not [f for f in frames if PROGRESS.match(f)]  # no plain lines on a terminal
    shown = [f for f in frames if str(out) not in f]  # the summary names the artifact
    assert all(len(f) <= 80 for f in shown), max(shown, key=len)
    assert not ORT_LOG.search(text)
    assert f"wrote      {out} (the artifact)" in text

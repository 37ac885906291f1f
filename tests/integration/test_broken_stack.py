"""A pin set that breaks the exporter entirely is one clear result, never "spec bugs".

The stack is broken on purpose in a subprocess: a package on PYTHONPATH shadows
onnxruntime (workers cannot set up) or onnxscript (every export raises), as an
onnxruntime that cannot load or an onnxscript that does not support the installed
torch would.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.cli.main import main
from opsweep.model import Stage

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "onnx_support_measured.json"
SHADOWS = {
    "onnxruntime": "onnxruntime cannot load on this machine (shadowed on purpose)",
    "onnxscript": "onnxscript 9.9 does not support this torch (shadowed on purpose)",
}


def _opsweep(args, cwd: Path, shadow: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if shadow is not None:
        env["PYTHONPATH"] = str(shadow)
    return subprocess.run([sys.executable, "-m", "opsweep", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _inline(args, capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of a command run in this process: for the commands that
    read what a broken sweep wrote with an intact stack (no process of their own needed)."""
    capsys.readouterr()
    code = main(args)
    said = capsys.readouterr()
    return code, said.out, said.err


def _shadow(tmp_path: Path, package: str) -> Path:
    root = tmp_path / f"shadow-{package}"
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text(f"raise ImportError({SHADOWS[package]!r})\n")
    return root


def _one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("opsweep: error:")]
    assert len(errors) == 1, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    return errors[0]


# Each shadow once: the onnxruntime one into a new artifact, the onnxscript one over a working
# artifact (that one is kept and the broken one written beside it); where the broken artifact
# goes does not depend on which package broke.
@pytest.mark.parametrize("package, jobs, working", [("onnxruntime", "2", False),
                                                    ("onnxscript", "0", True)])
def test_a_stack_that_cannot_export_is_one_result(tmp_path, package, jobs, working, capsys,
                                                  monkeypatch):
    out = tmp_path / "docs" / "onnx_support_measured.json"
    out.parent.mkdir()
    if working:
        shutil.copyfile(COMMITTED, out)
    done = _opsweep(["sweep", "--only", "cos", "sin", "--jobs", jobs, "--no-reuse",
                     "--out", str(out)], tmp_path, _shadow(tmp_path, package))
    assert done.returncode == 3, done.stderr[-3000:]
    line = _one_error_line(done.stderr)
    assert "breaks the exporter" in line and SHADOWS[package] in line
    assert "no operator could be measured" in line
    for pin in ("torch ", "onnx ", "onnxruntime ", "onnxscript "):
        assert pin in line
    assert "spec bug" not in done.stderr + done.stdout and "invalid" not in done.stderr
    beside = out.with_name("onnx_support_measured.broken.json")
    if working:  # a breakage never replaces a working artifact: it is written beside it
        assert str(beside) in line
        assert out.read_bytes() == COMMITTED.read_bytes()
        written = beside
    else:
        assert not beside.exists()
        written = out
    broken = art.load(written)
    assert broken.broken is not None and SHADOWS[package] in broken.broken.error
    assert not broken.specs and not broken.operators
    # the diff headlines it once and fails
    code, diff, err = _inline(["diff", str(COMMITTED), str(written)], capsys)
    assert code == 1, err
    assert diff.count("breaks the exporter") == 1
    assert "| regression |" not in diff  # no per-operator rows
    # neither the page nor the history takes it
    monkeypatch.chdir(ROOT)
    code, _, err = _inline(["render", "--onnx-report", str(written), "--out",
                            str(tmp_path / "p.md")], capsys)
    assert code == 2 and "nothing to render" in err
    code, _, err = _inline(["history", "record", "--artifact", str(written), "--dir",
                            str(tmp_path / "h")], capsys)
    assert code == 2 and "not recorded" in err


CRASH_IN_EAGER = '''
import os
import signal

import torch
from hypothesis import strategies as st

from opsweep.model import Example, OpSpec, TensorArg


def _segfault_in_eager(x):
    if not torch.compiler.is_exporting():
        os.kill(os.getpid(), signal.SIGSEGV)
    return torch.sin(x)


# one signature: one worker lost
SPECS = [OpSpec("eager_crash", ("sin",), st.builds(Example, st.just((TensorArg((2,), "float32"),))),
                fn=_segfault_in_eager)]
'''


@pytest.mark.usefixtures("outside_project")  # the stock target only: the one it looks at
def test_a_worker_lost_before_exporting_is_lost_not_invalid(tmp_path, spec_dir, capsys):
    (spec_dir / "eager_crash.py").write_text(textwrap.dedent(CRASH_IN_EAGER))
    out = tmp_path / "a.json"
    assert main(["sweep", "--only", "eager_crash", "relu", "--specs", str(spec_dir), "--jobs", "2",
                 "--no-dynamic", "--no-reuse", "--quiet", "--out", str(out)]) == 0
    crash = art.load(out).specs["eager_crash"]
    assert set(crash.stages) == {Stage.LOST}
    assert {f.error for f in crash.failures} == {
        "WorkerLost: worker killed by SIGSEGV during reference"}
    assert crash.grades.export is None  # no verdict either way
    summary = capsys.readouterr().out
    assert "spec bugs" not in summary and "lost: workers died" in summary
    assert art.load(out).specs["relu"].grades.export.value == "full"

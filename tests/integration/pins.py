"""A second release of a pin, beside the test env, and a real sweep in a fresh process with
one first on its path: the export cache's cross-pin test and the drift test's pin move. The
sweep at the pinned stack itself needs no process of its own (`sweep_here`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PINS = ROOT / "tests" / ".pins"


def second_release(name: str) -> Path:
    """tests/.pins/NAME (e.g. onnxruntime-1.31.1), which .ci/run installs; a failure in CI
    and a skip elsewhere when it is missing."""
    where = PINS / name
    if not where.is_dir():
        message = f"{where} is missing: .ci/run installs it (pip install --no-deps --target)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return where


def _counts(out: Path) -> dict:
    """The cache counts of the run log the sweep left beside `out`."""
    return json.loads(Path(f"{out}.run.jsonl").read_text().splitlines()[0])["cache"]


def _options(name: str, specs, cache: Path | None, tmp: Path, options) -> tuple[Path, list]:
    out = tmp / f"{name}.json"
    cached = ["--cache", str(cache)] if cache else ["--no-cache"]
    return out, ["sweep", "--only", *specs, "--no-reuse", "--quiet", *options, "--out", str(out),
                 *cached]


def sweep_here(tmp: Path, name: str, specs, cache: Path | None, *options: str
               ) -> tuple[Path, dict]:
    """The sweep of `sweep_process` at the installed pins, run in this process (in `tmp`,
    as that one runs there): a fresh process is needed only to put another release first
    on the path, and costs some seconds of imports and set-up."""
    from opsweep.cli.main import main
    out, args = _options(name, specs, cache, tmp, options)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp)
        assert main(args) == 0
    return out, _counts(out)


def sweep_process(tmp: Path, name: str, specs, cache: Path | None, first: Path | None = None,
                  *options: str) -> tuple[Path, dict]:
    """`opsweep sweep --only SPECS --no-reuse --quiet OPTIONS` in a fresh process in `tmp`,
    `first` first on its path: the artifact's path and the run log's cache counts."""
    env = {k: v for k, v in os.environ.items() if k != "OPSWEEP_CACHE"}
    if first is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(first), env.get("PYTHONPATH")) if p)
    out, args = _options(name, specs, cache, tmp, options)
    subprocess.run([sys.executable, "-m", "opsweep", *args],
                   cwd=tmp, env=env, check=True, capture_output=True, text=True)
    return out, _counts(out)

"""The observed error across a real pin move, and re-grading without measuring (issue 51).

A sample of float16/bfloat16-heavy specs is swept at the pinned stack (onnxruntime 1.32.0)
into an export cache, then again with onnxruntime one release back (1.31.1, installed apart
in tests/.pins as for test_export_cache) put first on the sweep's path: every export is
served by the cache, so only the sessions and comparisons run. The diff between the two
reports the cells whose error drifted (`opsweep.artifact.drift`) and no other; the cells
found are written to the test's output (`-s`) with their numbers.

The pinned artifact is then re-graded at a stricter and a looser policy by `opsweep
regrade` in a process where torch, onnx, onnxruntime and onnxscript cannot be imported:
nothing is exported, no worker runs, and the output validates as any artifact.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.drift import drift, drifted
from opsweep.cli.main import main
from opsweep.model import Grade

from .pins import second_release, sweep_here, sweep_process

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
#: specs whose drawn examples are mostly float16/bfloat16 and compute (not only move) values
SAMPLE = ["rms_norm", "mish", "std_mean", "special_erf", "addcdiv", "sdpa_gqa", "softmax"]
BLOCKED = ("torch", "onnx", "onnxruntime", "onnxscript")


def _sweep(tmp, name, cache, first=None):
    return sweep_process(tmp, name, SAMPLE, cache, first, "--jobs", "0")


@pytest.fixture(scope="module")
def pinned(tmp_path_factory):
    """The sample swept at the pinned stack into the export cache; in this process, as
    nothing but the pins it runs with needs a process of its own (the move's sweep does)."""
    tmp = tmp_path_factory.mktemp("pinned")
    path, made = sweep_here(tmp, "pinned", SAMPLE, tmp / "cache", "--jobs", "0")
    return tmp, path, made


def test_an_onnxruntime_move_reports_the_cells_that_drifted_and_no_other(pinned, monkeypatch):
    tmp, old_path, made = pinned
    new_path, used = _sweep(tmp, "ort-1.31.1", tmp / "cache", second_release("onnxruntime-1.31.1"))
    assert used == {t: {"loaded": c["exported"]} for t, c in made.items()}, used  # no export
    old, new = art.load(old_path), art.load(new_path)
    assert (old.fingerprint.onnxruntime, new.fingerprint.onnxruntime) == ("1.32.0", "1.31.1")
    found = drift(old, new)
    keys = {(d.spec, d.new.key) for d in found}
    compared = same = half = 0
    for spec in SAMPLE:
        before = {c.key: c for c in old.specs[spec].errors or ()}
        for c in new.specs[spec].errors or ():
            if c.key not in before:
                continue
            compared += 1
            same += c == before[c.key]
            half += c.ulp is not None
            assert ((spec, c.key) in keys) == drifted(before[c.key], c), (spec, c)
    assert compared >= 20  # the sample's cells were compared, half-precision ones among them
    assert all(d.pins == "onnxruntime 1.31.1" for d in found)
    assert [d.growth for d in found] == sorted((d.growth for d in found), reverse=True)
    # the diff only reads the two files: run in this process (a fresh one costs seconds of
    # imports), its report written where the test keeps it
    monkeypatch.chdir(tmp)
    main(["diff", str(old_path), str(new_path), "--out", str(tmp / "drift.txt")])
    text = (tmp / "drift.txt").read_text()
    assert ("### Numerics drift" in text) == bool(found)
    for d in found:
        assert f"`{d.spec}` {d.new.dtype} rank {d.new.rank}: max error" in text
    print(f"\n{compared} cells compared ({half} float16/bfloat16), {same} identical, "
          f"{len(found)} drifted:")
    for d in found:
        print(f"  {d.spec} {d.new.key}: abs {d.old.max_abs} -> {d.new.max_abs} "
              f"ulp {d.old.ulp} -> {d.new.ulp} (x{d.growth:.3g})")


def _policy(tmp, name, atol):
    """opsweep's own rtols (so the record re-grades exactly), every atol set to `atol`."""
    data = json.loads((ROOT / "src" / "opsweep" / "data" / "tolerance_policy.json").read_text())
    data["name"] = name
    for tolerance in data["defaults"].values():
        tolerance["atol"] = atol
    path = tmp / f"{name}-policy.json"
    path.write_text(json.dumps(data))
    return path


def _regrade_without_torch(tmp, policy, out, artifact="pinned.json", measured_with=None):
    """`opsweep regrade` in a process where the exporter stack cannot be imported."""
    code = ("import sys\n"
            f"for name in {BLOCKED!r}: sys.modules[name] = None\n"
            "from opsweep.cli.main import main\n"
            f"sys.exit(main(sys.argv[1:]))\n")
    return subprocess.run([sys.executable, "-c", code, "regrade", "--policy", str(policy),
                           "--artifact", str(tmp / artifact), "--out", str(out),
                           *(["--measured-with", str(measured_with)] if measured_with else [])],
                          cwd=tmp, capture_output=True, text=True)


def test_a_stricter_and_a_looser_policy_regrade_without_exporting(pinned):
    tmp, path, _ = pinned
    measured = art.load(path)
    strict = _regrade_without_torch(tmp, _policy(tmp, "strict", 0.0), tmp / "strict.json")
    assert strict.returncode == 0, strict.stderr
    regraded = art.load(tmp / "strict.json")  # validates against the schema
    assert regraded.policy == "strict v1"
    moved = [s for s in measured.specs
             if measured.specs[s].grades.numerics is Grade.FULL
             and regraded.specs[s].grades.numerics is not Grade.FULL]
    assert moved, strict.stdout  # some half-precision error needs its atol
    for spec in moved:
        assert f"`{spec}` stock numerics full -> " in strict.stdout
    print("\n" + strict.stdout)
    loose = _regrade_without_torch(tmp, _policy(tmp, "loose", 1.0), tmp / "loose.json")
    assert loose.returncode == 0, loose.stderr
    relaxed = art.load(tmp / "loose.json")
    rank = {Grade.NONE: 0, Grade.PARTIAL: 1, Grade.FULL: 2}
    for spec, result in measured.specs.items():
        before, after = result.grades.numerics, relaxed.specs[spec].grades.numerics
        if before in rank:
            assert rank[after] >= rank[before], spec  # looser never grades worse
    # and back from the stricter one to opsweep's own: the measured grades, counts, groups
    back = _regrade_without_torch(tmp, ROOT / "src" / "opsweep" / "data" / "tolerance_policy.json",
                                  tmp / "back.json", "strict.json", tmp / "strict-policy.json")
    assert back.returncode == 0, back.stderr
    assert art.load(tmp / "back.json").specs == measured.specs

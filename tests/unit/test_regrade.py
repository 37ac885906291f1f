"""`opsweep regrade` (issue 51): an artifact re-graded at another tolerance policy from its
recorded error, its grades, counts and failure groups moved to match, what moved said per
spec and target, the output validating as any artifact; bad input refused in one line
naming the file and the field. (The same on a really measured artifact, with torch made
unimportable: tests/integration/test_drift_pins.py.)"""

import json

import pytest
from hypothesis import strategies as st

from opsweep.artifact import data as art
from opsweep.artifact.regrading import regrade_artifact
from opsweep.artifact.specgrade import spec_result
from opsweep.catalog.draw import PROFILES
from opsweep.cli.main import main
from opsweep.model import Grade, Observed, OpSpec, Outcome, Stage, Tolerance
from opsweep.policy import Policy, builtin
from tests.factories import FP

F16 = Tolerance(0.01, 0.001)
SPEC = OpSpec("softmax", ("softmax",), st.nothing(), fn=lambda x: x)
VALUES = "output 0: 3/24 elements differ beyond rtol=0.01 atol=0.001 (max abs error 0.004)"


def _ok(sig, excess, ulp, rank=3):
    return Outcome(Stage.OK, sig, "float16", rank, 24,
                   observed=Observed(0.0012, 0.0002, 0.02, False, False, ulp, F16, excess))


def _failing(sig, excess, rank=3):
    return Outcome(Stage.NUMERICS, sig, "float16", rank, 24, VALUES,
                   observed=Observed(0.004, 0.0002, 0.05, False, False, 9, F16, excess))


def _artifact(*outcomes, policy="opsweep v1"):
    result = spec_result(SPEC, list(outcomes), PROFILES["ci"], "0123456789abcdef", 3)
    return art.make_artifact(FP, "ci", 25, 0, {"softmax": result}, policy=policy)


def _policy(atol, rtol=0.01, name="adopter"):
    measured = builtin()
    return Policy(name, 2, {**measured.defaults, "float16": Tolerance(rtol, atol)})


def _saved(tmp_path, artifact):
    path = tmp_path / "a.json"
    art.save(path, artifact)
    return art.load(path)


def test_a_stricter_policy_moves_a_full_grade_to_partial_and_says_so(tmp_path):
    old = _artifact(_ok("f16[2,3,4]", 0.0004, 2), _ok("f16[3,3,4]", 0.0007, 3))
    assert old.specs["softmax"].grades.numerics is Grade.FULL
    done = regrade_artifact(old, builtin(), _policy(0.0005))
    new = _saved(tmp_path, done.artifact)  # validates: counts, groups and operators agree
    spec = new.specs["softmax"]
    assert spec.grades.numerics is Grade.PARTIAL and new.grades("softmax").numerics is Grade.PARTIAL
    assert spec.stages == {Stage.NUMERICS: 1, Stage.OK: 1}
    (group,) = spec.failures
    assert (group.dtype, group.rank, group.count) == ("float16", 3, 1)
    assert "adopter v2" in group.error and new.policy == "adopter v2"
    (move,) = done.grade_moves
    assert move.line() == ("`softmax` stock numerics full -> partial (float16 rank 3: 1/2 "
                           "examples fail at rtol=0.01 atol=0.0005 (were 0); max error "
                           "0.0012, 3 ULP)")
    # the same rtol: the record stays exact at the new tolerance, so it re-grades again
    assert spec.errors[0].tolerance == Tolerance(0.01, 0.0005)
    back = regrade_artifact(new, _policy(0.0005), builtin())
    assert back.artifact.specs["softmax"] == old.specs["softmax"]


def test_a_looser_policy_clears_a_values_failure_and_keeps_the_others():
    shape = Outcome(Stage.NUMERICS, "f16[5,3,4]", "float16", 3, 60,
                    "output 0: shape (5,), PyTorch gives (5, 3)")  # fails at any tolerance
    old = _artifact(_ok("f16[2,3,4]", 0.0004, 2), _failing("f16[4,3,4]", 0.003), shape)
    assert old.specs["softmax"].stages[Stage.NUMERICS] == 2
    done = regrade_artifact(old, builtin(), _policy(0.01))
    spec = done.artifact.specs["softmax"]
    assert spec.stages == {Stage.NUMERICS: 1, Stage.OK: 2}
    assert [g.error for g in spec.failures] == [shape.error]
    assert spec.grades.numerics is Grade.PARTIAL  # still: the shape mismatch
    (move,) = done.moves
    assert move.before == move.after
    assert "float16 rank 3: 0/2 examples fail at rtol=0.01 atol=0.01 (were 1)" in move.line()


def test_what_the_record_cannot_decide_keeps_its_verdict_and_is_counted():
    old = _artifact(_ok("f16[2,3,4]", 0.0004, 2), _failing("f16[4,3,4]", 0.003))
    done = regrade_artifact(old, builtin(), _policy(0.002, rtol=0.001))
    assert done.unsure == 1  # the passing example: below the new atol at the old rtol only
    assert done.artifact.specs["softmax"].stages == old.specs["softmax"].stages


def test_the_same_policy_moves_nothing():
    old = _artifact(_ok("f16[2,3,4]", 0.0004, 2), _failing("f16[4,3,4]", 0.003))
    done = regrade_artifact(old, builtin(), builtin())
    assert done.moves == () and done.artifact == old


def _policy_file(tmp_path, atol=0.0005, **extra):
    path = tmp_path / "strict.json"
    path.write_text(json.dumps({"name": "strict", "version": 1, "defaults": {
        "float16": {"rtol": 0.01, "atol": atol}}, "overrides": [], **extra}))
    return path


def test_the_command_writes_the_regraded_artifact_and_says_what_moved(tmp_path, capsys):
    source = tmp_path / "measured.json"
    art.save(source, _artifact(_ok("f16[2,3,4]", 0.0004, 2), _ok("f16[3,3,4]", 0.0007, 3)))
    before = source.read_bytes()
    out = tmp_path / "regraded.json"
    assert main(["regrade", "--policy", str(_policy_file(tmp_path)), "--artifact", str(source),
                 "--out", str(out), "--pyproject", str(tmp_path / "pyproject.toml")]) == 0
    said = capsys.readouterr().out
    assert "`softmax` stock numerics full -> partial (float16 rank 3: 1/2" in said
    assert "from opsweep v1 to strict v1 without measuring: 1 numerics grades moved" in said
    assert source.read_bytes() == before and art.load(out).policy == "strict v1"


@pytest.mark.parametrize("what, says", [
    ("policy", "strict.json at overrides.0: "),
    ("artifact", "measured.json at specs.softmax.errors"),
    ("unlabelled", "measured.json at policy: names no tolerance policy"),
    ("unknown", "measured.json at policy: graded under 'theirs v3'"),
])
def test_bad_input_is_one_line_naming_the_file_and_the_field(tmp_path, capsys, what, says):
    source = tmp_path / "measured.json"
    label = {"unlabelled": "", "unknown": "theirs v3"}.get(what, "opsweep v1")
    art.save(source, _artifact(_ok("f16[2,3,4]", 0.0004, 2), policy=label))
    policy = _policy_file(tmp_path)
    if what == "policy":
        policy = _policy_file(tmp_path, overrides=[{"operator": "softmax"}])
        data = json.loads(policy.read_text())
        data["overrides"] = [{"operator": "softmax", "dtype": "float16"}]
        policy.write_text(json.dumps(data))
    if what == "artifact":
        data = json.loads(source.read_text())
        data["specs"]["softmax"]["errors"]["float16 3"] = "n=two"
        source.write_text(json.dumps(data))
    code = main(["regrade", "--policy", str(policy), "--artifact", str(source),
                 "--pyproject", str(tmp_path / "pyproject.toml")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and says in err, err


def test_an_artifact_graded_under_an_adopters_policy_is_regraded_with_measured_with(
        tmp_path, capsys):
    theirs = tmp_path / "theirs.json"
    theirs.write_text(json.dumps({"name": "theirs", "version": 3, "defaults": {
        "float16": {"rtol": 0.01, "atol": 0.001}}, "overrides": []}))
    source = tmp_path / "measured.json"
    art.save(source, _artifact(_ok("f16[2,3,4]", 0.0004, 2), policy="theirs v3"))
    assert main(["regrade", "--policy", str(_policy_file(tmp_path, atol=0.0001)),
                 "--artifact", str(source), "--measured-with", str(theirs),
                 "--pyproject", str(tmp_path / "pyproject.toml")]) == 0
    assert art.load(source).specs["softmax"].grades.numerics is Grade.NONE
    assert "full -> none" in capsys.readouterr().out


def test_the_committed_artifact_is_regraded_or_refused_for_want_of_recorded_error(
        tmp_path, capsys):
    """Today the committed artifact is at schema 6 by migration (the round's re-measure
    records the error): no cell to re-grade from, said in one line, nothing written. Once
    it records its error, a stricter policy re-grades it, and no grade gets better."""
    from pathlib import Path
    committed = Path(__file__).resolve().parents[2] / "docs" / "onnx_support_measured.json"
    measured_ = art.load(committed)
    out = tmp_path / "out.json"
    code = main(["regrade", "--policy", str(_policy_file(tmp_path, atol=0.0)), "--artifact",
                 str(committed), "--out", str(out),
                 "--pyproject", str(tmp_path / "pyproject.toml")])
    err = capsys.readouterr().err
    if not measured_.policy:
        assert code == 2 and err.count("\n") == 1, err
        assert "onnx_support_measured.json at policy: names no tolerance policy" in err
        assert not out.exists()
        return
    assert code == 0, err
    order = {Grade.NONE: 0, Grade.PARTIAL: 1, Grade.FULL: 2}
    regraded = art.load(out)
    for name, result in measured_.specs.items():
        before, after = result.grades.numerics, regraded.specs[name].grades.numerics
        if before in order:
            assert order[after] <= order[before], name


def test_an_example_that_failed_otherwise_is_not_failed_twice(tmp_path):
    """Its values passed, then its further draw came back in another shape: it is already
    failing, so a stricter policy has no passing example of the cell to move."""
    shaped = Outcome(Stage.NUMERICS, "f16[2,3,4]", "float16", 3, 24,
                     "on a further draw of the same signature: output 0: shape (2,), "
                     "PyTorch gives (2, 3)",
                     observed=Observed(0.0012, 0.0002, 0.02, False, False, 3, F16, 0.0004))
    old = _artifact(shaped)
    done = regrade_artifact(old, builtin(), _policy(0.0001))
    assert _saved(tmp_path, done.artifact).specs["softmax"].stages == {Stage.NUMERICS: 1}
    assert done.artifact.specs["softmax"].failures == old.specs["softmax"].failures

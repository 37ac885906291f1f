"""The observed error in the artifact (issue 51): per (dtype, rank) cell, compact, exactly
round-tripped, canonical to the bit; and re-graded at another policy from what was
recorded, with no export run."""

import json
import math
from dataclasses import replace

import pytest
from hypothesis import strategies as st

from opsweep.artifact import data as art
from opsweep.artifact.numerics import cell_errors, regrade, up
from opsweep.artifact.specgrade import spec_result
from opsweep.catalog.draw import PROFILES
from opsweep.errors import ArtifactError
from opsweep.model import Observed, OpSpec, Outcome, Stage, Tolerance
from opsweep.policy import Policy, builtin
from tests.factories import FP

F16 = Tolerance(0.01, 0.001)
SPEC = OpSpec("softmax", ("softmax",), st.nothing(), fn=lambda x: x)


def _seen(max_abs, excess, ulp=None, nonfinite=False):
    return Observed(max_abs, max_abs / 3, max_abs * 20, nonfinite, False, ulp, F16, excess)


def _outcomes():
    return [Outcome(Stage.OK, "f16[2,3]", "float16", 2, 6, observed=_seen(0.0012, 0.0004, 3)),
            Outcome(Stage.OK, "f16[3,3]", "float16", 2, 9, observed=_seen(0.0009, 0.0007, 2)),
            Outcome(Stage.NUMERICS, "f16[4]", "float16", 1, 4, "output 0: differs",
                    observed=_seen(0.5, 0.3, 40, nonfinite=True)),
            Outcome(Stage.RUNTIME, "f16[5]", "float16", 1, 5, "E: x")]


def test_cells_hold_a_few_numbers_and_round_up_to_four_digits():
    cells = {c.key: c for c in cell_errors(_outcomes())}
    assert set(cells) == {"float16 1", "float16 2"}  # the runtime failure never compared
    two = cells["float16 2"]
    assert (two.n, two.max_abs, two.ulp, two.tolerance, two.excess) == (
        2, 0.0012, 3, F16, (0.0004, 0.0007))
    assert cells["float16 1"].nonfinite == 1
    assert up(1.00001) == 1.001 and up(0.0012341) == 0.001235 and up(0.0) == 0.0
    assert up(1 / 3) >= 1 / 3


def test_the_error_and_the_policy_round_trip_through_the_artifact(tmp_path):
    result = spec_result(SPEC, _outcomes(), PROFILES["ci"], "0123456789abcdef", 3)
    artifact = art.make_artifact(FP, "ci", 25, 0, {"softmax": result}, policy="opsweep v1")
    path = tmp_path / "a.json"
    art.save(path, artifact)
    data = json.loads(path.read_text())
    assert data["policy"] == "opsweep v1" and data["schema_version"] >= 6
    assert data["specs"]["softmax"]["errors"]["float16 2"] == (
        "n=2 abs=0.0012 med=0.0003 rel=0.024 ulp=3 tol=0.01/0.001 excess=0.0004,0.0007")
    again = art.load(path)
    assert again == artifact and art.canonical_bytes(again) == path.read_bytes()


def test_an_older_artifact_migrates_without_error_or_policy(tmp_path):
    result = spec_result(SPEC, _outcomes(), PROFILES["ci"], "0123456789abcdef", 3)
    data = art.to_data(art.make_artifact(FP, "ci", 25, 0, {"softmax": result}, policy="p v1"))
    data["schema_version"] = 5
    del data["policy"], data["specs"]["softmax"]["errors"]
    old = art.from_data(data)
    assert old.policy == "" and old.specs["softmax"].errors is None


def test_a_stricter_policy_turns_a_passing_cell_into_failing_without_measuring():
    (two,) = [c for c in cell_errors(_outcomes()) if c.rank == 2]
    measured = builtin()
    same = regrade([two], measured, measured, ("softmax",))[0]
    assert (same.failing, same.was_failing, same.unsure) == (0, 0, 0)
    strict = Policy("adopter", 3, {**measured.defaults, "float16": Tolerance(0.01, 0.0005)})
    (moved,) = regrade([two], measured, strict, ("softmax",))
    assert (moved.failing, moved.was_failing, moved.unsure) == (1, 0, 0)
    loose = replace(strict, defaults={**measured.defaults, "float16": Tolerance(0.01, 0.01)})
    assert regrade([two], measured, loose, ("softmax",))[0].failing == 0


def test_a_project_names_its_own_policy_and_a_bad_one_is_refused(tmp_path):
    import pytest

    from opsweep import config
    from opsweep.errors import DataFileError
    from opsweep.policy import read

    parsed = config.parse({"tolerance-policy": "tolerances.json"}, tmp_path / "pyproject.toml")
    assert parsed.tolerance_policy == "tolerances.json"
    mine = tmp_path / "tolerances.json"
    mine.write_text(json.dumps({"name": "adopter", "version": 2, "defaults": {
        "float16": {"rtol": 0.001, "atol": 0.0001}}, "overrides": [
        {"operator": "softmax", "dtype": "float16", "rtol": 0.01, "atol": 0.001,
         "reason": "exp then a sum in float16"}]}))
    policy = read(str(mine))
    assert policy.label == "adopter v2"
    assert policy.tolerance(SPEC, "float16") == Tolerance(0.01, 0.001)  # the override
    assert policy.tolerance(None, "float16") == Tolerance(0.001, 0.0001)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "version": 1, "defaults": {}, "overrides": [
        {"operator": "softmax", "dtype": "float16", "rtol": 0.01, "atol": 0.001}]}))
    with pytest.raises(DataFileError, match="overrides"):
        read(str(bad))


def test_the_cells_no_example_stands_for_round_trip_and_a_bad_one_is_named(tmp_path):
    cells = {"float16 0": "refused: RuntimeError: expected a 1-d tensor",
             "float32 1 empty": "unsettled: IndexError: index is out of bounds", "int32 0": "outside"}
    result = spec_result(SPEC, _outcomes(), PROFILES["ci"], "0123456789abcdef", 3, cells=cells)
    artifact = art.make_artifact(FP, "ci", 25, 0, {"softmax": result}, policy="opsweep v1")
    path = tmp_path / "a.json"
    art.save(path, artifact)
    data = json.loads(path.read_text())
    assert data["schema_version"] == 7 and data["specs"]["softmax"]["cells"] == cells
    assert art.load(path).specs["softmax"].cells == cells
    data["specs"]["softmax"]["cells"]["float16 3"] = "broken: no such status"
    path.write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match=r"specs\.softmax\.cells"):
        art.load(path)

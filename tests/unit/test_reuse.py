"""Each reuse clause on its own."""

from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.account import UNCHANGED
from opsweep.catalog.draw import PROFILES
from opsweep.catalog.families import unary
from opsweep.model import Stage
from opsweep.sweep.reuse import ROTATION, decide, in_rotation

from ..factories import FP, result

CI, NIGHTLY = PROFILES["ci"], PROFILES["nightly"]
SIN = unary("sin")
DIGEST = "0123456789abcdef"


def previous(*stages, profile="ci", fingerprint=FP, regen_index=0, dynamic=()):
    r = replace(result(["sin"], *stages, dynamic=dynamic), profile=profile)
    return art.make_artifact(fingerprint, profile, PROFILES[profile].max_examples, regen_index,
                             {"sin": r})


def not_rotated():
    return next(i for i in range(ROTATION) if not in_rotation("sin", i))


def test_full_same_fingerprint_same_budget_is_reused():
    d = decide(SIN, DIGEST, previous(Stage.OK), FP, CI, not_rotated())
    assert d.reuse and d.reason == UNCHANGED


@pytest.mark.parametrize("stages", [(Stage.OK, Stage.NO_TRANSLATION), (Stage.NO_TRANSLATION,),
                                    (Stage.OK, Stage.RUNTIME), (Stage.OK, Stage.NUMERICS),
                                    (Stage.CAPTURE,), (Stage.OK, Stage.INVALID)])
def test_partial_none_and_blocked_are_carried_when_nothing_moved(stages):
    """The same examples through the same versions: a re-measure cannot change them."""
    d = decide(SIN, DIGEST, previous(*stages), FP, CI, not_rotated())
    assert d.reuse and d.reason == UNCHANGED
    d = decide(SIN, DIGEST, previous(Stage.OK, Stage.OK, dynamic=[Stage.OK, Stage.CAPTURE]),
               FP, CI, not_rotated())
    assert d.reuse and d.reason == UNCHANGED


def lost(error, stage=Stage.RAW_ERROR, dynamic=False):
    """A previous result with one failure the machine caused (as engine.pool records it)."""
    prior = previous(Stage.OK, Stage.NO_TRANSLATION)
    r = prior.specs["sin"]
    group = replace(r.failures[0], stage=stage, error=error)
    r = replace(r, dynamic_failures=(group,)) if dynamic else replace(r, failures=(group,))
    return art.make_artifact(prior.fingerprint, prior.profile, prior.examples, prior.regen_index,
                             {"sin": r})


@pytest.mark.parametrize("error", ["WorkerLost: timed out during export",
                                   "WorkerLost: worker killed by SIGKILL during runtime",
                                   "WorkerLost: worker killed by SIGSEGV during reference",
                                   "MemoryError: std::bad_alloc"])
def test_a_failure_the_machine_caused_is_re_measured(error):
    for dynamic in (False, True):
        d = decide(SIN, DIGEST, lost(error, dynamic=dynamic), FP, CI, not_rotated())
        assert not d.reuse and d.why == "machine failure" and error in d.detail


def test_examples_lost_before_the_exporter_are_re_measured():
    d = decide(SIN, DIGEST, previous(Stage.OK, Stage.LOST), FP, CI, not_rotated())
    assert not d.reuse and d.reason == "machine failure: examples were lost before reaching " \
        "the exporter"
    d = decide(SIN, DIGEST, previous(Stage.OK, dynamic=[Stage.LOST]), FP, CI, not_rotated())
    assert not d.reuse and d.why == "machine failure"


def test_an_exporter_error_that_mentions_a_lost_worker_is_its_own_verdict():
    d = decide(SIN, DIGEST, lost("RuntimeError: WorkerLost: not ours"), FP, CI, not_rotated())
    assert d.reuse


def test_any_fingerprint_difference_forces_a_measurement():
    for field, value in [("torch", "2.14.1"), ("onnx", "1.24.0"), ("onnxruntime", "1.33.0"),
                         ("onnxscript", "0.8.0"), ("opset", 21), ("exporter", "dynamo-fast")]:
        d = decide(SIN, DIGEST, previous(Stage.OK), replace(FP, **{field: value}), CI, not_rotated())
        assert not d.reuse and d.reason.startswith(f"fingerprint changed ({field} ")


def test_a_smaller_budget_is_not_enough():
    d = decide(SIN, DIGEST, previous(Stage.OK), FP, NIGHTLY, not_rotated())
    assert not d.reuse and "drew fewer examples" in d.reason


def test_nightly_supersedes_ci_even_when_partial_and_in_rotation():
    rotated = next(i for i in range(ROTATION) if in_rotation("sin", i))
    d = decide(SIN, DIGEST, previous(Stage.OK, Stage.NO_TRANSLATION, profile="nightly"), FP, CI, rotated)
    assert d.reuse and d.reason == "nightly result supersedes ci"


def test_rotation_forces_one_tenth():
    rotated = next(i for i in range(ROTATION) if in_rotation("sin", i))
    d = decide(SIN, DIGEST, previous(Stage.OK), FP, CI, rotated)
    assert not d.reuse and d.reason == f"rotation (regen_index {rotated})"


def test_rotation_covers_every_spec_once_per_ten_regenerations():
    names = [f"spec{i}" for i in range(500)]
    hits = {n: [i for i in range(ROTATION) if in_rotation(n, i)] for n in names}
    assert all(len(h) == 1 for h in hits.values())
    per_index = [sum(in_rotation(n, i) for n in names) for i in range(ROTATION)]
    assert min(per_index) > 25 and max(per_index) < 75  # roughly a tenth each
    assert in_rotation("spec1", 3) == in_rotation("spec1", 13)


def test_changed_spec_new_spec_no_previous_and_no_reuse():
    prev = previous(Stage.OK)
    assert decide(SIN, "ffffffffffffffff", prev, FP, CI, not_rotated()).reason == "spec changed"
    assert decide(unary("cos"), DIGEST, prev, FP, CI, 0).reason == "new spec"
    assert decide(SIN, DIGEST, None, FP, CI, 0).reason == "no previous artifact"
    assert decide(SIN, DIGEST, prev, FP, CI, not_rotated(), no_reuse=True).reason == "--no-reuse"


def test_a_decision_says_what_a_summary_counts_apart_from_its_detail():
    rotated = next(i for i in range(ROTATION) if in_rotation("sin", i))
    cases = [(previous(Stage.OK), replace(FP, torch="2.14.1"), not_rotated(), "fingerprint changed"),
             (previous(Stage.OK), FP, rotated, "rotation"),
             (lost("WorkerLost: timed out during export"), FP, not_rotated(), "machine failure")]
    for prev, fingerprint, index, why in cases:
        d = decide(SIN, DIGEST, prev, fingerprint, CI, index)
        assert d.why == why and d.reason == why + d.detail and d.detail

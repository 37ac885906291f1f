from opsweep.artifact.grade import FailureGroup, failure_groups, grade, merge_failures, stage_counts
from opsweep.model import Grade, Outcome, Stage


def outcomes(*stages, dtype="float32", rank=1):
    return [Outcome(s, f"f32[{i}]", dtype, rank, i, "" if s is Stage.OK else f"err {s.value}")
            for i, s in enumerate(stages)]


def graded(*stages, nondeterministic=False):
    return grade([(stage_counts(outcomes(*stages)), nondeterministic)])


def test_full_when_every_example_passes_every_axis():
    g = graded(Stage.OK, Stage.OK)
    assert (g.export, g.runtime, g.numerics) == (Grade.FULL, Grade.FULL, Grade.FULL)


def test_partial_export_keeps_runtime_and_numerics_over_what_reached_them():
    g = graded(Stage.OK, Stage.NO_TRANSLATION, Stage.NUMERICS)
    assert g.export is Grade.PARTIAL
    assert g.runtime is Grade.FULL  # both exported examples ran
    assert g.numerics is Grade.PARTIAL


def test_none_when_nothing_exported():
    g = graded(Stage.NO_TRANSLATION, Stage.TRANSLATION_ERROR)
    assert (g.export, g.runtime, g.numerics) == (Grade.NONE, None, None)


def test_blocked_only_when_nothing_could_be_captured():
    assert graded(Stage.CAPTURE, Stage.CAPTURE).export is Grade.BLOCKED
    # capture failures are not ONNX verdicts: the rest decides the grade
    assert graded(Stage.CAPTURE, Stage.OK).export is Grade.FULL
    assert graded(Stage.CAPTURE, Stage.RAW_ERROR).export is Grade.NONE


def test_checker_failure_counts_as_exported_but_not_run():
    g = graded(Stage.CHECKER, Stage.OK)
    assert (g.export, g.runtime, g.numerics) == (Grade.FULL, Grade.PARTIAL, Grade.FULL)


def test_invalid_examples_never_count():
    assert graded(Stage.INVALID, Stage.OK).export is Grade.FULL
    assert graded(Stage.INVALID).export is None


def test_nondeterministic_skips_numerics_only():
    g = graded(Stage.OK, Stage.RUNTIME, nondeterministic=True)
    assert (g.export, g.runtime, g.numerics) == (Grade.FULL, Grade.PARTIAL, Grade.SKIPPED)


def test_pooling_specs_for_one_operator():
    a = stage_counts(outcomes(Stage.OK))
    b = stage_counts(outcomes(Stage.NUMERICS))
    assert grade([(a, False), (b, True)]).numerics is Grade.FULL  # b's numerics not counted
    assert grade([(a, False), (b, False)]).numerics is Grade.PARTIAL


def test_failure_groups_by_dtype_rank_stage_error_with_smallest_example():
    outs = [Outcome(Stage.CHECKER, "bf16[3,3]", "bfloat16", 2, 9, "E"),
            Outcome(Stage.CHECKER, "bf16[1,2]", "bfloat16", 2, 2, "E"),
            Outcome(Stage.CHECKER, "bf16[4]", "bfloat16", 1, 4, "E"),
            Outcome(Stage.OK, "f32[1]", "float32", 1, 1, "")]
    groups = failure_groups(outs)
    assert [(g.rank, g.count, g.example) for g in groups] == [(1, 1, "bf16[4]"), (2, 2, "bf16[1,2]")]


def test_merge_failures_across_specs():
    a = FailureGroup("float16", 0, Stage.RUNTIME, "E", 2, "f16[]", 1)
    b = FailureGroup("float16", 0, Stage.RUNTIME, "E", 3, "f16[], f16[]", 2)
    (m,) = merge_failures([b, a])
    assert (m.count, m.example) == (5, "f16[]")

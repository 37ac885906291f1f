"""Arguments measured (issue 32): value classes, the recorder on real torch calls, the bar,
the covering step of the draw, and failures named by the argument values that set them
apart — through to the artifact's JSON and back."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep import coverage as C
from opsweep.artifact import data as art
from opsweep.artifact.grade import failure_groups
from opsweep.catalog.draw import cover
from opsweep.catalog.families import spec
from opsweep.catalog.strategies import examples
from opsweep.engine.arguments import Recorder, group_features, value_classes
from opsweep.model import Example, Outcome, Stage, TensorArg


def test_value_classes_name_behaviour_not_values():
    assert value_classes(0) == {"0"} and value_classes(1) == {"1"}
    assert value_classes(-2) == {"negative"} and value_classes(7) == {">1"}
    assert value_classes(True) == {"True"} and value_classes(None) == {"None"}
    assert value_classes([1, -1]) == {"1", "negative"} and value_classes([]) == {"empty"}
    assert value_classes(float("nan")) == {"nan"} and value_classes(-0.5) == {"negative"}
    assert value_classes("mean") == {"mean"}
    assert value_classes(torch.zeros(())) == {"rank 0"}
    assert value_classes(torch.zeros(2, 0)) == {"rank 2", "empty"}


def test_the_recorder_reads_the_schema_of_the_declared_overload_defaults_included():
    recorder = Recorder({"max_pool2d_with_indices", "max_pool2d"})
    with recorder:
        F.max_pool2d(torch.randn(1, 1, 4, 4), 2, ceil_mode=True)
    seen = {(a, c) for o, a, t, c in recorder.features}
    assert ("ceil_mode", "True") in seen
    assert ("dilation", "1") in seen  # the schema's default, filled in
    assert ("self", "rank 4") in seen
    assert all(not o.startswith(C.INDIRECT) for o, *_ in recorder.features)


def test_an_alias_is_recorded_through_what_it_runs_and_marked_indirect():
    recorder = Recorder({"absolute"})
    with recorder:
        torch.absolute(torch.randn(3))
    assert recorder.features and all(o.startswith(C.INDIRECT) for o, *_ in recorder.features)


def _pool_spec(fixed=None, ceil=(False, True)):
    def build(draw):
        x = TensorArg((1, 1, 4, 4), draw(st.sampled_from(("float32", "float64"))))
        return (x, 2), {"ceil_mode": draw(st.sampled_from(ceil))}
    return spec("pool_t", examples(build), fn=F.max_pool2d, aten=("max_pool2d",),
                traces={"max_pool2d": ("max_pool2d_with_indices",)}, fixed=fixed or {})


def _table(s, dtypes=("float32", "float64"), ceils=(False, True)):
    groups = [group_features(s, [Example((TensorArg((1, 1, 4, 4), d), 2), (("ceil_mode", c),))])
              for d in dtypes for c in ceils]
    return C.coverage(groups)


def test_the_bar_asks_for_each_argument_varied_or_a_reason_and_refuses_stale_reasons():
    s = _pool_spec()
    assert [line for line in C.bar(s, _table(s)) if "ceil_mode" in line] == []
    fixed_only = _table(s, ceils=(False,))
    missed = C.bar(s, fixed_only)
    assert any("'ceil_mode' is never varied (only False)" in line for line in missed)
    reasoned = _pool_spec(fixed={"ceil_mode": "a second spec measures True", "dilation": "d",
                                 "padding": "p", "stride": "s", "kernel_size": "k"})
    assert not [m for m in C.bar(reasoned, fixed_only) if "ceil_mode" in m]
    stale = C.bar(reasoned, _table(reasoned))  # ceil_mode varied: its reason is stale
    assert any("fixed names 'ceil_mode', which the draws do vary" in line for line in stale)
    nowhere = _pool_spec(fixed={"no_such": "x"})
    assert any("'no_such', which no call of the spec reaches" in line
               for line in C.bar(nowhere, _table(nowhere)))


def test_a_keyword_some_groups_leave_out_has_the_class_absent():
    table = C.coverage([{(C.CALL, "keepdim", "bool", "True")}, set()])
    assert table[C.CALL]["keepdim"]["classes"] == ["True", "absent"]


def test_the_covering_step_reaches_each_choice_class_at_every_dtype_class_within_budget():
    x32, x64 = TensorArg((2,), "float32"), TensorArg((2,), "int64")
    drawn = [Example((x32,), (("flag", True),)), Example((x32,), (("flag", False),)),
             Example((x64,), (("flag", False),)), Example((x64,), (("flag", False),), (), 1)]
    covered = cover(drawn)
    assert len(covered) == len(drawn)  # a redundant draw gave its place up
    ints = [dict(e.kwargs)["flag"] for e in covered if e.dtype == "int64"]
    assert True in ints and False in ints
    assert cover(drawn[:2]) is drawn[:2] or cover(drawn[:2]) == drawn[:2]


def test_the_covering_step_never_builds_a_keyword_set_the_strategy_does_not_draw():
    x32, x64 = TensorArg((2,), "float32"), TensorArg((2,), "int64")
    drawn = [Example((x32,), (("dim", 0), ("keepdim", True))), Example((x32,), ()),
             Example((x64,), ())]
    covered = cover(drawn)
    assert all(set(dict(e.kwargs)) in ({"dim", "keepdim"}, set()) for e in covered)


def _outcome(dtype, stage, ceil, error=""):
    features = ((C.CALL, "ceil_mode", "bool", str(ceil)),)
    return Outcome(stage, f"{dtype} ceil={ceil}", dtype, 4, 16, error, arguments=features)


def test_a_failure_only_one_argument_value_has_is_named_by_it_and_survives_the_artifact():
    outcomes = [_outcome("float32", Stage.OK, False), _outcome("float32", Stage.OK, False),
                _outcome("float32", Stage.CHECKER, True, "shape inference"),
                _outcome("float16", Stage.CHECKER, True, "f16"),
                _outcome("float16", Stage.CHECKER, False, "f16")]
    groups = {g.dtype: g for g in failure_groups(outcomes)}
    assert groups["float32"].only_with == ("ceil_mode=True",)
    assert "only with ceil_mode=True" in groups["float32"].describe()
    assert groups["float16"].only_with == ()  # every float16 example fails: the dtype's
    data = art._failures_out(groups.values())
    assert art._failures_in(data) == tuple(groups.values())


def test_the_json_schema_accepts_named_failures_and_refuses_a_misshapen_one():
    import pytest

    from opsweep.errors import DataFileError
    from opsweep.files import validate
    failure = {"dtype": "float32", "rank": 4, "stage": "checker", "error": "e", "count": 1,
               "example": "x", "size": 1, "only_with": ["ceil_mode=True"]}
    validate(failure, "artifact", "a.json", definition="failure")
    with pytest.raises(DataFileError, match="only_with"):
        validate({**failure, "only_with": "ceil_mode=True"}, "artifact", "a.json",
                 definition="failure")

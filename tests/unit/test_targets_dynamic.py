"""Translation targets and the dynamic axis as data: tables, artifact, diff, report."""

from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.data import STOCK
from opsweep.artifact.diff import diff
from opsweep.errors import ArtifactError, UsageError
from opsweep.artifact.grade import Counts, dynamic_regressed, grade
from opsweep.model import Example, Grade, Mismatch, Outcome, Stage, TensorArg
from opsweep.bot.comment import to_json, to_markdown
from opsweep.engine.runner import DynamicPlan, dynamic_shapes, plan_candidates, resize
from opsweep.engine.translations import load as load_translations

from ..factories import FP, T, result, with_target

TABLE = "examples/custom_translations.py:TABLE"
# --- the dynamic axis ---------------------------------------------------------------

def test_plan_candidates_try_the_batch_input_alone_before_tying_coincident_sizes():
    ex = Example((TensorArg((3, 4), "float32"), TensorArg((3, 1), "float32"),
                  [TensorArg((4, 3), "float32")]), (("w", TensorArg((3,), "float32")),))
    plans = plan_candidates(ex)
    assert [sorted(p.inputs) for p in plans] == [[0], [0, 1], [0, 3], [0, 1, 3]]
    assert {(p.export_size, p.run_size) for p in plans} == {(3, 4)}
    # a spec that names its batch inputs gets exactly those
    assert [sorted(p.inputs) for p in plan_candidates(ex, (0, 1))] == [[0, 1]]
    grown = resize(ex, frozenset({0, 1, 3}), 7)
    assert [t.shape for t in grown.tensors] == [(7, 4), (7, 1), (4, 3), (7,)]
    plan = DynamicPlan(frozenset({0, 1, 3}), 3, 4)
    assert dynamic_shapes(plan, 4)[0][2] is None and 0 in dynamic_shapes(plan, 4)[0][0]


def test_plan_traces_small_leading_sizes_at_two_and_skips_scalars():
    assert plan_candidates(Example((TensorArg((1, 5), "float32"),)))[0].export_size == 2
    assert plan_candidates(Example((TensorArg((), "float32"), 3))) == []


def test_dynamic_regressed_means_less_far_than_static():
    ok = Outcome(Stage.OK, "s", "float32", 1)
    assert dynamic_regressed(replace(ok, dynamic=Stage.CAPTURE))
    assert not dynamic_regressed(replace(ok, dynamic=Stage.INVALID))  # a spec matter, not a verdict
    numerics = Outcome(Stage.NUMERICS, "s", "float16", 1)
    assert not dynamic_regressed(replace(numerics, dynamic=Stage.NUMERICS))  # same as static
    assert dynamic_regressed(replace(numerics, dynamic=Stage.RUNTIME))


def test_dynamic_grade_over_re_exported_examples():
    stages = {Stage.OK: 3}
    assert grade([Counts(stages, False, {Stage.OK: 3}, 0)]).dynamic is Grade.FULL
    assert grade([Counts(stages, False, {Stage.OK: 2, Stage.RUNTIME: 1}, 1)]).dynamic is Grade.PARTIAL
    assert grade([Counts(stages, False, {Stage.CAPTURE: 2, Stage.INVALID: 1}, 2)]).dynamic is Grade.BLOCKED
    assert grade([Counts(stages, False, {Stage.INVALID: 3}, 0)]).dynamic is None
    assert grade([(stages, False)]).dynamic is None  # never re-exported: n/a


# --- targets in the artifact -------------------------------------------------------------

def test_targets_round_trip_and_views(tmp_path):
    a = with_target({"hypot": result(["hypot"], Stage.NO_TRANSLATION)},
                    {"hypot": result(["hypot"], Stage.OK, dynamic=[Stage.RUNTIME])})
    path = tmp_path / "a.json"
    art.save(path, a)
    loaded = art.load(path)
    assert loaded == a and loaded.target_names == (STOCK, T.name)
    grades = loaded.target(T.name).operators["hypot"].grades
    assert grades.export is Grade.FULL and grades.dynamic is Grade.NONE
    assert loaded.operators["hypot"].grades.export is Grade.NONE
    assert loaded.target("nope:TABLE") is None


def test_hand_edited_target_operator_is_refused_naming_the_field(tmp_path):
    a = with_target({"hypot": result(["hypot"], Stage.NO_TRANSLATION)},
                    {"hypot": result(["hypot"], Stage.OK)})
    data = art.to_data(a)
    data["targets"][T.name]["operators"]["hypot"]["export"] = "none"
    with pytest.raises(ArtifactError, match=rf"targets\.{T.name}\.operators\.hypot\.export"):
        art.from_data(data, "a.json")
    data = art.to_data(a)
    data["targets"][T.name]["fingerprint"]["table"] = "OTHER"
    with pytest.raises(ArtifactError, match="not the target it is filed under"):
        art.from_data(data, "a.json")


def test_an_older_schema_is_refused_with_the_way_forward():
    data = art.to_data(with_target({}, {}))
    data["schema_version"] = 1
    with pytest.raises(ArtifactError, match="schema_version.*--no-reuse"):
        art.from_data(data, "old.json")


# --- loading a table ---------------------------------------------------------------------

def test_the_example_table_loads_with_its_fingerprint():
    info, table = load_translations(TABLE)
    assert info.name == TABLE and len(info.digest) == 16
    assert {"prims::fmax", "prims::fmin", "prims::hypot", "aten::detach_copy",
            "aten::fft_fftfreq", "aten::fft_rfftfreq"} == set(info.overrides)
    assert all(callable(f) for f in table.values())


@pytest.mark.parametrize("text, message", [
    ("examples/custom_translations.py", "expected MODULE:TABLE"),
    ("stock", "expected MODULE:TABLE"),
    ("no/such/file.py:TABLE", "no such file"),
    ("examples/custom_translations.py:MISSING", "has no 'MISSING'"),
    ("examples/custom_translations.py:_FLOATS", "must be a non-empty mapping"),
    ("json:dumps", "must be a non-empty mapping"),
    ("no_such_module_xyz:TABLE", "importing no_such_module_xyz failed"),
])
def test_bad_tables_are_refused_naming_what_and_where(text, message):
    with pytest.raises(UsageError, match=message):
        load_translations(text)


def test_a_table_with_a_key_that_is_not_an_operator_is_refused(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("TABLE = {'aten::hypot': print}\n")
    with pytest.raises(UsageError, match=r"bad\.py:TABLE: key 'aten::hypot' is not a torch operator"):
        load_translations(f"{bad}:TABLE")


# --- diff and report per target and axis ------------------------------------------------------

def test_diff_reports_transitions_per_target_and_on_the_dynamic_axis():
    old = with_target({"sin": result(["sin"], Stage.OK, dynamic=[Stage.OK])},
                      {"sin": result(["sin"], Stage.NO_TRANSLATION)})
    new = with_target({"sin": result(["sin"], Stage.OK, dynamic=[Stage.CAPTURE])},
                      {"sin": result(["sin"], Stage.OK)})
    d = diff(old, new)
    got = {(t.target, t.axis, t.kind) for t in d.transitions}
    assert (STOCK, "dynamic", "regression") in got
    assert (T.name, "export", "improvement") in got
    dynamic = next(t for t in d.regressions if t.axis == "dynamic")
    assert dynamic.failures and dynamic.failures[0].stage is Stage.CAPTURE
    text = to_markdown(d, new, history="https://example.invalid/history.md")
    assert "<code>sin</code> dynamic: full → blocked" in text
    assert f"`sin` export (with `{T.name}`): none → full" in text
    assert "dynamic_example_for('sin', 'f32[0]')" in text and "dynamic_shapes=shapes" in text
    assert "[history](https://example.invalid/history.md)" in text
    assert {t["target"] for t in to_json(d)["transitions"]} == {STOCK, T.name}


def test_diff_notes_added_and_changed_targets_instead_of_listing_every_operator():
    stock = {"sin": result(["sin"], Stage.OK)}
    plain = art.make_artifact(FP, "ci", 25, 0, stock)
    d = diff(plain, with_target(stock, stock))
    assert d.transitions == () and d.target_changes == (f"target {T.name} added",)
    changed = replace(T, digest="fedcba9876543210")
    d = diff(with_target(stock, stock), with_target(stock, stock, translations=changed))
    assert "translation table changed (0123456789abcdef → fedcba9876543210)" in d.target_changes[0]


def test_values_differing_at_the_second_size_are_the_numerics_axis_business():
    ok = Outcome(Stage.OK, "s", "float16", 1)
    values = replace(ok, dynamic=Stage.NUMERICS, dynamic_mismatch=Mismatch.VALUES)
    assert not dynamic_regressed(values)
    for kind in (Mismatch.SHAPE, Mismatch.DTYPE, Mismatch.COUNT):  # wrong at the second size
        assert dynamic_regressed(replace(ok, dynamic=Stage.NUMERICS, dynamic_mismatch=kind))
    # the kind decides, never the wording: a message that happens to say "elements differ"
    # with a shape mismatch still regresses
    worded = replace(ok, dynamic=Stage.NUMERICS, dynamic_mismatch=Mismatch.SHAPE,
                     dynamic_error="output 0: 1/12 elements differ")
    assert dynamic_regressed(worded)

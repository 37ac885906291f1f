"""An operator's dtype × rank grid (issue 50) from a small hand-built artifact: every state
a cell can be in, counts summed over specs, the empty tensor's column, a further target's
grid where it differs, the support page's rank filter data, and the operator page."""

import re
from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.artifact import grade as grading
from opsweep.artifact.data import SpecResult
from opsweep.artifact.results import ExporterEntry
from opsweep.catalog.load import load_catalog
from opsweep.model import Outcome, Stage
from opsweep.page.grid import NOT_DRAWN, OUTSIDE, REFUSED, UNREACHABLE, UNSETTLED, grids, parse_key
from opsweep.page.support import build_view, render_details, render_page
from opsweep.page.view import failing_at

from ..factories import DOCUMENTED, FP, LINKS, LISTING

#: the hand-built spec's declaration: float32 and float16 at ranks 1 to 3
DECLARED = {"sin": (("float32", "float16"), (1, 3))}


def measured(ops, outcomes, cells=None, digest="0123456789abcdef"):
    """A spec result from (stage, dtype, rank) of each example, and its recorded cells."""
    outs = [Outcome(stage, f"x{i}", dtype, rank, 1,
                    "" if stage is Stage.OK else f"E: {stage.value}")
            for i, (stage, dtype, rank) in enumerate(outcomes)]
    counts = grading.stage_counts(outs)
    return SpecResult(tuple(ops), "unary", "ci", len(outs), counts, grading.failure_groups(outs),
                      grading.grade([grading.Counts(counts)]), False, None, digest, len(outs),
                      outcomes=grading.outcome_counts(outs), cells=cells)


def sin(cells=None):
    ok, run, num, chk = Stage.OK, Stage.RUNTIME, Stage.NUMERICS, Stage.CHECKER
    return measured(["sin"], [
        (ok, "float32", 1), (ok, "float32", 1), (ok, "float32", 2),
        (run, "float16", 1), (num, "float16", 1), (ok, "float16", 1),  # runtime 2/3
        (num, "float16", 2), (ok, "float16", 2),
        (chk, "float32", 3), (Stage.INVALID, "float16", 3),
    ], cells)


CELLS = {"float16 0": "refused: RuntimeError: \"sin_cpu\" not implemented for 'Half'",
         "float32 0": "outside",
         "float16 3": "unsettled: IndexError: index 2 is out of bounds",
         "float32 1 empty": "unreachable"}


def stock(specs):
    return art.make_artifact(FP, "ci", 25, 0, specs)


def cells_of(grid, dtype):
    row = next(r for r in grid.rows if r.dtype == dtype)
    return dict(zip(grid.ranks, row.cells, strict=True)), row


def test_every_state_of_a_cell():
    grid = grids(stock({"sin": sin(CELLS)}).results.values(), "sin", DECLARED).stock
    assert grid.ranks == (0, 1, 2, 3) and [r.dtype for r in grid.rows] == ["float32", "float16"]
    f32, row32 = cells_of(grid, "float32")
    f16, row16 = cells_of(grid, "float16")
    # ok: every example passed every stage, with how many there were
    assert (f32[1].state, f32[1].text, f32[1].css) == ("ok", "ok 2", "s-ok")
    # a failing cell: the furthest stage every failing example reached, failing/drawn
    assert (f16[1].state, f16[1].text, f16[1].css) == ("runtime", "run 2/3", "s-runtime")
    assert f16[1].title == "float16 rank 1: 2 failing of 3 (runtime ×1, numerics ×1)"
    assert (f16[2].text, f32[3].text) == ("num 1/2", "chk 1/1")
    # refused by eager, with eager's error in the title
    assert (f16[0].state, f16[0].text, f16[0].css) == (REFUSED, "refused", "s-refused")
    assert f16[0].title == ("float16 rank 0: eager PyTorch refuses it: RuntimeError: "
                            "\"sin_cpu\" not implemented for 'Half'")
    # unsettled: eager refused the rewritten example; an invalid example never counts
    assert (f16[3].state, f16[3].text) == (UNSETTLED, "unsettled")
    assert "IndexError: index 2 is out of bounds" in f16[3].title
    # outside the declared ranks
    assert (f32[0].state, f32[0].text) == (OUTSIDE, "outside")
    # the empty tensor's column: its recorded state, at its own dtype alone
    assert grid.empty and row32.empty is not None and row16.empty is None
    assert (row32.empty.state, row32.empty.text) == (UNREACHABLE, "unreachable")
    assert row32.empty.title.startswith("float32 rank 1, empty tensor: no example")
    # every rank of a dtype, summed
    assert (row32.total.text, row16.total.text) == ("chk 1/4", "run 3/5")
    assert grid.failing == (("float32", 3), ("float16", 1), ("float16", 2))
    assert grid.empty_measured == ()


def test_without_recorded_cells_a_cell_is_not_drawn_or_outside_the_declared_ranks():
    """Drawn without the cell covering (or measured before schema 7): nothing is recorded,
    a cell no example stands for is not drawn; a rank no spec declares is outside."""
    grid = grids(stock({"sin": sin()}).results.values(), "sin", DECLARED).stock
    f32, row32 = cells_of(grid, "float32")
    f16, _ = cells_of(grid, "float16")
    assert (f32[0].state, f32[0].text) == (OUTSIDE, "outside")  # below the declared 1..3
    assert f32[0].title == "float32 rank 0: outside the ranks its specs declare (1 to 3)"
    assert (f16[0].state, f16[0].css) == (OUTSIDE, "s-outside")
    assert (f16[3].state, f16[3].text, f16[3].css) == (NOT_DRAWN, "not drawn", "s-none")
    assert f16[3].title == "float16 rank 3: not drawn (only 1 invalid)"
    assert not grid.empty and row32.empty is None
    # a declared dtype no example was drawn in is a row of not-drawn cells
    wide = {"sin": (("float32", "float16", "bfloat16"), (1, 3))}
    grid = grids(stock({"sin": sin()}).results.values(), "sin", wide).stock
    bf16, row = cells_of(grid, "bfloat16")
    assert [c.state for c in bf16.values()] == [OUTSIDE, NOT_DRAWN, NOT_DRAWN, NOT_DRAWN]
    assert row.total.text == "not drawn"


def test_the_empty_tensor_measured_is_said_once_for_its_spec():
    """With the cell covering and no empty cell recorded, the spec measured its empty
    tensor: its outcome is counted with its dtype and rank."""
    recorded = {k: v for k, v in CELLS.items() if "empty" not in k}
    grid = grids(stock({"sin": sin(recorded)}).results.values(), "sin", DECLARED).stock
    assert not grid.empty and grid.empty_measured == ("sin",)


def test_counts_sum_over_specs_and_the_title_names_each():
    other = measured(["sin"], [(Stage.OK, "float16", 1), (Stage.NUMERICS, "float16", 1),
                               (Stage.OK, "float32", 5)],
                     {"float16 0": "refused: RuntimeError: not for Half (other)"})
    artifact = stock({"sin": sin(CELLS), "sin_other": other})
    declared = {**DECLARED, "sin_other": (("float16", "float32"), (0, 5))}
    grid = grids(artifact.results.values(), "sin", declared).stock
    assert grid.ranks == (0, 1, 2, 3, 4, 5)
    f16, _ = cells_of(grid, "float16")
    f32, _ = cells_of(grid, "float32")
    assert f16[1].text == "run 3/5"
    assert f16[1].title == ("float16 rank 1: 3 failing of 5 (runtime ×1, numerics ×2); "
                            "spec sin: 2 failing of 3, spec sin_other: 1 failing of 2")
    assert f16[0].state == REFUSED and "spec sin: eager PyTorch refuses it" in f16[0].title \
        and "spec sin_other: eager PyTorch refuses it: RuntimeError: not for Half (other)" \
        in f16[0].title
    # a rank one spec declares and the other does not: not outside, not drawn
    assert (f32[4].state, f32[5].text) == (NOT_DRAWN, "ok 1")
    # float32 rank 0: outside sin's ranks, inside sin_other's: sin's word is all there is
    assert f32[0].state == OUTSIDE and f32[0].title.startswith("float32 rank 0: spec sin: below")


def test_another_target_shown_where_its_grid_differs():
    ts = replace(sin(CELLS), outcomes=grading.outcome_counts(
        [Outcome(Stage.NO_TRANSLATION, "x", "float16", 1, 1, "E")]))
    entry = ExporterEntry("torchscript", "2.13.0", 17)
    artifact = art.make_artifact(FP, "ci", 25, 0, {"sin": sin(CELLS)}, None, {
        "torchscript": (entry, {"sin": ts}), "opset18": (ExporterEntry("opset18", "2.13.0", 18),
                                                         {"sin": sin(CELLS)})})
    found = grids(artifact.results.values(), "sin", DECLARED)
    assert [g.target for g in found.shown] == ["stock", "torchscript"]
    assert found.same == ("opset 18",)
    f16, _ = cells_of(found.shown[1], "float16")
    assert (f16[1].text, f16[2].state) == ("no-tr 1/1", NOT_DRAWN)


def test_no_grid_without_outcome_counts():
    old = replace(sin(), outcomes=None)  # an artifact from before schema 5
    assert grids(stock({"sin": old}).results.values(), "sin", DECLARED).shown == ()
    assert grids(stock({"sin": sin()}).results.values(), "cos").shown == ()


def test_a_cell_key_that_is_not_one_is_refused_by_name():
    assert parse_key("float16 3 empty") == ("float16", 3, True)
    for bad in ("float16", "float16 x", "float16 3 full", "a b c d"):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            parse_key(bad)


def test_the_rank_filter_data_are_the_failing_cells_by_dtype_class():
    result = sin(CELLS)
    assert failing_at(result.failures) == (("float32", (3,)), ("float16", (1, 2)))
    ints = measured(["x"], [(Stage.RUNTIME, "int32", 0), (Stage.NUMERICS, "int64", 2),
                            (Stage.INVALID, "bool", 1), (Stage.OK, "bool", 1)])
    assert failing_at(ints.failures) == (("integer", (0, 2)),)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(check_draws=False)


def test_the_pages_carry_the_grid_and_the_rank_data(catalog):
    artifact = stock({"sin": sin(CELLS), "cos": measured(["cos"], [(Stage.OK, "float32", 0)])})
    view = build_view(LISTING, catalog, artifact, DOCUMENTED, frozenset({"sin", "cos"}), LINKS,
                      "2.13.0")
    page = render_page(view)
    assert 'data-ranks="1 2 3"' in page
    assert re.search(r'<tr data-op="sin"[^>]* data-fail="float32:3 float16:12"', page)
    assert not re.search(r'<tr data-op="cos"[^>]* data-fail=', page)
    one = render_details(view)["sin.md"]
    table = re.search(r'<table class="opsweep-matrix opsweep-grid" data-target="stock">.*?</table>',
                      one, re.S)
    assert table, "the operator page has the stock grid"
    html = table.group(0)
    assert '<th scope="col">rank 0</th>' in html and '<th scope="col">every rank</th>' in html
    assert '<th scope="col" title="a tensor with a zero-size side">empty</th>' in html
    assert re.search(r'<tr data-dtype="float16"><th scope="row">float16</th>'
                     r'<td class="s-refused" title="float16 rank 0: eager PyTorch refuses it: '
                     r'RuntimeError: &#34;sin_cpu&#34; not implemented for &#39;Half&#39;">'
                     r'refused</td>'
                     r'<td class="s-runtime" title="[^"]+">run 2/3</td>', html)
    assert '<td class="s-unreachable" title="float32 rank 1, empty tensor: no example to make ' \
        'it from">unreachable</td>' in html
    assert "\n\n" not in one[one.index('<div class="opsweep-op">'):one.index("</div>\n\n")]
    assert '<span class="s-refused">refused</span>' in one  # the legend line
    cos = render_details(view)["cos.md"]
    assert 'data-target="stock"' in cos and "empty</th>" not in cos

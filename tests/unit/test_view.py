"""The support page's filter data, dtype matrices, per-operator details and the
history chart, from small artifacts and records."""

import importlib
import re
from dataclasses import replace
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.artifact import records as history
from opsweep.page.history import render as render_history
from opsweep.artifact.data import STOCK
from opsweep.catalog.load import load_catalog
from opsweep.artifact.grade import FailureGroup, StageCount
from opsweep.model import OpSpec, Stage
from opsweep.page.chart import series, svg
from opsweep.page.detail import releases
from opsweep.page.dtypes import dtype_row, rank_row
from opsweep.page.view import last_bump
from opsweep.page.support import build_view, render_details, render_page
from opsweep.page.snippets import NEEDS_CATALOG, snippet

from ..factories import DOCUMENTED, FP, LINKS, LISTING, T, result, with_target


def spec(dtypes=("float32", "bfloat16"), ranks=(0, 4)):
    return OpSpec("x", ("x",), None, dtypes=dtypes, ranks=ranks)  # type: ignore[arg-type]


def group(dtype, rank, stage, count=1, example="f32[2]"):
    return FailureGroup(dtype, rank, stage, "E: boom", count, example, 2)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(check_draws=False)


def test_dtype_cells_are_the_earliest_failing_stage_titled_with_counts():
    row = dtype_row("x", [spec(("float32", "bfloat16", "int64"))],
                    [group("bfloat16", 1, Stage.NUMERICS, 3), group("bfloat16", 2, Stage.RUNTIME, 2),
                     group("int32", 1, Stage.NO_TRANSLATION), group("float32", 0, Stage.INVALID)])
    cells = dict(zip(row.columns, row.cells, strict=True))
    assert cells["bfloat16"].stage == "runtime"  # every failing bf16 example got at least that far
    assert cells["bfloat16"].title == "bfloat16: 5 failing (runtime ×2, numerics ×3)"
    assert cells["integer"].stage == "no-translation" and cells["integer"].failures == 1
    assert (cells["float32"].stage, cells["float32"].failures) == ("ok", 0)  # invalid never counts
    assert cells["float16"].stage == "" and cells["float16"].title == ""  # no spec draws it
    assert row.failing == ("bfloat16", "integer")


def test_with_outcome_counts_a_cell_tells_passed_from_not_drawn():
    """Schema 5 keeps examples per dtype, rank and stage: a declared dtype no example
    was drawn in is empty, not "ok", and titles say how many of how many failed."""
    outcomes = [StageCount("float32", 1, Stage.OK, 4), StageCount("bfloat16", 1, Stage.OK, 1),
                StageCount("bfloat16", 1, Stage.NUMERICS, 3), StageCount("int64", 0, Stage.INVALID, 2)]
    row = dtype_row("x", [spec(("float32", "bfloat16", "int64"))],
                    [group("bfloat16", 1, Stage.NUMERICS, 3)], outcomes)
    cells = dict(zip(row.columns, row.cells, strict=True))
    assert (cells["float32"].stage, cells["float32"].title) == ("ok", "float32: 0 failing of 4")
    assert cells["bfloat16"].title == "bfloat16: 3 failing of 4 (numerics ×3)"
    assert cells["integer"].stage == ""  # declared, but only invalid examples: nothing measured
    assert rank_row("x", [spec()], [group("bfloat16", 1, Stage.NUMERICS, 3)], outcomes) is None
    with_zero = [*outcomes, StageCount("float32", 0, Stage.RUNTIME, 2)]
    row = rank_row("x", [spec()], [group("float32", 0, Stage.RUNTIME, 2),
                                   group("bfloat16", 1, Stage.NUMERICS, 3)], with_zero)
    assert [c.title for c in row.cells] == ["rank 0: 2 failing of 2 (runtime ×2)",
                                            "rank ≥ 1: 3 failing of 8 (numerics ×3)"]


def test_a_cell_whose_failures_are_an_arguments_says_so_instead_of_blaming_the_dtype():
    outcomes = [StageCount("float64", 2, Stage.OK, 5), StageCount("float64", 2, Stage.CHECKER, 2),
                StageCount("float32", 2, Stage.OK, 4), StageCount("float32", 2, Stage.CHECKER, 1)]
    apart = replace(group("float64", 2, Stage.CHECKER, 2), only_with=("ceil_mode=True",))
    plain = group("float32", 2, Stage.CHECKER, 1)
    row = dtype_row("x", [spec(("float32", "float64"))], [apart, plain], outcomes)
    cells = dict(zip(row.columns, row.cells, strict=True))
    assert cells["float64"].text == "chk 2/7 only with ceil_mode=True"
    assert cells["float64"].title.endswith(", only with ceil_mode=True") and "args" in cells["float64"].css
    assert cells["float32"].text == "chk 1/5" and cells["float32"].only == ""
    # one failing group of the class without an argument of its own: the dtype is not cleared
    row = dtype_row("x", [spec(("float64",))],
                    [apart, group("float64", 1, Stage.NUMERICS, 1)], outcomes)
    assert dict(zip(row.columns, row.cells, strict=True))["float64"].only == ""


def test_rank_row_only_where_rank_zero_differs():
    same = [group("float32", 0, Stage.CHECKER), group("float32", 3, Stage.CHECKER)]
    assert rank_row("x", [spec()], same) is None
    row = rank_row("x", [spec()], [group("float32", 0, Stage.RUNTIME)])
    assert [c.stage for c in row.cells] == ["runtime", "ok"]
    assert rank_row("x", [spec(ranks=(1, 4))], []) is None  # rank 0 never drawn


def _records(tmp_path):
    old = with_target({"sin": result(["sin"], Stage.OK), "cos": result(["cos"], Stage.NO_TRANSLATION)},
                      {"cos": result(["cos"], Stage.OK)})
    new = with_target({"sin": result(["sin"], Stage.OK, Stage.NO_TRANSLATION),
                       "cos": result(["cos"], Stage.OK)},
                      {"cos": result(["cos"], Stage.OK)}, fingerprint=replace(FP, torch="2.14.1"))
    history.write(old, tmp_path)
    history.write(new, tmp_path)
    return history.load_all(tmp_path), new


def test_last_bump_and_full_since(tmp_path):
    records, _ = _records(tmp_path)
    bump, changed = last_bump(records)
    assert bump == ("2.13.0", "2.14.1")
    assert changed[STOCK] == {"sin", "cos"} and changed[T.name] == set()
    assert last_bump(records[:1]) == (None, {})
    since = history_grade("2.14.1", "fff-")
    assert releases(records, "cos") == ((history_grade("2.13.0", "n---"), since), since)
    assert releases(records, "sin")[1] is None  # not full in the newest release
    assert releases(records, "tan")[1] is None  # never measured


def history_grade(version, code):
    from opsweep.page.detail import ReleaseGrade
    return ReleaseGrade(version, code, version)


def test_rows_carry_per_target_letters_and_changes_and_details(tmp_path, catalog):
    records, new = _records(tmp_path)
    v = build_view(LISTING, catalog, new, DOCUMENTED, frozenset({"sin"}), LINKS, "2.14.1",
                   records=records, source_url="https://example.test/repo/blob/main")
    rows = {r.name: r for r in v.rows}
    assert rows["sin"].codes == ("pff-", "") and rows["sin"].changed == (True, False)
    assert rows["cos"].codes == ("fff-", "fff-")
    assert rows["tan"].codes == ("", "")
    page = render_page(v)
    assert f'data-targets="stock|{T.name}"' in page and 'data-bump="2.13.0 → 2.14.1"' in page
    assert '<tr data-op="sin" data-core="1" data-g="pff- " data-chg="10"' in page
    details = {d.name: d for d in v.details}
    sin = details["sin"]
    assert [(g.stage, g.example, g.spec) for g in sin.groups] == [("no-translation", "f32[1]", "sin")]
    # no inline scripts handed in: the snippet `opsweep diff` produces, marked as needing opsweep
    assert sin.repros[0].code == NEEDS_CATALOG + snippet("sin", "f32[1]")
    line = catalog.specs["sin"].origin.line
    unary = Path(importlib.import_module("opsweep.specs.unary").__file__)
    assert 'unary("sin"' in unary.read_text("utf-8").splitlines()[line - 1]
    assert (sin.specs[0].path, sin.specs[0].line, sin.specs[0].anchor) == ("specs/unary.py", line,
                                                                          "spec-sin")
    assert sin.specs[0].url == f"https://example.test/repo/blob/main/specs/unary.py#L{line}"
    assert sin.full_since == "" and [r.code for r in sin.releases] == ["fff-", "pff-"]
    pages = render_details(v)
    assert set(pages) == {"index.md", *(f"{d.name}.md" for d in v.details)}  # a page each
    assert "[`sin`](sin.md)" in pages["index.md"]
    text = pages["sin.md"]
    assert text.startswith("---\nfamily: unary\n") and "\n# `sin` { #op-sin }\n" in text
    assert (f'measured by <a class="spec" href="../../specs/unary/#spec-sin"><code>sin</code></a> '
            f'(<a href="https://example.test/repo/blob/main/specs/unary.py#L{line}">'
            f'specs/unary.py:{line}</a>)' in text)
    assert "export full since torch 2.14.1" in pages["cos.md"]
    assert "from opsweep import example_for" in text
    assert re.search(r"<td>no-translation</td><td class=\"wrap\">E: x</td><td>float32</td>"
                     r"<td>1</td><td>1</td>", text)


def test_the_table_says_since_when_export_has_stayed_full_and_lists_absent_specs(tmp_path, catalog):
    records, new = _records(tmp_path)
    why = "aten::cholesky not in torch 2.14.1's operator listing"
    new = replace(new, absent={"cholesky": why})
    v = build_view(LISTING, catalog, new, DOCUMENTED, frozenset(), LINKS, "2.14.1", records=records)
    rows = {r.name: r for r in v.rows}
    assert (rows["cos"].full_since, rows["sin"].full_since) == ("2.14.1", "")
    details = {d.name: d for d in v.details}
    assert rows["cos"].full_since == details["cos"].full_since  # the same logic, one place
    page = render_page(v)
    assert re.search(r'<tr data-op="cos"[^\n]*<td>2\.14\.1</td>', page)
    assert "<th title=\"the first recorded release from which export has stayed full\">Full since" in page
    assert "## Not present in torch 2.14.1" in page
    assert f"| `cholesky` | `cholesky` | {why} | - |" in page  # no record shows it before


def test_a_since_point_sharing_its_torch_keeps_the_cell_narrow(tmp_path, catalog):
    """Two points of torch 2.14.1 (onnxscript 0.7.1, 0.7.2): the cell shows the release and
    a dagger, the pins that tell the points apart go to its title (a long label made the
    table wider than the page at 1400 px)."""
    records, new = _records(tmp_path)
    records = [replace(r, label=f"{r.version} (onnxscript 0.7.2)") for r in records]
    v = build_view(LISTING, catalog, new, DOCUMENTED, frozenset(), LINKS, "2.14.1", records=records)
    page = render_page(v)
    assert re.search(r'<tr data-op="cos"[^\n]*<td title="torch 2\.14\.1 '
                     r'\(onnxscript 0\.7\.2\)">2\.14\.1<sup>†</sup></td>', page)


def test_groups_sharing_an_error_print_it_once():
    from opsweep.page.detail import GroupView, OperatorDetail
    g = [GroupView("", False, "runtime", "float32", r, 1, err, f"f32[{r}]", "x")
         for r, err in ((1, "E: a"), (2, "E: a"), (3, "E: b"))]
    op = OperatorDetail("x", "op-x", "", "", (), False, False, "", "", "", (), (), tuple(g), (), (), "")
    assert [len(b) for b in op.blocks] == [2, 1]


def test_custom_target_groups_only_where_grades_differ(tmp_path, catalog):
    records, new = _records(tmp_path)
    v = build_view(LISTING, catalog, new, DOCUMENTED, frozenset(), LINKS, "2.14.1", records=records)
    cos = next(d for d in v.details if d.name == "cos")
    assert cos.groups == ()  # stock full, the table the same
    differs = with_target({"cos": result(["cos"], Stage.NO_TRANSLATION)},
                          {"cos": result(["cos"], Stage.OK, Stage.RUNTIME)})
    v = build_view(LISTING, catalog, differs, DOCUMENTED, frozenset(), LINKS, "2.13.0")
    cos = next(d for d in v.details if d.name == "cos")
    assert [(g.target, g.stage) for g in cos.groups] == [("", "no-translation"), (T.name, "runtime")]
    assert "custom_translation_table=table" in cos.repros[1].code


def test_history_chart_counts_full_operators_per_release_and_axis(tmp_path):
    records, _ = _records(tmp_path)
    by_label = {s.label: s.values for s in series(records)}
    assert by_label["export (stock)"] == (1, 1)  # sin then cos
    assert by_label["numerics (stock)"] == (1, 2)
    assert by_label["dynamic (stock)"] == (0, 0)
    assert by_label["export with custom_translations.py:TABLE"] == (1, 1)
    picture = svg(records)
    assert picture.startswith("<svg") and picture.endswith("</svg>")
    assert picture.count("<polyline") == 5 and ">2.14.1</text>" in picture
    assert "<title>numerics (stock): 2</title>" in picture
    page = render_history(records)
    assert "| numerics (stock) | 1 | 2 |" in page and picture in page


def test_one_record_draws_points_not_lines(tmp_path):
    records, _ = _records(tmp_path)
    picture = svg(records[:1])
    assert "<polyline" not in picture and picture.count("<circle") == 5


def test_artifact_without_history_renders(catalog):
    only = art.make_artifact(FP, "ci", 25, 0, {"sin": result(["sin"], Stage.OK)})
    v = build_view(LISTING, catalog, only, DOCUMENTED, frozenset(), LINKS, "2.13.0")
    assert v.bump is None and 'data-bump=""' in render_page(v)
    assert "Per recorded release" not in render_details(v)

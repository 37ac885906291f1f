"""The page from view-models: bars, glyphs, columns, version guard, fallback."""

import pytest

from opsweep.artifact import data as art
from opsweep.catalog.load import load_catalog
from opsweep.errors import UsageError
from opsweep.model import Stage
from opsweep.page.glyphs import UNMEASURED
from opsweep.page.support import build_view, check_versions, render_details, render_page
from opsweep.page.templates import cell

from ..factories import DOCUMENTED, FP, LINKS, LISTING, result


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(check_draws=False)


def report():
    return art.make_artifact(FP, "ci", 25, 0, {
        "sin": result(["sin"], Stage.OK, Stage.OK),
        "cos": result(["cos"], Stage.OK, Stage.CHECKER),
        "abs": result(["abs"], Stage.NO_TRANSLATION, Stage.OK),
    }, "2026-11-29T00:00:00+00:00")


def view(catalog, artifact=None):
    return build_view(LISTING, catalog, artifact if artifact is not None else report(),
                      DOCUMENTED, frozenset({"sin", "cos", "abs"}), LINKS, "2.13.0")


def test_bars_share_denominators_that_do_not_depend_on_measurement(catalog):
    v = view(catalog)
    core, listing = v.bars
    assert (core.numerator, core.denominator) == (2, 3)       # sin, cos full; tan unmeasured
    assert (listing.numerator, listing.denominator) == (2, 5)  # 'dim' is excluded
    assert (v.measured, v.measured_full) == (3, 2)


def test_rows_carry_glyphs_claims_aliases_and_coverage(catalog):
    rows = {r.name: r for r in view(catalog).rows}
    assert "dim" not in rows
    full, partial = '<b class="g-f">full</b>', '<b class="g-p">partial</b>'
    assert (rows["sin"].export, rows["sin"].runtime, rows["sin"].numerics) == (full, full, full)
    assert (rows["cos"].export, rows["cos"].runtime) == (full, partial)
    assert rows["abs"].export == partial and rows["tan"].export == UNMEASURED
    assert rows["abs"].aliases == ("absolute",) and rows["absolute"].alias_of == "abs"
    assert rows["sin"].documented == "since opset 9" and rows["abs"].documented == "no"
    assert rows["tan"].registered == "no" and rows["sin"].registered == "yes"
    assert rows["sin"].coverage.startswith("spec sin")
    assert rows["cos"].failures and "checker" in rows["cos"].failures[0]


def test_gap_view_both_ways(catalog):
    v = view(catalog)
    assert [r.name for r in v.claimed_unconfirmed] == ["abs"]
    assert [r.name for r in v.confirmed_unclaimed] == []


def test_page_renders_bars_legend_table_and_appendix(catalog):
    page = render_page(view(catalog))
    assert '[=66.7% "66.7%"]' in page and '[=40.0% "40.0%"]' in page
    assert '| <b class="g-b">blocked</b> | blocked |' in page and "Not unsupported" in page
    assert not set("✅🟡❌⚠") & set(page)  # no emoji: a browser without an emoji font shows boxes
    # a light row: no attribute that says nothing (not core, nothing changed, no failing
    # dtype), the grade cell is its own badge, the name links to the operator's page
    assert ('<tr data-op="sin" data-core="1" data-g="fff-">'
            '<td><a href="../operators/sin/">sin</a></td><td>core</td>'
            '<td class="g-f">full</td><td class="g-f">full</td>'
            '<td class="g-f">full</td><td class="g-x">n/a</td>'
            '<td>opset 9</td><td>yes</td><td></td></tr>') in page
    assert '<tr data-op="tan" data-core="1" data-g=""' in page  # unmeasured: no letters
    assert "operators/index.md#excluded" in page  # the appendix: its rows are listed there
    assert "| `dim` | tensor metadata query" in render_details(view(catalog))["index.md"]
    assert "E: x" not in page  # the failure detail lives on the operators page, not in the table
    assert render_page(view(catalog)) == page  # deterministic


def test_without_a_report_only_the_documented_claims(catalog):
    v = build_view(LISTING, catalog, None, DOCUMENTED, frozenset(), LINKS, "2.13.0")
    assert v.bars[0].numerator == 0 and not v.report
    page = render_page(v)
    assert "No measurement report was given" in page and "Gap view" not in page


def test_version_guard():
    a = report()
    assert check_versions(a, "2.13.0+cpu", None) == "2.13.0+cpu"
    with pytest.raises(UsageError, match="measured on torch 2.13.0 but torch 2.14.1 is installed"):
        check_versions(a, "2.14.1", None)
    assert check_versions(a, "2.14.1", "2.13.0") == "2.13.0"
    assert check_versions(None, "2.14.1", None) == "2.14.1"


def test_cells_are_safe():
    assert cell("a|b <OpOverload>\nx") == "a\\|b &lt;OpOverload&gt; x"
    assert cell("[x](y) _a_ *b* `c`") == "\\[x\\](y) \\_a\\_ \\*b\\* \\`c\\`"


def test_a_render_removes_its_stale_pages_and_never_a_hand_written_one(tmp_path):
    """The operators' and spec sources' directories hold a page per operator and per file:
    a page the render no longer produces (an operator gone), and the single page of the
    older layout, are removed; a page without the rendered mark stays."""
    from opsweep.page.site import write_pages
    ops = tmp_path / "operators"
    ops.mkdir()
    mark = "<!-- Generated by `opsweep render`; edit the templates, not this file. -->\n"
    (ops / "gone.md").write_text(f"# gone\n\n{mark}")
    (ops / "notes.md").write_text("# our notes\n")  # hand-written
    (tmp_path / "operators.md").write_text(f"# Operators in detail\n\n{mark}")
    (tmp_path / "specs.md").write_text("# hand-written, at an old page's place\n")
    removed = write_pages({str(ops / "sin.md"): f"# sin\n\n{mark}", str(ops / "index.md"): mark},
                          [str(ops)], [str(tmp_path / "operators.md"), str(tmp_path / "specs.md")])
    assert sorted(p.name for p in ops.iterdir()) == ["index.md", "notes.md", "sin.md"]
    assert sorted(p.name for p in removed) == ["gone.md", "operators.md"]
    assert (tmp_path / "specs.md").exists() and not (tmp_path / "operators.md").exists()
    assert not list(ops.glob(".*"))  # written atomically: no temporary file left

"""The observed error on the pages (issue 51): each operator's page shows the error per
(dtype, rank) cell next to the cell's numerics grade, the worst ULP at a glance and the
distribution in a <details>; the support page's rows carry the largest ULP within
tolerance for the "more than N ULP" filter (tests/integration/test_error_filter.py drives
it in Chromium); an artifact without recorded error says nothing of it."""

import re
from dataclasses import replace

import pytest
from hypothesis import strategies as st

from opsweep.artifact import data as art
from opsweep.artifact.specgrade import spec_result
from opsweep.catalog.draw import PROFILES
from opsweep.catalog.load import load_catalog
from opsweep.model import Observed, OpSpec, Outcome, Stage, Tolerance
from opsweep.page.support import build_view, render_details, render_page

from ..factories import DOCUMENTED, FP, LINKS, LISTING, result

F16, F32 = Tolerance(0.01, 0.001), Tolerance(0.0001, 1e-05)
SIN = OpSpec("sin", ("sin",), st.nothing(), fn=lambda x: x)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(check_draws=False)


def _seen(max_abs, ulp, tol=F16, excess=0.0):
    return Observed(max_abs, max_abs / 2, max_abs * 10, False, False, ulp, tol, excess)


def measured():
    sin = spec_result(SIN, [
        Outcome(Stage.OK, "f16[2,3]", "float16", 2, 6, observed=_seen(0.002, 3, excess=0.0005)),
        Outcome(Stage.OK, "f16[4,3]", "float16", 2, 12, observed=_seen(0.001, 2)),
        Outcome(Stage.NUMERICS, "f16[5]", "float16", 1, 5, "output 0: 1/5 elements differ "
                "beyond rtol=0.01 atol=0.001 (max abs error 0.03)",
                observed=_seen(0.03, 40, excess=0.02)),
        Outcome(Stage.OK, "f32[2,2]", "float32", 2, 4, observed=_seen(1.2e-07, None, F32)),
    ], PROFILES["ci"], "0123456789abcdef", 4)
    return art.make_artifact(FP, "ci", 25, 0, {
        "sin": sin, "cos": result(["cos"], Stage.OK), "abs": result(["abs"], Stage.OK)},
        policy="opsweep v1")


def _view(catalog, artifact):
    return build_view(LISTING, catalog, artifact, DOCUMENTED, frozenset({"sin", "cos", "abs"}),
                      LINKS, "2.13.0")


def test_the_operator_page_shows_each_cell_beside_its_grade(catalog):
    page = render_details(_view(catalog, measured()))["sin.md"]
    assert ("<p>Observed error (stock): worst 40 ULP at float16 rank 1 (1 of 1 examples "
            'failing) · <a href="#observed-error">per dtype and rank</a></p>') in page
    assert "## Observed error { #observed-error }" in page and "`opsweep v1`" in page
    rows = [line for line in page.splitlines() if line.startswith("<tr><td>float")]
    assert rows[0].startswith('<tr><td>float16</td><td>1</td><td><b class="g-n">none</b> '
                              '0/1</td><td>40 ULP</td><td><details><summary>1 compared')
    assert rows[1].startswith('<tr><td>float16</td><td>2</td><td><b class="g-f">full</b> '
                              '2/2</td><td>3 ULP</td>')
    assert "largest error in ULP: 3<br>" in rows[1]
    assert "compared at: rtol=0.01 atol=0.001</details>" in rows[1]
    assert rows[2].startswith('<tr><td>float32</td><td>2</td><td><b class="g-f">full</b> '
                              '1/1</td><td>1.2e-07</td>')
    assert "Observed error" not in render_details(_view(catalog, measured()))["cos.md"]


def test_the_support_page_rows_carry_the_largest_ulp_within_tolerance(catalog):
    view = _view(catalog, measured())
    rows = {r.name: r for r in view.rows}
    assert (rows["sin"].ulp, rows["cos"].ulp) == (3, None)  # 40 ULP failed: not within
    page = render_page(view)
    assert ('<tr data-op="sin" data-core="1" data-g="ffp-" data-fail="float16:1" data-ulp="3">'
            '<td><a href="../operators/sin/">sin</a>') in page
    assert page.count("data-ulp=") == 1
    assert 'give N under "Within tolerance" in the filters' in page


def test_an_artifact_without_recorded_error_says_nothing_of_it(catalog):
    artifact = measured()
    stock = artifact.stock
    bare = {n: replace(r, errors=None) for n, r in stock.specs.items()}
    old = art.make_artifact(FP, "ci", 25, 0, bare)  # as a schema 5 artifact migrates
    view = _view(catalog, old)
    page, details = render_page(view), render_details(view)
    assert "ULP" not in page and "data-ulp" not in page
    assert not any("Observed error" in text for text in details.values())
    # and the pages of it are those of the artifact before the error was recorded at all
    assert page == render_page(_view(catalog, replace(old, policy="")))


def test_a_regraded_failure_is_listed_without_a_snippet_to_rebuild_it(catalog):
    from opsweep.artifact.regrading import REGRADED_EXAMPLE, regrade_artifact
    from opsweep.policy import Policy, builtin
    strict = Policy("strict", 1, {**builtin().defaults, "float16": Tolerance(0.01, 0.0)})
    regraded = regrade_artifact(measured(), builtin(), strict).artifact
    assert any(g.example == REGRADED_EXAMPLE for g in regraded.specs["sin"].failures)
    page = render_details(_view(catalog, regraded))["sin.md"]
    assert f"<code>{REGRADED_EXAMPLE}</code>" in page and "strict v1" in page
    assert "Reproduce numerics: f16[5]" in page  # the drawn failure keeps its snippet
    assert not re.search(r"Reproduce [^<]*re-graded", page)

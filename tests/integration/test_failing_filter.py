"""The support page's "Failing at" filter with a rank (issue 50) in headless Chromium: the
operator table and the filters' box as `opsweep render` writes them for a small artifact
with failures at known dtypes and ranks, the site's own script
(docs/javascripts/opsweep-filters.js), served on loopback. Clicking a dtype class and a rank
shows the operators with a failing static example at that dtype class and rank; a rank
alone, those failing at that rank at any dtype; each button's count is the number of rows
choosing it would show. Every answer is checked against the artifact's failure groups."""

import functools
import http.server
import re
import threading

import pytest

from opsweep.artifact import data as art
from opsweep.catalog.load import load_catalog
from opsweep.model import UNGRADED, Stage
from opsweep.page.dtypes import class_of
from opsweep.page.support import build_view, render_page

from ..factories import DOCUMENTED, FP, LINKS, LISTING
from ..unit.test_grid import measured
from .browser import chromium_context, expect, expect_shown, shown_ops
from .test_docs import ROOT

pytestmark = pytest.mark.integration
OK, RUN, NUM, INV = Stage.OK, Stage.RUNTIME, Stage.NUMERICS, Stage.INVALID


def artifact():
    """sin fails at float16 rank 1 and 4, cos at float16 rank 0 and int64 rank 4, abs at
    bfloat16 rank 4 (and an invalid float16 rank 0 example, which never counts), tan passes."""
    return art.make_artifact(FP, "ci", 25, 0, {
        "sin": measured(["sin"], [(OK, "float16", 1), (RUN, "float16", 1), (NUM, "float16", 4),
                                  (OK, "float32", 0)]),
        "cos": measured(["cos"], [(RUN, "float16", 0), (NUM, "int64", 4), (OK, "float16", 4)]),
        "abs": measured(["abs"], [(NUM, "bfloat16", 4), (INV, "float16", 0), (OK, "float32", 2)]),
        "tan": measured(["tan"], [(OK, "float16", 4), (OK, "float16", 0)]),
    })


def failing(a, dtype, rank):
    """The operators with a failing static example at the dtype class ("": any) and rank
    (None: any), from the artifact alone."""
    return sorted(op for op, r in a.operators.items() if any(
        g.stage not in UNGRADED and (not dtype or class_of(g.dtype) == dtype)
        and (rank is None or g.rank == rank) for g in r.failures))


@pytest.fixture
def served(tmp_path):
    view = build_view(LISTING, load_catalog(check_draws=False), artifact(), DOCUMENTED,
                      frozenset({"sin", "cos", "abs"}), LINKS, "2.13.0")
    found = re.search(r'<div id="opsweep-filters".*?</table>\n</div>', render_page(view), re.S)
    assert found, "the support page has its filters and its table"
    script = (ROOT / "docs" / "javascripts" / "opsweep-filters.js").read_text()
    (tmp_path / "page.html").write_text(f"<!doctype html><html><body>{found.group(0)}"
                                        f"<script>{script}</script></body></html>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def button(page, facet, value):
    return page.locator(f"button[data-facet={facet}][data-value='{value}']")


def test_failing_at_a_dtype_and_a_rank(served, tmp_path):
    a = artifact()
    with chromium_context(tmp_path / "profile") as (context, outside):
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{served}/page.html")
        every = page.locator("#opsweep-ops tbody tr").count()
        expect_shown(page, every)
        # the ranks offered: every rank some operator fails at
        offered = page.locator("button[data-facet=rank][data-value]").evaluate_all(
            "bs => bs.map(b => b.dataset.value)")
        assert offered == ["0", "1", "4"], offered
        any_rank = page.locator("button[data-facet=rank]:not([data-value])")
        any_dtype = page.locator("button[data-facet=dtype]:not([data-value])")
        for dtype, rank in (("float16", 4), ("float16", 0), ("float16", 1), ("bfloat16", 4),
                            ("integer", 4), ("", 4), ("", 0)):
            # a choice that would show nothing is disabled (as every facet's): clear the
            # rank, choose the dtype class, then the rank
            any_rank.click()
            (button(page, "dtype", dtype) if dtype else any_dtype).click()
            button(page, "rank", rank).click()
            want = failing(a, dtype, rank)
            expect(button(page, "rank", rank)).to_have_attribute("aria-pressed", "true")
            expect_shown(page, len(want))
            assert sorted(shown_ops(page)) == want, (dtype, rank)
            # the rank's count is what it shows; each dtype's count at that rank, likewise
            expect(button(page, "rank", rank)).to_have_text(f"rank {rank} ({len(want)})")
            for c in ("float16", "bfloat16", "integer"):
                expect(button(page, "dtype", c)).to_have_text(
                    f"{c} ({len(failing(a, c, rank))})")
        # no operator fails at float32: its button is disabled; nor at bfloat16 rank 0
        expect(button(page, "dtype", "float32")).to_be_disabled()
        any_rank.click()
        button(page, "dtype", "bfloat16").click()
        expect(button(page, "rank", 0)).to_be_disabled()
        expect(button(page, "rank", 0)).to_have_text("rank 0 (0)")
        # any rank again: the dtype class alone, as before ranks were offered
        any_rank.click()
        button(page, "dtype", "float16").click()
        expect_shown(page, len(failing(a, "float16", None)))
        assert sorted(shown_ops(page)) == ["cos", "sin"]
        expect(button(page, "rank", 4)).to_have_text(f"rank 4 ({len(failing(a, 'float16', 4))})")
        # the name box still applies alike
        page.fill("input[data-facet=q]", "cos")
        button(page, "rank", 0).click()
        expect_shown(page, 1)
        assert shown_ops(page) == ["cos"]
        assert not errors and not outside, (errors, outside)

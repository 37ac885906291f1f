"""The support page's "within tolerance but more than N ULP" filter in headless Chromium
(issue 51): the operator table and the filters' box as `opsweep render` writes them for an
artifact with recorded error, the site's own script (docs/javascripts/opsweep-filters.js),
served on loopback. Typing N shows the operators whose float16/bfloat16 cells within
tolerance were more than N ULP off PyTorch's; emptying the box shows every row again. An
artifact without recorded error gets no such box."""

import functools
import http.server
import re
import threading
from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.catalog.load import load_catalog
from opsweep.page.support import build_view, render_page

from ..factories import DOCUMENTED, FP, LINKS, LISTING, cell, errored, result
from ..unit.test_error_pages import measured
from .browser import chromium_context, expect, expect_shown, shown_ops
from .test_docs import ROOT

pytestmark = pytest.mark.integration


def _table(artifact) -> str:
    """The filters' box and the operator table of the support page, as rendered."""
    view = build_view(LISTING, load_catalog(check_draws=False), artifact, DOCUMENTED,
                      frozenset({"sin", "cos", "abs"}), LINKS, "2.13.0")
    page = render_page(view)
    found = re.search(r'<div id="opsweep-filters".*?</table>\n</div>', page, re.S)
    assert found, "the support page has its filters and its table"
    return found.group(0)


@pytest.fixture
def served(tmp_path):
    """Two pages: one of an artifact with recorded error (sin 3 ULP within tolerance, cos 9
    ULP), one without."""
    with_error = measured()
    stock = dict(with_error.specs)
    stock["cos"] = errored(["cos"], cell("float16", 2, 0.004, ulp=9),
                           cell("bfloat16", 3, 0.01, ulp=2))
    with_error = art.make_artifact(FP, "ci", 25, 0, stock, policy="opsweep v1")
    without = art.make_artifact(FP, "ci", 25, 0, {
        n: replace(r, errors=None) for n, r in stock.items()})
    script = (ROOT / "docs" / "javascripts" / "opsweep-filters.js").read_text()
    for name, artifact in (("errors", with_error), ("none", without)):
        (tmp_path / f"{name}.html").write_text(
            f"<!doctype html><html><body>{_table(artifact)}<script>{script}</script>"
            "</body></html>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_more_than_n_ulp_within_tolerance(served, tmp_path):
    with chromium_context(tmp_path / "profile") as (context, outside):
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{served}/errors.html")
        every = page.locator("#opsweep-ops tbody tr").count()
        expect_shown(page, every)
        box = page.locator("input[data-facet=ulp]")
        for n, want in (("4", ["cos"]), ("2", ["cos", "sin"]), ("9", [])):
            box.fill(n)
            expect_shown(page, len(want))
            assert sorted(shown_ops(page)) == want, n
            expect(page.locator("#opsweep-filters .ulp-count")).to_have_text(
                f" more than {n} ULP ({len(want)})")
        page.fill("input[data-facet=q]", "sin")  # the other filters still apply alike
        box.fill("0")
        expect_shown(page, 1)
        page.fill("input[data-facet=q]", "")
        box.fill("")
        expect_shown(page, every)
        page.goto(f"{served}/none.html")
        expect(page.locator("#opsweep-filters .status")).to_have_text(
            f"{every} of {every} operators shown")
        expect(page.locator("input[data-facet=ulp]")).to_have_count(0)
        assert not errors and not outside, (errors, outside)

"""The built site in headless Chromium, for the browser tests (test_docs, test_reader_tasks).

Every check of the page waits for its condition (Playwright's `expect` assertions, which
retry until they hold or PATIENCE_MS passes) instead of reading the page once right after
an action: the page's script filters on an event, and on a machine another job keeps busy
it may not even have started when an action returns (issue 48: a pair section count read
right after choosing two points saw every section, 15, not 1)."""

import contextlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

#: how long a browser action or assertion waits for its condition. Playwright's own
#: defaults (5 s for an assertion, 30 s for an action) are luck on a busy machine, where
#: the search index alone takes a while to build in the page; a met condition returns at
#: once, so only a failing check waits this long.
PATIENCE_MS = 120_000
#: the operator table's rows that the filters leave shown (a hidden row has no box)
SHOWN = "#opsweep-ops tbody tr:visible"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]


#: the built site's search index, which Material's search worker fetches at every page load
SEARCH_INDEX = "**/search/search_index.json"


def without_search_index(page, site: Path, searching: Callable[[], bool] = lambda: False) -> None:
    """Serve `page` `site`'s search index with no documents (its own configuration) while
    `searching()` is false. A test that does not search spares the browser building the
    whole site's index in the background at every load (some seconds of CPU each: test_reader_tasks
    took a third less of the machine's CPU); served empty, not refused, the page's scripts
    run as on the site, without errors (a refused fetch raises one on the page)."""
    config = json.loads((site / "search" / "search_index.json").read_text("utf-8"))["config"]
    # when searching, on to the context's rule (chromium_context: loopback only)
    page.route(SEARCH_INDEX, lambda r: r.fallback() if searching() else
               r.fulfill(json={"config": config, "docs": []}))


def expect(locator, message: str | None = None):
    """Playwright's `expect` (imported here: without playwright, chromium_context says
    what is missing before any test gets this far)."""
    from playwright.sync_api import expect as playwright_expect
    return playwright_expect(locator, message)


def chromium():
    from ..conftest import require
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    require(found is not None, "headless Chromium (Debian package 'chromium')")
    return found


@contextlib.contextmanager
def chromium_context(profile: Path, javascript=True):
    """Debian's Chromium driven by Playwright (its pip package's driver; it downloads no
    browser), with an empty profile; every request off loopback is refused and recorded."""
    from ..conftest import require
    try:
        from playwright.sync_api import expect as playwright_expect
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright (pip package, in the test extras)")
    executable = chromium()
    playwright_expect.set_options(timeout=PATIENCE_MS)
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 1000}, java_script_enabled=javascript)
        context.set_default_timeout(PATIENCE_MS)
        context.set_default_navigation_timeout(PATIENCE_MS)
        outside: list[str] = []

        def route(r):
            if r.request.url.startswith("http://127.0.0.1:"):
                return r.continue_()
            outside.append(r.request.url)
            return r.abort()
        context.route("**/*", route)
        try:
            yield context, outside
        finally:
            context.close()


def expect_shown(page, count: int) -> None:
    """Wait until the filters show `count` rows of the operator table."""
    expect(page.locator(SHOWN)).to_have_count(count)


def shown_ops(page) -> list[str]:
    """The operators whose rows are shown; call once the page has settled (expect_shown)."""
    return page.locator(SHOWN).evaluate_all("rows => rows.map(r => r.dataset.op)")


def resize(page, width: int, height: int = 1000) -> None:
    """Set the viewport and wait until the page has rendered two frames at that size, so
    that what the page's scripts do on a resize (resize observers, media queries) is done
    before its layout is measured."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function("w => window.innerWidth === w", arg=width)
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => "
                  "requestAnimationFrame(() => done(true))))")

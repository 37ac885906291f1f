"""The committed page, the docs build, and the page in a real browser."""

import functools
import json
import re
from pathlib import Path

import pytest

from opsweep.cli.main import main

from .browser import chromium_context, expect, expect_shown, resize, without_search_index

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
ARTIFACT = ROOT / "docs" / "onnx_support_measured.json"
PAGE = ROOT / "docs" / "supported_operators.md"
DETAILS = ROOT / "docs" / "operators"  # one page per operator, and an index
SOURCES = ROOT / "docs" / "specs"  # one page per file of specs, and an index
DTYPES = ROOT / "docs" / "dtypes.md"
MIGRATING = ROOT / "docs" / "migrating.md"
MODELS = ROOT / "docs" / "models.md"
MODELS_RECORD = ROOT / "docs" / "models_checked.json"
SHOTS = ROOT / "test-artifacts"


def render(out, *extra):
    assert main(["render", "--onnx-report", str(ARTIFACT), "--out", str(out),
                 "--documented", str(ROOT / "docs/data/documented.json"),
                 "--data-dir", str(ROOT / "docs/data"), "--history", str(ROOT / "docs/history"),
                 *extra]) == 0
    return out.read_text("utf-8")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, drawn_once):
    """The committed artifact rendered once for the module (a render draws every failing
    spec's examples again for its snippets: served from the run's one drawing of the
    catalog, tests/conftest.py)."""
    out = tmp_path_factory.mktemp("rendered")
    render(out / "supported_operators.md")
    return out


@pytest.fixture(scope="module")
def configured(tmp_path_factory, drawn_once):
    """The same render under a configuration that sets the repository and the spec source
    URL, once for the tests of both settings."""
    out = tmp_path_factory.mktemp("configured")
    pyproject = out / "pyproject.toml"
    pyproject.write_text('[tool.opsweep]\nrepo-url = "https://example.test/o/r"\n'
                         'source-url = "https://example.test/o/r/blob/main"\n')
    render(out / "supported_operators.md", "--pyproject", str(pyproject))
    return out


def test_committed_page_is_the_render_of_the_committed_artifact(rendered):
    tmp_path = rendered
    assert (tmp_path / "supported_operators.md").read_text("utf-8") == PAGE.read_text("utf-8"), (
        "docs/supported_operators.md is stale: run "
        "`opsweep render --onnx-report docs/onnx_support_measured.json`")
    for directory in (DETAILS, SOURCES):  # the same pages, none missing and none stale
        assert pages(tmp_path / directory.name) == pages(directory), (
            f"docs/{directory.name}/ is stale: run "
            "`opsweep render --onnx-report docs/onnx_support_measured.json`")
    assert (tmp_path / "dtypes.md").read_text("utf-8") == DTYPES.read_text("utf-8"), (
        "docs/dtypes.md is stale: run `opsweep render --onnx-report docs/onnx_support_measured.json`")
    assert not (ROOT / "docs" / "operators.md").exists() and not (ROOT / "docs" / "specs.md").exists()
    assert (tmp_path / "migrating.md").read_text("utf-8") == MIGRATING.read_text("utf-8"), (
        "docs/migrating.md is stale: run `opsweep render --onnx-report docs/onnx_support_measured.json`")
    if MODELS_RECORD.exists():  # the models page: rendered from the committed models record
        assert (tmp_path / "models.md").read_text("utf-8") == MODELS.read_text("utf-8"), (
            "docs/models.md is stale: run `opsweep render --onnx-report docs/onnx_support_measured.json`")
    else:
        assert not (tmp_path / "models.md").exists() and not MODELS.exists()


def pages(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.md"))}


def test_committed_history_holds_the_committed_artifact_and_its_view_is_current(tmp_path):
    from opsweep.artifact import data as art
    from opsweep.artifact import records as history
    from opsweep.page.history import render as render_history
    records = history.load_all(ROOT / "docs" / "history")
    measured = art.load(ARTIFACT)
    mine = [r for r in records if r.torch == measured.fingerprint.torch]
    assert mine and mine[0] == history.record(measured, mine[0].generated_at), (
        "docs/history has no record of the committed artifact: run `opsweep history record`")
    assert render_history(records) == (ROOT / "docs" / "history.md").read_text("utf-8"), (
        "docs/history.md is stale: run `opsweep history render`")


def test_the_committed_artifact_was_measured_by_this_commit_s_catalog_and_drawing():
    """The README's main command reuses every spec of the committed artifact at the
    committed pins (bar the rotating tenth): a spec is reused only while its digest (its
    module and the code that draws examples, sweep.reuse.spec_digest) is the one the
    artifact recorded. A change to that code that did not re-measure the catalog left
    every spec stale, and the main command measured the whole catalog again (26:47
    instead of 4:20 here), unseen: re-measure in the change that moves a digest."""
    from opsweep.artifact import data as art
    from opsweep.catalog.load import load_catalog
    from opsweep.sweep.reuse import spec_digest
    catalog = load_catalog(check_draws=False)
    digests = {name: spec_digest(spec) for name, spec in catalog.specs.items()}
    measured = art.load(ARTIFACT)
    for target in measured.target_names:
        specs = measured.target(target).specs
        assert set(specs) == set(digests), (target, set(specs) ^ set(digests))
        stale = sorted(name for name, result in specs.items() if result.digest != digests[name])
        assert not stale, (f"{len(stale)} of {len(specs)} specs of target {target} were measured "
                           f"by another catalog or drawing ({', '.join(stale[:5])}, ...): run the "
                           "README's main command and commit what it writes")


def test_a_repro_snippet_on_the_operators_page_reproduces_its_failure():
    """The page's snippet is runnable as printed and fails where the page says."""
    import html

    import torch

    from opsweep.engine.adapter import quiet_exporter
    quiet_exporter()
    text = "".join(p.read_text("utf-8") for p in sorted(DETAILS.glob("*.md")))
    found = re.search(r"<summary>Reproduce no-translation: [^<]*</summary><pre[^>]*><code>(.*?)</code>",
                      text, re.DOTALL)
    assert found, "the operators page has a no-translation snippet"
    from opsweep.engine.adapter import classify_export_error
    from opsweep.model import Stage
    with pytest.raises(torch.onnx.errors.OnnxExporterError) as raised:
        exec(html.unescape(found.group(1)), {})  # noqa: S102 -- the page's snippet, as a reader runs it
    assert classify_export_error(raised.value) is Stage.NO_TRANSLATION


def test_rendering_is_byte_identical(rendered, configured):
    """A second render in the same process (the configured one: renders are costly) writes
    the same bytes as the module's first, but where the configuration
    links a spec's file and line to the repository. (The specs page and the home page,
    whose wording the configuration changes too, are the first render's, compared with
    the committed pages above.)"""
    for name in ("supported_operators.md", "migrating.md"):  # no repository link in them
        assert (configured / name).read_bytes() == (rendered / name).read_bytes(), name
    first, second = pages(rendered / "operators"), pages(configured / "operators")
    assert first.keys() == second.keys() and first != second
    assert all(_unlinked(second[n].decode()) == _unlinked(first[n].decode()) for n in first)


def _unlinked(page: str) -> str:
    """A page without the configured links: a linked file and line as the unconfigured
    page writes it, and no line naming the repository."""
    page = re.sub(r'<a href="https://example\.test[^"]*">([^<]*)</a>', r"<code>\1</code>", page)
    return "\n".join(line for line in page.splitlines() if "example.test" not in line)


def load_catalog_all():
    from opsweep.catalog.load import load_catalog
    catalog = load_catalog(check_draws=False)
    return {**catalog.specs, **{n: a.spec for n, a in catalog.absent.items()}}


def test_a_configured_source_url_links_each_spec_at_its_line(configured):
    """`[tool.opsweep] source-url` in the pyproject render reads: the operators page links
    the spec's file at its line, the spec sources page too."""
    tmp_path = configured
    relu = load_catalog_all()["relu"].origin.line
    link = f"https://example.test/o/r/blob/main/specs/activations.py#L{relu}"
    assert f'<a href="{link}">specs/activations.py:{relu}</a>' in \
        (tmp_path / "operators" / "relu.md").read_text("utf-8")
    assert f'<a href="{link}"><code>specs/activations.py</code>, line {relu}</a>' in \
        (tmp_path / "specs" / "activations.md").read_text("utf-8")
    committed = b"".join([*pages(DETAILS).values(), *pages(SOURCES).values()])
    assert b"example.test" not in committed


def test_fallback_without_a_report(tmp_path):
    out = tmp_path / "page.md"
    assert main(["render", "--out", str(out), "--documented", str(ROOT / "docs/data/documented.json"),
                 "--data-dir", str(ROOT / "docs/data")]) == 0
    assert "No measurement report was given" in out.read_text("utf-8")


def test_docs_build_strict(site):
    html = (site / "supported_operators" / "index.html").read_text("utf-8")
    assert html.count('class="progress ') + html.count('class="progress"') >= 2
    assert (site / "refreshing" / "index.html").exists()
    assert "History across torch versions" in (site / "history" / "index.html").read_text("utf-8")
    sources = "".join(p.read_text("utf-8") for p in (site / "specs").glob("*/index.html"))
    assert sources.count('<section class="opsweep-spec"') == len(load_catalog_all())
    relu = (site / "operators" / "relu" / "index.html").read_text("utf-8")
    assert 'href="../../specs/activations/#spec-relu"' in relu
    assert '<h1 id="op-relu"><code>relu</code>' in relu  # a markdown heading: a search entry


AXES = ("export", "runtime", "numerics", "dynamic")
LETTERS = {"full": "f", "partial": "p", "none": "n", "blocked": "b", "skipped": "s", "n/a": "-",
           "unmeasured": ""}


@functools.lru_cache(maxsize=1)
def expected_counts():
    """From the artifact, the listing and the history, independently of the page."""
    from opsweep.artifact import data as art
    from opsweep.artifact import records as history
    from opsweep.catalog.load import load_catalog
    from opsweep.artifact.records import CODES
    from opsweep.catalog.listing import installed_listing
    measured = art.load(ARTIFACT)
    excluded = load_catalog(check_draws=False).excluded
    rows = [n for n in installed_listing().rows if n not in excluded]
    def letters(view, op):
        result = view.operators.get(op)
        return "".join(CODES[getattr(result.grades, a)] for a in AXES) if result else ""
    codes = {t: {op: letters(measured.target(t), op) for op in rows} for t in measured.target_names}
    records = history.load_all(ROOT / "docs" / "history")
    old, new = records[-2], records[-1]
    # a grade moved because other specs measured it at each end is measured anew, not a
    # change across the bump (the one rule, records.same_specs)
    changed = {t: {op for op in rows
                   if old.targets.get(t, {}).get(op) != new.targets.get(t, {}).get(op)
                   and (op not in old.targets.get(t, {}) or op not in new.targets.get(t, {})
                        or history.same_specs(old, new, op))}
               if t in old.targets and t in new.targets else set() for t in codes}
    bf16 = {op for op in rows if op in measured.operators and any(
        g.dtype == "bfloat16" and g.stage.value != "invalid" for g in measured.operators[op].failures)}
    core = {op for op in rows if installed_listing().rows[op].core}
    return rows, codes, changed, bf16, core


def expect_label(page, axis, label, count, why):
    """Wait until the button of grade `label` on `axis` counts `count` rows."""
    button = page.locator(f"button[data-axis={axis}][data-value='{label}']")
    expect(button, f"{why}: {axis} {label}").to_have_text(re.compile(rf".*\({count}\)$"))


def choose(page, selector):
    """Click a filter button and wait until the page has applied it (pressed, so the rows
    and every count were updated in the same handler)."""
    button = page.locator(selector).first
    button.click()
    expect(button).to_have_attribute("aria-pressed", "true")


def fits_without_scrolling(page, what):
    """No horizontal scroll at 1400 and 1024 px; the viewport is left at 1400 px."""
    for width in (1400, 1024):
        resize(page, width)
        assert page.evaluate("document.documentElement.scrollWidth <= "
                             "document.documentElement.clientWidth"), f"{what} at {width} px"
    resize(page, 1400)


def check_fits(page, width):
    """No horizontal scroll of the page; the table's scroll box inside the content column,
    its last column reachable by scrolling the box; one line per row and per operator name."""
    resize(page, width)
    fit = page.evaluate("""() => {
      const d = document.documentElement, t = document.getElementById('opsweep-ops');
      const box = t.closest('.opsweep-scroll');
      const column = document.querySelector('.md-content__inner').getBoundingClientRect();
      box.scrollLeft = box.scrollWidth;
      const last = t.tHead.rows[0].lastElementChild.getBoundingClientRect();
      const reach = last.right - box.getBoundingClientRect().right;
      box.scrollLeft = 0;
      const heights = [...t.tBodies[0].rows].map(r => r.getBoundingClientRect().height);
      const broken = [...t.querySelectorAll('td:first-child a')]
        .filter(c => c.getClientRects().length > 1);
      return {scroll: d.scrollWidth - d.clientWidth, over: box.getBoundingClientRect().right - column.right,
              reach: reach,
              tallest: Math.max(...heights), lowest: Math.min(...heights), broken: broken.length};
    }""")
    assert fit["scroll"] <= 0, f"the page scrolls horizontally at {width} px: {fit}"
    assert fit["over"] <= 0, f"the operator table's box is wider than the content column at {width} px"
    assert fit["reach"] <= 1, f"the last column cannot be reached at {width} px: {fit}"
    assert fit["broken"] == 0 and fit["tallest"] < 1.5 * fit["lowest"], fit


def test_page_in_a_real_browser(site, served, tmp_path):
    with chromium_context(tmp_path / "profile") as (context, outside):
        drive(context, outside, served, site)


def drive(context, outside, served, site):
    rows, codes, changed, bf16, core = expected_counts()
    page = context.new_page()
    without_search_index(page, site)  # the table's own filters search, not the site's search
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{served}/supported_operators/")
    expect(page.locator("div.progress").nth(1)).to_be_attached()  # both headline bars render
    # the filters are set up (their status says how many rows they show): all of them
    expect(page.locator("#opsweep-filters .status")).to_have_text(
        f"{len(rows)} of {len(rows)} operators shown")
    expect_shown(page, len(rows))
    SHOTS.mkdir(exist_ok=True)
    for width in (1400, 1024, 390):
        check_fits(page, width)
        page.screenshot(path=SHOTS / f"supported_operators-{width}.png")
    resize(page, 1400)
    check_grade_filters(page, rows, codes, changed)
    for facet, value, want in (("changed", "", changed["stock"]), ("core", "", core),
                               ("dtype", "bfloat16", bf16)):
        selector = f"button[data-facet={facet}]" + (f"[data-value={value}]" if value else "")
        if not want:  # nothing to show (every moved grade measured anew): the button is off
            expect(page.locator(selector)).to_be_disabled()
            continue
        choose(page, selector)
        expect_shown(page, len(want))
        page.locator(f"button[data-facet={facet}]").first.click()  # off again / any dtype
        expect_shown(page, len(rows))
    page.fill("input[data-facet=q]", "avg_pool")
    pools = [op for op in rows if "avg_pool" in op]
    assert pools
    expect_shown(page, len(pools))
    full = sum(codes["stock"][op].startswith("f") for op in pools)  # counts follow the search
    expect_label(page, "export", "full", full, "the search")
    page.locator("#opsweep-filters").screenshot(path=SHOTS / "supported_operators-filters.png")
    check_detail(page, next(op for op in pools if codes["stock"][op]
                            and not codes["stock"][op].startswith("f")))
    page.goto(f"{served}/operators/#op-{pools[0]}")  # a link of the older, one-page layout
    page.wait_for_url(f"**/operators/{pools[0]}/")  # goes on to the operator's own page
    page.goto(f"{served}/history/")
    expect(page.locator("svg.opsweep-chart circle").nth(3)).to_be_attached()  # four at least
    page.locator("svg.opsweep-chart").screenshot(path=SHOTS / "history-chart.png")
    assert not errors and not outside, (errors, outside)


def check_grade_filters(page, rows, codes, changed):
    """Every grade filter of the stock exporter, and the export filters of each table;
    the grade and changed cells follow the chosen target."""
    status = page.locator("#opsweep-filters .status")
    for t, target in enumerate(codes):
        if t:
            page.select_option("select[data-facet=target]", str(t))
            expect(status).to_have_text(f"{len(rows)} of {len(rows)} operators shown "
                                        f"(grades with {target})")
        marks = page.locator("#opsweep-ops td.chg", has_text="\u2195")
        expect(marks).to_have_count(len(changed[target]))
        for i, axis in enumerate(AXES if t == 0 else AXES[:1]):
            for label, letter in LETTERS.items():
                want = sum(1 for op in rows if codes[target][op][i:i + 1] == letter
                           and bool(codes[target][op]) == bool(letter))
                expect_label(page, axis, label, want, target)
                if want:  # choosing another grade on the same axis replaces the choice
                    choose(page, f"button[data-axis={axis}][data-value='{label}']")
                    expect_shown(page, want)
            choose(page, f"button[data-facet={axis}]")  # back to all
            expect_shown(page, len(rows))
    if len(codes) > 1:
        page.select_option("select[data-facet=target]", "0")
        expect(status).to_have_text(f"{len(rows)} of {len(rows)} operators shown")


def check_detail(page, op):
    """The operator's name opens its own page, with its failures."""
    from opsweep.artifact import data as art
    page.click(f"#opsweep-ops a[href$='/operators/{op}/']")
    page.wait_for_url(f"**/operators/{op}/")
    section = page.locator("article")
    expect(page.locator(f"h1#op-{op}")).to_be_visible()
    text = section.inner_text()
    assert all(g.error in text for g in art.load(ARTIFACT).operators[op].failures)
    # the first snippet is open (a further target's grid, in a fold above them, is not)
    expect(section.locator("details.opsweep-repro").first).to_have_attribute("open", "")
    code = section.locator("pre").first.inner_text()  # self-contained: no opsweep import
    assert "torch.onnx.export(module, " in code and "import opsweep" not in code \
        and "from opsweep" not in code
    names = page.evaluate("[...document.querySelectorAll('article h1 code, "
                          "table.opsweep-groups td.spec code')].filter(c => c.getClientRects()"
                          ".length > 1).map(c => c.textContent)")
    assert not names, f"names broken inside a word on the operator's page: {names[:5]}"
    fits_without_scrolling(page, "operator's page")
    page.screenshot(path=SHOTS / "operator-detail.png")
    check_spec_source(page, section, op)


def check_spec_source(page, section, op):
    """The operator's first spec links to its section on its file's spec sources page: the
    file and line it is defined at, and its statement's source, visible."""
    from opsweep.page.definitions import definition
    spec = load_catalog_all()[section.locator("a.spec").first.inner_text()]
    assert op in spec.aten_ops
    section.locator("a.spec").first.click()
    page.wait_for_url(f"**/specs/{spec.family}/#spec-{spec.name}")
    heading = page.locator(f"#spec-{spec.name}")
    expect(heading).to_be_in_viewport()  # scrolled to it
    assert 0 <= heading.bounding_box()["y"] < 1000, heading.bounding_box()
    target = page.locator(f"#spec-{spec.name} + section.opsweep-spec")
    expect(target).to_contain_text(f"specs/{spec.family}.py, line {spec.origin.line}")
    code = target.locator("pre").first
    expect(code).to_be_visible()
    assert code.inner_text().strip() == definition(spec.origin).code
    fits_without_scrolling(page, "spec sources page")
    page.evaluate(f"document.getElementById('spec-{spec.name}').scrollIntoView()")
    page.screenshot(path=SHOTS / "spec-source.png")


def test_page_without_javascript_is_complete(served, tmp_path):
    with chromium_context(tmp_path / "profile", javascript=False) as (context, _):
        page = context.new_page()
        page.goto(f"{served}/supported_operators/")
        expect_shown(page, len(expected_counts()[0]))
        assert page.locator("#opsweep-filters").inner_html() == ""


def test_the_readme_python_runs_as_written(monkeypatch):
    """The README's Python block, run against the committed artifact from the checkout."""
    import re
    monkeypatch.chdir(ROOT)
    readme = (ROOT / "README.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "the README shows how to use opsweep from Python"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102 -- our own README


def _check_example():
    import importlib.util
    spec = importlib.util.spec_from_file_location("check_example", ROOT / "scripts" / "check_example.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def test_the_check_pages_sample_report_is_the_real_commands_output():
    """docs/check.md's sample report is `opsweep check` on the page's own Hugging Face
    recipe, run from an empty directory as a newcomer runs it (scripts/check_example.py):
    the same words and table rules in the same order, numbers aside (errors vary by
    machine)."""
    pytest.importorskip("transformers")
    example = _check_example()
    page = (ROOT / "docs" / "check.md").read_text("utf-8")
    documented = example.sample(page)
    assert "Your model exports, runs and matches PyTorch" in documented
    assert example.structure(documented) == example.structure(example.output(page)), (
        "docs/check.md's sample report is stale: run `python scripts/check_example.py`")


def test_the_check_pages_torchvision_recipe_checks_as_written(tmp_path):
    """The page's torchvision recipe, written to a file in an empty directory and checked
    with the command the page gives (torchvision is in the test extras, for the public
    model set: skipped without it)."""
    pytest.importorskip("torchvision")
    example = _check_example()
    page = (ROOT / "docs" / "check.md").read_text("utf-8")
    (tmp_path / "vision_models.py").write_text(example.recipe(page, "vision_models.py"))
    command = re.search(r"^opsweep (check vision_models\.py:.*)$", page, re.M).group(1).split()
    done = example.run(tmp_path, [*command, "--json"])
    assert done.returncode == 0, done.stderr
    models = json.loads(done.stdout)["models"]
    assert [m["name"] for m in models] == ["resnet18", "resnet18 dynamic batch"]
    assert models[1]["verdict"]["dynamic"] == "pass"


def test_the_home_page_gives_the_headline_numbers_and_the_configured_repository(configured,
                                                                                tmp_path):
    """`[tool.opsweep] repo-url`, configured once, is where the home page installs from and
    links; without it the home page says to install from a checkout."""
    from opsweep.artifact import data as art
    pyproject = tmp_path / "pyproject.toml"
    home = (configured / "index.md").read_text("utf-8")
    assert 'pip install "opsweep @ git+https://example.test/o/r"' in home
    assert "[https://example.test/o/r](https://example.test/o/r)" in home
    full = sum(r.grades.export.value == "full" for r in art.load(ARTIFACT).operators.values())
    assert f"**full aten listing**: {full} of " in home
    committed = (ROOT / "docs" / "index.md").read_text("utf-8")
    assert "example.test" not in committed and "pip install ." in committed
    pyproject.write_text('[tool.opsweep]\nrepo-url = "not a url"\n')
    assert main(["render", "--onnx-report", str(ARTIFACT), "--out", str(tmp_path / "x.md"),
                 "--pyproject", str(pyproject)]) != 0

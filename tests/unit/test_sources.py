"""The spec sources page: one section per spec, grouped by file, with its statement's source."""

import html
import importlib
import re
from pathlib import Path

import pytest

from opsweep.page import sources
from opsweep.catalog.load import load_catalog

ROOT = Path(__file__).resolve().parents[2]
URL = "https://example.test/repo/blob/main"
USER = '''
from dataclasses import replace

from opsweep.catalog.families import gap, unary
from opsweep.model import Stage, Tolerance

TOL = {"float16": Tolerance(0.05, 0.01)}

SPECS = [
    replace(unary("sinh", dtypes=("float32", "float16"), max_rank=2, batch=(0,), tolerances=TOL,
                  gap=gap("a <b> & 'c'", Stage.NUMERICS)), name="u_sinh"),
]
'''


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    directory = tmp_path_factory.mktemp("user") / "user_specs"
    directory.mkdir()
    (directory / "mine.py").write_text(USER, encoding="utf-8")
    return load_catalog([directory], check_draws=False)


@pytest.fixture(scope="module")
def page(catalog):
    return sources.build(catalog, {"relu", "prelu", "sinh"}, URL, "2.15.0")


def sections(page):
    return {s.name: s for f in page.files for s in f.sections}


def line_of(path, needle):
    hits = [i for i, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1) if needle in line]
    assert len(hits) == 1
    return hits[0]


def test_a_section_holds_the_declaration_and_the_source(page):
    prelu = sections(page)["prelu"]
    line = line_of(importlib.import_module("opsweep.specs.activations").__file__, 'spec("prelu"')
    assert (prelu.anchor, prelu.where.path, prelu.where.line) == ("spec-prelu", "specs/activations.py", line)
    assert prelu.url == f"{URL}/specs/activations.py#L{line}"
    assert prelu.ops == (("prelu", True),)
    assert (prelu.dtypes, prelu.ranks) == (("float32", "float16", "bfloat16", "float64"), "1 to 4")
    assert prelu.batch.startswith("per example") and prelu.tolerances == () and prelu.gap == ""
    assert prelu.definition.code == 'spec("prelu", examples(_prelu), fn=F.prelu, ranks=(1, 4))'
    assert [name for name, _ in prelu.definition.helpers] == ["_prelu"]


def test_a_specs_directory_section_states_what_it_declares_and_links_nowhere(page):
    mine = sections(page)["u_sinh"]
    assert mine.where.path == "user_specs/mine.py" and not mine.where.builtin
    assert mine.url == ""  # not a file of the repository
    assert mine.ops == (("sinh", True),)
    assert mine.batch == "leading dimension of tensor input 0"
    assert mine.tolerances == ("float16 rtol 0.05, atol 0.01",)
    assert mine.gap == "numerics: a <b> & 'c'"
    assert mine.definition.code.startswith('replace(unary("sinh", dtypes=')
    assert mine.definition.code.endswith('name="u_sinh")')
    assert mine.definition.helpers == (("TOL", 'TOL = {"float16": Tolerance(0.05, 0.01)}'),)


def test_sections_are_grouped_by_file_in_source_order(page, catalog):
    paths = [f.path for f in page.files]
    assert paths[-1] == "user_specs/mine.py"  # the built-in catalog first
    assert paths[:-1] == sorted(paths[:-1]) and all(p.startswith("specs/") for p in paths[:-1])
    for f in page.files:
        lines = [s.where.line for s in f.sections]
        assert lines == sorted(lines), f.path
    assert page.count == len(catalog.specs) + len(catalog.absent)


def test_the_page_renders_an_anchored_section_per_spec(page):
    pages = sources.render(page)
    assert set(pages) == {"index.md", *(f"{f.page}.md" for f in page.files)}  # a page per file
    assert "[`specs/activations.py`](activations.md)" in pages["index.md"]
    assert "[`prelu`](activations.md#spec-prelu)" in pages["index.md"]
    text = "".join(pages[f"{f.page}.md"] for f in page.files)
    assert text.count('<section class="opsweep-spec">') == page.count
    text = pages["activations.md"]
    assert text.startswith("# `specs/activations.py`\n")
    prelu = text.index("## `prelu` { #spec-prelu }\n")
    section = text[prelu:text.index("</section>", prelu)]
    line = sections(page)["prelu"].where.line
    link = f'<a href="{URL}/specs/activations.py#L{line}">'
    assert f"{link}<code>specs/activations.py</code>, line {line}</a>" in section
    assert '<a href="../../operators/prelu/"><code>prelu</code></a>' in section
    assert '<pre><code class="language-python">spec("prelu", examples(_prelu), fn=F.prelu, ' \
        'ranks=(1, 4))</code></pre>' in section
    code = re.search(r"<summary>Module-level code it names: <code>_prelu</code></summary>"
                     r'<pre><code class="language-python">(.*?)</code></pre>', section, re.DOTALL)
    assert html.unescape(code.group(1)).startswith("def _prelu(draw):\n")
    bodies = re.findall(r"<section .*?</section>", "".join(pages.values()), re.DOTALL)
    assert len(bodies) == page.count and not [b for b in bodies if "\n\n" in b]  # raw HTML holds


def test_markup_in_the_source_and_the_notes_is_escaped(page):
    text = sources.render(page)["user_specs-mine.md"]
    mine = text[text.index('{ #spec-u_sinh }'):]
    mine = mine[:mine.index("</section>")]
    assert "known gap: numerics: a &lt;b&gt; &amp; &#39;c&#39;" in mine
    assert "dtypes float32, float16 · ranks 0 to 2" in mine
    assert "numerics: float16 rtol 0.05, atol 0.01" in mine
    assert '<a href="../../operators/sinh/">' in mine
    assert "<code>user_specs/mine.py</code>, line" in mine


def test_the_page_is_byte_identical_and_names_no_absolute_path(catalog, page, tmp_path_factory):
    again = sources.render(sources.build(catalog, {"relu", "prelu", "sinh"}, URL, "2.15.0"))
    assert again == sources.render(page)
    text = "".join(again.values())
    installed = str(Path(sources.__file__).resolve().parents[2])  # a checkout's src/, or site-packages
    assert str(ROOT) not in text and installed not in text
    assert str(tmp_path_factory.getbasetemp()) not in text


def test_without_a_source_url_files_are_plain_paths(catalog):
    page = sources.build(catalog, set(), "")
    prelu = sections(page)["prelu"]
    assert prelu.url == "" and prelu.ops == (("prelu", False),)
    text = "".join(sources.render(page).values())
    section = text[text.index('{ #spec-prelu }'):]
    assert section.startswith('{ #spec-prelu }\n\n<section class="opsweep-spec">\n'
                              '<p><code>specs/activations.py</code>, line')
    assert "measures <code>prelu</code><br>" in section and "example.test" not in text

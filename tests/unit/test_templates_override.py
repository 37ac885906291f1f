"""[tool.opsweep] templates: a project's template directory comes before opsweep's own,
for the support page and the history view, through the layout every command uses."""

import pytest

from opsweep import config
from opsweep.artifact import data as art
from opsweep.artifact import records
from opsweep.catalog.installed import Installed
from opsweep.catalog.load import load_catalog
from opsweep.errors import UsageError
from opsweep.files import Layout
from opsweep.model import Stage
from opsweep.page import site

from ..factories import DOCUMENTED, FP, LINKS, LISTING, result


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.opsweep]\npages-dir = "site"\nhistory-dir = "site/history"\n'
        'templates = "site/templates"\n')
    (tmp_path / "site" / "templates").mkdir(parents=True)
    (tmp_path / "site" / "data").mkdir()
    (tmp_path / "site" / "data" / "documented.json").write_text("{}")
    return tmp_path


def artifact():
    return art.make_artifact(FP, "ci", 25, 0, {"sin": result(["sin"], Stage.OK, Stage.OK),
                                               "cos": result(["cos"], Stage.NO_TRANSLATION)},
                             )


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(check_draws=False)


def render(project, catalog):
    layout = Layout.of(config.load(project / "pyproject.toml")).under(project)
    installed = Installed("2.13.0", LISTING, frozenset({"sin", "cos"}), LINKS)
    site.render(layout, artifact(), catalog, installed, documented_path=None)
    return layout


def test_an_override_changes_the_page_and_the_rest_stays_opsweep_s(project, catalog, monkeypatch):
    monkeypatch.setattr(site.documented, "load", lambda path: DOCUMENTED)
    layout = render(project, catalog)
    stock = (project / "site" / "supported_operators.md").read_text()
    (project / "site" / "templates" / "supported_operators.md.j2").write_text(
        "# Our exporter tab\n{% for row in page.rows if row.export != '' %}"
        "| {{ row.name }} | {{ row.export }} |\n{% endfor %}")
    render(project, catalog)
    page = (project / "site" / "supported_operators.md").read_text()
    assert page != stock and page.startswith("# Our exporter tab\n")
    assert '| sin | <b class="g-f">full</b> |' in page  # the measured column, in its own page
    details = (project / "site" / "operators" / "sin.md").read_text()
    assert "Our exporter tab" not in details and "sin" in details  # not overridden: opsweep's
    records.write(artifact(), layout.history_dir)
    (project / "site" / "templates" / "history.md.j2").write_text(
        "{{ records | length }} pin sets measured\n")
    site.render_history_page(layout)
    assert (project / "site" / "history.md").read_text() == "1 pin sets measured\n"


def test_a_missing_or_broken_template_directory_is_one_line(project, catalog, monkeypatch):
    monkeypatch.setattr(site.documented, "load", lambda path: DOCUMENTED)
    (project / "site" / "templates" / "supported_operators.md.j2").write_text("{% for %}")
    with pytest.raises(UsageError, match=r"^\[tool.opsweep\] templates: .*supported_operators"
                                         r"\.md\.j2:1: "):
        render(project, catalog)
    (project / "site" / "templates" / "supported_operators.md.j2").write_text("{{ nope.x }}")
    with pytest.raises(UsageError, match="a template uses a name the page does not give it"):
        render(project, catalog)
    (project / "site" / "templates" / "supported_operators.md.j2").unlink()
    (project / "site" / "templates").rmdir()
    with pytest.raises(UsageError, match="site/templates: not a directory of page templates"):
        render(project, catalog)


def test_a_template_directory_outside_the_repository_is_refused(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.opsweep]\ntemplates = "../theirs"\n')
    with pytest.raises(UsageError, match=r"templates: '\.\./theirs' points outside the repository"):
        config.load(tmp_path / "pyproject.toml")

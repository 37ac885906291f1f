"""The pages' snippets take the sweep's draws from the export cache instead of drawing the
whole catalog again (most of a render's time): the same scripts, no draw on a hit, and no
cache created by a render."""

import pytest

from opsweep.artifact import data as art
from opsweep.catalog.load import load_catalog
from opsweep.cli.main import main
from opsweep.cli.assemble import page_draws
from opsweep.engine import standalone
from opsweep.engine.standalone import Scripts
from opsweep.sweep import driver

pytestmark = pytest.mark.integration

SPECS = ["sin", "cumsum"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory, outside_project):
    """The stock target alone (outside the project, whose torchscript and opset targets
    no test here looks at): its draws fill the cache the pages read."""
    root = tmp_path_factory.mktemp("draws")
    out, cache = root / "a.json", root / "cache"
    assert main(["sweep", "--only", *SPECS, "--jobs", "0", "--quiet", "--no-reuse",
                 "--no-dynamic", "--cache", str(cache), "--out", str(out)]) == 0
    return art.load(out), cache


def _scripts(scripts, artifact):
    return {(name, g.example): scripts.for_example(name, g.example, False, "", "t")
            for name in SPECS for g in artifact.specs[name].failures} | {
        (name, sig): scripts.for_example(name, sig, False, "", "t")
        for name in SPECS for sig in _signatures(scripts, name)}


def _signatures(scripts, name):
    return sorted({e.signature for e in scripts._draws.get(name, [])})[:3]


def test_snippets_from_the_cached_draws_are_those_drawn_anew(swept, monkeypatch):
    artifact, cache = swept
    catalog = load_catalog(check_draws=False)
    anew = Scripts(catalog, "ci")
    for name in SPECS:  # fill each spec's draws
        anew.for_example(name, "", False, "", "")
    expected = _scripts(anew, artifact)
    assert any(v is not None for v in expected.values())

    def no_draw(*a, **k):
        raise AssertionError("drawn again: the cache's draws were not used")
    monkeypatch.setattr(driver, "draw_with_cells", no_draw)
    monkeypatch.setattr(standalone, "draw_examples", no_draw)
    cached = Scripts(catalog, "ci", page_draws(cache))
    for name in SPECS:
        cached.for_example(name, "", False, "", "")
    assert cached._draws == anew._draws
    assert _scripts(cached, artifact) == expected


def test_a_render_without_a_cache_draws_anew_and_creates_none(tmp_path):
    assert page_draws(None) is None
    missing = tmp_path / "none"
    assert page_draws(missing) is None and not missing.exists()

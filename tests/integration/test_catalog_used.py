"""`[tool.opsweep] catalog = "used"`: opsweep's built-in catalog restricted to the operators
the project's models use, as `opsweep check` captures them (real torch, the fixture
adopter's model); an operator the project's own specs measure stays theirs alone."""

import json
from pathlib import Path

from opsweep import config
from opsweep.catalog.load import load_catalog
from opsweep.capture.scope import used_operators
from opsweep.cli.main import main
from opsweep.cli.settings import builtin_scope

ADOPTER = Path(__file__).resolve().parents[1] / "github" / "adopter"
MODEL = f"{ADOPTER / 'demo_lib' / 'models.py'}:build"


def test_the_model_s_operators_restrict_the_built_in_catalog():
    ops = used_operators((MODEL,))
    assert ops == {"sin", "cos", "add", "relu"}
    whole = load_catalog(check_draws=False)
    used = load_catalog(check_draws=False, builtin=ops)
    assert set(used.specs) == {n for n, s in whole.specs.items() if set(s.aten_ops) & ops}
    assert {"add", "relu", "sin", "cos"} <= set(used.specs) and len(used.specs) < len(whole.specs) / 20
    assert all(op in ops for op in used.excluded)
    # the project's own sin and cos: the built-in ones step aside (no duplicate spec)
    theirs = load_catalog([ADOPTER / "demo_specs"], check_draws=False, builtin=ops)
    assert {n: s.family for n, s in theirs.specs.items() if n in ("sin", "cos")} == {
        "sin": "ops", "cos": "ops"}
    assert load_catalog(check_draws=False, builtin=frozenset()).specs == {}


def test_init_and_the_configuration_say_used(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("torch==2.12.0\n")
    assert main(["init", "--repo-dir", str(tmp_path), "--catalog", "used"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and '[tool.opsweep] catalog: "used" measures' in err
    assert not (tmp_path / ".github").exists()
    assert main(["init", "--repo-dir", str(tmp_path), "--catalog", "used",
                 "--models", "pkg.models:build", "--action-sha", "a" * 40]) == 0
    loaded = config.load(tmp_path / "pyproject.toml")
    assert (loaded.catalog, loaded.models, loaded.builtin) == ("used", ("pkg.models:build",), False)
    assert builtin_scope(tmp_path, config.Config()) is True
    assert builtin_scope(tmp_path, config.Config(catalog="none")) is False


def test_a_model_that_cannot_be_captured_is_named_and_adds_nothing(tmp_path, capsys):
    """Data-dependent control flow: eager PyTorch runs it, torch.export cannot capture it."""
    (tmp_path / "m.py").write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.relu(x) if float(x.sum()) > 0 else x\n"
        "def build():\n"
        "    return {'model': M(), 'inputs': (torch.ones(2),)}\n")
    source = f"{tmp_path / 'm.py'}:build"
    assert used_operators((source,)) == frozenset()
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("opsweep:")]
    assert line.startswith(f'opsweep: catalog "used": {source}: capture: ')
    assert line.endswith("its operators are not measured")


SIN_F32 = ('from opsweep.catalog.families import unary\n'
           'SPECS = [unary("sin", dtypes=("float32",), max_rank=0)]\n')


def _project(root: Path, catalog: str) -> None:
    (root / "my_specs").mkdir()
    (root / "my_specs" / "ops.py").write_text(SIN_F32)
    models = f'models = ["{MODEL}"]\n' if catalog == "used" else ""
    (root / "pyproject.toml").write_text(
        f'[tool.opsweep]\nversion = 1\ncatalog = "{catalog}"\nspecs = ["my_specs"]\n{models}')


def test_pooled_workers_load_the_catalog_the_project_configures(tmp_path, monkeypatch):
    """A worker loads the same catalog as the sweep that started it: with the built-in
    catalog off or restricted, the project's own `sin` is no duplicate of opsweep's."""
    for catalog, want in (("none", {"sin"}), ("used", {"sin", "cos", "add", "relu"})):
        root = tmp_path / catalog
        root.mkdir()
        _project(root, catalog)
        monkeypatch.chdir(root)
        out = root / "a.json"
        assert main(["sweep", "--jobs", "1", "--no-dynamic", "--quiet", "--no-cache",
                     "--only", *sorted(want), "--out", str(out)]) == 0, catalog
        measured = json.loads(out.read_text())
        assert "broken" not in measured and set(measured["specs"]) == want, catalog
        assert measured["specs"]["sin"]["family"] == "ops"  # the project's, not opsweep's

"""Where a spec is defined: the line recorded when it is built, the statement read back."""

import dataclasses
import importlib
import inspect
import textwrap
from pathlib import Path

import pytest

from opsweep.catalog.load import load_catalog
from opsweep.cli.main import main
from opsweep.errors import UsageError
from opsweep.model import OpSpec
from opsweep.cli.settings import source_url
from opsweep.page.definitions import definition, display_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(check_draws=False)


def only_line(path: Path, needle: str) -> int:
    """The one line of `path` holding `needle` (found by text, not by the code under test)."""
    hits = [i for i, line in enumerate(path.read_text("utf-8").splitlines(), 1) if needle in line]
    assert len(hits) == 1, (path, needle, hits)
    return hits[0]


@pytest.mark.parametrize("name, module, needle", [
    ("relu", "activations", 'activation("relu")'),
    ("prelu", "activations", 'spec("prelu"'),
    ("sin", "unary", 'unary("sin"'),
    ("special_airy_ai", "special", 'special("airy_ai"'),  # built by a helper of its module
    ("nansum", "reductions", 'with_nans(reduction("nansum"'),
    # wrapped by another module's helper, which replaces the spec: replace keeps the origin
    ("cummax", "reductions_scan", 'with_nans(reduction("cummax"'),
    ("lstm", "recurrent", 'rnn("lstm"'),
    ("window_hann", "creation", '_window_spec("hann_window")'),
])
def test_builtin_specs_point_at_the_statement_that_builds_them(catalog, name, module, needle):
    spec = catalog.specs[name]
    path = Path(importlib.import_module(f"opsweep.specs.{module}").__file__)  # a checkout or a wheel
    assert Path(spec.origin.path).resolve() == path.resolve()
    assert display_path(spec.origin.path) == f"specs/{module}.py"
    assert spec.origin.line == only_line(path, needle)
    code = definition(spec.origin).code
    assert code.startswith(needle) and code.split("\n")[0] in path.read_text("utf-8")


def test_every_builtin_spec_has_its_source(catalog):
    """Each spec's statement is found again; its text holds the spec's name, or the name
    its helper completes (special_ + "erf", "hann_window" -> window_hann)."""
    specs = [*catalog.specs.values(), *(a.spec for a in catalog.absent.values())]
    for spec in specs:
        found = definition(spec.origin)
        assert found.code and not found.note, spec.name
        stem = spec.name.removeprefix("special_").removeprefix("window_")
        assert stem in found.code, (spec.name, found.code)


USER = '''
from dataclasses import replace

from hypothesis import strategies as st
from opsweep.catalog.families import spec, unary
from opsweep.catalog.strategies import examples

LOW = -2.0


def _pair(draw):
    return (draw(st.just(1.0)),), {}


def clipped(name, **kw):
    """A helper of this module: the entry that calls it is what the page shows."""
    return replace(unary(name, min_value=LOW, **kw), name=f"c_{name}")


SPECS = [
    clipped("tanh",
            max_rank=2),
    replace(unary("sin"), name="u_sin"), replace(unary("cos"), name="u_cos"),
    spec("u_pair", examples(_pair), fn=lambda x: x + 1, aten=("add",)),
]
for _name in ("exp", "log"):
    SPECS.append(replace(unary(_name), name=f"u_{_name}"))
'''


@pytest.fixture
def user_catalog(spec_dir):
    (spec_dir / "mine.py").write_text(USER, encoding="utf-8")
    return load_catalog([spec_dir], check_draws=False)


def test_a_specs_directory_module_records_its_own_lines(user_catalog, spec_dir):
    path = spec_dir / "mine.py"
    specs = user_catalog.specs
    assert specs["c_tanh"].origin.line == only_line(path, 'clipped("tanh",')  # not the helper's line
    assert specs["u_sin"].origin.line == specs["u_cos"].origin.line == only_line(path, '"u_sin"')
    assert display_path(specs["c_tanh"].origin.path) == "user_specs/mine.py"  # no absolute path
    assert definition(specs["c_tanh"].origin).code == 'clipped("tanh",\n        max_rank=2)'
    # two entries on one line: the recorded columns tell them apart
    assert definition(specs["u_sin"].origin).code == 'replace(unary("sin"), name="u_sin")'
    assert definition(specs["u_cos"].origin).code == 'replace(unary("cos"), name="u_cos")'
    # built in a loop: the loop, which names what the entry alone does not
    assert definition(specs["u_exp"].origin).code == textwrap.dedent('''\
        for _name in ("exp", "log"):
            SPECS.append(replace(unary(_name), name=f"u_{_name}"))''')


def test_the_module_level_code_a_statement_names_comes_with_it(user_catalog):
    tanh = definition(user_catalog.specs["c_tanh"].origin)
    assert [name for name, _ in tanh.helpers] == ["LOW", "clipped"]  # in file order, transitively
    assert tanh.helpers[0][1] == "LOW = -2.0"
    assert tanh.helpers[1][1].startswith('def clipped(name, **kw):\n    """A helper')
    pair = definition(user_catalog.specs["u_pair"].origin)
    assert pair.code.startswith('spec("u_pair", examples(_pair)')
    assert [name for name, _ in pair.helpers] == ["_pair"]  # not SPECS, which holds the entry


def test_a_helper_is_its_source_as_written(catalog):
    module = importlib.import_module("opsweep.specs.activations")
    found = definition(catalog.specs["prelu"].origin)
    assert found.code == 'spec("prelu", examples(_prelu), fn=F.prelu, ranks=(1, 4))'
    assert found.helpers == (("_prelu", inspect.getsource(module._prelu).rstrip("\n")),)


def test_the_origin_is_kept_by_replace_and_is_no_part_of_equality(catalog):
    relu = catalog.specs["relu"]
    assert dataclasses.replace(relu, name="other").origin == relu.origin
    origin = next(f for f in dataclasses.fields(OpSpec) if f.name == "origin")
    assert origin.compare is False and origin.repr is False


def test_a_spec_built_in_a_test_points_at_the_test(catalog):
    spec = OpSpec("here", ("add",), catalog.specs["relu"].examples, fn=abs)
    assert spec.origin.path == str(Path(__file__).resolve())
    code = 'spec = OpSpec("here", ("add",), catalog.specs["relu"].examples, fn=abs)'
    assert definition(spec.origin).code == code


def test_a_changed_file_says_so_instead_of_showing_another_statement(user_catalog, spec_dir):
    origin = user_catalog.specs["u_pair"].origin
    (spec_dir / "mine.py").write_text("SPECS = []\n", encoding="utf-8")
    found = definition(origin)
    assert found.code == "" and f"no call at line {origin.line}" in found.note


def pyproject(tmp_path, body):
    path = tmp_path / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_the_source_url_comes_from_the_flag_then_pyproject(tmp_path):
    configured = pyproject(tmp_path, '[tool.opsweep]\nsource-url = "https://example.test/r/blob/main/"\n')
    assert source_url(None, configured) == "https://example.test/r/blob/main"
    assert source_url("http://other.test/x", configured) == "http://other.test/x"
    assert source_url("", configured) == ""  # --source-url '' turns it off
    assert source_url(None, pyproject(tmp_path, "[project]\nname = 'x'\n")) == ""  # unset
    assert source_url(None, tmp_path / "missing.toml") == ""
    assert source_url(None, ROOT / "pyproject.toml") == ""  # this project sets none


@pytest.mark.parametrize("value", ['"ftp://example.test/x"', '"example.test/x"', "3",
                                   '"https://example.test/a b"', '"https://"'])
def test_a_bad_source_url_setting_is_refused_naming_it(tmp_path, value):
    path = pyproject(tmp_path, f"[tool.opsweep]\nsource-url = {value}\n")
    with pytest.raises(UsageError, match=r"pyproject\.toml: \[tool\.opsweep\] source-url: "):
        source_url(None, path)


def test_render_refuses_a_bad_source_url_before_rendering(tmp_path, capsys):
    path = pyproject(tmp_path, '[tool.opsweep]\nsource-url = "file:///srv/repo"\n')
    assert main(["render", "--pyproject", str(path), "--out", str(tmp_path / "page.md")]) == 2
    err = capsys.readouterr().err
    assert "[tool.opsweep] source-url" in err and "'file:///srv/repo' is not an http(s) URL" in err
    assert main(["render", "--source-url", "nope", "--out", str(tmp_path / "page.md")]) == 2
    assert "--source-url: 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "page.md").exists()


def test_without_columns_the_outermost_call_on_the_line_is_found(user_catalog):
    """Python 3.10 frames give no columns: the line alone finds the entry."""
    exact = user_catalog.specs["c_tanh"].origin
    by_line = dataclasses.replace(exact, end_line=-1, col=-1, end_col=-1)
    assert definition(by_line) == definition(exact)


def test_a_spec_built_by_exec_records_no_origin(catalog):
    made = {}
    exec('made["x"] = OpSpec("x", ("add",), examples, fn=abs)',  # noqa: S102
         {"OpSpec": OpSpec, "examples": catalog.specs["relu"].examples, "made": made})
    assert made["x"].origin is None
    assert definition(None).note == "built by code that has no source file"

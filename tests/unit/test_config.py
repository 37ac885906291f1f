"""[tool.opsweep]: one validated configuration, read the same way for opsweep itself and
for a project that adopts it (opsweep.config)."""

import subprocess
import tomllib
import sys
from pathlib import Path

import pytest

from opsweep import config
from opsweep.bot.pins import pin_change, read_pins
from opsweep.errors import UsageError
from opsweep.files import DEFAULT, Layout

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(config.__file__).resolve().parents[1]


def project(tmp_path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[project]\nname = 'adopter'\n\n[tool.opsweep]\n{body}\n", encoding="utf-8")
    return path


def refused(tmp_path, body: str) -> str:
    with pytest.raises(UsageError) as caught:
        config.load(project(tmp_path, body))
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path / "pyproject.toml") in message
    return message


def test_opsweeps_own_pyproject_is_configured_like_any_project():
    own = config.load(ROOT / "pyproject.toml")
    assert own.version == config.VERSION and own.builtin
    assert own.pins == config.PinSource("tox", "proptest_onnx")
    assert Layout.of(own) == DEFAULT  # the defaults the commands had before, from the file


def test_a_project_without_the_table_gets_the_defaults(tmp_path):
    assert config.load(tmp_path / "pyproject.toml") == config.Config()
    assert config.load(project(tmp_path, "")) == config.Config()


def test_every_key_is_read_and_feeds_the_layout(tmp_path):
    (tmp_path / "op_specs").mkdir()
    got = config.load(project(tmp_path, """\
version = 1
pins = { requirements = "requirements/onnx.txt" }
catalog = "none"
specs = ["op_specs"]
translations = ["tables.py:TABLE", "pkg.tables:OTHER"]
artifact = "site/data/onnx.json"
pages-dir = "site"
history-dir = "site/history"
data-dir = "site/data"
templates = "site/templates"
source-url = "https://github.com/o/r/blob/main/"
repo-url = "https://github.com/o/r"
models = ["pkg.models:build"]"""))
    assert not got.builtin and got.specs == ("op_specs",)
    assert got.pins == config.PinSource("requirements", "requirements/onnx.txt")
    assert got.translations == ("tables.py:TABLE", "pkg.tables:OTHER")
    assert got.source_url == "https://github.com/o/r/blob/main"
    layout = Layout.of(got)
    assert (layout.artifact, layout.page, layout.history_page, layout.details) == (
        "site/data/onnx.json", "site/supported_operators.md", "site/history.md", "site/operators")
    assert (layout.history_dir, layout.data_dir, layout.templates) == (
        "site/history", "site/data", "site/templates")
    assert layout.under("x").pins == layout.pins and layout.under("x").artifact == "x/site/data/onnx.json"


def test_opset_targets_are_off_for_an_adopter_and_named_after_the_built_in_ones(tmp_path):
    """The defaults measure no opset target; a configuration asking for the exporter's lowest
    opset and the newest onnxruntime at the pin runs gets them after the other targets (issue
    49; opsweep's own configuration turned them on with the round's full re-measure)."""
    assert config.Config().opsets == () and config.load(project(tmp_path, "")).opsets == ()
    own = config.load(ROOT / "pyproject.toml")
    both = config.load(project(tmp_path, "torchscript = true\nopsets = [28, 18]\n"))
    assert both.opsets == (18, 28) or both.opsets == (28, 18)
    assert [t.name for t in both.targets()] == ["stock", "torchscript", "opset18", "opset28"]
    assert [t.name for t in own.targets()] == ["stock", "torchscript", "opset18", "opset28"]


def test_opsets_are_read_sorted_and_the_command_line_adds_to_them(tmp_path):
    got = config.load(project(tmp_path, "opsets = [28, 18]"))
    assert got.opsets == (18, 28)
    assert [t.name for t in got.targets(opsets=[23, 18])] == [
        "stock", "opset18", "opset23", "opset28"]
    with pytest.raises(UsageError, match=r"^--opset: expected an opset from 1 to 99, got 0$"):
        got.targets(opsets=[0])


def test_a_bad_opsets_value_says_what_is_expected(tmp_path):
    assert refused(tmp_path, "opsets = [7, 100]").endswith(
        "[tool.opsweep] opsets: expected a list of opsets, integers from 1 to 99, got 100")
    assert refused(tmp_path, "opsets = [18, 18]").endswith(
        "[tool.opsweep] opsets: an opset is listed twice")


def test_a_newer_format_is_refused_naming_both_versions(tmp_path):
    message = refused(tmp_path, f"version = {config.VERSION + 1}")
    assert f"format {config.VERSION + 1}" in message and f"format {config.VERSION})" in message


@pytest.mark.parametrize("body, key", [
    ("catalog = 'all'", "catalog"),
    ("catalog = 'used'", "catalog"),  # "used" without models: the operators of nothing
    ("colour = 'blue'", "colour"),
    ("version = 'one'", "version"),
    ("specs = 'op_specs'", "specs"),
    ("pins = 'proptest_onnx'", "pins"),
    ("pins = { tox-env = 'a', requirements = 'b' }", "pins"),
    ("pins = { dependencies = 'extras:onnx' }", "pins.dependencies"),
    ("pins = { tox-env = 'not a name' }", "pins.tox-env"),
    ("translations = ['tables.py']", "translations"),
    ("repo-url = 'github.com/o/r'", "repo-url"),
    ("models = ['a:b', 'a:b']", "models"),
    ("artifact = 3", "artifact"),
    ("torchscript = 'yes'", "torchscript"),
    ("opsets = 18", "opsets"),
    ("opsets = ['18']", "opsets"),
    ("opsets = [true]", "opsets"),
    ("opsets = [18.0]", "opsets"),
    ("opsets = [0]", "opsets"),
    ("opsets = [100]", "opsets"),
    ("opsets = [18, 28, 18]", "opsets"),
    ("check-targets = 'torchscript'", "check-targets"),
    ("check-targets = ['dynamo']", "check-targets"),
    ("check-targets = ['torchscript', 'torchscript']", "check-targets"),
])
def test_a_bad_key_is_one_line_naming_the_file_and_the_key(tmp_path, body, key):
    assert f"[tool.opsweep] {key}:" in refused(tmp_path, body)


@pytest.mark.parametrize("body", [
    "artifact = '../elsewhere/onnx.json'", "pages-dir = '/elsewhere/pages'",
    "specs = ['specs', '../../etc']", "pins = { requirements = '../requirements.txt' }",
    "translations = ['../tables.py:TABLE']", "templates = 'link'"])
def test_a_path_outside_the_repository_is_refused(tmp_path, body):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "link").symlink_to(tmp_path)  # inside by name, outside in fact
    with pytest.raises(UsageError, match="points outside the repository"):
        config.load(project(tmp_path / "repo", body))


def test_an_unreadable_pyproject_is_one_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.opsweep\n", encoding="utf-8")
    with pytest.raises(UsageError, match="cannot read it") as caught:
        config.load(tmp_path / "pyproject.toml")
    assert "\n" not in str(caught.value)


PYPROJECT = """\
[project]
name = "adopter"
dependencies = ["numpy>=1", "torch==2.15.0"]
[project.optional-dependencies]
onnx = ["onnx==1.23.2", "onnxruntime==1.32.0"]
[dependency-groups]
sweep = ["onnxscript==0.7.2", "hypothesis==6.170.17"]
"""


@pytest.mark.parametrize("name, expected", [
    ("project", {"torch": "2.15.0"}),
    ("optional:onnx", {"onnx": "1.23.2", "onnxruntime": "1.32.0"}),
    ("group:sweep", {"onnxscript": "0.7.2", "hypothesis": "6.170.17"}),
    ("group:absent", {}),
])
def test_pins_from_a_dependency_array(name, expected):
    assert read_pins(PYPROJECT, source=config.PinSource("dependencies", name)) == expected


def test_pins_from_a_requirements_or_constraints_file():
    text = ("# the exporter stack\n--only-binary :all:\ntorch==2.15.0  # cpu\n"
            "onnx == 1.23.2\nonnxruntime>=1.20\nonnxscript==0.7.2 \\\n  --hash=sha256:00\n")
    source = config.PinSource("requirements", "constraints.txt")
    assert read_pins(text, source=source) == {"torch": "2.15.0", "onnx": "1.23.2",
                                              "onnxscript": "0.7.2"}
    with pytest.raises(UsageError, match="constraints.txt pins torch more than once"):
        read_pins("torch==1\ntorch==2\n", source=source)


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_requirements_pin_move_is_seen_at_git_revisions(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "a@b.c")
    git(tmp_path, "config", "user.name", "a")
    (tmp_path / "req.txt").write_text("torch==2.13.0\nonnx==1.20.0\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    (tmp_path / "req.txt").write_text("torch==2.15.0\nonnx==1.20.0\n")
    git(tmp_path, "commit", "-qam", "two")
    change = pin_change("HEAD~1", repo=tmp_path, source=config.PinSource("requirements", "req.txt"))
    assert (change.old, change.new) == ("2.13.0", "2.15.0")
    assert [m.name for m in change.moves] == ["torch"]


def action_pins(tmp_path, verb: str):
    return subprocess.run([sys.executable, "-m", "opsweep.config", verb,
                           str(tmp_path / "pyproject.toml")], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC)}, cwd=tmp_path, check=False)


def test_the_actions_install_list_follows_the_configured_source(tmp_path):
    """What action.yml's install step runs (`python3 -m opsweep.config`, standard library
    only, before anything is installed)."""
    (tmp_path / "req.txt").write_text("torch==2.15.0\n-r other.txt\n")
    project(tmp_path, "pins = { requirements = 'req.txt' }")
    done = action_pins(tmp_path, "install-args")
    assert done.returncode == 0 and done.stdout.split("\n")[:2] == ["-r", str(tmp_path / "req.txt")]
    assert action_pins(tmp_path, "pins").stdout == "torch==2.15.0\n"
    (tmp_path / "pyproject.toml").write_text(
        PYPROJECT + "[tool.opsweep]\npins = { dependencies = 'optional:onnx' }\n")
    assert action_pins(tmp_path, "install-args").stdout == "onnx==1.23.2\nonnxruntime==1.32.0\n"


def test_the_actions_install_list_refuses_a_bad_configuration_in_one_line(tmp_path):
    project(tmp_path, "pins = { requirements = 'missing.txt' }")
    done = action_pins(tmp_path, "install-args")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "missing.txt does not exist" in done.stderr
    project(tmp_path, "version = 99")
    done = action_pins(tmp_path, "pins")
    assert done.returncode == 2 and "format 99 is newer" in done.stderr


def test_one_version_number_and_the_changelog_names_it():
    import opsweep
    root = Path(__file__).resolve().parents[2]
    data = tomllib.loads((root / "pyproject.toml").read_text())
    assert "version" not in data["project"] and "version" in data["project"]["dynamic"]
    assert data["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "opsweep.__version__"}
    assert f"\n## {opsweep.__version__}\n" in (root / "CHANGELOG.md").read_text()


@pytest.mark.parametrize("version, expected", [
    ("2", "version: format 2 is newer than this opsweep understands (format 1)"),
    ('"one"', "version: expected a positive integer, got 'one'"),
])
def test_the_action_s_check_refuses_in_one_line(tmp_path, version, expected):
    (tmp_path / "pyproject.toml").write_text(f"[tool.opsweep]\nversion = {version}\n")
    found = subprocess.run([sys.executable, "-m", "opsweep.config", "check",
                            str(tmp_path / "pyproject.toml")], capture_output=True, text=True)
    assert found.returncode == 2 and found.stdout == ""
    (line,) = found.stderr.splitlines()
    assert line.startswith(f"opsweep: error: {tmp_path / 'pyproject.toml'}: [tool.opsweep] ")
    assert expected in line
    ok = tmp_path / "ok.toml"
    ok.write_text("[tool.opsweep]\nversion = 1\n")
    assert subprocess.run([sys.executable, "-m", "opsweep.config", "check", str(ok)]).returncode == 0


def test_check_targets_are_read_in_order(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.opsweep]\ncheck-targets = ['torchscript', 'opset18', 'all', "
                    "'tables.py:TABLE']\n")
    assert config.load(path).check_targets == ("torchscript", "opset18", "all",
                                                "tables.py:TABLE")
    path.write_text("[tool.opsweep]\n")
    assert config.load(path).check_targets == ()

"""`bot bump` rewrites the pins where [tool.opsweep] pins says they live: a tox env's deps,
a requirements or constraints file, `[project] dependencies`, `[project.optional-dependencies]
NAME`, `[dependency-groups] NAME`. Real files, written to disk and read back through the
same readers every command uses; every other line, comment and value stays as written."""

import difflib
import tomllib
from pathlib import Path

import pytest

from opsweep.bot import bump
from opsweep.bot.pins import PinMove, read_pins
from opsweep.bot.rewrite import check_exact, rewrite
from opsweep.config import PinSource, load
from opsweep.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
MOVES = [PinMove("onnx", "1.23.2", "1.24.0"), PinMove("torch", "2.13.0", "2.15.0")]

PYPROJECT = '''\
[project]
name = "demo"  # a comment
# the stack this library ships against
dependencies = [
    "numpy>=1.26",
    'torch == 2.13.0',     # the one torch pin
    "ONNX==1.23.2",
    "pkg[extra]>=1; python_version >= '3.10'",  # a ] inside a string
]

[project.optional-dependencies]
onnx = ["torch==2.13.0", "onnx==1.23.2", "onnxscript"]
docs = ["torch==2.13.0"]

[dependency-groups]
"export" = [
  "torch==2.13.0",
  "onnx==1.23.2",  # trailing comment
  {include-group = "test"},
]
test = ["pytest==8.0.0"]

[tool.tox.env.sweep]
deps = ["torch==2.13.0",
        "onnx==1.23.2"]  # closing comment
commands = [["python", "-c", "print('[not a header]')"]]

[tool.tox.env.other]
deps = ["torch==2.13.0", "onnx==1.23.2"]
'''

REQUIREMENTS = '''\
# the exporter stack
--only-binary :all:  # an option line
numpy>=1.26
torch==2.13.0  # pinned for the exporter
numpy==1.26.0 ; python_version >= "3.10"
Onnx == 1.23.2 \\
    --no-binary onnx
# torch==2.0.0 (commented out: never touched)
'''

SOURCES = [
    PinSource("tox", "sweep"),
    PinSource("dependencies", "project"),
    PinSource("dependencies", "optional:onnx"),
    PinSource("dependencies", "group:export"),
]


def changed_lines(old: str, new: str) -> list[str]:
    return [line for line in difflib.ndiff(old.splitlines(), new.splitlines())
            if line.startswith(("- ", "+ "))]


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_each_pyproject_array_moves_its_own_pins_and_nothing_else(tmp_path, source):
    path = tmp_path / "pyproject.toml"
    path.write_text(PYPROJECT)
    text = path.read_text()
    before = read_pins(text, source=source)
    new = rewrite(text, source, MOVES, "pyproject.toml")
    path.write_text(new)
    assert read_pins(path.read_text(), source=source) == {**before, "torch": "2.15.0",
                                                          "onnx": "1.24.0"}
    # every other array still pins the old versions: only this one's lines changed
    for other in SOURCES:
        if other != source:
            assert read_pins(new, source=other) == read_pins(text, source=other)
    # the changed lines are exactly the lines of the moved pins, with only the versions new
    out = [d[2:] for d in changed_lines(text, new) if d.startswith("- ")]
    into = [d[2:] for d in changed_lines(text, new) if d.startswith("+ ")]
    assert out and [o.replace("2.13.0", "2.15.0").replace("1.23.2", "1.24.0") for o in out] == into
    # quoting, spacing and comments as written
    if source.name == "project":
        assert "    'torch == 2.15.0',     # the one torch pin\n" in new
        assert '    "ONNX==1.24.0",\n' in new
    # and a second round trip moves them back to exactly the original bytes
    back = [PinMove(m.name, m.new, m.old) for m in MOVES]
    assert rewrite(new, source, back, "pyproject.toml") == text


def test_a_requirements_file_keeps_its_comments_options_and_markers(tmp_path):
    path = tmp_path / "requirements" / "onnx.txt"
    path.parent.mkdir()
    path.write_text(REQUIREMENTS)
    source = PinSource("requirements", "requirements/onnx.txt")
    assert read_pins(path.read_text(), source=source) == {"torch": "2.13.0", "onnx": "1.23.2"}
    new = rewrite(path.read_text(), source, MOVES, "requirements/onnx.txt")
    path.write_text(new)
    assert read_pins(path.read_text(), source=source) == {"torch": "2.15.0", "onnx": "1.24.0"}
    assert len(new.splitlines()) == len(REQUIREMENTS.splitlines())
    assert [(a, b) for a, b in zip(REQUIREMENTS.splitlines(), new.splitlines()) if a != b] == [
        ("torch==2.13.0  # pinned for the exporter", "torch==2.15.0  # pinned for the exporter"),
        ("Onnx == 1.23.2 \\", "Onnx == 1.24.0 \\")]
    assert "# torch==2.0.0 (commented out" in new and "    --no-binary onnx\n" in new


def test_a_hash_pinned_requirement_is_refused():
    text = "torch==2.13.0 \\\n    --hash=sha256:00ff\n"
    with pytest.raises(UsageError, match=r"req.txt: torch is hash-pinned \(--hash\)"):
        rewrite(text, PinSource("requirements", "req.txt"), MOVES[1:], "req.txt")


@pytest.mark.parametrize("entry", ["torch>=2.6", "torch~=2.13.0", "torch==2.13.*",
                                   "torch==2.13.0; python_version >= '3.10'",
                                   "torch>=2.13,<2.14"])
def test_a_watched_package_that_is_not_pinned_exactly_is_refused(entry):
    source = PinSource("requirements", "req.txt")
    with pytest.raises(UsageError) as err:
        check_exact(f"{entry}\nonnx==1.23.2\n", source, "req.txt")
    message = str(err.value)
    assert message.startswith("req.txt: req.txt has") and repr(entry) in message
    assert "not an exact pin" in message and "torch==X.Y.Z" in message and "\n" not in message
    # not watched, or unversioned: nothing to refuse
    check_exact("numpy>=1.26\ntorch\nonnx==1.23.2\n", source, "req.txt")
    toml = f'[project]\nname = "x"\ndependencies = [{entry!r}]\n'  # a TOML string too
    with pytest.raises(UsageError, match=r"\[project\] dependencies has .*not an exact pin"):
        check_exact(toml, PinSource("dependencies", "project"), "pyproject.toml")


def test_a_pin_found_twice_or_not_at_all_is_refused():
    text = '[project]\nname = "x"\ndependencies = ["torch==2.12.0"]\n'
    with pytest.raises(UsageError, match="found the pin torch==2.13.0 0 times"):
        rewrite(text, PinSource("dependencies", "project"), MOVES[1:], "pyproject.toml")
    with pytest.raises(UsageError, match=r"cannot find \[dependency-groups\] dev written as"):
        rewrite(text, PinSource("dependencies", "group:dev"), MOVES[1:], "pyproject.toml")
    dotted = 'project.dependencies = ["torch==2.13.0"]\n'
    with pytest.raises(UsageError, match="`bot bump` rewrites that form only"):
        rewrite(dotted, PinSource("dependencies", "project"), MOVES[1:], "pyproject.toml")


def test_opsweep_s_own_configuration_and_the_default_source_agree():
    """opsweep's repository is configured like any adopter: its pins source is the tox env
    `bump.apply` rewrites by default."""
    config = load(ROOT / "pyproject.toml")
    text = (ROOT / "pyproject.toml").read_text()
    pins = read_pins(text, source=config.pins)
    moves = [PinMove("torch", pins["torch"], "9.9.9")]
    assert bump.apply(text, moves) == bump.apply(text, moves, "pyproject.toml", config.pins)
    new = tomllib.loads(bump.apply(text, moves))
    assert "torch==9.9.9" in new["tool"]["tox"]["env"]["proptest_onnx"]["deps"]

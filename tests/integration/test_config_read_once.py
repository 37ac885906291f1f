"""A command reads the project's configuration once (issue 49): every step of a sweep asks
for it, and one parse serves them all while the file stays the same; a file that changes
between two commands is read again."""

import json

from opsweep import config
from opsweep.cli.main import main

PROJECT = """[project]
name = "demo"

[tool.opsweep]
version = 1
torchscript = false
"""


def _counting(monkeypatch) -> list:
    parsed = []
    real = config._parsed

    def counted(pyproject, raw):
        parsed.append(str(pyproject))
        return real(pyproject, raw)
    monkeypatch.setattr(config, "_parsed", counted)
    config._READ.clear()
    return parsed


def test_a_sweep_parses_the_project_once_and_a_changed_file_again(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    monkeypatch.chdir(tmp_path)
    parsed = _counting(monkeypatch)
    out = tmp_path / "a.json"
    assert main(["sweep", "--only", "relu", "--jobs", "0", "--no-dynamic", "--quiet",
                 "--no-cache", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["specs"].keys() == {"relu"}
    assert parsed == ["pyproject.toml"]  # the steps asked several times; one parse served
    (tmp_path / "pyproject.toml").write_text(PROJECT.replace("false", "true"))
    assert config.load().torchscript is True and len(parsed) == 2
    assert config.load().torchscript is True and len(parsed) == 2

"""The commands that used to write their defaults into the parsed options (issue 49) still
get them, now as values of their own (the options are read-only:
tests/unit/test_invocation.py): a sweep without --out writes the artifact the project
configures; render without --out and --data-dir writes the page and the link cache where
the project's layout puts them."""

import json
from pathlib import Path

import torch

from opsweep import config
from opsweep.catalog.links import cache_path
from opsweep.cli.main import main
from opsweep.files import Layout

PROJECT = """[project]
name = "demo"

[tool.opsweep]
version = 1
torchscript = false
artifact = "measured/onnx.json"
pages-dir = "site"
data-dir = "site/cache"
"""


def test_a_sweep_without_out_writes_the_configured_artifact(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "--only", "relu", "--jobs", "0", "--no-dynamic", "--quiet",
                 "--no-cache"]) == 0
    written = tmp_path / "measured" / "onnx.json"
    assert json.loads(written.read_text())["specs"].keys() == {"relu"}
    assert "measured/onnx.json" in capsys.readouterr().out


def test_render_without_out_and_data_dir_writes_where_the_layout_says(tmp_path, monkeypatch,
                                                                      capsys):
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    monkeypatch.chdir(tmp_path)
    layout = Layout.of(config.load(tmp_path / "pyproject.toml"))
    assert main(["render"]) == 0
    page = tmp_path / layout.page
    assert layout.page.startswith("site/")
    assert "No measurement report was given" in page.read_text()
    assert f"wrote {layout.page}:" in capsys.readouterr().out
    assert [p.name for p in (tmp_path / "site" / "cache").iterdir()] == \
        [cache_path(Path("."), torch.__version__).name]  # the link cache, in the data dir

"""docs/adopting.md's table of the action's inputs is generated from action.yml: a test
that fails when an input is added, removed, renamed or redescribed without the page."""

from pathlib import Path

import yaml

from ..docsync import check

ROOT = Path(__file__).resolve().parents[2]


def inputs_table() -> str:
    inputs = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))["inputs"]
    rows = ["| input | default | what |", "| --- | --- | --- |"]
    for name, spec in inputs.items():
        default = str(spec.get("default", ""))
        what = " ".join(str(spec.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {f'`{default}`' if default else '(empty)'} | {what} |")
    return "\n".join(rows) + "\n"


def test_the_inputs_table_is_action_yml_s():
    table = inputs_table()
    assert "| `install` |" in table and "| `mode` | `all` |" in table
    check(ROOT / "docs" / "adopting.md", "action-inputs", table)


def test_the_init_sample_is_init_s_output(tmp_path, capsys, monkeypatch):
    """docs/adopting.md's "my models, no specs" example is what `opsweep init` prints for
    a project with torch pinned in requirements/onnx.txt and in docs/requirements.txt (as
    a release build, which knows its commit)."""
    from opsweep import __version__, _release
    from opsweep.cli.main import main
    monkeypatch.setattr(_release, "COMMIT", "0" * 40)
    monkeypatch.setattr(_release, "VERSION", __version__)
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "onnx.txt").write_text("torch==2.15.0\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "requirements.txt").write_text("mkdocs==1.6.1\ntorch==2.15.0\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mylib"\nversion = "1.0"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--models", "mylib.models:build", "--models",
                 "mylib.models:build_large"]) == 0
    out = capsys.readouterr().out
    command = ("$ opsweep init --models mylib.models:build --models "
               "mylib.models:build_large\n")
    check(ROOT / "docs" / "adopting.md", "init-sample", f"```console\n{command}{out}```\n")

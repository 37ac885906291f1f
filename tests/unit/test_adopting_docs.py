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

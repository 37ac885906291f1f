"""Issue 53's newcomer test (1): `opsweep check` from `pip install`, outside any checkout.

The wheel built from the checkout is installed in a fresh venv (tests/integration/wheel.py:
the running interpreter's torch, onnx, onnxruntime and transformers seen as a plain path,
so the venv's opsweep is the wheel's and nothing is downloaded). In an empty directory
outside the checkout, the model file is docs/check.md's Hugging Face recipe, word for word,
and the commands are the ones docs/check.md gives: `opsweep check my_models.py:bert` with
no artifact of one's own uses the table the wheel carries for the installed torch, and
`--against VERSION` sets the model against the packaged table of another measured torch.

The second measured torch is a real one: tests/integration/tables/torch-2.13.0.json.gz is
the cell table, written by `opsweep tables`, of the artifact committed at 6f9dc60 (schema
2: the whole catalog measured under torch 2.13.0+cpu with onnx 1.23.2, onnxruntime
1.32.0, onnxscript 0.7.2). That artifact predates the counts per dtype and rank (schema
5), so its table cannot tell any use fine or failing ("not measured" for every use): the
uses that change verdict are those the current table measured, and the test joins both
tables itself to say which. The wheel carries only the current measurement's table, so
the test puts this one beside it, as an opsweep release carrying both measured torches
would. (A table of a newer artifact of another torch would show real verdict changes;
no such artifact is committed.)
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from opsweep.artifact import tables
from opsweep.catalog.load import exclusions
from opsweep.check.report import against
from opsweep.check.table import NOT_MEASURED, lookup
from opsweep.check.uses import Use

from .wheel import ROOT, fresh_venv

pytestmark = pytest.mark.integration

OLDER = Path(__file__).parent / "tables" / "torch-2.13.0.json.gz"
TORCH = metadata.version("torch")


def recipe() -> str:
    """docs/check.md's Hugging Face recipe, the block that starts with ``# my_models.py``
    (as scripts/check_example.py reads it for the page's sample report)."""
    spec = importlib.util.spec_from_file_location("check_example",
                                                  ROOT / "scripts" / "check_example.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example.recipe((ROOT / "docs" / "check.md").read_text("utf-8"), "my_models.py")


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory):
    """The venv with the wheel, the packaged tables' directory, and an empty directory
    outside the checkout holding the recipe's model file."""
    tmp = tmp_path_factory.mktemp("newcomer")
    venv = fresh_venv(tmp)
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp), "COLUMNS": "200",
           "HF_HUB_OFFLINE": "1", **({"TMPDIR": os.environ["TMPDIR"]}
                                     if "TMPDIR" in os.environ else {})}
    code = "import opsweep, opsweep.artifact.tables as t; print(opsweep.__file__); print(t.PACKAGED)"
    where = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp, env=env,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    assert where[0].startswith(str(venv)) and not where[0].startswith(str(ROOT)), where
    packaged = Path(where[1])  # the wheel's tables, inside the venv
    assert packaged.is_relative_to(venv), packaged
    assert list(tables.packaged(packaged)) == list(tables.packaged())  # what the wheel carries
    shutil.copyfile(OLDER, packaged / OLDER.name)
    home = tmp / "project"
    home.mkdir()
    (home / "my_models.py").write_text(recipe())
    return venv, env, home


def _check(newcomer, *args: str) -> subprocess.CompletedProcess:
    venv, env, home = newcomer
    return subprocess.run([str(venv / "bin" / "opsweep"), "check", *args], cwd=home, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_check_from_pip_install_uses_the_packaged_table_and_says_what_a_bump_changes(newcomer):
    done = _check(newcomer, "my_models.py:bert", "--against", "2.13.0", "--record", "rec.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    text = _flat(done.stdout)
    _, _, home = newcomer
    choice = tables.choose(TORCH, tables.packaged())
    # the head: the packaged table, which torch and opsweep built it, which torch is installed
    assert f"measured table opsweep/data/tables/torch-{choice.chosen}.json.gz " \
        f"({choice.sentence()}; there is no pyproject.toml here)" in text, text
    table = tables.load(tables.packaged()[choice.chosen])
    assert f"the table packaged by opsweep {table.opsweep}" in text
    assert f"installed torch {TORCH}," in text
    assert "against opsweep/data/tables/torch-2.13.0.json.gz (opsweep's packaged table for " \
        "torch 2.13.0): torch 2.13.0" in text
    # a verdict and a prediction
    assert "Your model exports, runs and matches PyTorch" in text
    assert re.search(r"│ export +│ \w+", done.stdout) and "tested, passes" in text
    record = json.loads((home / "rec.json").read_text())
    (bert,) = record["models"]
    assert record["table"]["written_by"] == table.opsweep
    # --against: the uses whose verdict differs in 2.13.0's table, joined again here
    uses = [Use(u["op"], u["overload"], u["dtype"], u["rank"], u["count"], u["node"])
            for u in bert["uses"]]
    now = table.artifact
    old = tables.load(OLDER).artifact
    excluded = exclusions()
    older = lookup(old, uses, excluded)
    assert {v.status for v in older} == {NOT_MEASURED}  # schema 2: it cannot tell
    expected = against(lookup(now, uses, excluded), older)
    assert expected  # the uses the current table measured
    assert [(c["op"], c["dtype"], c["rank"], c["old"], c["new"]) for c in bert["against"]] == \
        [(c.op, c.dtype, c.rank, c.old, c.new) for c in expected]
    for c in expected:
        assert f"Against the other table: {c.op} at {c.dtype} rank {c.rank}: {c.new} in " \
            f"this table, {c.old} in the other" in text
    print(f"\n{len(uses)} uses; against torch 2.13.0: {len(expected)} change verdict")
    for c in expected:
        print(f"  {c.op} {c.dtype} rank {c.rank}: 2.13.0 {c.old} -> {choice.chosen} {c.new}")


def test_against_the_installed_torchs_own_table_nothing_changes(newcomer):
    chosen = tables.choose(TORCH, tables.packaged()).chosen
    done = _check(newcomer, "my_models.py:bert", "--no-export", "--against", chosen)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Against the other table: no operator the model calls changes verdict" in \
        _flat(done.stdout)


def test_against_a_torch_that_was_not_measured_names_the_measured_ones(newcomer):
    done = _check(newcomer, "my_models.py:bert", "--no-export", "--against", "2.14.1")
    assert done.returncode == 2
    measured = ", ".join(["2.13.0", *tables.packaged()])
    assert done.stderr == (f"opsweep: error: --against 2.14.1: torch 2.14.1 has no packaged "
                           f"table (measured: {measured}); or pass an artifact file\n")

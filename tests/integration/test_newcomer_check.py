"""Issue 53's newcomer test (1): `opsweep check` from `pip install`, outside any checkout.

The wheel built from the checkout is installed in a fresh venv (tests/integration/wheel.py:
the running interpreter's torch, onnx, onnxruntime and transformers seen as a plain path,
so the venv's opsweep is the wheel's and nothing is downloaded). In an empty directory
outside the checkout, the model file is docs/check.md's Hugging Face recipe, word for word,
and the commands are the ones docs/check.md gives: `opsweep check my_models.py:bert` with
no artifact of one's own uses the table the wheel carries for the installed torch, and
`--against VERSION` sets the model against the packaged table of another measured torch.

The wheel carries the cell tables of two real measurements of the whole catalog
(src/opsweep/data/tables, written by `opsweep tables`): torch 2.15.0, the committed
artifact's, and torch 2.14.1, the same catalog and engine measured under torch 2.14.1 with
onnx 1.23.2, onnxruntime 1.32.0 and onnxscript 0.7.2 (the stock target; docs/performance.md
says when and how long). So `--against 2.14.1` answers from the wheel alone, from an
environment on the other torch, what a move between the two changes for the model.
"""

import importlib.util
import json
import os
import re
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from opsweep.artifact import tables
from opsweep.catalog.load import exclusions
from opsweep.check.report import against
from opsweep.check.table import NOT_MEASURED, lookup
from opsweep.capture.uses import Use

from .wheel import ROOT, installed_once

pytestmark = pytest.mark.integration

OLDER = "2.14.1"  # the other measured torch the wheel carries a table of
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
    venv = installed_once(tmp_path_factory) / "venv"
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp), "COLUMNS": "200",
           "HF_HUB_OFFLINE": "1", **({"TMPDIR": os.environ["TMPDIR"]}
                                     if "TMPDIR" in os.environ else {})}
    code = "import opsweep, opsweep.artifact.tables as t; print(opsweep.__file__); print(t.PACKAGED)"
    where = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp, env=env,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    assert where[0].startswith(str(venv)) and not where[0].startswith(str(ROOT)), where
    packaged = Path(where[1])  # the wheel's tables, inside the venv
    assert packaged.is_relative_to(venv), packaged
    carried = tables.packaged(packaged)
    assert list(carried) == list(tables.packaged())  # what the wheel carries
    assert OLDER in carried and len(carried) >= 2, list(carried)
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
    done = _check(newcomer, "my_models.py:bert", "--against", OLDER, "--record", "rec.json")
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
    assert f"against opsweep/data/tables/torch-{OLDER}.json.gz (opsweep's packaged table for " \
        f"torch {OLDER}): torch {OLDER}" in text
    # a verdict and a prediction
    assert "Your model exports, runs and matches PyTorch" in text
    assert re.search(r"│ export +│ \w+", done.stdout) and "tested, passes" in text
    record = json.loads((home / "rec.json").read_text())
    (bert,) = record["models"]
    assert record["table"]["written_by"] == table.opsweep
    # --against: the uses whose verdict differs in 2.14.1's table, joined again here
    uses = [Use.from_data(u) for u in bert["uses"]]
    now = table.artifact
    old = tables.load(tables.packaged()[OLDER]).artifact
    assert old.fingerprint.torch.split("+")[0] == OLDER
    excluded = exclusions()
    older = lookup(old, uses, excluded)
    # a dense measurement of its own: the other table measured the model's uses as well
    measured = [v for v in older if v.status != NOT_MEASURED]
    assert len(measured) >= 0.9 * len(older), (len(measured), len(older))
    expected = against(lookup(now, uses, excluded), older)
    assert [(c["op"], c["dtype"], c["rank"], c["old"], c["new"]) for c in bert["against"]] == \
        [(c.op, c.dtype, c.rank, c.old, c.new) for c in expected]
    for c in expected:
        assert f"Against the other table: {c.op} at {c.dtype} rank {c.rank}: {c.new} in " \
            f"this table, {c.old} in the other" in text
    if not expected:
        assert "Against the other table: no operator the model calls changes verdict" in text
    print(f"\n{len(uses)} uses, {len(measured)} measured in {OLDER}'s table; against torch "
          f"{OLDER}: {len(expected)} change verdict")
    for c in expected:
        print(f"  {c.op} {c.dtype} rank {c.rank}: {OLDER} {c.old} -> {choice.chosen} {c.new}")


def test_against_the_installed_torchs_own_table_nothing_changes(newcomer):
    chosen = tables.choose(TORCH, tables.packaged()).chosen
    done = _check(newcomer, "my_models.py:bert", "--no-export", "--against", chosen)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Against the other table: no operator the model calls changes verdict" in \
        _flat(done.stdout)


def test_against_a_torch_that_was_not_measured_names_the_measured_ones(newcomer):
    done = _check(newcomer, "my_models.py:bert", "--no-export", "--against", "2.10.0")
    assert done.returncode == 2
    measured = ", ".join(tables.packaged())
    assert done.stderr == (f"opsweep: error: --against 2.10.0: torch 2.10.0 has no packaged "
                           f"table (measured: {measured}); or pass an artifact file\n")

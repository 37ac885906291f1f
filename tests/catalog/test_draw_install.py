"""A ci sweep draws the same examples however opsweep is installed.

Hypothesis mixes literal constants of modules it considers local source into its
draws. These tests run ``opsweep draw`` (the sweep's own drawing path) in
subprocesses, with opsweep imported from a copy that hypothesis sees as local
source (a checkout or an editable install), from a copy it sees as installed (a
wheel in site-packages), as this environment installed it, and with an extra
``--specs`` module and a ``--translations`` module full of literal numbers loaded,
each from another working directory. All must draw byte-identical examples.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import opsweep
import opsweep.specs

#: Specs with wide integer or float ranges, whose draws differed between installs.
WIDE = ["random_to", "where", "trace", "prod", "silu", "empty_strided", "full", "clamp"]
ROOT = Path(__file__).resolve().parents[2]
# Literal numbers of every kind a strategy draws: sides, ranks, seeds, value bounds.
LITERALS = ", ".join([*map(str, range(-64, 257)), "2**31 - 1", "65535", "-2**31", "1e-3",
                      "0.5", "2.5", "-7.25", "1e30", "3.0e-8", "123456789", "987654321"])
USER_SPECS = f'''
from dataclasses import replace

from opsweep.catalog.families import unary

NUMBERS = [{LITERALS}]
SCALE = {{"tiny": 1e-9, "huge": 1e12, "odd": 31, "side": 5, "rank": 3}}
SPECS = [replace(unary("sinh"), name="user_sinh")]
'''


def _copy_package(root: Path) -> Path:
    """opsweep and its catalog, copied under `root` (as a checkout or a wheel lays them out)."""
    dest = root / "opsweep"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(Path(opsweep.__file__).parent, dest, ignore=ignore)
    if not (dest / "specs" / "__init__.py").is_file():  # an editable install maps specs/ apart
        shutil.copytree(Path(opsweep.specs.__file__).parent, dest / "specs", ignore=ignore)
    return root


def _draw(cwd: Path, *extra: str, pythonpath: Path | None = None) -> tuple[str, dict[str, list]]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OPSWEEP_HYP_PROFILE")}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    code = ("import sys, opsweep; from opsweep.cli import main; "
            "print(opsweep.__file__, file=sys.stderr); sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, "draw", *WIDE, "--profile", "ci", *extra],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    where = done.stderr.strip().splitlines()[-1]
    return where, {d["spec"]: d["examples"] for d in lines if d["spec"] in WIDE}


@pytest.fixture(scope="module")
def draws(tmp_path_factory):
    base = tmp_path_factory.mktemp("installs")
    local = _copy_package(base / "checkout" / "src")
    installed = _copy_package(base / "venv" / "lib" / "site-packages")
    user = base / "user"
    (user / "specs").mkdir(parents=True)
    (user / "specs" / "numbers.py").write_text(USER_SPECS)
    # the example table, with literal numbers of its own
    example_table = (ROOT / "examples" / "custom_translations.py").read_text()
    (user / "table.py").write_text(f"{example_table}\n\nNUMBERS = [{LITERALS}]\n")
    runs = {
        "as installed here": _draw(base),
        "local source (checkout, editable)": _draw(base / "checkout", pythonpath=local),
        "site-packages (wheel)": _draw(base / "venv", pythonpath=installed),
        "local, with --specs and --translations": _draw(
            user, "--specs", "specs", "--translations", "table.py:TABLE", pythonpath=local),
        "wheel, with --specs": _draw(user, "--specs", "specs", pythonpath=installed),
    }
    return runs, {"local": local, "installed": installed}


def test_each_run_imports_the_copy_it_was_given(draws):
    runs, roots = draws
    assert runs["local source (checkout, editable)"][0].startswith(str(roots["local"]))
    assert runs["site-packages (wheel)"][0].startswith(str(roots["installed"]))


def test_draws_do_not_depend_on_the_installation(draws):
    runs, _ = draws
    reference_name, (_, reference) = next(iter(runs.items()))
    assert sorted(reference) == sorted(WIDE)
    for name, (_, drawn) in runs.items():
        differ = sorted(s for s in WIDE if drawn.get(s) != reference[s])
        assert not differ, f"{name!r} draws differently from {reference_name!r} for {differ}"

"""The sweep's closing summary: one screen, reuse counted from the run's decisions,
where the artifact went and what to run next."""

from collections import Counter
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.account import UNCHANGED
from opsweep.errors import UsageError
from opsweep.cli.summary import SUMMARY_WIDTH
from opsweep.cli.summary import summary as _summary
from opsweep.sweep.driver import Regeneration
from opsweep.sweep.reuse import Decision

COMMITTED = Path(__file__).parents[2] / "docs" / "onnx_support_measured.json"
OUT = Path("docs/onnx_support_measured.json")


@pytest.fixture(scope="module")
def committed():
    return art.load(COMMITTED)


def every_third_reused(artifact, names=None):
    """Decisions as a run would make them: every third spec reused, the rest re-measured."""
    return {t: {n: Decision(True, UNCHANGED) if i % 3 == 0
                else Decision(False, "spec changed")
                for i, n in enumerate(names or artifact.target(t).specs)}
            for t in artifact.target_names}


def _without_opsets(artifact):
    from dataclasses import replace
    return replace(artifact, results={n: r for n, r in artifact.results.items()
                                      if not n.startswith("opset")})


def test_a_full_three_target_summary_fits_one_screen(committed, monkeypatch):
    five = _summary(Regeneration(committed, every_third_reused(committed), 0, ()), OUT, 2712)
    full, committed = committed, _without_opsets(committed)
    text = _summary(Regeneration(committed, every_third_reused(committed), 0, ()), OUT, 2712)
    lines = text.splitlines()
    # stock, the example translation table and the torchscript exporter, on a 25-row screen
    assert len(committed.target_names) == 3 and len(lines) <= 25, text
    # each opset target (the committed artifact has two) adds two lines: its reuse, and its
    # grades as full/partial/none per axis; five targets still fit the screen
    assert len(five.splitlines()) == len(lines) + 2 * 2 and len(five.splitlines()) <= 25, five
    assert " further targets' grades per axis: full/partial/none" in lines
    opset28 = full.target("opset28").operators.values()
    assert "  " + "  ".join(
        f"{axis} " + "/".join(str(sum(1 for r in opset28 if getattr(r.grades, axis)
                                      and getattr(r.grades, axis).value == grade))
                              for grade in ("full", "partial", "none"))
        for axis in ("export", "runtime", "numerics", "dynamic")) in five.splitlines()
    # the first target's grades in full, one line per axis; the others' in one line
    assert len([ln for ln in lines if ln.startswith("  export    ")]) == 1
    # the stages once, the first target's; a further target's reuse, read the same, said so
    assert [line.split()[0] for line in lines].count("examples") == 1
    assert " target torchscript: reuse as for stock" in lines
    assert all(len(line) <= SUMMARY_WIDTH for line in lines if str(OUT) not in line
               and "custom_translations.py" not in line), text
    assert lines[0] == f"opsweep: {len(committed.specs)} specs, {len(committed.operators)} aten " \
                       "operators in 0:45:12"
    assert f" wrote      {OUT} (the artifact)" in lines
    assert f" next       opsweep render --onnx-report {OUT}   # the support page" in lines


def test_reuse_is_counted_from_the_decisions_not_from_the_artifact(committed, monkeypatch):
    decisions = every_third_reused(committed)
    text = _summary(Regeneration(committed, decisions, 0, ()), OUT, 1)
    reused = sum(d.reuse for d in decisions[art.STOCK].values())
    measured = len(committed.specs) - reused
    assert f" target stock: reused {reused} (nothing moved), re-measured {measured}; " \
           f"{measured} spec changed" in text.splitlines()
    # examples: only what this run measured
    ok = sum(r.stages.get(art.Stage.OK, 0) for n, r in committed.specs.items()
             if not decisions[art.STOCK][n].reuse)
    assert f"  examples  ok {ok}  " in text


def test_specs_carried_from_the_previous_artifact_are_counted_apart(committed, monkeypatch):
    decisions = every_third_reused(committed, names=["relu", "abs", "sin"])  # --only relu abs sin
    text = _summary(Regeneration(committed, decisions, 0, ()), OUT, 1)
    carried = len(committed.specs) - 3
    block = text.split(" target stock")[1].split("  export")[0]
    reuse = " ".join(block.removeprefix(":").split()).removeprefix("reuse ")
    assert reuse == f"reused 1 (nothing moved), re-measured 2; 2 spec changed; {carried} " \
                    "not selected, carried over"  # wrapped within the width, on the target's first lines


def test_from_tox_the_next_step_is_the_page_tox_renders(committed, monkeypatch):
    text = _summary(Regeneration(committed, every_third_reused(committed), 2, ("a note",)), OUT, 1,
                    in_tox_sweep=True)
    tail = text.splitlines()[-5:]
    assert tail == ["  resumed  2 specs from the checkpoint", "  note: a note",
                    f" wrote      {OUT} (the artifact)",
                    " next       tox renders the support page and the history view from it,",
                    "            then `git diff docs/` shows what changed"]
    assert Counter(line.split()[0] for line in text.splitlines())["target"] == \
        len(committed.target_names)


# --- opsweep check: bad input and [tool.opsweep] models ----------------------------------

BAD_MODELS = '''
import torch
def raises():
    raise RuntimeError("no config")
def wrong():
    return 42
def eager_fails():
    return {"model": torch.nn.Linear(3, 4), "inputs": (torch.ones(2, 5),)}
def unknown_key():
    return {"model": torch.nn.Linear(3, 4), "inputs": (torch.ones(2, 3),), "shapes": 1}
def no_inputs():
    return {"model": torch.nn.Linear(3, 4)}
'''


@pytest.fixture(scope="module")
def small_table(tmp_path_factory):
    """The committed artifact cut to sin, a table check reads in milliseconds: the model's
    error does not depend on the table, which check loads first (the whole committed one
    takes some 1.5 s of CPU to load and validate, once per case)."""
    import json

    from .test_hostile_names import _cut_to_sin
    path = tmp_path_factory.mktemp("table") / "artifact.json"
    path.write_text(json.dumps(_cut_to_sin(json.loads(COMMITTED.read_text("utf-8")))))
    assert list(art.load(path).specs) == ["sin"]
    return path


@pytest.mark.parametrize("callable_, says", [
    ("raises", "the callable raised RuntimeError: no config"),
    ("wrong", "returned a int, not a dict"),
    ("eager_fails", "eager PyTorch cannot run it"),
    ("unknown_key", "unknown key 'shapes'"),
    ("no_inputs", "'inputs' is a NoneType, not a tuple (give the positional inputs, or 'kwargs'"),
    ("missing", "has no callable 'missing'"),
])
def test_check_names_the_model_on_bad_input(small_table, tmp_path, capsys, callable_, says):
    from opsweep.cli import main
    models = tmp_path / "bad_models.py"
    models.write_text(BAD_MODELS)
    assert main(["check", f"{models}:{callable_}", "--no-export", "--artifact",
                 str(small_table)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"model {models}:{callable_}" in err and says in err


def test_models_setting_is_read_and_validated(tmp_path):
    from opsweep.cli.settings import models
    pyproject = tmp_path / "pyproject.toml"
    assert models(pyproject) == ()
    pyproject.write_text('[tool.opsweep]\nsource-url = "https://example.org/x"\n')
    assert models(pyproject) == ()
    pyproject.write_text('[tool.opsweep]\nmodels = ["pkg.mod:build", "saved/model.pt2"]\n')
    assert models(pyproject) == ("pkg.mod:build", "saved/model.pt2")
    for bad, says in (('"pkg:build"', "expected a list of strings"),
                      ('["pkg.mod"]', "neither 'module:callable' nor a .pt2 file"),
                      ('["a:b", "a:b"]', "listed twice")):
        pyproject.write_text(f"[tool.opsweep]\nmodels = {bad}\n")
        with pytest.raises(UsageError, match=r"pyproject.toml: \[tool.opsweep\] models: ") as e:
            models(pyproject)
        assert says in str(e.value)

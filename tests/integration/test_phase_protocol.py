"""The phase protocol end to end: every step the real runner says, for every target and
for the dynamic re-export, survives the phase file and names its target."""

from pathlib import Path

import pytest

from opsweep.artifact.data import STOCK
from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.engine.exporters import exporters_for
from opsweep.targets import configured
from opsweep.engine.group import run_targets
from opsweep.engine.phase import Reached, Step

pytestmark = pytest.mark.integration
TABLE = "examples/custom_translations.py:TABLE"


def test_every_step_is_said_for_each_target_and_reads_back(specs, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    exporters = exporters_for(configured([TABLE]), True)
    groups = group_by_signature(draw_examples(specs["sin"], PROFILES["ci"]))
    group = max(groups, key=lambda g: (g[0].rank, g[0].signature))  # has a leading dimension
    said: list[Reached] = []
    run_targets(specs["sin"], group, exporters, said.append, dynamic=True, shortcut=False)
    assert all(Reached.decode(r.encode()) == r for r in said)
    assert {r.target for r in said} == set(exporters) == {STOCK, TABLE}
    for target in exporters:
        steps = {(r.step, r.dynamic) for r in said if r.target == target}
        assert {(s, d) for s in Step for d in (False, True)} - steps <= {(Step.REFERENCE, False)}
    assert said[0] == Reached(Step.REFERENCE, target=STOCK)  # references: once, under stock

"""The retired listing's claims are checked only in the mode they are about (issue 50, truth
fault 3): the TorchScript exporter exports in eval mode by default (`training=EVAL`), where
its symbolic functions export dropout as the identity, and refuses dropout in training mode.
A spec that calls `alpha_dropout` in training mode only cannot contradict "since opset 9";
the migration view says which mode was measured instead. A real sweep, real exporters."""

import pytest

from opsweep.artifact import data as art
from opsweep.cli.main import main
from opsweep.model import Grade
from opsweep.page import migration

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def swept(tmp_path_factory, outside_project):
    """Stock and torchscript only (outside the project, whose opset targets no test here
    looks at)."""
    out = tmp_path_factory.mktemp("modes") / "a.json"
    assert main(["sweep", "--only", "alpha_dropout", "resolve_neg", "--torchscript",
                 "--jobs", "0", "--quiet", "--no-reuse", "--no-cache", "--out", str(out)]) == 0
    return art.load(out)


def test_a_claim_measured_in_another_mode_is_not_contradicted(swept):
    ts = swept.target("torchscript")
    # the premise: TorchScript exported none of alpha_dropout's (training-mode) examples
    assert ts.operators["alpha_dropout"].grades.export is Grade.NONE
    assert swept.specs["alpha_dropout"].mode == "training"
    view = migration.build(swept, {"alpha_dropout": 9, "resolve_neg": 9})
    rows = {r.name: r for r in view.rows}
    assert rows["alpha_dropout"].claim == "other-mode"
    assert rows["alpha_dropout"].modes == ("training",)
    assert [r.name for r in view.other_mode] == ["alpha_dropout"]
    assert "alpha_dropout" not in [r.name for r in view.contradicted]
    assert view.counts["other-mode"] == 1


def test_a_claim_measured_in_its_own_mode_is_contradicted(swept):
    # resolve_neg has no mode: every example is in the mode the claim is about
    ts = swept.target("torchscript")
    assert ts.operators["resolve_neg"].grades.export is Grade.NONE
    assert swept.specs["resolve_neg"].mode == ""
    view = migration.build(swept, {"alpha_dropout": 9, "resolve_neg": 9})
    assert [r.name for r in view.contradicted] == ["resolve_neg"]
    assert {r.name: r.modes for r in view.rows}["resolve_neg"] == ()

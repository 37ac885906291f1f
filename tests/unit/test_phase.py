"""The phase protocol: what a worker writes is what the sweep reads back."""

import pytest

from opsweep.model import Stage
from opsweep.engine.phase import START, Reached, Step, label_of

T = "dir|with|bars/tables.py:TABLE"


@pytest.mark.parametrize("step", list(Step))
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("target", ["stock", T])
def test_every_phase_reads_back_as_written(step, dynamic, target):
    reached = Reached(step, dynamic, target)
    assert Reached.decode(reached.encode()) == reached
    assert label_of(reached.encode()) == reached.label


def test_the_text_form():
    assert Reached(Step.EXPORT, True, "stock").encode() == "stock|dynamic-export"
    assert Reached(Step.NUMERICS, target=T).label == "numerics"
    assert Reached.decode("") == Reached.decode("\n") == START


def test_a_text_no_worker_writes_is_refused():
    with pytest.raises(ValueError):
        Reached.decode("stock|exporting")
    assert label_of("stock|exporting") == "exporting"


def test_where_a_lost_step_lands():
    assert {s: s.crash_stage for s in Step} == {
        Step.REFERENCE: Stage.LOST, Step.EXPORT: Stage.RAW_ERROR, Step.CHECKER: Stage.CHECKER,
        Step.RUNTIME: Stage.RUNTIME, Step.NUMERICS: Stage.NUMERICS}

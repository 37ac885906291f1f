"""`opsweep check`'s join at a cell the cell covering could not measure (issue 50, schema
7): the verdict says why the table has nothing there (eager PyTorch refused the spec's
example, the rewritten example was refused, the rank is below the spec's), with eager's
error, and what a spec author would change; a cell with examples is judged as before."""

from dataclasses import replace

from opsweep.artifact import data as art
from opsweep.check.table import FINE, NOT_MEASURED, verdict
from opsweep.capture.uses import Use
from opsweep.model import Stage
from tests.factories import FP, result

CELLS = {"float32 0": "unsettled: RuntimeError: addmm: self must be a matrix, got 0-D tensor",
         "float16 2": "refused: RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'",
         "float32 1": "outside"}


def _artifact():
    spec = replace(result(["addmm"], Stage.OK, Stage.OK), cells=CELLS)  # float32 rank 0, 1
    spec = replace(spec, outcomes=tuple(replace(c, rank=2) for c in spec.outcomes))
    return art.make_artifact(FP, "ci", 25, 0, {"addmm": spec})


def _use(dtype, rank):
    return Use("addmm", "aten::addmm", dtype, rank, 1, "addmm")


def test_a_cell_eager_refused_says_so_with_eagers_error():
    v = verdict(_artifact(), _use("float16", 2), {}, False)
    assert v.status == NOT_MEASURED
    assert "eager PyTorch refused addmm's example there" in v.why
    assert "not implemented for 'Half'" in v.why and "addmm's strategy" in v.hint


def test_an_unsettled_cell_and_one_below_the_ranks_say_why():
    unsettled = verdict(_artifact(), _use("float32", 0), {}, False)
    assert unsettled.status == NOT_MEASURED
    assert "rewritten to that cell was refused" in unsettled.why
    assert "self must be a matrix" in unsettled.why
    outside = verdict(_artifact(), _use("float32", 1), {}, False)
    assert "below addmm's declared ranks" in outside.why and outside.hint == \
        "widen addmm's ranks down to 1"


def test_a_cell_with_examples_and_a_cell_never_recorded_are_judged_as_before():
    assert verdict(_artifact(), _use("float32", 2), {}, False).status == FINE
    never = verdict(_artifact(), _use("float64", 2), {}, False)
    assert never.status == NOT_MEASURED and "never at float64" in never.why

"""A lost worker's crash belongs to the target whose model it was measuring: that target
is lost at the step reached, finished targets are kept, and the targets not reached are
measured again (issue 50's first truth fault)."""

import pickle

from opsweep.artifact.data import STOCK
from opsweep.engine.pool import lost_targets
from opsweep.model import Example, Outcome, Stage, TensorArg

T, TS = "tables.py:TABLE", "torchscript"
GROUP = [Example((TensorArg((2, 3), "float32"),), seed=s) for s in (1, 2)]


def outcomes(stage, dynamic=None):
    return [Outcome(stage, e.signature, e.dtype, e.rank, e.size, "", dynamic) for e in GROUP]


def _phase(tmp_path, reached: str, static=None, final=None):
    phase = tmp_path / "0"
    phase.write_text(reached)
    if static is not None:
        phase.with_name("0.static").write_bytes(pickle.dumps((static, final or {})))
    return phase


def test_the_stock_models_crash_is_the_stocks_and_the_others_are_measured_again(tmp_path):
    phase = _phase(tmp_path, f"{STOCK}|runtime")
    settled, again = lost_targets(GROUP, phase, "worker killed by SIGSEGV", (STOCK, T, TS))
    assert set(settled) == {STOCK} and again == (T, TS)
    assert {o.stage for o in settled[STOCK]} == {Stage.RUNTIME}
    assert settled[STOCK][0].error == "WorkerLost: worker killed by SIGSEGV during runtime"


def test_a_later_targets_crash_keeps_the_finished_ones(tmp_path):
    stock = outcomes(Stage.OK, Stage.OK)
    phase = _phase(tmp_path, f"{T}|dynamic-export",
                   {STOCK: outcomes(Stage.OK), T: outcomes(Stage.OK)}, {STOCK: stock})
    settled, again = lost_targets(GROUP, phase, "timed out", (STOCK, T, TS))
    assert settled[STOCK] == stock and again == (TS,)
    assert {(o.stage, o.dynamic) for o in settled[T]} == {(Stage.OK, Stage.RAW_ERROR)}


def test_the_stock_base_crashing_under_a_custom_target_alone_measures_it_again(tmp_path):
    """Only T wanted (the stock result reused): the stock export ran as its base."""
    settled, again = lost_targets(GROUP, _phase(tmp_path, f"{STOCK}|export"), "timed out", (T,))
    assert settled == {} and again == (T,)


def test_a_crash_of_the_eager_model_loses_the_group_whole(tmp_path):
    """PyTorch's own references are every target's: nothing to measure again."""
    for reached in (f"{STOCK}|reference", f"{T}|dynamic-reference", "", f"{STOCK}|garbled"):
        settled, again = lost_targets(GROUP, _phase(tmp_path, reached), "timed out", (STOCK, T))
        assert set(settled) == {STOCK, T} and again == (), reached

"""A worker lost while measuring one target of a group keeps what the others finished."""

import pickle

from opsweep.artifact.data import STOCK
from opsweep.engine.pool import lost_group
from opsweep.model import Example, Outcome, Stage, TensorArg

T = "tables.py:TABLE"
GROUP = [Example((TensorArg((2, 3), "float32"),), seed=s) for s in (1, 2)]


def outcomes(stage, dynamic=None):
    return [Outcome(stage, e.signature, e.dtype, e.rank, e.size, "", dynamic) for e in GROUP]


def test_the_finished_target_is_kept_and_the_lost_one_recorded_where_it_was(tmp_path):
    phase = tmp_path / "0-0"
    stock = outcomes(Stage.OK, Stage.OK)
    phase.with_name("0-0.static").write_bytes(pickle.dumps(
        ({STOCK: outcomes(Stage.OK), T: outcomes(Stage.OK)}, {STOCK: stock})))
    phase.write_text(f"{T}|dynamic-export")
    lost = lost_group(GROUP, phase, "worker killed by SIGSEGV", (STOCK, T))
    assert lost[STOCK] == stock
    assert {(o.stage, o.dynamic) for o in lost[T]} == {(Stage.OK, Stage.RAW_ERROR)}
    assert "SIGSEGV during dynamic-export" in lost[T][0].dynamic_error


def test_a_target_not_reached_is_lost_at_the_phase_reached(tmp_path):
    phase = tmp_path / "0-0"
    phase.write_text(f"{STOCK}|export")
    lost = lost_group(GROUP, phase, "timed out", (STOCK, T))
    assert {o.stage for t in (STOCK, T) for o in lost[t]} == {Stage.RAW_ERROR}
    assert lost[T][0].error == "WorkerLost: timed out during export"


def test_a_target_not_started_when_a_dynamic_re_export_was_lost_is_a_raw_error(tmp_path):
    phase = tmp_path / "0-0"
    phase.with_name("0-0.static").write_bytes(pickle.dumps(({STOCK: outcomes(Stage.OK)}, {})))
    phase.write_text(f"{STOCK}|dynamic-reference")
    lost = lost_group(GROUP, phase, "timed out", (STOCK, T))
    assert {(o.stage, o.dynamic) for o in lost[STOCK]} == {(Stage.OK, Stage.LOST)}
    assert {o.stage for o in lost[T]} == {Stage.RAW_ERROR}
    assert lost[T][0].error == "WorkerLost: timed out during dynamic-reference"


def test_an_empty_or_unreadable_phase_file(tmp_path):
    phase = tmp_path / "0-0"
    assert {o.stage for o in lost_group(GROUP, phase, "timed out")[STOCK]} == {Stage.LOST}
    phase.write_text(f"{STOCK}|garbled")
    lost = lost_group(GROUP, phase, "timed out")[STOCK]
    assert {o.stage for o in lost} == {Stage.RAW_ERROR}
    assert lost[0].error == "WorkerLost: timed out during garbled"


def test_phase_files_go_to_shared_memory_where_there_is_a_writable_one(tmp_path, monkeypatch):
    from opsweep.engine import pool
    shm = tmp_path / "shm"
    monkeypatch.setattr(pool, "_SHARED_MEMORY", shm)
    assert pool.phase_root() is None  # not there: the system's temporary directory
    shm.mkdir()
    assert pool.phase_root() == str(shm)
    assert pool.phase_root(in_memory=False) is None  # the previous engine's place
    shm.chmod(0o500)
    try:
        import os
        if os.geteuid() != 0:  # root writes anywhere; access() says so
            assert pool.phase_root() is None
    finally:
        shm.chmod(0o700)


def test_a_collected_group_leaves_no_phase_file(tmp_path):
    """Finished or lost, a group's phase files are read, then removed: a sweep of the whole
    catalog would otherwise keep two per group until it ends."""
    from concurrent.futures import Future

    from opsweep.engine.pool import Pending
    from opsweep.engine.procpool import TaskTimedOut
    finished, lost = Future(), Future()
    finished.set_result(({STOCK: outcomes(Stage.OK)}, {}))
    lost.set_exception(TaskTimedOut())
    for name, future in (("0", finished), ("1", lost)):
        phase = tmp_path / name
        phase.write_text(f"{STOCK}|runtime")
        phase.with_name(f"{name}.static").write_bytes(pickle.dumps(({}, {})))
        got = Pending(future, GROUP, phase, (STOCK,)).outcomes()
        assert not list(tmp_path.iterdir()), name
    assert got[STOCK][0].error == "WorkerLost: timed out during runtime"  # read before removed

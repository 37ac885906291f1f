"""The worker pool's promise: every task ends, in a bounded time, whatever its workers do.

Real spawned processes running the standard library's own functions (nothing to import
but the pool's module, so each worker starts in a fraction of a second)."""

import multiprocessing
import operator
import os
import time
from concurrent.futures import wait
from pathlib import Path

import pytest

from opsweep.engine.procpool import (PoolStopped, ProcessPool, TaskTimedOut, WorkerDied,
                                     WorkersCannotStart)

SPAWN = multiprocessing.get_context("spawn")
#: the longest any future here may take: far above what each takes (under a second)
BOUND = 60


def _workers() -> list:
    return [p for p in multiprocessing.active_children() if p.name == "opsweep-worker"]


def _dead(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


@pytest.fixture
def pool():
    pools = []

    def make(**options) -> ProcessPool:
        pools.append(ProcessPool(SPAWN, 2, **options))
        return pools[-1]

    yield make
    for p in pools:
        p.stop()
    assert not _workers()  # stopping leaves no worker behind


def test_every_worker_killed_at_once_is_replaced_and_the_next_tasks_run(pool):
    workers = pool()
    assert workers.submit(operator.mul, None, 6, 7).result(BOUND) == 42
    pids = [p.pid for p in _workers()]
    for pid in pids:  # idle, or still starting: no task of theirs is lost
        os.kill(pid, 9)
    deadline = time.monotonic() + BOUND
    while not all(_dead(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    futures = [workers.submit(operator.mul, None, n, n) for n in range(6)]
    assert [f.result(BOUND) for f in futures] == [n * n for n in range(6)]
    assert not {p.pid for p in _workers()} & set(pids)


def test_a_task_whose_worker_dies_ends_with_how_it_died(pool):
    workers = pool()
    with pytest.raises(WorkerDied) as died:
        workers.submit(os.abort, None).result(BOUND)
    assert died.value.exitcode == -6
    assert workers.submit(operator.add, None, 1, 2).result(BOUND) == 3


def test_a_task_over_its_time_limit_is_killed_and_the_pool_goes_on(pool):
    workers = pool()
    with pytest.raises(TaskTimedOut):
        workers.submit(time.sleep, 0.5, 600).result(BOUND)
    assert workers.submit(operator.add, None, 1, 2).result(BOUND) == 3


def test_workers_that_die_as_they_start_fail_the_waiting_tasks_instead_of_respawning(pool):
    workers = pool(initializer=os.abort)
    with pytest.raises(WorkersCannotStart, match="workers in a row died before they were ready"):
        workers.submit(operator.add, None, 1, 2).result(BOUND)
    with pytest.raises(WorkersCannotStart):  # and so does every later one, at once
        workers.submit(operator.add, None, 1, 2).result(0)


def test_recycled_workers_keep_every_result(pool):
    """A worker leaves right after its last result: the result is read before its exit."""
    workers = pool(max_tasks=1)
    futures = [workers.submit(operator.mul, None, n, 2) for n in range(8)]
    assert [f.result(BOUND) for f in futures] == [2 * n for n in range(8)]


def test_stop_ends_every_task_it_did_not_finish(pool):
    workers = pool()
    futures = [workers.submit(time.sleep, None, 600) for _ in range(4)]
    while not any(f.running() for f in futures):
        time.sleep(0.01)
    workers.stop()
    done, _ = wait(futures, timeout=0)
    assert len(done) == 4
    assert all(isinstance(f.exception(), PoolStopped) for f in futures)


def test_a_workers_file_descriptors_go_to_its_output_file(pool, tmp_path, capfd):
    workers = pool(output=tmp_path)
    assert workers.submit(os.write, None, 2, b"from fd 2\n").result(BOUND) == 10
    assert workers.submit(os.write, None, 1, b"from fd 1\n").result(BOUND) == 10
    workers.stop()
    said = "".join(p.read_text() for p in tmp_path.glob("worker-*.txt"))
    assert "from fd 2" in said and "from fd 1" in said
    assert "from fd" not in "".join(capfd.readouterr())

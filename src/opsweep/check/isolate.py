"""`opsweep check --jobs N`: each model loaded and checked in a worker process of the
sweep's own pool (`engine.procpool.ProcessPool`), so that a model whose check kills its
process (an abort or a segmentation fault in the exporter or onnxruntime, a hang past
the deadline) costs that model alone: it is reported as a machine failure, naming the
signal, and every other model is still checked. The reports come back in the order the
models were given, whatever order they finish in.

A worker is a fork of a server process that imported torch and the exporter's stack
once, what a first export imports included (`engine.forkserver.preloaded`,
`check.preload`; spawned where the platform has no fork server), so
nothing of this process's state, threads or torch's thread pool, is inherited; it is set
up once with the table and the policy and checks one model after another; a worker that
died is replaced by the pool.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

from opsweep.artifact.data import Artifact
from opsweep.capture.cases import load_model
from opsweep.check.report import Report
from opsweep.check.run import check
from opsweep.engine.adapter import quiet_exporter
from opsweep.engine.forkserver import preloaded
from opsweep.engine.procpool import (
    PoolStopped,
    ProcessPool,
    TaskTimedOut,
    WorkerDied,
    WorkersCannotStart,
    describe_exit,
)
from opsweep.engine.runner import quiet_runtime
from opsweep.engine.worker import thread_only_progress_lock
from opsweep.errors import ModelError, UsageError
from opsweep.policy import Policy

#: what the workers' fork server imports once for them all: this module, then what every
#: worker's first export imports (opsweep.check.preload)
PRELOAD = (__name__, "opsweep.check.preload")

#: how long one model's check may take in a worker before the worker is killed (seconds)
TIMEOUT = 900.0


@dataclass(frozen=True)
class Lost:
    """A model whose worker died or went silent before it sent a report: a machine
    failure, not a verdict on the model."""

    source: str
    why: str  # "worker killed by SIGABRT", "no report within 900 s (its worker was killed)"

    @property
    def name(self) -> str:
        return self.source

    @property
    def failed(self) -> bool:
        return True

    def line(self) -> str:
        return (f"{self.source}: machine failure: {self.why} while checking it; no verdict "
                "(the other models were checked)")

    def to_data(self) -> dict:
        """Its entry in the record: no uses, no verdict, failed, and why."""
        return {"name": self.name, "source": self.source, "lost": self.why, "uses": [],
                "verdict": None, "failed": True}


@dataclass(frozen=True)
class Setup:
    """What every worker checks against, sent once as it starts."""

    artifact: Artifact
    excluded: Mapping[str, str]
    export: bool
    other: Artifact | None
    policy: Policy | None
    targets: tuple[str, ...] = ()  # the other targets each model is checked with


@dataclass(frozen=True)
class _Bad:
    """A model that cannot be loaded or run in eager PyTorch: bad input, as inline."""

    message: str


_SETUP: list[Setup] = []  # the worker's, set by _init


def _init(setup: Setup) -> None:
    """A worker's set-up: the exporter and onnxruntime quiet, as inline, and no
    semaphore left behind for the resource tracker (as the sweep's workers)."""
    quiet_exporter()
    quiet_runtime()
    thread_only_progress_lock()
    _SETUP[:] = [setup]


def check_one(source: str) -> Report | _Bad:
    """In a worker: `source` loaded and checked; its report without the decomposed
    program (which stays in the worker)."""
    (setup,) = _SETUP
    try:
        case = load_model(source)
    except ModelError as exc:
        return _Bad(str(exc))
    report = check(case, setup.artifact, setup.excluded, export=setup.export,
                   other=setup.other, policy=setup.policy, targets=setup.targets)
    return replace(report, capture=replace(report.capture, program=None))


def why_lost(exc: BaseException, timeout: float) -> str | None:
    """The machine failure a pool's exception means, in words; None: not one (the
    check itself raised)."""
    if isinstance(exc, WorkerDied):
        return describe_exit(exc)
    if isinstance(exc, TaskTimedOut):
        return f"no report within {timeout:g} s (its worker was killed)"
    if isinstance(exc, (WorkersCannotStart, PoolStopped)):
        return f"no worker could check it ({exc})"
    return None


def check_isolated(sources: Sequence[str], setup: Setup, jobs: int,
                   timeout: float = TIMEOUT) -> list[Report | Lost]:
    """Each of `sources` checked in a worker, `jobs` at a time; in their order. A model
    that cannot be loaded is bad input (UsageError, the first in order), as inline."""
    from multiprocessing.reduction import ForkingPickler  # only when models go to workers
    # the artifact's read-only mappings travel to a worker as the dicts they show
    ForkingPickler.register(MappingProxyType, _proxy)
    with (tempfile.TemporaryDirectory(prefix="opsweep-check-") as output,
          preloaded(list(PRELOAD)) as context):
        pool = ProcessPool(context, max(1, min(jobs, len(sources))),
                           initializer=_init, initargs=(setup,), output=Path(output))
        try:
            futures = [pool.submit(check_one, timeout, s) for s in sources]
            done = [_settle(s, f, timeout) for s, f in zip(sources, futures)]
        finally:
            pool.stop()
    bad = next((d for d in done if isinstance(d, _Bad)), None)
    if bad is not None:
        raise UsageError(bad.message)
    return [d for d in done if not isinstance(d, _Bad)]


def _proxy(proxy: MappingProxyType) -> tuple:
    return _as_proxy, (dict(proxy),)


def _as_proxy(items: dict) -> MappingProxyType:
    return MappingProxyType(items)


def _settle(source: str, future, timeout: float) -> Report | Lost | _Bad:
    try:
        return future.result()
    except Exception as exc:
        why = why_lost(exc, timeout)
        if why is None:
            raise
        return Lost(source, why)

"""The worker's side of the pool: its set-up (the catalog, one exporter per target), made
once per process, and the groups it measures with it.

A worker forked from the set-up server (:mod:`opsweep.engine.forkserver`) inherits a
set-up that server made; `init` keeps it when it is the one asked for. The pool's side
(:mod:`opsweep.engine.pool`) submits `canary` and `run` and reads back, through the phase
protocol (:mod:`opsweep.engine.phase`), where a lost worker had got to.

The measuring modules (:mod:`~opsweep.engine.runner`, :mod:`~opsweep.engine.group`: onnx,
onnxruntime) are imported by the worker as it sets up, never by the sweep's own process:
a stack that cannot import is then one result (``ExporterBroken``), not a crash.
"""

from __future__ import annotations

import json
import os
import pickle
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from opsweep.catalog.draw import Profile
from opsweep.catalog.load import Catalog, load_catalog
from opsweep.engine.adapter import error_line, quiet_exporter
from opsweep.engine.cache import ExportCache
from opsweep.engine.canary import IMPORT_STAGE, run_canary
from opsweep.engine.sweepconfig import SweepConfig, Tuning
from opsweep.engine.exporters import sweep_exporters
from opsweep.engine.phase import Phase, Reached, static_file
from opsweep.errors import ExporterBroken
from opsweep.model import Example, OpSpec, Outcome
from opsweep.policy import read as read_policy
from opsweep.targets import STOCK_TARGET, Kind, Target, is_stock

Outcomes = dict[str, list[Outcome]]  # by target


@contextmanager
def one_thread() -> Iterator[None]:
    """Measure as a worker does (`init`): with one intra-op thread. A reduction's float16 or
    bfloat16 result depends on how many threads split it, so a sweep measuring in its own
    process (--jobs 0) records the same errors as a pooled one only so; the process's
    setting is restored on the way out."""
    import torch  # the measuring stack: only once a sweep measures in this process

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def encode(config: SweepConfig) -> str:
    """A sweep's configuration for the set-up server (JSON), with this process's PID and
    working directory."""
    data = asdict(config)
    return json.dumps({"parent": os.getpid(), "cwd": os.getcwd(), **data,
                       "spec_dirs": [str(d) for d in config.spec_dirs],
                       "cache": None if config.cache is None else str(config.cache)})


def decode(text: str) -> SweepConfig | None:
    """The configuration in `text`, or None unless this process's parent wrote it, in this
    working directory (its relative paths would name other files elsewhere)."""
    data = json.loads(text)
    if data.pop("parent") != os.getppid() or data.pop("cwd") != os.getcwd():
        return None
    builtin = data["builtin"]
    return SweepConfig(**{
        **data, "profile": Profile(**data["profile"]),
        "spec_dirs": tuple(Path(d) for d in data["spec_dirs"]),
        "builtin": builtin if isinstance(builtin, bool) else tuple(builtin),
        "targets": tuple(Target(Kind(t["kind"]), t["table"], t["opset"]) for t in data["targets"]),
        "tuning": Tuning(**data["tuning"]),
        "cache": None if data["cache"] is None else Path(data["cache"])})


def wanted_outcomes(spec: OpSpec, group: list[Example], exporters: Mapping[str, object],
                targets: tuple[str, ...], phase: Phase, dynamic: bool, tuning: Tuning,
                checkpoint=lambda _s, _f: None, cache=None,
                digest: str | None = None, base: bool = True, policy: str = "") -> Outcomes:
    """The wanted targets' outcomes (engine.group.run_targets over them, with `tuning`'s
    shortcut and argument recording, and the export `cache` for the spec of `digest`); the
    stock exporter always runs first (the base of the shortcut), even when only a custom
    target is wanted, unless `base` is False: then only the wanted targets run, each in
    full (no shortcut without the stock export to base it on). `policy`: the tolerance
    policy's file ("": the built-in one)."""
    from opsweep.engine.group import run_targets as run_all  # the measuring stack, as above
    stock = next(name for name in exporters if is_stock(name))
    used = ({stock: exporters[stock]} if base else {}) | {t: exporters[t] for t in targets}
    got = run_all(spec, group, used, phase, dynamic=dynamic,  # type: ignore[arg-type]
                  checkpoint=checkpoint, shortcut=tuning.shortcut and stock in used,
                  arguments=tuning.arguments, cache=cache, digest=digest,
                  policy=read_policy(policy))
    return {t: got[t] for t in targets}


def open_cache(directory: str | Path | None):
    """The export cache in `directory` (engine.cache), or None."""
    return ExportCache(directory) if directory else None


_WORKER: dict[str, object] = {}


def init(setup: SweepConfig) -> None:
    """A worker's set-up. What fails here would fail every task: it is kept and raised
    as ExporterBroken by each task (a worker that dies in its initializer is respawned
    forever, and says nothing). A worker forked from a server that made this very set-up
    (:mod:`opsweep.engine.forkserver`) keeps what it inherited."""
    if _WORKER.get("setup") == setup:
        return
    _WORKER.clear()
    _WORKER["setup"] = setup
    try:
        import torch  # the measuring stack: in the worker only (see the module's docstring)

        from opsweep.engine.runner import quiet_runtime
        torch.set_num_threads(1)
        quiet_runtime(setup.verbose)
        if not setup.verbose:
            quiet_exporter()
        thread_only_progress_lock()
        _WORKER["catalog"] = load_catalog(setup.spec_dirs, check_draws=False,
                                          builtin=setup.builtin)
        _WORKER["exporters"] = sweep_exporters(setup)
        _WORKER["cache"] = open_cache(str(setup.cache) if setup.cache is not None else None)
    except Exception as exc:
        _WORKER["broken"] = error_line(exc)


def thread_only_progress_lock() -> None:
    """Give tqdm a thread lock before the exporter's passes make their first progress bar.

    torch.fx's interpreter opens a tqdm bar, and tqdm's first bar in a process makes a
    multiprocessing semaphore that Python's resource tracker follows. A worker the pool
    stops at the end of a sweep never releases it, and the tracker then warns of a leaked
    semaphore on the user's terminal (seen in 1 of 3 sweeps). A worker runs its tasks one at
    a time and shares no bar with another process, so a thread lock is all tqdm needs."""
    try:
        from tqdm import tqdm  # comes with the exporter's stack; without it, no bar to lock
    except ImportError:  # no tqdm, no bar, no semaphore
        return
    tqdm.set_lock(threading.RLock())


def _ready() -> None:
    if "broken" in _WORKER:
        raise ExporterBroken(STOCK_TARGET.name, IMPORT_STAGE, str(_WORKER["broken"]))


def canary() -> dict[str, str]:
    """The optional targets this worker's stack does not have, with why (see run_canary)."""
    _ready()
    return run_canary(_WORKER["exporters"])  # type: ignore[arg-type]


def run(spec_name: str, targets: tuple[str, ...], group: list[Example],
        phase_file: str, dynamic: bool, digest: str | None = None, alone: bool = False
        ) -> tuple[Outcomes, dict[str, dict[str, int]]]:
    """One group, in a worker: the shortcuts as the worker's set-up says (`SweepConfig.tuning`),
    the export cache used for the spec of `digest`; `alone`: the targets without the stock
    exporter as their base (wanted_outcomes). With the outcomes, what the group did
    with the cache (engine.cache.ExportCache.take_counts)."""
    _ready()
    catalog: Catalog = _WORKER["catalog"]  # type: ignore[assignment]

    def phase(reached: Reached) -> None:
        with open(phase_file, "w") as handle:
            handle.write(reached.encode())

    def checkpoint(static: dict, final: dict) -> None:
        with open(static_file(Path(phase_file)), "wb") as handle:
            pickle.dump((static, final), handle)

    setup: SweepConfig = _WORKER["setup"]  # type: ignore[assignment]
    cache = _WORKER.get("cache")
    outcomes = wanted_outcomes(catalog.specs[spec_name], group, _WORKER["exporters"],  # type: ignore[arg-type]
                               targets, phase, dynamic, setup.tuning, checkpoint, cache, digest,
                               base=not alone, policy=setup.policy)
    return outcomes, (cache.take_counts() if cache is not None else {})  # type: ignore[attr-defined]

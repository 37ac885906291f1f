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
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from opsweep.catalog.load import Catalog, load_catalog
from opsweep.engine.adapter import error_line, quiet_exporter
from opsweep.engine.cache import ExportCache
from opsweep.engine.canary import IMPORT_STAGE, run_canary
from opsweep.engine.config import Tuning
from opsweep.engine.fastpath import make_exporter
from opsweep.engine.phase import Phase, Reached, static_file
from opsweep.engine.torchscript import TORCHSCRIPT, TorchScriptExporter
from opsweep.engine.translations import load
from opsweep.errors import ExporterBroken
from opsweep.model import STOCK, Example, OpSpec, Outcome

Outcomes = dict[str, list[Outcome]]  # by target


@dataclass(frozen=True)
class SetUp:
    """What a worker sets up (`init`): the catalog with these spec
    directories, and one exporter per target (`fast`: the fast path, taking the shortcuts
    `options`)."""

    spec_dirs: tuple[Path, ...]
    fast: bool
    translations: tuple[str, ...]
    verbose: bool
    options: Tuning = Tuning()
    torchscript: bool = False  # also the TorchScript exporter (the `torchscript` target)
    cache: str | None = None  # the export cache's directory (engine.cache), or none
    builtin: bool | tuple[str, ...] = True  # the built-in catalog, as the sweep loaded it

    def encode(self) -> str:
        """For the server, with this process's PID and working directory."""
        return json.dumps({"parent": os.getpid(), "cwd": os.getcwd(),
                           **asdict(self), "spec_dirs": [str(d) for d in self.spec_dirs]})

    @classmethod
    def decode(cls, text: str) -> SetUp | None:
        """The set-up in `text`, or None unless this process's parent wrote it, in this
        working directory (its relative paths would name other files elsewhere)."""
        data = json.loads(text)
        if data.pop("parent") != os.getppid() or data.pop("cwd") != os.getcwd():
            return None
        return cls(**{**data, "spec_dirs": tuple(Path(d) for d in data["spec_dirs"]),
                      "translations": tuple(data["translations"]),
                      "builtin": data["builtin"] if isinstance(data["builtin"], bool)
                      else tuple(data["builtin"]),
                      "options": Tuning(**data["options"])})



def make_exporters(fast: bool, translations: Sequence[str],
                   options: Tuning = Tuning(), torchscript: bool = False) -> dict[str, object]:
    """One exporter per target: the stock one, then one per translation table, each taking
    the fast path's shortcuts `options` (SweepConfig.tuning), then with `torchscript` the
    TorchScript exporter (never a fast path)."""
    exporters: dict[str, object] = {STOCK: make_exporter(fast, options=options)}
    tables = {STOCK: "none"}
    for text in translations:
        info, table = load(text)
        exporters[info.name] = make_exporter(fast, table, options)
        tables[info.name] = info.digest
    if torchscript:
        exporters[TORCHSCRIPT] = TorchScriptExporter()
        tables[TORCHSCRIPT] = "none"
    for name, exporter in exporters.items():  # what the export cache keys it by
        exporter.identity = (f"{type(exporter).__name__}:{getattr(exporter, 'path', '')}:"  # type: ignore[attr-defined]
                             f"opset {getattr(exporter, 'opset', '')}:table {tables[name]}:"
                             f"{options!r}")
    keys = {key.name() for e in exporters.values() for key in (e.custom_translation_table or {})
            if callable(getattr(key, "name", None))}  # type: ignore[attr-defined]
    if keys and hasattr(exporters[STOCK], "watch"):
        exporters[STOCK].watch(keys)  # type: ignore[attr-defined]
    return exporters


def wanted_outcomes(spec: OpSpec, group: list[Example], exporters: Mapping[str, object],
                targets: tuple[str, ...], phase: Phase, dynamic: bool, tuning: Tuning,
                checkpoint=lambda _s, _f: None, cache=None,
                digest: str | None = None, base: bool = True) -> Outcomes:
    """The wanted targets' outcomes (engine.group.run_targets over them, with `tuning`'s
    shortcut and argument recording, and the export `cache` for the spec of `digest`); the
    stock exporter always runs first (the base of the shortcut), even when only a custom
    target is wanted, unless `base` is False: then only the wanted targets run, each in
    full (no shortcut without the stock export to base it on)."""
    from opsweep.engine.group import run_targets as run_all  # the measuring stack, as above
    used = ({STOCK: exporters[STOCK]} if base else {}) | {t: exporters[t] for t in targets}
    got = run_all(spec, group, used, phase, dynamic=dynamic,  # type: ignore[arg-type]
                  checkpoint=checkpoint, shortcut=tuning.shortcut and STOCK in used,
                  arguments=tuning.arguments, cache=cache, digest=digest)
    return {t: got[t] for t in targets}


def open_cache(directory: str | None):
    """The export cache in `directory` (engine.cache), or None."""
    return ExportCache(directory) if directory else None


_WORKER: dict[str, object] = {}


def init(setup: SetUp) -> None:
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
        _WORKER["exporters"] = make_exporters(setup.fast, setup.translations, setup.options,
                                              setup.torchscript)
        _WORKER["cache"] = open_cache(setup.cache)
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
        raise ExporterBroken(STOCK, IMPORT_STAGE, str(_WORKER["broken"]))


def canary() -> dict[str, str]:
    """The optional targets this worker's stack does not have, with why (see run_canary)."""
    _ready()
    return run_canary(_WORKER["exporters"])  # type: ignore[arg-type]


def run(spec_name: str, targets: tuple[str, ...], group: list[Example],
        phase_file: str, dynamic: bool, digest: str | None = None, alone: bool = False
        ) -> tuple[Outcomes, dict[str, dict[str, int]]]:
    """One group, in a worker: the shortcuts as the worker's set-up says (`SetUp.options`),
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

    setup: SetUp = _WORKER["setup"]  # type: ignore[assignment]
    cache = _WORKER.get("cache")
    outcomes = wanted_outcomes(catalog.specs[spec_name], group, _WORKER["exporters"],  # type: ignore[arg-type]
                               targets, phase, dynamic, setup.options, checkpoint, cache, digest,
                               base=not alone)
    return outcomes, (cache.take_counts() if cache is not None else {})  # type: ignore[attr-defined]

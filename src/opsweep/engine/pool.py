"""Worker isolation: every signature group runs in a pool of worker processes
(:mod:`opsweep.engine.procpool`), so a crash or a hang costs only its group.

A worker loads the catalog and one exporter per target once, says each step it
reaches (:mod:`opsweep.engine.phase`) in the group's phase file, and saves each target's
outcomes as they finish. When it dies or overruns the group's time budget, the
group's outcomes are what had finished, the crash or the hang filed against the target
whose model the worker was measuring, at the step reached (`lost_targets`); the targets
of the group it had not reached are measured again in another worker. Any number of
workers may die at once, at any moment: the pool replaces them and every group ends.
Before any spec, the canary (``x + y``) goes through a worker of the same pool: a pin set
that cannot export at all is one `ExporterBroken`, not hundreds of failures.

What the workers print (onnxruntime's assertion text before it aborts) goes to files the
sweep reads back (`Workers.output`, for the run log), never to the terminal; with
`--verbose` it goes to the terminal as before.

`--jobs 0` runs the same set-up, canary and groups in this process, without
isolation (for debugging).
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import wait
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from opsweep.engine import worker
from opsweep.engine.adapter import error_line, quiet_exporter
from opsweep.engine.canary import IMPORT_STAGE, import_error, run_canary
from opsweep.engine.sweepconfig import SweepConfig
from opsweep.engine.forkserver import worker_context
from opsweep.engine.owned import OUTPUT_PREFIX, PHASES_PREFIX, owned_directory
from opsweep.engine.phase import Reached, Step, ignore, label_of, static_file
from opsweep.engine.procpool import (PoolStopped, ProcessPool, TaskTimedOut, WorkerDied,
                                     WorkersCannotStart, describe_exit)
from opsweep.engine.cache import merge_counts
from opsweep.engine.exporters import sweep_exporters
from opsweep.engine.worker import Outcomes, open_cache, wanted_outcomes
from opsweep.errors import WORKER_LOST, ExporterBroken, PoolBroken
from opsweep.model import Example, OpSpec, Outcome, Stage
from opsweep.targets import STOCK, is_stock

#: Seconds each example of a group adds to the group's time budget (one onnxruntime run
#: and one comparison of small tensors take milliseconds; the export has its own timeout).
PER_RUN_SECONDS = 1.0
#: How long a worker may take to set itself up before it counts as stuck (it takes seconds;
#: never less than the sweep's --timeout).
STARTING_SECONDS = 300.0
#: The lines of one worker's output the run log keeps (its last ones), read from at most
#: its last OUTPUT_BYTES.
OUTPUT_LINES = 200
OUTPUT_BYTES = 1 << 20

def budget(config: SweepConfig, group: Sequence[Example], targets: tuple[str, ...]) -> float:
    """Seconds a group may take: each export (the dynamic re-export and each custom
    target count as exports of their own) plus a little per example."""
    exports = (2 if config.dynamic else 1) * (1 + len({t for t in targets if not is_stock(t)}))
    return exports * (config.timeout + PER_RUN_SECONDS * len(group))


# --- a lost worker ----------------------------------------------------------------

def _reached(phase_file: Path) -> tuple[Reached | None, str]:
    """The step the worker had reached (None: a phase file no worker writes), and its label."""
    try:
        text = phase_file.read_text()
    except FileNotFoundError:
        text = ""
    try:
        reached = Reached.decode(text)
    except ValueError:
        return None, label_of(text)
    return reached, reached.label


def lost_group(group: list[Example], phase_file: Path, why: str,
               targets: tuple[str, ...] = (STOCK,)) -> Outcomes:
    """Each target's outcomes when the worker was lost: what had finished is kept
    (a target's static outcomes, then its dynamic ones); the rest is recorded at the
    step the worker had reached."""
    reached, label = _reached(phase_file)
    error = f"{WORKER_LOST}: {why} during {label}"
    saved = static_file(phase_file)
    static, final = pickle.loads(saved.read_bytes()) if saved.exists() else ({}, {})
    dynamic_stage = Stage.RAW_ERROR if reached is None else reached.step.crash_stage
    # a target whose static export had not finished when a dynamic re-export was lost
    # never got a verdict of its own: raw-error, whatever the step
    stage = Stage.RAW_ERROR if reached is None or reached.dynamic else reached.step.crash_stage
    out = {}
    for t in targets:
        if t in final:
            out[t] = final[t]
        elif t in static:  # the static export had finished: lose only the dynamic re-export
            out[t] = [replace(o, dynamic=dynamic_stage, dynamic_error=error)
                      if o.stage.exported else o for o in static[t]]
        else:
            out[t] = [Outcome(stage, e.signature, e.dtype, e.rank, e.size, error) for e in group]
    return out


def lost_targets(group: list[Example], phase_file: Path, why: str,
                 targets: tuple[str, ...]) -> tuple[Outcomes, tuple[str, ...]]:
    """A lost worker's group: (the outcomes of the targets it settles, the targets to
    measure again). A crash or a hang belongs to the target whose model the worker was
    measuring (the phase file names it): that target's outcomes are lost at the step
    reached, the finished ones are kept, and the targets not reached yet are measured
    again (all of them when the crash was the stock exporter's, run only as their base).
    Lost while computing PyTorch's own references (the eager model, every target's), or
    where the phase names no target, the group is lost whole."""
    reached, _ = _reached(phase_file)
    if reached is None or reached.step is Step.REFERENCE or not reached.target:
        return lost_group(group, phase_file, why, targets), ()
    saved = static_file(phase_file)
    static, final = pickle.loads(saved.read_bytes()) if saved.exists() else ({}, {})
    settled = tuple(t for t in targets if t in final or t in static or t == reached.target)
    again = tuple(t for t in targets if t not in settled)
    return lost_group(group, phase_file, why, settled), again


# --- the sweep's side -------------------------------------------------------------

#: Submits a group again for the targets given, measured without the stock base.
Again = Callable[[tuple[str, ...]], "Pending"]


class Pending:
    """One group given to a worker: its outcomes once it has finished or was lost. With
    `again`, the targets a lost worker had not reached are measured again (a `Pending` of
    their own), and this one is done when that one is."""

    def __init__(self, future, group: list[Example], phase_file: Path,
                 targets: tuple[str, ...], counts: dict | None = None,
                 again: Again | None = None) -> None:
        self._future, self._group, self._phase_file, self._targets = \
            future, group, phase_file, targets
        self._counts = {} if counts is None else counts  # the pool's cache counts
        self._again = again
        self._got: Outcomes | None = None  # this attempt's settled targets
        self._next: Pending | None = None  # the attempt measuring the others again

    def running(self) -> bool:
        return self._next.running() if self._next is not None else self._future.running()

    def wait(self, timeout: float) -> bool:
        """Done within `timeout` seconds?"""
        end = time.monotonic() + timeout
        if self._got is None:
            if not wait([self._future], timeout=timeout).done:
                return False
            self._settle()
        return self._next is None or self._next.wait(max(0.0, end - time.monotonic()))

    def outcomes(self) -> Outcomes:
        """The group's outcomes (once); its phase files are removed then, read no more."""
        if self._got is None:
            self._settle()
        got = dict(self._got or {})
        if self._next is not None:
            got.update(self._next.outcomes())
        return {t: got[t] for t in self._targets}

    def _settle(self) -> None:
        try:
            self._got, again = _collect(self._future, self._group, self._phase_file,
                                        self._targets, self._counts, self._again is not None)
        finally:
            _forget(self._phase_file)
        if again:
            self._next = self._again(again)  # type: ignore[misc]


def _forget(phase_file: Path) -> None:
    """A collected group's phase files, removed: a sweep of the whole catalog would otherwise
    keep two files per group until it ends (some 30000, each a page of memory where the
    phase files live in memory, `phase_root`)."""
    for path in (phase_file, static_file(phase_file)):
        path.unlink(missing_ok=True)


@dataclass(frozen=True)
class _Deferred:
    """--jobs 0: a group measured in this process when its outcomes are wanted."""

    measure: Callable[[], Outcomes]

    def running(self) -> bool:
        return False

    def wait(self, timeout: float) -> bool:
        return True

    def outcomes(self) -> Outcomes:
        return self.measure()


def _collect(future, group: list[Example], phase_file: Path, targets: tuple[str, ...],
             counts: dict, again: bool = False) -> tuple[Outcomes, tuple[str, ...]]:
    """(the outcomes settled, the targets to measure again: only with `again`)."""
    def lost(why: str) -> tuple[Outcomes, tuple[str, ...]]:
        if again:
            return lost_targets(group, phase_file, why, targets)
        return lost_group(group, phase_file, why, targets), ()

    try:
        outcomes, used = future.result()
    except TaskTimedOut:
        return lost("timed out")
    except WorkerDied as exc:
        return lost(describe_exit(exc))
    except (ExporterBroken, WorkersCannotStart, PoolStopped) as exc:
        raise PoolBroken(f"the worker pool broke ({type(exc).__name__}: {exc}); no further "
                         "spec could be measured") from exc
    except Exception as exc:  # the measuring code's own error: no target's crash
        return lost_group(group, phase_file, f"{type(exc).__name__}: {exc}", targets), ()
    merge_counts(counts, used)
    return outcomes, ()


class Workers:
    """Where groups are measured: `submit` one, read its outcomes from the `Pending`."""

    def __init__(self, config: SweepConfig, pool: ProcessPool | None = None,
                 phases: Path | None = None,
                 exporters: Mapping[str, object] | None = None) -> None:
        self._config, self._pool, self._phases = config, pool, phases
        self._exporters = exporters
        self._count = 0
        #: what the groups did with the export cache, by target (engine.cache): loaded,
        #: exported, unusable
        self.cache_counts: dict[str, dict[str, int]] = {}
        self._cache = open_cache(config.cache) if exporters is not None else None
        #: optional targets this pin set does not have (the canary's finding), with why
        self.absent: dict[str, str] = {}
        #: what the workers printed, once the pool has stopped (`worker_output`)
        self.output: list[str] = []

    def submit(self, spec: OpSpec, group: list[Example], targets: tuple[str, ...],
               digest: str | None = None, alone: bool = False) -> Pending | _Deferred:
        """One group of `spec` (of `digest`: the export cache is used only with it);
        `alone`: the targets without the stock exporter as their base (measured again
        after the stock model crashed)."""
        if self._pool is None:
            return _Deferred(lambda: self._inline(spec, group, targets, digest))
        return self._submit_pooled(self._pool, spec, group, targets, digest, alone)

    def _submit_pooled(self, pool: ProcessPool, spec: OpSpec, group: list[Example],
                       targets: tuple[str, ...], digest: str | None, alone: bool) -> Pending:
        config = self._config
        if self._phases is None:
            raise ValueError("a pooled sweep needs a directory for its phase files")
        phase_file = self._phases / str(self._count)
        self._count += 1
        try:
            future = pool.submit(worker.run, budget(config, group, targets), spec.name,
                                       targets, group, str(phase_file), config.dynamic, digest,
                                       alone)
        except PoolStopped as exc:
            raise PoolBroken(f"the worker pool broke ({exc}); no further spec could be "
                             "measured") from exc
        return Pending(future, group, phase_file, targets, self.cache_counts,
                       lambda rest: self._submit_pooled(pool, spec, group, rest, digest, True))

    def _inline(self, spec: OpSpec, group: list[Example], targets: tuple[str, ...],
                digest: str | None) -> Outcomes:
        config = self._config
        if self._exporters is None:
            raise ValueError("measuring in this process needs its exporters (inline_exporters)")
        outcomes = wanted_outcomes(spec, group, self._exporters, targets, ignore,
                                   config.dynamic, config.tuning, cache=self._cache,
                                   digest=digest, policy=config.policy)
        if self._cache is not None:
            merge_counts(self.cache_counts, self._cache.take_counts())
        return outcomes


#: a memory-backed file system for the phase files, where Linux has one
_SHARED_MEMORY = Path("/dev/shm")


def phase_root(in_memory: bool = True) -> str | None:
    """Where a sweep's phase files go: the shared-memory file system where it is a
    directory this process may write (`in_memory`), else None (the system's temporary
    directory). What a phase file holds is the same either way; only a rewrite's cost
    differs (a group rewrites its phase file some twenty times, and a rewrite on disk costs
    many times one in memory: docs/performance.md)."""
    if in_memory and _SHARED_MEMORY.is_dir() and os.access(_SHARED_MEMORY, os.W_OK | os.X_OK):
        return str(_SHARED_MEMORY)
    return None


@contextmanager
def workers(config: SweepConfig) -> Iterator[Workers]:
    """Workers set up and past the canary (raises ExporterBroken if it fails); stopped
    on the way out, then what they printed read back (`Workers.output`)."""
    if config.jobs == 0:
        with worker.one_thread():  # as a worker measures: the same numbers, byte for byte
            exporters, absent = inline_exporters(config)
            inline = Workers(config, exporters=exporters)
            inline.absent = absent
            yield inline
        return
    phase_dir = phase_root(config.tuning.phases_in_memory)
    with (_hash_seed(), owned_directory(phase_dir, PHASES_PREFIX) as phases,
          _output_dir(config.verbose) as output):
        pooled: Workers | None = None
        try:
            with worker_context(config, config.preload, output) as context:
                pool = ProcessPool(context, config.jobs, max_tasks=config.recycle,
                                   initializer=worker.init, initargs=(config,), output=output,
                                   start_timeout=max(STARTING_SECONDS, config.timeout))
                try:
                    absent = _check_stack(pool, config.timeout)
                    pooled = Workers(config, pool, Path(phases))
                    pooled.absent = absent
                    yield pooled
                finally:
                    pool.stop()
        finally:
            if pooled is not None and output is not None:
                pooled.output = worker_output(output)


@contextmanager
def _output_dir(verbose: bool) -> Iterator[Path | None]:
    """Where the workers' (and their set-up server's) output goes: a temporary directory on
    disk (a chatty worker costs no memory), or none with `verbose` (the terminal)."""
    if verbose:
        yield None
        return
    with owned_directory(None, OUTPUT_PREFIX) as directory:
        yield Path(directory)


def worker_output(directory: Path) -> list[str]:
    """What the workers printed, each line after the name of the process that printed it
    (the set-up server, worker N in the order they started); the last OUTPUT_LINES lines of
    each process."""
    def order(path: Path) -> tuple[int, int]:
        number = path.stem.rpartition("-")[2]
        return (1, int(number)) if number.isdigit() else (0, 0)

    lines: list[str] = []
    for path in sorted(directory.glob("*.txt"), key=order):
        with open(path, "rb") as handle:  # a chatty worker's last lines, not all it said
            handle.seek(max(0, path.stat().st_size - OUTPUT_BYTES))
            said = handle.read().decode(errors="replace").splitlines()
        name = path.stem.replace("-", " ")
        if len(said) > OUTPUT_LINES:
            lines.append(f"{name}: ({len(said) - OUTPUT_LINES} earlier lines left out)")
        lines += [f"{name}: {line}" for line in said[-OUTPUT_LINES:]]
    return lines


@contextmanager
def _hash_seed() -> Iterator[None]:
    """Error lines quote sets (unbacked symbols, type constraints) whose order follows
    string hashing: workers (and their replacements) start with a fixed seed so a ci
    artifact is byte-for-byte reproducible."""
    seed = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = "0"
    try:
        yield
    finally:
        if seed is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = seed


def _check_stack(pool: ProcessPool, timeout: float) -> dict[str, str]:
    """The canary, through a worker of the pool the sweep is about to use: the optional
    targets absent from this pin set, with why. Its wait is bounded by the pool's: a
    worker's set-up, then the canary's `timeout`."""
    try:
        return pool.submit(worker.canary, timeout).result()
    except ExporterBroken:
        raise
    except TaskTimedOut:
        raise ExporterBroken(STOCK, Step.EXPORT.value, f"the canary export took over {timeout:.0f}s") from None
    except (WorkerDied, WorkersCannotStart, PoolStopped) as exc:
        why = describe_exit(exc) if isinstance(exc, WorkerDied) else f"{type(exc).__name__}: {exc}"
        raise ExporterBroken(STOCK, IMPORT_STAGE, import_error() or f"workers could not start ({why})"
                             ) from None


def inline_exporters(config: SweepConfig) -> tuple[Mapping[str, object], dict[str, str]]:
    """--jobs 0: the workers' set-up and the canary, in this process: (the exporters, the
    optional targets absent from this pin set)."""
    try:
        from opsweep.engine.runner import quiet_runtime  # the measuring stack, as in a worker
        quiet_runtime(config.verbose)
        if not config.verbose:
            quiet_exporter()
        exporters = sweep_exporters(config)
    except Exception as exc:
        raise ExporterBroken(STOCK, IMPORT_STAGE, error_line(exc)) from None
    return exporters, run_canary(exporters)

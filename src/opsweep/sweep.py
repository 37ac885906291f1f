"""The sweep driver: draw every spec's examples, run signature groups in a
pool of isolated workers, and turn outcomes into per-spec results.

A worker that crashes or hangs costs only its group: the outcome is recorded
at the phase the worker had reached, the worker is replaced, the sweep goes on.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from .adapter import PUBLIC_PATH, Exporter, default_opset, quiet_exporter
from .artifact import Fingerprint, GapCheck, Reuse, SpecResult, gap_check
from .catalog import Catalog, load_catalog
from .draw import Profile, draw_examples, group_by_signature
from .fastpath import FAST_PATH, fast_path_available, make_exporter
from .grade import failure_groups, grade, stage_counts
from .model import Example, OpSpec, Outcome, Stage

#: Where a crash or hang lands, by the phase the worker had reached.
_CRASH_STAGE = {"reference": Stage.INVALID, "export": Stage.RAW_ERROR,
                "checker": Stage.CHECKER, "runtime": Stage.RUNTIME,
                "numerics": Stage.NUMERICS}
#: Seconds each example of a group adds to the group's time budget.
PER_RUN_SECONDS = 5.0


@dataclass(frozen=True)
class SweepConfig:
    profile: Profile
    jobs: int = 2  # 0: run in this process (no isolation; for debugging)
    timeout: float = 180.0  # seconds for one export (plus PER_RUN_SECONDS per example)
    spec_dirs: tuple[Path, ...] = ()
    fast: bool = True  # use the fast path when this torch has the internals it needs

    @property
    def exporter_path(self) -> str:
        return FAST_PATH if self.fast and fast_path_available() else PUBLIC_PATH


@dataclass(frozen=True)
class SpecDone:
    """A progress event: one spec finished."""

    name: str
    index: int
    total: int
    result: SpecResult
    seconds: float


def versions() -> dict[str, str]:
    out = {}
    for dist in ("torch", "onnx", "onnxruntime", "onnxscript"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def current_fingerprint(exporter_path: str = PUBLIC_PATH, opset: int | None = None) -> Fingerprint:
    return Fingerprint(**versions(), opset=default_opset() if opset is None else opset,
                       exporter=exporter_path)


def spec_result(spec: OpSpec, outcomes: Sequence[Outcome], profile: Profile,
                reuse: Reuse = Reuse(False, "measured")) -> SpecResult:
    stages = stage_counts(outcomes)
    gap: GapCheck | None = None
    if spec.gap is not None:
        gap = gap_check(spec.gap.reason, spec.gap.stage, stages)
    return SpecResult(spec.aten_ops, spec.family, profile.name, len(outcomes), stages,
                      failure_groups(outcomes), grade([(stages, spec.nondeterministic)]),
                      spec.nondeterministic, gap, reuse)


# --- worker side -------------------------------------------------------------

_WORKER: dict[str, object] = {}


def _init_worker(spec_dirs: tuple[Path, ...], fast: bool) -> None:
    import torch
    torch.set_num_threads(1)
    quiet_exporter()
    _WORKER["catalog"] = load_catalog(spec_dirs, check_draws=False)
    _WORKER["exporter"] = make_exporter(fast)


def _run_in_worker(spec_name: str, group: list[Example], phase_file: str) -> list[Outcome]:
    from .runner import run_group
    catalog: Catalog = _WORKER["catalog"]  # type: ignore[assignment]

    def phase(name: str) -> None:
        with open(phase_file, "w") as handle:
            handle.write(name)

    return run_group(catalog.specs[spec_name], group, _WORKER["exporter"], phase)  # type: ignore[arg-type]


def _lost_group(group: list[Example], phase_file: Path, why: str) -> list[Outcome]:
    try:
        reached = phase_file.read_text().strip() or "reference"
    except FileNotFoundError:
        reached = "reference"
    stage = _CRASH_STAGE.get(reached, Stage.RAW_ERROR)
    error = f"WorkerLost: {why} during {reached}"
    return [Outcome(stage, e.signature, e.dtype, e.rank, e.size, error) for e in group]


def _describe_exit(exc: BaseException) -> str:
    code = getattr(exc, "exitcode", None)
    if isinstance(code, int) and code < 0:
        try:
            return f"worker killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"worker killed by signal {-code}"
    return f"worker exited ({type(exc).__name__}: {exc})"


# --- driver -------------------------------------------------------------------

def run_sweep(specs: Sequence[OpSpec], config: SweepConfig,
              progress: Callable[[SpecDone], None] = lambda _: None) -> dict[str, SpecResult]:
    """Measure `specs`; returns per-spec results keyed by spec name."""
    plan = {s.name: group_by_signature(draw_examples(s, config.profile)) for s in specs}
    by_name = {s.name: s for s in specs}
    if config.jobs == 0:
        return _run_inline(plan, by_name, config, progress)
    return _run_pool(plan, by_name, config, progress)


def _finish(name, outcomes, by_name, config, results, progress, started) -> None:
    results[name] = spec_result(by_name[name], outcomes, config.profile)
    progress(SpecDone(name, len(results), len(by_name), results[name], time.monotonic() - started))


def _run_inline(plan, by_name, config, progress) -> dict[str, SpecResult]:
    from .runner import run_group
    quiet_exporter()
    exporter = make_exporter(config.exporter_path == FAST_PATH)
    results: dict[str, SpecResult] = {}
    for name, groups in plan.items():
        started = time.monotonic()
        outcomes = [o for g in groups for o in run_group(by_name[name], g, exporter)]
        _finish(name, outcomes, by_name, config, results, progress, started)
    return results


def _run_pool(plan, by_name, config, progress) -> dict[str, SpecResult]:
    from pebble import ProcessPool
    results: dict[str, SpecResult] = {}
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="opsweep-phases-") as phases, \
            ProcessPool(max_workers=config.jobs, initializer=_init_worker,
                        initargs=(tuple(config.spec_dirs), config.exporter_path == FAST_PATH),
                        context=context) as pool:
        pending = []
        for name, groups in plan.items():
            futures = []
            for k, group in enumerate(groups):
                phase_file = Path(phases, f"{len(pending)}-{k}")
                budget = config.timeout + PER_RUN_SECONDS * len(group)
                futures.append((group, phase_file,
                                pool.submit(_run_in_worker, budget, name, group, str(phase_file))))
            pending.append((name, futures, time.monotonic()))
        for name, futures, started in pending:
            outcomes: list[Outcome] = []
            for group, phase_file, future in futures:
                outcomes += _collect(future, group, phase_file)
            _finish(name, outcomes, by_name, config, results, progress, started)
    return results


def _collect(future, group: list[Example], phase_file: Path) -> list[Outcome]:
    try:
        return future.result()
    except FutureTimeout:
        return _lost_group(group, phase_file, "timed out")
    except Exception as exc:
        from pebble import ProcessExpired
        if isinstance(exc, ProcessExpired):
            return _lost_group(group, phase_file, _describe_exit(exc))
        return _lost_group(group, phase_file, f"{type(exc).__name__}: {exc}")

"""The sweep driver: decide what to re-measure, draw every spec's examples,
run signature groups in a pool of isolated workers, checkpoint each finished
spec, and assemble the artifact.

A worker that crashes or hangs costs only its group: the outcome is recorded
at the phase the worker had reached, the worker is replaced, the sweep goes on.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import pickle
import signal
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from . import artifact as art
from .adapter import PUBLIC_PATH, default_opset, quiet_exporter
from .artifact import (
    PINS,
    STOCK,
    Artifact,
    Fingerprint,
    GapCheck,
    SpecResult,
    Translations,
    gap_check,
)
from .catalog import Catalog, load_catalog
from .draw import Profile, draw_examples, group_by_signature
from .errors import ArtifactError, ExporterBroken, PoolBroken
from .fastpath import FAST_PATH, fast_path_available, make_exporter
from .grade import (
    Counts,
    dynamic_counts,
    dynamic_failures,
    failure_groups,
    grade,
    outcome_counts,
    stage_counts,
)
from .journal import Journal, journal_path, run_path, write_run
from .model import Example, OpSpec, Outcome, Stage
from .reuse import Decision, decide, spec_digest
from .shard import DEFAULT_COST, assign

#: Where a crash or hang lands, by the phase the worker had reached.
_CRASH_STAGE = {"reference": Stage.LOST, "export": Stage.RAW_ERROR,
                "checker": Stage.CHECKER, "runtime": Stage.RUNTIME,
                "numerics": Stage.NUMERICS}
#: Static outcomes of a group whose worker was lost during the dynamic re-export.
_STATIC_SUFFIX = ".static"
#: Seconds each example of a group adds to the group's time budget (one onnxruntime run
#: and one comparison of small tensors take milliseconds; the export has its own timeout).
PER_RUN_SECONDS = 1.0


@dataclass(frozen=True)
class SweepConfig:
    profile: Profile
    jobs: int = 2  # 0: run in this process (no isolation; for debugging)
    timeout: float = 180.0  # seconds for one export (plus PER_RUN_SECONDS per example)
    spec_dirs: tuple[Path, ...] = ()
    fast: bool = True  # use the fast path when this torch has the internals it needs
    translations: tuple[str, ...] = ()  # MODULE:TABLE of each custom-translation target
    dynamic: bool = True  # re-export what exported with the leading dimension dynamic
    verbose: bool = False  # let the exporter's and onnxruntime's own logging through
    #: a custom target takes the stock outcome wherever its table cannot change it
    #: (False: every target measured in full, the previous engine)
    shortcut: bool = True

    @property
    def exporter_path(self) -> str:
        return FAST_PATH if self.fast and fast_path_available() else PUBLIC_PATH


@dataclass(frozen=True)
class Request:
    """What to regenerate, and from what."""

    only: tuple[str, ...] = ()
    out: Path = Path("docs/onnx_support_measured.json")
    previous: Path | None = None  # default: the artifact at `out`, if any
    no_reuse: bool = False
    shard: tuple[int, int] | None = None


@dataclass(frozen=True)
class SpecDone:
    """A progress event: one spec finished (measured, resumed or reused)."""

    name: str
    index: int
    total: int
    result: SpecResult
    target: str = STOCK
    reused: bool = False  # carried over from the previous artifact, not measured


@dataclass(frozen=True)
class SpecsRunning:
    """A progress event: what the workers are busy with now (`spec` or `spec @TABLE`)."""

    names: tuple[str, ...]


def versions() -> dict[str, str]:
    out = {}
    for dist in PINS:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def current_fingerprint(exporter_path: str = PUBLIC_PATH, opset: int | None = None,
                        dynamic: bool = True) -> Fingerprint:
    return Fingerprint(**versions(), opset=default_opset() if opset is None else opset,
                       exporter=exporter_path, dynamic=dynamic)


def spec_result(spec: OpSpec, outcomes: Sequence[Outcome], profile: Profile, digest: str,
                signatures: int, target: str = STOCK) -> SpecResult:
    stages = stage_counts(outcomes)
    dynamic, regressed = dynamic_counts(outcomes)
    gap: GapCheck | None = None
    if spec.gap is not None:
        gap = gap_check(spec.gap.reason, spec.gap.stage, stages,
                        closing=target in spec.gap.closed_by)
    counts = Counts(stages, spec.nondeterministic, dynamic, regressed)
    return SpecResult(spec.aten_ops, spec.family, profile.name, len(outcomes), stages,
                      failure_groups(outcomes), grade([counts]), spec.nondeterministic, gap,
                      digest, signatures, dynamic, regressed, dynamic_failures(outcomes),
                      outcome_counts(outcomes))


# --- worker side -------------------------------------------------------------

_WORKER: dict[str, object] = {}


def make_exporters(fast: bool, translations: Sequence[str]) -> dict[str, object]:
    """One exporter per target: the stock one, then one per translation table."""
    from .translations import load
    exporters: dict[str, object] = {STOCK: make_exporter(fast)}
    for text in translations:
        info, table = load(text)
        exporters[info.name] = make_exporter(fast, table)
    keys = {key.name() for e in exporters.values() for key in (e.custom_translation_table or {})
            if callable(getattr(key, "name", None))}  # type: ignore[attr-defined]
    if keys and hasattr(exporters[STOCK], "watch"):
        exporters[STOCK].watch(keys)  # type: ignore[attr-defined]
    return exporters


def _init_worker(spec_dirs: tuple[Path, ...], fast: bool, translations: tuple[str, ...],
                 verbose: bool = False) -> None:
    """A worker's set-up. What fails here would fail every task: it is kept and raised
    as ExporterBroken by each task (a worker that dies in its initializer is respawned
    forever, and says nothing)."""
    from .adapter import error_line
    try:
        import torch

        from .runner import quiet_runtime  # onnx and onnxruntime, imported once
        torch.set_num_threads(1)
        quiet_runtime(verbose)
        if not verbose:
            quiet_exporter()
        _WORKER["catalog"] = load_catalog(spec_dirs, check_draws=False)
        _WORKER["exporters"] = make_exporters(fast, translations)
    except Exception as exc:
        _WORKER["broken"] = error_line(exc)


def _worker_ready() -> None:
    from .stack import IMPORT_STAGE
    if "broken" in _WORKER:
        raise ExporterBroken(STOCK, IMPORT_STAGE, str(_WORKER["broken"]))


def _canary_in_worker() -> None:
    from .stack import run_canary
    _worker_ready()
    run_canary(_WORKER["exporters"])  # type: ignore[arg-type]


def _run_in_worker(spec_name: str, targets: tuple[str, ...], group: list[Example],
                   phase_file: str, dynamic: bool, shortcut: bool) -> dict[str, list[Outcome]]:
    _worker_ready()
    catalog: Catalog = _WORKER["catalog"]  # type: ignore[assignment]

    def phase(name: str) -> None:
        with open(phase_file, "w") as handle:
            handle.write(name)

    def checkpoint(static: dict, final: dict) -> None:
        with open(phase_file + _STATIC_SUFFIX, "wb") as handle:
            pickle.dump((static, final), handle)

    return _run_targets(catalog.specs[spec_name], group, _WORKER["exporters"], targets,  # type: ignore[arg-type]
                        phase, dynamic, shortcut, checkpoint)


def _run_targets(spec: OpSpec, group: list[Example], exporters: Mapping[str, object],
                 targets: tuple[str, ...], phase, dynamic: bool, shortcut: bool,
                 checkpoint=lambda _s, _f: None) -> dict[str, list[Outcome]]:
    """The wanted targets' outcomes; the stock exporter always runs first (the base of
    the shortcut), even when only a custom target is wanted."""
    from .multitarget import run_targets
    used = {STOCK: exporters[STOCK]} | {t: exporters[t] for t in targets}
    got = run_targets(spec, group, used, phase, dynamic=dynamic,  # type: ignore[arg-type]
                      checkpoint=checkpoint, shortcut=shortcut)
    return {t: got[t] for t in targets}


def _lost_group(group: list[Example], phase_file: Path, why: str,
                targets: tuple[str, ...] = (STOCK,)) -> dict[str, list[Outcome]]:
    """Each target's outcomes when the worker was lost: what had finished is kept
    (a target's static outcomes, then its dynamic ones); the rest is recorded at the
    phase the worker had reached (`target|phase` in the phase file)."""
    try:
        reached = phase_file.read_text().strip() or "reference"
    except FileNotFoundError:
        reached = "reference"
    reached = reached.rpartition("|")[2]
    error = f"WorkerLost: {why} during {reached}"
    saved = phase_file.with_name(phase_file.name + _STATIC_SUFFIX)
    static, final = pickle.loads(saved.read_bytes()) if saved.exists() else ({}, {})
    dynamic_stage = _CRASH_STAGE.get(reached.removeprefix("dynamic-"), Stage.RAW_ERROR)
    stage = _CRASH_STAGE.get(reached, Stage.RAW_ERROR)
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


def _describe_exit(exc: BaseException) -> str:
    code = getattr(exc, "exitcode", None)
    if isinstance(code, int) and code < 0:
        try:
            return f"worker killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"worker killed by signal {-code}"
    return f"worker exited ({type(exc).__name__}: {exc})"


def _collect(future, group: list[Example], phase_file: Path,
             targets: tuple[str, ...]) -> dict[str, list[Outcome]]:
    from concurrent.futures.process import BrokenProcessPool

    from pebble import ProcessExpired
    try:
        return future.result()
    except FutureTimeout:
        return _lost_group(group, phase_file, "timed out", targets)
    except ProcessExpired as exc:
        return _lost_group(group, phase_file, _describe_exit(exc), targets)
    except (ExporterBroken, BrokenProcessPool) as exc:
        raise PoolBroken(f"the worker pool broke ({type(exc).__name__}: {exc}); no further "
                         "spec could be measured") from exc
    except Exception as exc:
        return _lost_group(group, phase_file, f"{type(exc).__name__}: {exc}", targets)


def _check_stack(pool, timeout: float) -> None:
    """The canary, through a worker of the pool the sweep is about to use."""
    from concurrent.futures.process import BrokenProcessPool

    from pebble import ProcessExpired

    from .stack import IMPORT_STAGE, import_error
    try:
        pool.submit(_canary_in_worker, timeout).result()
    except ExporterBroken:
        raise
    except FutureTimeout:
        raise ExporterBroken(STOCK, "export", f"the canary export took over {timeout:.0f}s") from None
    except (ProcessExpired, BrokenProcessPool, RuntimeError) as exc:
        why = _describe_exit(exc) if isinstance(exc, ProcessExpired) else f"{type(exc).__name__}: {exc}"
        raise ExporterBroken(STOCK, IMPORT_STAGE, import_error() or f"workers could not start ({why})"
                             ) from None


# --- measuring ------------------------------------------------------------------

@dataclass(frozen=True)
class _Job:
    """One spec, measured for the given targets together (one task per group)."""

    spec: OpSpec
    digest: str
    targets: tuple[str, ...] = (STOCK,)


def measure(jobs: Sequence[_Job], config: SweepConfig,
            done: Callable[[_Job, str, SpecResult], None],
            running: Callable[[tuple[str, ...]], None] = lambda _: None) -> None:
    """Measure each job's spec, calling `done(job, target, result)` as each
    finishes, in job order, and `running` with the specs the workers are busy with
    whenever that changes. Examples are drawn spec by spec while workers are
    already busy."""
    def finish(job: _Job, groups: list[list[Example]],
               outcomes: list[dict[str, list[Outcome]]]) -> None:
        for t in job.targets:
            done(job, t, spec_result(job.spec, [o for g in outcomes for o in g[t]],
                                     config.profile, job.digest, len(groups), t))

    if not jobs:
        return
    if config.jobs == 0:
        exporters = _inline_exporters(config)
        for job in jobs:
            groups = group_by_signature(draw_examples(job.spec, config.profile))
            finish(job, groups, [_run_targets(job.spec, g, exporters, job.targets, lambda _: None,
                                              config.dynamic, config.shortcut) for g in groups])
        return
    from pebble import ProcessPool
    context = multiprocessing.get_context("spawn")
    # Error lines quote sets (unbacked symbols, type constraints) whose order follows string
    # hashing: workers (and their replacements) start with a fixed seed so a ci artifact is
    # byte-for-byte reproducible.
    seed = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = "0"
    with tempfile.TemporaryDirectory(prefix="opsweep-phases-") as phases:
        pool = ProcessPool(max_workers=config.jobs, initializer=_init_worker,
                           initargs=(tuple(config.spec_dirs), config.exporter_path == FAST_PATH,
                                     tuple(config.translations), config.verbose),
                           context=context)
        try:
            _check_stack(pool, config.timeout)
            _measure_in_pool(pool, jobs, config, Path(phases), finish, running)
        finally:
            pool.stop()
            pool.join()
            if seed is None:
                del os.environ["PYTHONHASHSEED"]
            else:
                os.environ["PYTHONHASHSEED"] = seed


def _inline_exporters(config: SweepConfig) -> dict[str, object]:
    """--jobs 0: the workers' set-up and the canary, in this process."""
    from .adapter import error_line
    from .stack import IMPORT_STAGE, run_canary
    try:
        from .runner import quiet_runtime
        quiet_runtime(config.verbose)
        if not config.verbose:
            quiet_exporter()
        exporters = make_exporters(config.exporter_path == FAST_PATH, config.translations)
    except Exception as exc:
        raise ExporterBroken(STOCK, IMPORT_STAGE, error_line(exc)) from None
    run_canary(exporters)
    return exporters


def _measure_in_pool(pool, jobs, config, phases: Path, finish, running) -> None:
    submitted: list[tuple[_Job, list, list]] = []
    busy: list[tuple[str, ...]] = [()]

    def report_running(k: int) -> None:
        """The specs whose groups a worker is running now (every target of a group runs in
        one task): one per worker."""
        names = tuple(sorted({job.spec.name for job, _, futures in submitted[k:]
                              for _, _, f in futures if f.running()}))
        if names != busy[0]:
            busy[0] = names
            running(names)

    def submit(k: int) -> None:
        job = jobs[k]
        groups = group_by_signature(draw_examples(job.spec, config.profile))
        futures = []
        for g, group in enumerate(groups):
            phase_file = phases / f"{k}-{g}"
            # the dynamic re-export gets its own budget, and so does each target
            exports = (2 if config.dynamic else 1) * (1 + len(set(job.targets) - {STOCK}))
            budget = exports * (config.timeout + PER_RUN_SECONDS * len(group))
            try:
                future = pool.submit(_run_in_worker, budget, job.spec.name, job.targets, group,
                                     str(phase_file), config.dynamic, config.shortcut)
            except RuntimeError as exc:  # pebble: "Unexpected error within the Pool"
                raise PoolBroken(f"the worker pool broke ({exc}); no further spec could be "
                                 "measured") from exc
            futures.append((group, phase_file, future))
        submitted.append((job, groups, futures))

    ahead = 0
    for k in range(len(jobs)):
        # keep a few specs drawn and queued ahead of the one being collected
        while ahead < len(jobs) and ahead <= k + 3:
            submit(ahead)
            ahead += 1
        job, groups, futures = submitted[k]
        for _, _, future in futures:  # say who is busy, then again at least once a second
            report_running(k)
            while not wait([future], timeout=1.0).done:
                report_running(k)
        outcomes = [_collect(future, group, phase_file, job.targets)
                    for group, phase_file, future in futures]
        finish(job, groups, outcomes)
        submitted[k] = (job, groups, [])  # let finished futures go


# --- regenerating the artifact ------------------------------------------------------

def _load_previous(request: Request) -> tuple[Artifact | None, str]:
    path = request.previous or request.out
    if not path.exists():
        if request.previous is not None:
            raise ArtifactError(path, "", "no such file (given as --previous)")
        return None, ""
    try:
        previous = art.load(path)
    except ArtifactError as exc:
        if request.no_reuse:
            return None, f"previous artifact ignored ({exc})"
        raise ArtifactError(exc.path, exc.field, f"{str(exc).split(': ', 1)[-1]} "
                            "(refusing to reuse from it; --no-reuse sweeps without it)") from None
    return previous, ""


def _digest_of_previous(request: Request) -> str:
    path = request.previous or request.out
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else ""


@dataclass(frozen=True)
class Regeneration:
    artifact: Artifact
    #: target -> spec -> why it was reused or re-measured, for every spec in the artifact
    decisions: dict[str, dict[str, Decision]]
    resumed: int
    notes: tuple[str, ...]
    #: where the artifact went (a breakage goes beside a working artifact)
    written: Path | None = None
    run_log: Path | None = None  # the sidecar beside the artifact holding `decisions`


#: The decision recorded for a spec --only did not select, carried from the previous artifact.
NOT_SELECTED = Decision(True, "not selected (--only)")


def _journal_key(target: str, name: str) -> str:
    return name if target == STOCK else f"{name}@{target}"


def _target_decisions(specs: Sequence[OpSpec], digests: Mapping[str, str],
                      previous: Artifact | None, fingerprint: Fingerprint, config: SweepConfig,
                      regen_index: int, no_reuse: bool, target: str,
                      translations: Translations | None) -> dict[str, Decision]:
    """Reuse decisions for one target: a custom target is reused only from the
    same table (its source hash) measured under the same fingerprint."""
    view = previous.view(target) if previous else None
    if previous is not None and not no_reuse:
        why = ""
        if view is None:
            why = "target not measured before"
        elif translations is not None and previous.targets[target].translations != translations:
            why = "translation table changed"
        if why:
            return {s.name: Decision(False, why) for s in specs}
    return {s.name: decide(s, digests[s.name], view, fingerprint, config.profile, regen_index,
                           no_reuse) for s in specs}


def regenerate(catalog: Catalog, config: SweepConfig, request: Request,
               progress: Callable[[SpecDone], None] = lambda _: None) -> Regeneration:
    """Decide, measure, checkpoint and write the artifact (atomically), then the
    run's sidecar: why each spec was reused or re-measured."""
    from .translations import load
    targets = {STOCK: None} | {info.name: info for info, _ in map(load, config.translations)}
    previous, note = _load_previous(request)
    notes = [note] if note else []
    fingerprint = current_fingerprint(config.exporter_path, dynamic=config.dynamic)
    regen_index = previous.regen_index + 1 if previous else 0
    specs = catalog.select(list(request.only) or None)
    digests = {s.name: spec_digest(s) for s in specs}
    decisions = {t: _target_decisions(specs, digests, previous, fingerprint, config, regen_index,
                                      request.no_reuse, t, info) for t, info in targets.items()}
    if request.shard:
        specs = _shard_slice(specs, decisions, previous, request.shard)
    results = {(t, s.name): previous.view(t).specs[s.name]  # type: ignore[union-attr]
               for t in targets for s in specs if decisions[t][s.name].reuse}
    reused = set(results)
    journal = _open_journal(request, fingerprint, config, regen_index, targets, digests)
    if journal.discarded:
        notes.append("a checkpoint from a different sweep was set aside")
    keys = {_journal_key(t, s.name): (t, s.name) for t in targets for s in specs}
    resumed = {keys[k]: r for k, r in journal.done.items() if k in keys}
    results.update(resumed)
    total = len(specs) * len(targets)
    for index, (t, name) in enumerate(sorted(results), start=1):
        progress(SpecDone(name, index, total, results[t, name], t, (t, name) in reused))

    def done(job: _Job, target: str, result: SpecResult) -> None:
        results[target, job.spec.name] = result
        journal.record(_journal_key(target, job.spec.name), result)
        progress(SpecDone(job.spec.name, len(results), total, result, target))

    jobs = [_Job(s, digests[s.name], wanted) for s in specs
            if (wanted := tuple(t for t in targets if (t, s.name) not in results))]
    try:
        measure(jobs, config, done, lambda names: progress(SpecsRunning(names)))
    except ExporterBroken as exc:
        journal.close(finished=False)
        return _broken(exc, fingerprint, config, regen_index, request, decisions, notes)
    finally:
        journal.close(finished=False)  # an interrupted sweep keeps its checkpoint
    if request.only and not request.shard and previous and previous.fingerprint == fingerprint \
            and previous.profile == config.profile.name:
        _carry_unselected(previous, targets, catalog, results)
    artifact = _assemble(fingerprint, config, regen_index, request, targets, results,
                         {n: a.reason for n, a in catalog.absent.items()})
    art.save(request.out, artifact)
    journal.close(finished=True)  # only once the artifact is safely written
    final = {t: {n: decisions[t].get(n, NOT_SELECTED) for n in sorted(artifact.view(t).specs)}
             for t in targets}  # type: ignore[union-attr]
    run_log = _write_run_log(request, artifact, final, set(resumed), notes)
    return Regeneration(artifact, final, len(resumed), tuple(notes), request.out,
                        run_log)


def _open_journal(request: Request, fingerprint: Fingerprint, config: SweepConfig,
                  regen_index: int, targets: Mapping[str, Translations | None],
                  digests: Mapping[str, str]) -> Journal:
    return Journal(journal_path(request.out), {
        "schema_version": art.SCHEMA_VERSION,
        "fingerprint": asdict(fingerprint),
        "profile": config.profile.name, "regen_index": regen_index,
        "shard": list(request.shard) if request.shard else None,
        "targets": {t: info and asdict(info) for t, info in targets.items()},
        "previous": _digest_of_previous(request), "specs": sorted(digests.items())}).open()


def _assemble(fingerprint: Fingerprint, config: SweepConfig, regen_index: int, request: Request,
              targets: Mapping[str, Translations | None],
              results: Mapping[tuple[str, str], SpecResult],
              absent: Mapping[str, str]) -> Artifact:
    by_target = {t: {n: r for (tt, n), r in results.items() if tt == t} for t in targets}
    return art.make_artifact(
        fingerprint, config.profile.name, config.profile.max_examples, regen_index,
        by_target[STOCK], request.shard,
        {t: (info, by_target[t]) for t, info in targets.items() if info is not None},
        absent=absent)


def _write_run_log(request: Request, artifact: Artifact,
                   decisions: Mapping[str, Mapping[str, Decision]],
                   resumed: set[tuple[str, str]], notes: Sequence[str]) -> Path:
    """The run's bookkeeping, beside the artifact and never committed (.gitignore)."""
    path = run_path(request.out)
    header = {"artifact": request.out.name, "regen_index": artifact.regen_index,
              "generated_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
              "profile": artifact.profile, "fingerprint": asdict(artifact.fingerprint),
              "shard": list(request.shard) if request.shard else None, "notes": list(notes)}
    write_run(path, header, decisions, resumed)
    return path


def _broken(exc: ExporterBroken, fingerprint: Fingerprint, config: SweepConfig,
            regen_index: int, request: Request, decisions, notes: list[str]) -> Regeneration:
    """The canary failed: the result is the breakage itself, with no operator measured.
    It never replaces a working artifact: that one stays, and this goes beside it."""
    artifact = art.make_artifact(fingerprint, config.profile.name, config.profile.max_examples,
                                 regen_index, {},  # whole, whichever shard found it
                                 broken=art.Breakage(exc.target, exc.stage, exc.error))
    out = request.out
    if out.exists():
        try:
            working = art.load(out).broken is None
        except ArtifactError:
            working = False
        if working:
            out = out.with_name(out.name.removesuffix(".json") + ".broken.json")
    art.save(out, artifact)
    return Regeneration(artifact, decisions, 0, tuple(notes), out)


def _carry_unselected(previous: Artifact, targets: Mapping[str, Translations | None],
                      catalog: Catalog, results: dict[tuple[str, str], SpecResult]) -> None:
    """--only: the specs not selected keep their previous results, per target."""
    for t, info in targets.items():
        view = previous.view(t)
        if view is None or (info is not None and previous.targets[t].translations != info):
            continue  # never carry results of another table
        for name, prior in view.specs.items():
            if (t, name) not in results and name in catalog.specs:
                results[t, name] = prior


def _shard_slice(specs: list[OpSpec], decisions: dict[str, dict[str, Decision]],
                 previous: Artifact | None, shard: tuple[int, int]) -> list[OpSpec]:
    """This shard's specs (every target of a spec goes to the same shard): a
    cost-balanced split of the work (reused results cost nothing)."""
    def cost(target: str, name: str) -> int:
        if decisions[target][name].reuse:
            return 0
        view = previous.view(target) if previous else None
        return view.specs[name].signatures if view and name in view.specs else DEFAULT_COST

    costs = {s.name: sum(cost(t, s.name) for t in decisions) for s in specs}
    owner = assign(costs, shard[1])
    return [s for s in specs if owner[s.name] == shard[0]]

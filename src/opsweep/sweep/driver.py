"""The sweep driver: plan, resume, measure, assemble.

`regenerate` plans (:mod:`opsweep.sweep.planning`: what is reused or re-measured, and
why), resumes (the reused results, and what an interrupted run of the same sweep
checkpointed), measures the rest (each spec's examples drawn while the workers of
:mod:`opsweep.engine.pool` are busy, one task per signature group, each finished
spec graded by :mod:`opsweep.artifact.specgrade` and checkpointed), then assembles the
artifact, writes it atomically, and writes the run's sidecar.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from opsweep.artifact import data as art
from opsweep.artifact.data import Artifact
from opsweep.artifact.results import SpecResult
from opsweep.artifact.specgrade import spec_result
from opsweep.catalog.draw import Profile, draw_with_cells, group_by_signature
from opsweep.catalog.load import Catalog
from opsweep.engine.cache import draws_key, load_draws_entry, merge_counts, save_draws
from opsweep.engine.sweepconfig import SweepConfig
from opsweep.engine.pool import Workers, workers
from opsweep.errors import ArtifactError, ExporterBroken
from opsweep.model import OpSpec
from opsweep.sweep.journal import Journal, journal_path, run_path, write_run
from opsweep.sweep.planning import NOT_SELECTED, Decisions, Plan, make_plan
from opsweep.sweep.request import Request
from opsweep.sweep.targets import Key, Planned
from opsweep.targets import STOCK
from opsweep.policy import read as read_policy

#: How many specs are drawn and queued ahead of the one being collected.
_AHEAD = 12


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


@dataclass(frozen=True)
class Regeneration:
    artifact: Artifact
    #: target -> spec -> why it was reused or re-measured, for every spec in the artifact
    decisions: Decisions
    resumed: int
    notes: tuple[str, ...]
    #: where the artifact went (a breakage goes beside a working artifact)
    written: Path | None = None
    run_log: Path | None = None  # the sidecar beside the artifact holding `decisions`
    #: what the groups did with the export cache, by target (loaded, exported, unusable)
    cache: dict[str, dict[str, int]] = field(default_factory=dict)


# --- measuring ------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """One spec, measured for the given targets together (one task per group)."""

    spec: OpSpec
    digest: str
    targets: tuple[str, ...] = (STOCK,)


def measure(jobs: Sequence[Job], config: SweepConfig,
            done: Callable[[Job, str, SpecResult], None],
            running: Callable[[tuple[str, ...]], None] = lambda _: None,
            cache_counts: dict[str, dict[str, int]] | None = None,
            output: list[str] | None = None) -> dict[str, str]:
    """Measure each job's spec, calling `done(job, target, result)` as each
    finishes, in job order, and `running` with the specs the workers are busy with
    whenever that changes. Examples are drawn spec by spec while workers are
    already busy. Returns the optional targets the canary found absent from this pin set
    (with why): none of their results is measured. `cache_counts` receives what the groups
    did with the export cache, `output` what the workers printed (engine.pool.worker_output)."""
    if not jobs:
        return {}
    with workers(config) as pool:
        absent = dict(pool.absent)
        if absent:
            jobs = [Job(j.spec, j.digest, wanted) for j in jobs
                    if (wanted := tuple(t for t in j.targets if t not in absent))]
        try:
            _measure_with(pool, jobs, config, done, running)
        finally:
            if cache_counts is not None:
                merge_counts(cache_counts, pool.cache_counts)
    if output is not None:
        output.extend(pool.output)  # read once the workers have stopped
    return absent


def _measure_with(pool: Workers, jobs: Sequence[Job], config: SweepConfig,
                  done: Callable[[Job, str, SpecResult], None],
                  running: Callable[[tuple[str, ...]], None]) -> None:
    #: (job, signatures, the cells no example stands for, pending groups)
    submitted: list[tuple[Job, int, dict[str, str] | None, list]] = []
    busy: list[tuple[str, ...]] = [()]

    def report_running(k: int) -> None:
        """The specs whose groups a worker is running now (every target of a group runs in
        one task): one per worker."""
        names = tuple(sorted({job.spec.name for job, _, _, pending in submitted[k:]
                              for p in pending if p.running()}))
        if names != busy[0]:
            busy[0] = names
            running(names)

    def submit(job: Job) -> None:
        examples, cells = drawn(job.spec, job.digest, config)
        groups = group_by_signature(examples)
        submitted.append((job, len(groups), cells, [
            pool.submit(job.spec, g, job.targets, job.digest) for g in groups]))

    for k, job in enumerate(jobs):
        while len(submitted) < len(jobs) and len(submitted) <= k + _AHEAD:
            submit(jobs[len(submitted)])
        _, signatures, cells, pending = submitted[k]
        for p in pending:  # say who is busy, then again at least once a second
            report_running(k)
            while not p.wait(1.0):
                report_running(k)
        outcomes = [p.outcomes() for p in pending]
        submitted[k] = (job, signatures, cells, [])  # let finished groups go
        for t in job.targets:
            done(job, t, spec_result(job.spec, [o for g in outcomes for o in g[t]],
                                     config.profile, job.digest, signatures, t, cells))


def drawn(spec: OpSpec, digest: str, config: SweepConfig
          ) -> tuple[list, dict[str, str] | None]:
    """The spec's examples under the sweep's profile, and its cells no example stands
    for (cached_draws_cells)."""
    return cached_draws_cells(spec, digest, config.profile, config.cache)


def cached_draws(spec: OpSpec, digest: str, profile: Profile, cache: Path | None) -> list:
    """The spec's examples under `profile`: from the export cache's draws when the profile
    is derandomized and they are kept there, else drawn (and kept)."""
    return cached_draws_cells(spec, digest, profile, cache)[0]


def cached_draws_cells(spec: OpSpec, digest: str, profile: Profile, cache: Path | None
                       ) -> tuple[list, dict[str, str] | None]:
    """`cached_draws`, and the cells no example stands for (catalog.cells.unmeasured; None:
    the profile does not cover cells), kept beside the draws."""
    if cache is None or not profile.derandomize:
        return draw_with_cells(spec, profile)
    key = draws_key(spec.name, digest, profile.name, profile.max_examples, profile.cells)
    entry = load_draws_entry(cache, key)
    if entry is None or (profile.cells and entry[1] is None):
        entry = draw_with_cells(spec, profile)
        save_draws(cache, key, *entry)
    return entry


# --- regenerating the artifact ------------------------------------------------------

def regenerate(catalog: Catalog, config: SweepConfig, request: Request,
               progress: Callable[[SpecDone | SpecsRunning], None] = lambda _: None) -> Regeneration:
    """Plan, resume, measure, then write the artifact (atomically) and the run's
    sidecar: why each spec was reused or re-measured."""
    plan = make_plan(catalog, config, request)
    journal = _open_journal(request, config, plan)
    notes = list(plan.notes)
    if journal.discarded:
        notes.append("a checkpoint from a different sweep was set aside")
    results, resumed = _resume(plan, journal, progress)
    cache: dict[str, dict[str, int]] = {}
    output: list[str] = []
    try:
        missing = _measure_rest(plan, config, results, journal, progress, cache, output)
    except ExporterBroken as exc:
        return _broken(exc, plan, config, request, notes)
    finally:
        journal.close(finished=False)  # an interrupted sweep keeps its checkpoint
    plan = _without(plan, missing)
    artifact = _assemble(plan, config, request, plan.unselected(catalog) | results,
                         {n: a.reason for n, a in catalog.absent.items()})
    art.save(request.out, artifact)
    journal.close(finished=True)  # only once the artifact is safely written
    final = {t.name: {n: plan.decisions[t.name].get(n, NOT_SELECTED)
                      for n in sorted(artifact.results[t.name].specs)}
             for t in plan.targets}
    moved = art.moved_fields(plan.previous.fingerprint, artifact.fingerprint) \
        if plan.previous is not None else []
    run_log = _write_run_log(request, artifact, final, set(resumed), notes, cache, moved, output)
    return Regeneration(artifact, final, len(resumed), tuple(notes), request.out, run_log, cache)


def _resume(plan: Plan, journal: Journal, progress: Callable[[SpecDone | SpecsRunning], None]
            ) -> tuple[dict[Key, SpecResult], dict[Key, SpecResult]]:
    """(the results this run starts from, those of them an interrupted run of the same
    sweep had checkpointed): the reused and the resumed, each reported as done."""
    reused = plan.reused()
    keys = {k.journal: k for k in plan.keys}
    resumed = {keys[k]: r for k, r in journal.done.items() if k in keys}
    results = reused | resumed
    for index, key in enumerate(sorted(results), start=1):
        progress(SpecDone(key.spec, index, len(plan.keys), results[key], key.target,
                          key in reused))
    return results, resumed


def _without(plan: Plan, missing: Mapping[str, str]) -> Plan:
    """The plan with each target the canary found absent recorded so (its entry names why;
    it keeps no result)."""
    if not missing:
        return plan
    targets = tuple(_absent(t, missing[t.name]) if t.name in missing else t
                    for t in plan.targets)
    decisions = {n: ({} if n in missing else d) for n, d in plan.decisions.items()}
    return replace(plan, targets=targets, decisions=decisions)


def _absent(target: Planned, why: str) -> Planned:
    """`target` recorded absent from this pin set: only an optional exporter's can be."""
    if not isinstance(target.entry, art.ExporterEntry):
        raise TypeError(f"target {target.name} is not an exporter: it cannot be absent")
    return replace(target, entry=replace(target.entry, absent=why))


def _measure_rest(plan: Plan, config: SweepConfig, results: dict[Key, SpecResult],
                  journal: Journal, progress: Callable[[SpecDone | SpecsRunning], None],
                  cache_counts: dict[str, dict[str, int]] | None = None,
                  output: list[str] | None = None) -> dict[str, str]:
    """Measure every result not in `results` yet, adding each (and checkpointing it)
    as it finishes; the optional targets found absent (measure)."""
    def done(job: Job, target: str, result: SpecResult) -> None:
        key = Key(target, job.spec.name)
        results[key] = result
        journal.record(key.journal, result)
        progress(SpecDone(key.spec, len(results), len(plan.keys), result, target))

    jobs = [Job(s, plan.digests[s.name], wanted) for s in plan.specs
            if (wanted := tuple(t.name for t in plan.targets if Key(t.name, s.name) not in results))]
    return measure(jobs, config, done, lambda names: progress(SpecsRunning(names)),
                   cache_counts, output)


def _open_journal(request: Request, config: SweepConfig, plan: Plan) -> Journal:
    return Journal(journal_path(request.out), {
        "schema_version": art.SCHEMA_VERSION,
        "fingerprint": asdict(plan.fingerprint),
        "profile": config.profile.name, "regen_index": plan.regen_index,
        "shard": list(request.shard) if request.shard else None,
        "targets": {t.name: t.entry and asdict(t.entry) for t in plan.targets},
        "previous": plan.previous_digest, "specs": sorted(plan.digests.items())}).open()


def _assemble(plan: Plan, config: SweepConfig, request: Request,
              results: Mapping[Key, SpecResult], absent: Mapping[str, str]) -> Artifact:
    by_target = {t.name: {k.spec: r for k, r in results.items() if k.target == t.name}
                 for t in plan.targets}
    return art.make_artifact(
        plan.fingerprint, config.profile.name, config.profile.max_examples, plan.regen_index,
        by_target[STOCK], request.shard,
        {t.name: (t.entry, by_target[t.name]) for t in plan.targets if not t.is_stock},
        absent=absent, policy=read_policy(config.policy).label)


def _write_run_log(request: Request, artifact: Artifact, decisions: Decisions,
                   resumed: set[Key], notes: Sequence[str],
                   cache: Mapping[str, Mapping[str, int]] | None = None,
                   moved: Sequence[str] = (), output: Sequence[str] = ()) -> Path:
    """The run's bookkeeping, beside the artifact and never committed (.gitignore): with
    the export cache's counts, the fingerprint's fields that moved since the previous
    artifact, and what the workers printed (never shown on the terminal)."""
    path = run_path(request.out)
    header = {"artifact": request.out.name, "regen_index": artifact.regen_index,
              "generated_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
              "profile": artifact.profile, "fingerprint": asdict(artifact.fingerprint),
              "shard": list(request.shard) if request.shard else None, "notes": list(notes),
              "cache": {t: dict(c) for t, c in (cache or {}).items()}, "moved": list(moved),
              "worker_output": list(output)}
    write_run(path, header, decisions, resumed)
    return path


def _broken(exc: ExporterBroken, plan: Plan, config: SweepConfig, request: Request,
            notes: Sequence[str]) -> Regeneration:
    """The canary failed: the result is the breakage itself, with no operator measured.
    It never replaces a working artifact: that one stays, and this goes beside it."""
    artifact = art.make_artifact(plan.fingerprint, config.profile.name,
                                 config.profile.max_examples, plan.regen_index,
                                 {},  # whole, whichever shard found it
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
    return Regeneration(artifact, plan.decisions, 0, tuple(notes), out)

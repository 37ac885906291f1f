"""One signature group, measured for every target at once.

The stock exporter goes first and records what its decomposition saw
(:class:`opsweep.engine.fastpath.Trace`). A custom translation table changes an export
only through its keys (see :func:`opsweep.engine.fastpath.unchanged_by`): a group whose
graphs never meet a key takes the stock outcomes, the very same objects, and
costs nothing more. Whatever the table can touch is exported again with it.
PyTorch's references (static and at the dynamic axis's second size) are computed
once per group for every target. When the exporter cannot trace (the public
call), every target is measured in full. With an export cache
(:mod:`opsweep.engine.cache`), each export's outcome up to the checker is looked up
first, and kept when it was measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from opsweep.engine.adapter import BaseExporter
from opsweep.engine.arguments import group_features
from opsweep.engine.fastpath import unchanged_by
from opsweep.engine.phase import Phase, ignore
from opsweep.engine.runner import (CacheSlot, Slots, no_slot, references_of, run_dynamic,
                                   static_outcomes)
from opsweep.model import Example, OpSpec, Outcome
from opsweep.policy import Policy
from opsweep.targets import STOCK_TARGET

#: Called as targets finish: the static outcomes so far, and the targets whose
#: outcomes (static and dynamic) are final. A lost worker keeps what it had.
Progress = Callable[[dict[str, list[Outcome]], dict[str, list[Outcome]]], None]


def _same(exporter: BaseExporter, trace, shortcut: bool) -> bool:
    """Whether `exporter` takes the stock outcomes: only a translation table the stock
    export's trace shows untouched; another exporter (torchscript: no table) never."""
    table = exporter.custom_translation_table
    return shortcut and table is not None and unchanged_by(table, trace)


def _prefixed(phase: Phase, target: str) -> Phase:
    """Phases that name the target: a lost worker's outcomes land on the right target."""
    return lambda reached: phase(replace(reached, target=target))


def cache_slots(cache, spec: OpSpec, digest: str | None, target: str, exporter: BaseExporter
                ) -> Slots:
    """Where `target`'s exports of `spec` are kept in `cache` (none without a cache or
    the spec's digest, or for an exporter that says nothing of what it is)."""
    if cache is None or not digest:
        return no_slot
    identity = exporter.identity

    def slot(example: Example, dynamic: str) -> CacheSlot:
        return CacheSlot(cache, cache.key(target=target, identity=identity,
                                          kind=exporter.family, spec=spec.name,
                                          digest=digest, example=repr(example),
                                          dynamic=dynamic), target)
    return slot


def run_targets(spec: OpSpec, group: Sequence[Example], exporters: Mapping[str, BaseExporter],
                phase: Phase = ignore, *, dynamic: bool = False,
                checkpoint: Progress = lambda _s, _f: None,
                shortcut: bool = True, arguments: bool = True,
                cache=None, digest: str | None = None,
                policy: Policy | None = None) -> dict[str, list[Outcome]]:
    """Outcomes per target, each target finished (static, then dynamic) before the
    next. The first exporter is the stock one, the base of the shortcut.
    `shortcut=False` measures every target in full (the previous engine); `arguments=False`
    records no arguments (the engine before them, for the benchmarks only). `cache`: an
    :class:`opsweep.engine.cache.ExportCache`, used when `digest` (the spec's) is given.
    `policy`: the tolerances numerics are compared at (the built-in policy's)."""
    names = list(exporters)
    invalid, references, call = references_of(spec, group, _prefixed(phase, names[0]))
    if call is None:
        outcomes = [invalid[i] for i in range(len(group))]
        failed = dict.fromkeys(names, outcomes)
        return with_arguments(spec, group, failed) if arguments else failed
    static: dict[str, list[Outcome]] = {}
    final: dict[str, list[Outcome]] = {}
    traces: dict[str, object] = {}  # the stock exports' traces: "static", "dynamic"
    shared: dict = {}  # the dynamic plans and references, for every target
    for name in names:
        exporter = exporters[name]
        here = _prefixed(phase, name)
        slots = cache_slots(cache, spec, digest, name, exporter)
        if name != names[0] and _same(exporter, traces.get("static"), shortcut):
            static[name] = static[names[0]]
        else:
            static[name] = static_outcomes(spec, group, exporter, call, invalid, references, here,
                                           slots, policy)
            if name == names[0]:
                traces["static"] = exporter.last_trace
        checkpoint(static, final)
        outcomes = static[name]
        if not dynamic or not any(o.stage.exported for o in outcomes):
            final[name] = outcomes
        elif (name != names[0] and outcomes is static[names[0]]
              and _same(exporter, traces.get("dynamic"), shortcut)):
            final[name] = final[names[0]]
        else:
            exporter.last_trace = None  # no dynamic export (no plan): nothing traced
            final[name] = run_dynamic(spec, group, outcomes, call, exporter, here, shared, slots,
                                      policy)
            if name == names[0]:
                traces["dynamic"] = exporter.last_trace
        checkpoint(static, final)
    return with_arguments(spec, group, final) if arguments else final


def with_arguments(spec: OpSpec, group: Sequence[Example],
                   final: dict[str, list[Outcome]]) -> dict[str, list[Outcome]]:
    """Every outcome with the schema arguments its group reached, measured on a module
    built afresh (the exported one is not run again: a module with state, batch norm in
    training, would move)."""
    features = group_features(spec, group)
    if not features:
        return final
    cache: dict[int, list[Outcome]] = {}  # targets that share outcomes keep sharing them
    return {name: cache.setdefault(id(outs), [replace(o, arguments=features) for o in outs])
            for name, outs in final.items()}


def run_group(spec: OpSpec, group: Sequence[Example], exporter: BaseExporter,
              phase: Phase = ignore, *, dynamic: bool = False) -> list[Outcome]:
    """All examples of one signature through one exporter, exactly as the sweep runs a
    group (one export, one session, many runs; then, with `dynamic`, one re-export with
    the leading dimension dynamic): the sweep's own path with a single target."""
    name = STOCK_TARGET.name
    return run_targets(spec, group, {name: exporter}, phase, dynamic=dynamic)[name]

"""One signature group, measured for every target at once.

The stock exporter goes first and records what its decomposition saw
(:class:`opsweep.fastpath.Trace`). A custom translation table changes an export
only through its keys (see :func:`opsweep.fastpath.unchanged_by`): a group whose
graphs never meet a key takes the stock outcomes, the very same objects, and
costs nothing more. Whatever the table can touch is exported again with it.
PyTorch's references (static and at the dynamic axis's second size) are computed
once per group for every target. When the exporter cannot trace (the public
call), every target is measured in full.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .adapter import Exporter
from .fastpath import unchanged_by
from .model import Example, OpSpec, Outcome
from .runner import Phase, references_of, run_dynamic, static_outcomes

#: Called as targets finish: the static outcomes so far, and the targets whose
#: outcomes (static and dynamic) are final. A lost worker keeps what it had.
Progress = Callable[[dict[str, list[Outcome]], dict[str, list[Outcome]]], None]


def _same(exporter: Exporter, trace, shortcut: bool) -> bool:
    return shortcut and unchanged_by(exporter.custom_translation_table, trace)


def run_targets(spec: OpSpec, group: Sequence[Example], exporters: Mapping[str, Exporter],
                phase: Phase = lambda _: None, *, dynamic: bool = False,
                checkpoint: Progress = lambda _s, _f: None,
                shortcut: bool = True) -> dict[str, list[Outcome]]:
    """Outcomes per target (the first exporter is the stock one, the base of the
    shortcut). `shortcut=False` measures every target in full (the previous engine)."""
    names = list(exporters)
    base = exporters[names[0]]
    invalid, references, call = references_of(spec, group, lambda p: phase(f"{names[0]}|{p}"))
    if call is None:
        outcomes = [invalid[i] for i in range(len(group))]
        return dict.fromkeys(names, outcomes)
    static: dict[str, list[Outcome]] = {}
    trace = None
    for name in names:
        exporter = exporters[name]
        if static and _same(exporter, trace, shortcut):
            static[name] = static[names[0]]
        else:
            static[name] = static_outcomes(spec, group, exporter, call, invalid, references,
                                           lambda p, n=name: phase(f"{n}|{p}"))
            if exporter is base:
                trace = base.last_trace
        checkpoint(static, {})
    if not dynamic:
        return static
    return _dynamic(spec, group, exporters, static, call, phase, checkpoint, shortcut)


def _dynamic(spec, group, exporters, static, call, phase, checkpoint, shortcut):
    names = list(exporters)
    base = exporters[names[0]]
    final: dict[str, list[Outcome]] = {}
    shared: dict = {}
    trace = None
    for name in names:
        exporter, outcomes = exporters[name], static[name]
        if not any(o.stage.exported for o in outcomes):
            final[name] = outcomes
        elif (exporter is not base and outcomes is static[names[0]]
              and _same(exporter, trace, shortcut)):
            final[name] = final[names[0]]
        else:
            exporter.last_trace = None  # no dynamic export (no plan): nothing traced
            final[name] = run_dynamic(spec, group, outcomes, call, exporter,
                                      lambda p, n=name: phase(f"{n}|{p}"), shared)
            if exporter is base:
                trace = base.last_trace
        checkpoint(static, final)
    return final

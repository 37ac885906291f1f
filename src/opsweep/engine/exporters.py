"""One exporter per target: the factory from a :class:`opsweep.targets.Target` to the
exporter that measures it (the protocol of :class:`opsweep.engine.adapter.BaseExporter`).

The dynamo exporter takes the fast path (`fast`, with the shortcuts `options`) for the
stock target, each translation table and each opset (which takes the stock exporter's
capture and decomposition: engine.opsets); the TorchScript exporter never has one.
"""

from __future__ import annotations

from collections.abc import Iterable

from opsweep.engine.adapter import BaseExporter
from opsweep.engine.sweepconfig import SweepConfig, Tuning
from opsweep.engine.fastpath import FAST_PATH, exporter_path, make_exporter
from opsweep.engine.opsets import opset_exporter
from opsweep.engine.torchscript import TorchScriptExporter
from opsweep.engine.translations import load
from opsweep.targets import Kind, Target


def exporter_for(target: Target, fast: bool, options: Tuning = Tuning(),
                 stock: BaseExporter | None = None) -> BaseExporter:
    """The exporter that measures `target` (an opset target's takes what `stock`, the stock
    target's, exports before it)."""
    if target.kind is Kind.OPSET:
        assert target.opset is not None  # an opset target has one
        return opset_exporter(target.opset, fast, options, stock)
    if target.kind is Kind.TORCHSCRIPT:
        return TorchScriptExporter(target.opset, options=options)
    if target.kind is Kind.TABLE:
        info, table = load(target.table)
        return make_exporter(fast, table, options, info.digest)
    return make_exporter(fast, options=options)


def exporters_for(targets: Iterable[Target], fast: bool, options: Tuning = Tuning()
                  ) -> dict[str, BaseExporter]:
    """One exporter per target, by the target's name (the stock target's first). The stock
    exporter watches the operators the tables translate, and those an opset's registry
    translates otherwise: its trace is the base of the tables' shortcut (engine.group) and
    of what an opset target takes from it (engine.opsets)."""
    targets = tuple(targets)
    made: dict[Target, BaseExporter] = {}
    for t in sorted(targets, key=lambda t: not t.is_stock):
        made[t] = exporter_for(t, fast, options,
                               next((e for s, e in made.items() if s.is_stock), None))
    keys = {name() for e in made.values() for key in (e.custom_translation_table or {})
            if callable(name := getattr(key, "name", None))}
    keys |= {op for e in made.values() for op in e.shares}
    if keys:
        for target, exporter in made.items():
            if target.is_stock:
                exporter.watch(keys)
    return {t.name: made[t] for t in targets}


def sweep_exporters(config: SweepConfig) -> dict[str, BaseExporter]:
    """The exporters of `config`'s targets, on the route it asks for."""
    return exporters_for(config.targets, exporter_path(config.fast) == FAST_PATH, config.tuning)

"""The dynamo exporter at another opset than the sweep's: the exporter of an ``opsetN`` target.

``torch.onnx.export(..., dynamo=True, opset_version=N)`` captures the module, decomposes
the captured program with the decomposition table of a registry built for
``max(N, TORCHLIB_OPSET)``, translates the decomposed program with that registry,
converts the model to opset N and optimizes it. The capture does not depend on the
opset, and the decomposition only through the operators the registry implements (the
table is made from that set: at torch 2.15, registries from opset 23 on implement
``aten.rms_norm``, which those of opsets 18 to 22 decompose). So an opset target takes
what the stock exporter's export of the same module (same inputs, same dynamic shapes)
has just made: the error its capture or decomposition raised, or its decomposed program,
which torch's own ``_core.export`` then translates with the opset's registry, converts and
optimizes. Where the stock export's trace shows an operator the two registries implement
differently (or cannot tell), or there was no such export (the export cache had it), the
opset target exports in full, as the fast path does. ``tests/integration/test_opsets.py``
proves the outcomes are the public call's.

A model that does not come out at the opset asked for (the version converter could not
convert it: torch then keeps the registry's opset and only logs why) fails the export,
at ``translation-error``, with the converter's reason: the opset was not reached.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import onnx
import torch

from opsweep.engine.adapter import BaseExporter, Exporter, error_line
from opsweep.engine.sweepconfig import Tuning
from opsweep.engine.fastpath import FastExporter, Trace
from opsweep.model import Stage


class OpsetNotReached(Exception):
    """The exporter gave a model at another opset than the one asked for."""


#: where the version converter says why it left a model at its opset
_CONVERTER = "onnxscript.version_converter"


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        self.lines.append(error_line(exc) if exc is not None else record.getMessage())


@contextlib.contextmanager
def converter_said() -> Iterator[list[str]]:
    """What the version converter warns of during an export (kept here, not printed)."""
    logger = logging.getLogger(_CONVERTER)
    said, saved = _Said(), (logger.level, logger.propagate)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    logger.addHandler(said)
    try:
        yield said.lines
    finally:
        logger.removeHandler(said)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def model_opset(model: onnx.ModelProto) -> int | None:
    """The model's opset of the default ONNX domain."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def reached(model: onnx.ModelProto, opset: int, said: list[str]) -> onnx.ModelProto:
    """`model`, unless it is not at `opset` (then OpsetNotReached, with the converter's
    last word on why)."""
    got = model_opset(model)
    if got != opset:
        why = f": {said[-1]}" if said else ""
        raise OpsetNotReached(f"the model stayed at opset {got}, not converted to {opset}{why}")
    return model


def classify_at_opset(exc: BaseException, classify) -> Stage:
    return Stage.TRANSLATION_ERROR if isinstance(exc, OpsetNotReached) else classify(exc)


class PublicOpsetExporter(Exporter):
    """The public call at `opset`, its model checked to be at that opset."""

    def export(self, module, args, dynamic_shapes=None) -> onnx.ModelProto:
        with converter_said() as said:
            return reached(super().export(module, args, dynamic_shapes), self.opset, said)

    def classify(self, exc: BaseException) -> Stage:
        return classify_at_opset(exc, super().classify)


@dataclass(eq=False)
class Entry:
    """One export of the stock exporter: what it was given, and what it made before the
    translation (the decomposed `program`, or the `error` raised before it was made)."""

    module: Any
    args: tuple
    shapes: Any
    program: Any = None
    error: Exception | None = None
    trace: Trace | None = None  # what its decomposition saw (None: not watching)

    def matches(self, module: Any, args: tuple, shapes: Any) -> bool:
        return module is self.module and _shapes(shapes) == self.shapes and _same(args, self.args)


def _same(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if not isinstance(x, torch.Tensor):
            if x != y:
                return False
        elif (x.dtype, x.shape, x.device) != (y.dtype, y.shape, y.device) or not (
                torch.equal(x, y) or (x.is_floating_point() or x.is_complex())
                and torch.allclose(x, y, rtol=0.0, atol=0.0, equal_nan=True)):
            return False
    return True


def _shapes(value: Any) -> Any:
    """Dynamic shapes as comparable data (torch's Dim compares by identity)."""
    if isinstance(value, dict):
        return tuple(sorted((repr(k), _shapes(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, *(_shapes(v) for v in value))
    if all(hasattr(value, a) for a in ("__name__", "min", "max")):
        return ("dim", value.__name__, value.min, value.max)
    return repr(value)


class Ledger:
    """The stock exporter's latest exports, one static and one dynamic: what the opset
    targets of the same group take."""

    def __init__(self, base: FastExporter) -> None:
        self.base = base
        self.entries: dict[bool, Entry] = {}

    def open(self, module: Any, args: tuple, shapes: Any) -> Entry:
        entry = self.entries[shapes is not None] = Entry(module, tuple(args), _shapes(shapes))
        return entry

    def find(self, module: Any, args: tuple, shapes: Any) -> Entry | None:
        entry = self.entries.get(shapes is not None)
        return entry if entry is not None and entry.matches(module, tuple(args), shapes) else None


#: id(stock registry) -> its ledger; the export being recorded; the decomposed program the
#: next preparation gives back as it is
_LEDGERS: dict[int, Ledger] = {}
_OPEN: list[Entry] = []
_REUSE: list[Any] = []


def _install() -> bool:
    """Process-wide, idempotent: `_core.export` records the stock exporter's exports in its
    ledger, and the preparation (decomposition) can give back a program made before. False
    where torch lacks the internals (then nothing is shared)."""
    try:
        # private torch internals: absent ones mean fallback
        from torch.onnx._internal.exporter import _core
    except ImportError:
        return False
    export = getattr(_core, "export", None)
    prepare = getattr(_core, "_prepare_exported_program_for_export", None)
    if export is None or prepare is None:
        return False
    if getattr(export, "_opsweep_ledger", False):
        return True

    def recorded_export(model, args=(), kwargs=None, **options):
        registry = options.get("registry")
        ledger = _LEDGERS.get(id(registry))
        if ledger is None or ledger.base.registry is not registry or kwargs:
            return export(model, args, kwargs, **options)
        entry = ledger.open(model, args, options.get("dynamic_shapes"))
        _OPEN.append(entry)
        try:
            return export(model, args, kwargs, **options)
        except Exception as exc:
            if entry.program is None:  # raised by the capture or the decomposition
                entry.error = exc
            raise
        finally:
            _OPEN.pop()
            entry.trace = ledger.base.recorded()

    def prepared(exported_program, *, registry):
        if _REUSE and _REUSE[-1] is exported_program:
            return exported_program
        program = prepare(exported_program, registry=registry)
        if _OPEN and _OPEN[-1].program is None:
            _OPEN[-1].program = program
        return program

    recorded_export._opsweep_ledger = True  # type: ignore[attr-defined]
    _core.export = recorded_export
    _core._prepare_exported_program_for_export = prepared
    return True


def implemented(registry: Any) -> frozenset[str]:
    """Qualified names of the operators `registry` translates (kept from decomposition)."""
    # private torch internals: absent ones mean fallback
    from torch.onnx._internal.exporter import _decomp
    return frozenset(_qualified(op) for op in _decomp.get_onnx_implemented_overloads(registry))


def _qualified(op: Any) -> str:
    name = getattr(op, "name", None)
    return str(name()) if callable(name) else str(op)


class OpsetExporter(FastExporter):
    """The fast path at `opset`, taking the stock exporter's (`base`) capture and
    decomposition of the same module where they are the same at its opset."""

    def __init__(self, opset: int, options: Tuning = Tuning(), base: Any = None) -> None:
        super().__init__(opset=opset, options=options)
        self.ledger: Ledger | None = None
        #: operators the two registries implement differently: the stock export's trace
        #: must show none of them for its decomposition to be this opset's
        self.shares = frozenset()
        if isinstance(base, FastExporter) and _install():
            key = id(base.registry)
            if key not in _LEDGERS or _LEDGERS[key].base is not base:
                _LEDGERS[key] = Ledger(base)
            self.ledger = _LEDGERS[key]
            self.shares = implemented(base.registry) ^ implemented(self.registry)
        self.taken = 0  # exports that took the stock export's capture or decomposition

    def export(self, module: torch.nn.Module, args: Sequence[Any], dynamic_shapes=None
               ) -> onnx.ModelProto:
        with converter_said() as said:
            return reached(self._made(module, args, dynamic_shapes), self.opset, said)

    def _made(self, module, args, dynamic_shapes) -> onnx.ModelProto:
        entry = self.ledger.find(module, tuple(args), dynamic_shapes) if self.ledger else None
        if entry is None or not _unchanged(entry.trace, self.shares):
            return super().export(module, tuple(args), dynamic_shapes)
        self.taken += 1
        if entry.error is not None:
            raise entry.error
        _REUSE.append(entry.program)
        try:
            program = self._core.export(entry.program, (), None, registry=self.registry,
                                        opset_version=self.opset, verbose=False, optimize=True)
        finally:
            _REUSE.pop()
        return program.model_proto

    def classify(self, exc: BaseException) -> Stage:
        return classify_at_opset(exc, super().classify)


def _unchanged(trace: Trace | None, differs: frozenset[str]) -> bool:
    """Whether the stock export's capture and decomposition are those at the opset: the
    registries implement the same operators, or its trace shows none that differs."""
    if not differs:
        return True
    if trace is None:
        return False
    return not trace.captured or not (differs & trace.seen)


def opset_exporter(opset: int, fast: bool, options: Tuning = Tuning(),
                   base: BaseExporter | None = None) -> BaseExporter:
    """The exporter of the opset target at `opset`: the fast path's, sharing `base`'s (the
    stock exporter's) exports, or the public call's."""
    if fast:
        return OpsetExporter(opset, options, base)
    return PublicOpsetExporter(opset=opset, options=options)

"""What a model uses: captured as the exporter captures it (``torch.export``, non-strict
first, then strict), decomposed as the exporter decomposes it (its ONNX-friendly
decomposition table for the registry's opset, then its type-promotion pass), and every
aten call of the decomposed graph listed with the dtype and rank of its first tensor input
(read from the graph's own ``meta['val']``), counted.

The dtype and rank are those of the first tensor input because that is where the sweep
files an example (``Example.dtype``, ``Example.rank``): a use and a measurement meet there.
A call with no tensor input (``arange(n)``) is filed at its output's dtype and rank 0.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import torch

from opsweep.catalog.registry import default_opset, exporter_registry
from opsweep.check.models import ModelCase
from opsweep.engine.adapter import error_line

NO_TENSOR = "none"  # the dtype a call with no tensor input is filed under, as in Example.dtype


@dataclass(frozen=True)
class Use:
    """Calls of one aten operator at one (dtype, rank) of its first tensor input."""

    op: str  # the overload packet, as the artifact names operators: "add"
    overload: str  # "aten::add.Tensor" (a default overload: "aten::view")
    dtype: str
    rank: int
    count: int
    node: str  # the first such node of the decomposed graph

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.op, self.dtype, self.rank)


@dataclass(frozen=True)
class Capture:
    """The decomposed graph's uses, or why the capture failed."""

    uses: tuple[Use, ...]
    other: tuple[str, ...]  # calls that are not aten operators (higher-order ops, other namespaces)
    error: str  # "" when captured and decomposed
    capture_seconds: float
    decompose_seconds: float
    program: object = None  # the decomposed ExportedProgram
    #: "" when captured here; "export" when read from the public export's own decomposed
    #: program (the same preparation, made once instead of twice)
    source: str = ""


def _first_tensor(node: torch.fx.Node) -> torch.Tensor | None:
    for arg in node.all_input_nodes:
        value = arg.meta.get("val")
        if isinstance(value, torch.Tensor):
            return value
    return None


def _dtype(value: torch.Tensor | None) -> tuple[str, int]:
    if value is None:
        return NO_TENSOR, 0
    return str(value.dtype).removeprefix("torch."), value.dim()


def uses_of(program) -> tuple[tuple[Use, ...], tuple[str, ...]]:
    """(aten uses, other calls) of a decomposed ExportedProgram, sorted."""
    counts: Counter = Counter()
    first: dict[tuple, str] = {}
    other: set[str] = set()
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if not isinstance(target, torch._ops.OpOverload):
            if isinstance(target, torch._ops.HigherOrderOperator):
                other.add(str(target.name()))
            continue  # operator.getitem, symbolic size arithmetic: no operator of their own
        if target.namespace != "aten":
            other.add(target.name())
            continue
        filed = _first_tensor(node)
        if filed is None and isinstance(node.meta.get("val"), torch.Tensor):
            # no tensor input (arange(n), full(...)): its scalar arguments are what a spec
            # passes as 0-d tensors, at the dtype the call makes
            filed = node.meta["val"].new_empty(())
        dtype, rank = _dtype(filed)
        key = (target.overloadpacket.__name__, target.name(), dtype, rank)
        counts[key] += 1
        first.setdefault(key, node.name)
    uses = tuple(Use(op, overload, dtype, rank, n, first[op, overload, dtype, rank])
                 for (op, overload, dtype, rank), n in sorted(counts.items()))
    return uses, tuple(sorted(other))


def _capture(case: ModelCase):
    if case.exported:
        return case.model
    error: Exception | None = None
    for strict in (False, True):  # the exporter's capture strategies, in its order
        try:
            return torch.export.export(case.model, case.inputs, dict(case.kwargs),
                                       dynamic_shapes=case.dynamic_shapes, strict=strict)
        except Exception as exc:
            error = error or exc
    raise error  # type: ignore[misc]


def decompose(program, opset: int | None = None):
    """The exporter's own preparation of a captured program: its decomposition table for
    the registry's opset and its type-promotion pass."""
    try:
        from torch.onnx._internal.exporter import _core  # private torch internals: fallback
        prepare = _core._prepare_exported_program_for_export
    except (ImportError, AttributeError):
        return program.run_decompositions()  # the default table: close, not the same
    return prepare(program, registry=exporter_registry(opset or default_opset()))


def capture(case: ModelCase, opset: int | None = None) -> Capture:
    started = time.perf_counter()
    try:
        program = _capture(case)
    except Exception as exc:
        return Capture((), (), f"capture: {error_line(exc)}", time.perf_counter() - started, 0.0)
    captured = time.perf_counter()
    try:
        program = decompose(program, opset)
    except Exception as exc:
        return Capture((), (), f"decomposition: {error_line(exc)}", captured - started,
                       time.perf_counter() - captured)
    uses, other = uses_of(program)
    return Capture(uses, other, "", captured - started, time.perf_counter() - captured, program)


def from_export(onnx_program) -> Capture:
    """The uses of a successful public export, read from the decomposed program the
    exporter translated (``ONNXProgram.exported_program``): the same capture and
    preparation as :func:`capture`, without making them a second time."""
    uses, other = uses_of(onnx_program.exported_program)
    return Capture(uses, other, "", 0.0, 0.0, onnx_program.exported_program, "export")

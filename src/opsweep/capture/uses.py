"""What a model uses: captured as the exporter captures it (``torch.export``, non-strict
first, then strict), decomposed as the exporter decomposes it (its ONNX-friendly
decomposition table for the registry's opset, then its type-promotion pass), and every
aten call of the decomposed graph listed with the dtype and rank of its first tensor input
(read from the graph's own ``meta['val']``), counted.

The dtype and rank are those of the first tensor input because that is where the sweep
files an example (``Example.dtype``, ``Example.rank``): a use and a measurement meet there.
A call with no tensor input (``arange(n)``) is filed at its output's dtype and rank 0.

A *shape query* (``sym_size``, ``sym_numel``, ``sym_stride``, ``sym_storage_offset``: a
dynamic-shape capture asking a tensor for a symbolic side) is not an operator use: the
exporter reads it as shape arithmetic, not as an operator it translates, and no spec can
measure it. Such calls are counted apart (`Capture.queries`), never looked up.

A call outside aten (``prims::convert_element_type``, ``prims::lgamma``) that the exporter's
decomposition made from an aten operator the model called is a use of *that* operator
(the node's ``meta['original_aten']``): its spec measured the same decomposition, so it is
looked up there, at the dtype and rank of the call's first tensor input. A call outside
aten that no aten operator decomposed into (a higher-order op, a custom or a ``prims`` op
the model calls itself) is listed apart (`Capture.other`); no spec measures it, so the
prediction cannot be fine.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from opsweep.catalog.registry import default_opset, exporter_registry
from opsweep.capture.cases import ModelCase
from opsweep.engine.adapter import error_line

NO_TENSOR = "none"  # the dtype a call with no tensor input is filed under, as in Example.dtype
#: aten packets that ask a tensor for a (symbolic) side: shape queries, not operator uses
SHAPE_QUERIES = frozenset({"sym_size", "sym_numel", "sym_stride", "sym_storage_offset"})


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

    @classmethod
    def from_data(cls, u: Mapping[str, Any]) -> Use:
        """A use as a models record stores it (its verdict's fields beside these)."""
        return cls(u["op"], u["overload"], u["dtype"], u["rank"], u["count"], u["node"])


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
    #: shape queries (SHAPE_QUERIES), overload -> calls: counted apart, not operator uses
    queries: tuple[tuple[str, int], ...] = ()
    #: "" when the uses come from the capture the model asks for; else the error line of
    #: its dynamic capture, which failed, so the uses come from a static capture instead
    fallback: str = ""


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


def uses_of(program) -> tuple[tuple[Use, ...], tuple[str, ...], tuple[tuple[str, int], ...]]:
    """(aten uses, other calls, shape queries with their counts) of a decomposed
    ExportedProgram, sorted."""
    counts: Counter = Counter()
    first: dict[tuple, str] = {}
    other: set[str] = set()
    queries: Counter = Counter()
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if not isinstance(target, torch._ops.OpOverload):
            if isinstance(target, torch._ops.HigherOrderOperator):
                other.add(str(target.name()))
            continue  # operator.getitem, symbolic size arithmetic: no operator of their own
        if target.namespace != "aten":
            made_from = node.meta.get("original_aten")
            if not isinstance(made_from, torch._ops.OpOverload) or made_from.namespace != "aten":
                other.add(target.name())
                continue
            target = made_from  # a piece of the decomposition of the operator the model called
        if target.overloadpacket.__name__ in SHAPE_QUERIES:
            queries[target.name()] += 1
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
    return uses, tuple(sorted(other)), tuple(sorted(queries.items()))


def _capture(case: ModelCase, dynamic: bool = True):
    if case.exported:
        return case.model
    error: Exception | None = None
    for strict in (False, True):  # the exporter's capture strategies, in its order
        try:
            return torch.export.export(case.model, case.inputs, dict(case.kwargs),
                                       dynamic_shapes=case.dynamic_shapes if dynamic else None,
                                       strict=strict)
        except Exception as exc:
            error = error or exc
    raise error  # type: ignore[misc]


def _captured(case: ModelCase) -> tuple[object, str]:
    """(the captured program, "" or the dynamic capture's error line): a model whose
    dynamic capture fails is captured again without its dynamic_shapes, so that its uses
    are still looked up; the first error raised when the static capture fails too."""
    try:
        return _capture(case), ""
    except Exception as exc:
        if case.exported or case.dynamic_shapes is None:
            raise
        dynamic = exc
    try:
        return _capture(case, dynamic=False), error_line(dynamic)
    except Exception:
        raise dynamic from None


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
        program, fallback = _captured(case)
    except Exception as exc:
        return Capture((), (), f"capture: {error_line(exc)}", time.perf_counter() - started, 0.0)
    captured = time.perf_counter()
    try:
        program = decompose(program, opset)
    except Exception as exc:
        return Capture((), (), f"decomposition: {error_line(exc)}", captured - started,
                       time.perf_counter() - captured)
    uses, other, queries = uses_of(program)
    return Capture(uses, other, "", captured - started, time.perf_counter() - captured, program,
                   queries=queries, fallback=fallback)


def from_export(onnx_program) -> Capture:
    """The uses of a successful public export, read from the decomposed program the
    exporter translated (``ONNXProgram.exported_program``): the same capture and
    preparation as :func:`capture`, without making them a second time."""
    uses, other, queries = uses_of(onnx_program.exported_program)
    return Capture(uses, other, "", 0.0, 0.0, onnx_program.exported_program, "export", queries)

"""The TorchScript exporter as a target: the public ``torch.onnx.export(..., dynamo=False)``
on the same calls, the same inputs and the same PyTorch references as the dynamo
exporter, and the classification of what it raises into the same failure stages.

It has no fast path (one export of a one-op module costs a few milliseconds: see
benchmarks/bench_torchscript.py). Its dynamic axis goes through ``dynamic_axes`` on
the inputs the dynamo plan makes dynamic (:class:`opsweep.engine.runner.DynamicPlan`).

Stages, from its own error types (``torch.onnx.errors``):

- ``UnsupportedOperatorError``: the symbolic registry has nothing for the operator at
  this opset -> ``no-translation``;
- ``SymbolicValueError`` and any other ``OnnxExporterError``: a symbolic function
  exists and refused -> ``translation-error`` (``CheckerError``, the exporter's own
  ONNX check, -> ``checker``);
- an error raised while ``torch.jit`` traces the module (eager PyTorch ran it: the
  reference did) -> ``capture`` (graded ``blocked``: not an ONNX verdict);
- anything else -> ``raw-error``.
"""

from __future__ import annotations

import contextlib
import io
import os
import traceback
from collections.abc import Iterator, Sequence
from typing import Any, cast

import onnx
import torch

from opsweep.catalog.registry import default_opset
from opsweep.engine.adapter import BaseExporter
from opsweep.model import Stage
from opsweep.streams import flush
from opsweep.targets import KINDS, TORCHSCRIPT, Kind

#: Where torch's tracer lives: an error raised under one of its frames is a tracer failure.
_TRACER_FILES = ("torch/jit/_trace.py", "torch\\jit\\_trace.py")


def max_opset() -> int | None:
    """The highest opset the TorchScript exporter of this torch claims, when it says."""
    try:
        # private torch internals: absent means no claim (the export itself then decides)
        from torch.onnx import _constants
        return int(_constants.ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET)
    except (ImportError, AttributeError, TypeError, ValueError):
        return None


def opset_for(requested: int | None = None) -> int:
    """The opset the TorchScript target exports at: the sweep's, or this exporter's
    highest when the sweep's is beyond it (recorded in the artifact either way)."""
    opset = default_opset() if requested is None else requested
    ceiling = max_opset()
    return opset if ceiling is None else min(opset, ceiling)


def _under_tracer(exc: BaseException) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return any(f.filename.endswith(_TRACER_FILES) for f in frames)


def classify_torchscript_error(exc: BaseException) -> Stage:
    """Map an exception raised by ``torch.onnx.export(dynamo=False)`` to a failure stage."""
    errors = torch.onnx.errors
    if isinstance(exc, errors.UnsupportedOperatorError):
        return Stage.NO_TRANSLATION
    if isinstance(exc, getattr(errors, "CheckerError", ())):
        return Stage.CHECKER
    if isinstance(exc, errors.OnnxExporterError):  # SymbolicValueError among them
        return Stage.TRANSLATION_ERROR
    if _under_tracer(exc):
        return Stage.CAPTURE
    return Stage.RAW_ERROR


def input_names(count: int) -> list[str]:
    """The graph's input names: the ones the runner feeds by position (``inputs_K``)."""
    return [f"inputs_{k}" for k in range(count)]


def dynamic_axes_of(dynamic_shapes: Any, count: int) -> dict[str, dict[int, str]]:
    """``dynamic_axes`` for the runner's ``dynamic_shapes`` (one varargs tuple of per-input
    ``{axis: Dim}`` or None): the same inputs, the same axes, named by the Dim."""
    (per_input,) = dynamic_shapes
    axes: dict[str, dict[int, str]] = {}
    for name, entry in zip(input_names(count), per_input):
        if entry:
            axes[name] = {axis: getattr(dim, "__name__", "batch") for axis, dim in entry.items()}
    return axes


@contextlib.contextmanager
def output_dropped() -> Iterator[None]:
    """File descriptors 1 and 2 pointed at the null device while the exporter runs: on a
    refusal its C++ side prints both graphs to standard output ("ONNX graph being
    constructed during exception"), and its shape inference warns on standard error
    ("The shape inference of prim::TupleConstruct type is missing", hundreds of lines in a
    full sweep); either would land in the middle of a sweep's progress. The exception
    itself keeps the message; ``--verbose`` lets both through. C's own buffered streams
    (which the C++ side writes through) are flushed on both sides of the redirection, so
    what it printed meanwhile goes to the null device, not to the real standard output at
    exit (after a ``--json`` report, say)."""
    flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    try:
        with open(os.devnull, "wb") as null:
            for fd in saved:
                os.dup2(null.fileno(), fd)
        yield
    finally:
        flush()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)


class TorchScriptExporter(BaseExporter):
    """The public call with ``dynamo=False`` at a fixed opset (the exporter protocol of
    :class:`opsweep.engine.adapter.BaseExporter`; no trace: never the base of the
    translation tables' shortcut)."""

    path = TORCHSCRIPT  # the route, as the export cache names it
    family = KINDS[Kind.TORCHSCRIPT].exporter

    def __init__(self, opset: int | None = None, verbose: bool = False,
                 options: Any = None) -> None:
        super().__init__(options=options)
        self.opset = opset_for(opset)
        self.verbose = verbose  # let the exporter's own printing through

    def classify(self, exc: BaseException) -> Stage:
        return classify_torchscript_error(exc)

    def export(self, module: torch.nn.Module, args: Sequence[Any], dynamic_shapes=None
               ) -> onnx.ModelProto:
        """Return the ONNX ModelProto, or raise what the exporter raised."""
        buffer = io.BytesIO()
        names = input_names(len(args))
        axes = None if dynamic_shapes is None else dynamic_axes_of(dynamic_shapes, len(args))
        with contextlib.nullcontext() if self.verbose else output_dropped():
            torch.onnx.export(module, tuple(args), cast(Any, buffer), dynamo=False,  # a file
                              opset_version=self.opset, input_names=names,
                              dynamic_axes=axes, verbose=False)
        return onnx.load_from_string(buffer.getvalue())

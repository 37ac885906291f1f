"""How `opsweep check` exports a model for real with each target a sweep measures, always
through the public ``torch.onnx.export``:

- the stock target: ``dynamo=True`` at the table's opset (`opsweep.check.real.dynamo`);
- the TorchScript exporter: ``dynamo=False`` at the table's opset (or that exporter's
  highest, as the sweep's TorchScript target), with ``dynamic_axes`` for the axes the
  model's ``dynamic_shapes`` make dynamic;
- a translation table ``MODULE:TABLE``: ``dynamo=True, custom_translation_table=TABLE``;
- an opset target ``opsetN``: ``dynamo=True, opset_version=N``, the model checked to have
  come out at opset N (the exporter keeps its own opset, and only logs why, where it
  cannot convert: then the export fails at ``translation-error``, as in the sweep).

The exporters' errors are filed into the sweep's failure stages by the same functions the
sweep's own exporters use. What differs by target is decided by its kind
(`opsweep.targets`), never by its name.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Mapping
from typing import Any, cast

import onnx
import torch
from torch.utils import _pytree as pytree

from opsweep.capture.cases import ModelCase
from opsweep.catalog.registry import remember_exporter_work
from opsweep.check.real import RealExporter, dynamo
from opsweep.engine.adapter import classify_export_error
from opsweep.engine.opsets import classify_at_opset, converter_said, reached
from opsweep.engine.torchscript import classify_torchscript_error, opset_for, output_dropped
from opsweep.engine.translations import load as load_table
from opsweep.targets import Kind, of_name


def _clone(value):
    return value.clone() if isinstance(value, torch.Tensor) else value


def _args(case: ModelCase) -> tuple:
    return tuple(_clone(t) for t in case.inputs)


def _fed(value: Any) -> bool:
    """A leaf the TorchScript exporter makes a graph input of: a tensor, or a number (it
    becomes a rank-0 tensor input)."""
    return isinstance(value, (torch.Tensor, bool, int, float))


def feeds(case: ModelCase, inputs: tuple) -> list[torch.Tensor]:
    """What onnxruntime is fed for a TorchScript export at `inputs` (and the model's
    kwargs): every leaf `_fed` keeps, numbers as rank-0 tensors, in order."""
    leaves = pytree.tree_leaves((inputs, dict(case.kwargs)))
    return [v if isinstance(v, torch.Tensor) else _number(v) for v in leaves if _fed(v)]


def _number(value: bool | int | float) -> torch.Tensor:
    """A number as the TorchScript exporter's graph takes it: a float as a double."""
    return torch.tensor(value, dtype=torch.float64 if isinstance(value, float) else None)


def _input_names(case: ModelCase) -> list[str]:
    """The ONNX input names of the TorchScript export's inputs, positional then keyword, in
    the order `feeds` feeds them (``inputs_K``, as the runner feeds by position)."""
    return [f"inputs_{k}" for k in range(len(feeds(case, case.inputs)))]


def _axes(entry: Any) -> dict[int, str]:
    """One input's dynamic axes from its ``dynamic_shapes`` entry ({axis: Dim} or a
    per-axis sequence), each named by its Dim."""
    if isinstance(entry, Mapping):
        items = list(entry.items())
    elif isinstance(entry, (list, tuple)):
        items = [(i, d) for i, d in enumerate(entry) if d is not None]
    else:
        return {}
    return {int(axis): str(getattr(dim, "__name__", f"dim{axis}")) for axis, dim in items}


def dynamic_axes(case: ModelCase) -> dict[str, dict[int, str]]:
    """``dynamic_axes`` for the model's ``dynamic_shapes`` (given by position, or by the
    forward's parameter names), on the tensor inputs named as `_input_names` names them;
    an input whose entry is nested deeper than one tensor is left static."""
    shapes = case.dynamic_shapes
    names = list(case.kwargs)
    params = list(inspect.signature(case.module().forward).parameters)
    order = params[:len(case.inputs)] + names
    if isinstance(shapes, Mapping):
        per_input = [shapes.get(name) for name in order]
    else:
        per_input = list(shapes or ())
    values = list(case.inputs) + [case.kwargs[n] for n in names]
    out: dict[str, dict[int, str]] = {}
    position = 0
    for value, entry in zip(values, per_input + [None] * len(values)):
        if not isinstance(value, torch.Tensor):
            position += sum(map(_fed, pytree.tree_leaves(value)))
            continue
        axes = _axes(entry)
        if axes:
            out[f"inputs_{position}"] = axes
        position += 1
    return out


def torchscript_export(case: ModelCase, opset: int, dynamic: bool) -> onnx.ModelProto:
    """The public TorchScript export of the model (its ModelProto), or what it raised."""
    buffer = io.BytesIO()
    with output_dropped():
        torch.onnx.export(case.module(), _args(case), cast(Any, buffer),
                          kwargs=dict(case.kwargs) or None, dynamo=False, opset_version=opset,
                          input_names=_input_names(case),
                          dynamic_axes=dynamic_axes(case) if dynamic else None, verbose=False)
    return onnx.load_from_string(buffer.getvalue())


def _dynamo(case: ModelCase, opset: int, dynamic: bool, **more: Any):
    remember_exporter_work()  # the same export, without work it repeats for nothing
    return torch.onnx.export(case.model, _args(case), kwargs=dict(case.kwargs) or None,
                             dynamo=True, opset_version=opset,
                             dynamic_shapes=case.dynamic_shapes if dynamic else None,
                             verbose=False, **more)


def opset_export(case: ModelCase, opset: int, dynamic: bool):
    """The public dynamo export at `opset`, refused (OpsetNotReached) when the model did
    not come out at it."""
    with converter_said() as said:
        program = _dynamo(case, opset, dynamic)
        reached(program.model_proto, opset, said)
    return program


def for_target(name: str, opset: int) -> RealExporter:
    """The real export of the target called `name`, for a table measured at `opset`. A
    translation table that cannot be imported is a UsageError naming it."""
    target = of_name(name)
    if target.kind is Kind.TORCHSCRIPT:
        at = opset_for(opset)
        return RealExporter(at, lambda case, dynamic: torchscript_export(case, at, dynamic),
                            classify_torchscript_error, feeds)
    if target.kind is Kind.OPSET:
        n = cast(int, target.opset)
        return RealExporter(n, lambda case, dynamic: opset_export(case, n, dynamic),
                            lambda exc: classify_at_opset(exc, classify_export_error))
    if target.kind is Kind.TABLE:
        _, table = load_table(name)
        return RealExporter(opset, lambda case, dynamic: _dynamo(
            case, opset, dynamic, custom_translation_table=table))
    return dynamo(opset)


__all__ = ["dynamic_axes", "for_target", "opset_export", "torchscript_export"]

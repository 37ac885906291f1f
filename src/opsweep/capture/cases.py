"""What `opsweep check` is handed: ``module:callable`` or a saved ``ExportedProgram``.

The callable's return contract (documented in docs/check.md) is a dict::

    {"model": torch.nn.Module,          # required
     "inputs": tuple,                   # the positional example inputs (may be left out
                                        # when "kwargs" gives them all)
     "kwargs": dict,                    # optional keyword example inputs (input_ids=...)
     "dynamic_shapes": ...,             # optional: as torch.export takes it
     "dynamic_inputs": tuple,           # optional: inputs at other sizes, run on the dynamic export
     "name": str}                       # optional: how reports name the model

or the pair ``(model, inputs)``. A ``.pt2`` file is loaded with ``torch.export.load``;
its example inputs are the ones saved with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from opsweep.engine.translations import SourceImportError, import_source
from opsweep.errors import ModelError

KEYS = frozenset({"model", "inputs", "kwargs", "dynamic_shapes", "dynamic_inputs", "name"})


@dataclass(frozen=True)
class ModelCase:
    """One model to check: what the exporter is given."""

    source: str  # as given on the command line or in [tool.opsweep] models
    name: str
    model: Any  # a torch.nn.Module, or a torch.export.ExportedProgram (from a .pt2)
    inputs: tuple
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    dynamic_shapes: Any = None
    dynamic_inputs: tuple | None = None

    @property
    def exported(self) -> bool:
        """Loaded from a .pt2: already captured."""
        return isinstance(self.model, torch.export.ExportedProgram)

    def module(self) -> torch.nn.Module:
        """What eager PyTorch runs."""
        return self.model.module() if self.exported else self.model


def _import(module: str, where: str):
    try:
        return import_source(module, "opsweep_model_")
    except SourceImportError as exc:
        raise ModelError(where, str(exc)) from None


def _from_callable(source: str) -> ModelCase:
    module, _, attr = source.rpartition(":")
    if not module or not attr:
        raise ModelError(source, "expected module:callable or a .pt2 file")
    fn = getattr(_import(module, source), attr, None)
    if not callable(fn):
        raise ModelError(source, f"{module} has no callable {attr!r}")
    try:
        returned = fn()
    except Exception as exc:
        raise ModelError(source, f"the callable raised {type(exc).__name__}: {exc}") from None
    return _case(source, returned)


def _case(source: str, returned: Any) -> ModelCase:
    if isinstance(returned, tuple) and len(returned) == 2:
        returned = {"model": returned[0], "inputs": returned[1]}
    if not isinstance(returned, Mapping):
        raise ModelError(source, f"the callable returned a {type(returned).__name__}, not a dict "
                         "with 'model' and 'inputs' (or a (model, inputs) pair)")
    unknown = sorted(set(returned) - KEYS)
    if unknown:
        raise ModelError(source, f"unknown key {unknown[0]!r} (expected {', '.join(sorted(KEYS))})")
    model, inputs = returned.get("model"), returned.get("inputs")
    if not isinstance(model, torch.nn.Module):
        raise ModelError(source, f"'model' is a {type(model).__name__}, not a torch.nn.Module")
    kwargs = returned.get("kwargs") or {}
    if not isinstance(kwargs, Mapping):
        raise ModelError(source, f"'kwargs' is a {type(kwargs).__name__}, not a dict")
    if inputs is None and kwargs:
        inputs = ()  # keyword inputs only: model(input_ids=..., attention_mask=...)
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, tuple):
        raise ModelError(source, f"'inputs' is a {type(inputs).__name__}, not a tuple (give "
                         "the positional inputs, or 'kwargs' for keyword ones)")
    more = returned.get("dynamic_inputs")
    if more is not None and not isinstance(more, tuple):
        raise ModelError(source, f"'dynamic_inputs' is a {type(more).__name__}, not a tuple")
    name = returned.get("name") or source.rpartition(":")[2]
    if not isinstance(name, str):
        raise ModelError(source, f"'name' is a {type(name).__name__}, not a string")
    return ModelCase(source, name, model.eval(), inputs, dict(kwargs),
                     returned.get("dynamic_shapes"), more)


def _from_pt2(source: str) -> ModelCase:
    try:
        program = torch.export.load(source)
    except Exception as exc:
        raise ModelError(source, f"not a saved ExportedProgram: {type(exc).__name__}: {exc}") from None
    example = program.example_inputs
    if example is None:
        raise ModelError(source, "the saved ExportedProgram carries no example inputs")
    args, kwargs = example
    return ModelCase(source, Path(source).stem, program, tuple(args), dict(kwargs))


def load_model(source: str) -> ModelCase:
    """The model `source` names, run once in eager PyTorch (a model it cannot run is
    bad input, named)."""
    case = _from_pt2(source) if source.endswith(".pt2") else _from_callable(source)
    try:
        with torch.no_grad():
            case.module()(*case.inputs, **case.kwargs)
    except Exception as exc:
        raise ModelError(source, f"eager PyTorch cannot run it: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
    return case

"""A faster route to the same export: what ``torch.onnx.export(dynamo=True)``
recomputes on every call, computed once per process.

Measured on torch 2.13 (CPU), a one-op export costs ~0.85 s through the public
call. Of that, set-up that does not depend on the model dominates:

1. building the onnxscript registry (``ONNXRegistry.from_torchlib``);
2. building the ONNX-friendly decomposition table from it and splitting it
   into CompositeImplicitAutograd overrides and python decompositions
   (which walks every CIA op of the dispatcher);
3. evaluating ``Callable[...]`` annotations inside ``OperatorBase.py_impl``,
   called thousands of times per export by the CIA override context.

This module keeps (1) and (2) per process and makes (3) cheap, then calls
the same ``_core.export`` the public call reaches, with the same opset and
arguments. Every piece is an internal of torch: when any is missing, the fast
path is unavailable and the sweep uses the public call, and the fingerprint's
exporter path says which ran. ``tests/integration/test_fastpath.py`` proves the
two give the same outcome on specs reaching every stage.
"""

from __future__ import annotations

from collections.abc import Callable as AbcCallable
from collections.abc import Mapping
from typing import Any

import torch

from .adapter import Exporter

FAST_PATH = "dynamo-fast"


def _internals():
    """The torch internals the fast path needs; raises if any is missing."""
    import torch._ops as ops
    from torch.export import exported_program as ep
    from torch.onnx._internal.exporter import _constants, _core, _decomp, _fx_passes, _registration
    needed = [(ops, "Callable"), (ep, "_split_decomp_table_to_cia_and_python_decomp"),
              (ep, "_decompose_exported_program"), (ep, "_disable_prexisiting_fake_mode"),
              (_decomp, "create_onnx_friendly_decomposition_table"),
              (_decomp, "get_onnx_implemented_overloads"), (_fx_passes, "decompose_with_registry"),
              (_core, "export"), (_registration.ONNXRegistry, "from_torchlib"),
              (_constants, "TORCHLIB_OPSET")]
    for module, name in needed:
        if not hasattr(module, name):
            raise AttributeError(f"{module.__name__}.{name}")
    return ops, ep, _constants, _core, _decomp, _fx_passes, _registration


def fast_path_available() -> bool:
    try:
        _internals()
    except (ImportError, AttributeError):
        return False
    return True


class _CheapCallableMeta(type):
    """Stands in for collections.abc.Callable inside torch._ops: subscripting
    (annotations evaluated at each nested def) returns the class itself, and
    isinstance keeps Callable's meaning."""

    def __getitem__(cls, item: Any) -> type:
        return cls

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, AbcCallable)


class _CheapCallable(metaclass=_CheapCallableMeta):
    pass


_DECOMP_CACHE: dict[int, tuple[Any, dict, dict]] = {}


def _install(ops, ep, _decomp, _fx_passes) -> None:
    """Process-wide and idempotent: cached decompositions, cheap annotations."""
    if getattr(_fx_passes.decompose_with_registry, "_opsweep", False):
        return
    ops.Callable = _CheapCallable

    def decompose_with_registry(exported_program, registry):
        cached = _DECOMP_CACHE.get(id(registry))
        if cached is None or cached[0] is not registry:
            registered = set(_decomp.get_onnx_implemented_overloads(registry))
            table = _decomp.create_onnx_friendly_decomposition_table(registered)
            cia, python_table = ep._split_decomp_table_to_cia_and_python_decomp(dict(table))
            cached = _DECOMP_CACHE[id(registry)] = (registry, cia, python_table)
        _, cia, python_table = cached

        # what ExportedProgram.run_decompositions does after splitting the table
        @ep._disable_prexisiting_fake_mode
        def run():
            return ep._decompose_exported_program(
                exported_program, cia_to_decomp=dict(cia), python_decomp_table=dict(python_table),
                joint_loss_index=None, decompose_custom_triton_ops=False)
        return run()

    decompose_with_registry._opsweep = True  # type: ignore[attr-defined]
    _fx_passes.decompose_with_registry = decompose_with_registry


class FastExporter(Exporter):
    """Same outcome as :class:`Exporter`, with per-process set-up done once."""

    path = FAST_PATH

    def __init__(self, custom_translation_table: Mapping[AbcCallable, Any] | None = None,
                 opset: int | None = None) -> None:
        super().__init__(custom_translation_table, opset)
        ops, ep, constants, core, decomp, fx_passes, registration = _internals()
        self._core = core
        # the public call builds its registry for max(opset, TORCHLIB_OPSET)
        registry_opset = max(self.opset, constants.TORCHLIB_OPSET)
        self.registry = registration.ONNXRegistry().from_torchlib(opset_version=registry_opset)
        for torch_op, onnx_op in (self.custom_translation_table or {}).items():
            self.registry.register_op(torch_op, onnx_op, is_complex=False)
        _install(ops, ep, decomp, fx_passes)

    def export(self, module: torch.nn.Module, args: tuple[Any, ...]):
        program = self._core.export(module, args, None, registry=self.registry,
                                    opset_version=self.opset, verbose=False, optimize=True)
        return program.model_proto


def make_exporter(fast: bool, custom_translation_table=None) -> Exporter:
    if fast:
        return FastExporter(custom_translation_table)
    return Exporter(custom_translation_table)

"""The dynamo exporter's own registry, asked directly: which aten packets have
a translation, and which ops of a spec's decomposed graph have none.

This is what the page's `registered` column shows, and what known-gap notes
are checked against in the fast test suite: a `no-translation` note on an
operator that has since gained a translation fails a test.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

import torch

from opsweep.engine.adapter import default_opset
from opsweep.catalog.listing import row_name
from opsweep.model import OpSpec


@lru_cache(maxsize=4)
def _registry(opset: int):
    """The registry the exporter builds. Building it warns once per torchvision op when
    torchvision is not installed (torch 2.15 does): not news to a page reader, so the
    exporter's logger is kept at ERROR meanwhile."""
    from torch.onnx._internal.exporter import _constants, _registration
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        return _registration.ONNXRegistry.from_torchlib(
            opset_version=max(opset, _constants.TORCHLIB_OPSET))
    finally:
        logger.setLevel(level)


@lru_cache(maxsize=4)
def registered_packets(opset: int | None = None) -> frozenset[str]:
    """aten packet names (no namespace) with at least one registered overload."""
    names = set()
    for key in _registry(opset or default_opset()).functions:
        if isinstance(key, str) and key.startswith("aten::"):
            names.add(key.split("::", 1)[1].split(".", 1)[0])
    return frozenset(names)


def registered_rows(opset: int | None = None) -> frozenset[str]:
    """Listing rows the registry translates (through any packet merged into the row)."""
    rows = {row_name(p) for p in registered_packets(opset)}
    rows |= {p.lstrip("_") for p in registered_packets(opset) if p.startswith("_")}
    return frozenset(r for r in rows if r)


@dataclass(frozen=True)
class GraphCheck:
    captured: bool
    untranslated: tuple[str, ...]  # ops of the decomposed graph the registry lacks


def untranslated_ops(spec: OpSpec, example) -> GraphCheck:
    """Capture one example, decompose it the way the exporter does, and list
    the call targets the registry has no translation for."""
    from torch.onnx._internal.exporter import _fx_passes

    from opsweep.engine.runner import build_call
    call = build_call(spec, example)
    try:
        program = torch.export.export(call, tuple(t.clone() for t in call.inputs))
    except Exception:
        return GraphCheck(False, ())
    registry = _registry(default_opset())
    program = _fx_passes.decompose_with_registry(program, registry)
    missing = set()
    for node in program.graph.nodes:
        target = node.target
        if node.op == "call_function" and isinstance(target, torch._ops.OpOverload):
            if not registry.is_registered(target):
                missing.add(target.name())
    return GraphCheck(True, tuple(sorted(missing)))

"""The dynamo exporter's own registry, asked directly: which aten packets have
a translation, and which ops of a spec's decomposed graph have none.

This is what the page's `registered` column shows, and what known-gap notes
are checked against (:func:`opsweep.engine.attribution.untranslated_ops`): a
`no-translation` note on an operator that has since gained a translation fails.
"""

from __future__ import annotations

import logging
from functools import lru_cache

from opsweep.catalog.listing import row_name


def default_opset() -> int:
    """The opset the public call uses when none is given."""
    try:
        from torch.onnx import _constants  # a private module: absent from some releases
        return int(_constants.ONNX_DEFAULT_OPSET)
    except (ImportError, AttributeError):  # pragma: no cover - older/newer torch
        return 20


def torchlib_registry(opset: int):
    """A registry of its own, equal to ``ONNXRegistry.from_torchlib(opset_version=opset)``.

    `from_torchlib` registers every torchlib function, working out each one's signature
    (most of its cost), then keeps per operator the functions of the highest opset at most
    `opset`. The registration is the same at every opset, so it is made once per process
    (:func:`_torchlib_functions`) and each registry gets copies of its lists, then the
    same clean-up at its own opset. Building it warns once per torchvision op when
    torchvision is not installed: not news to a page reader, so the exporter's logger is
    kept at ERROR meanwhile."""
    # private torch internals: absent ones mean fallback
    from torch.onnx._internal.exporter import _registration
    if not hasattr(_registration.ONNXRegistry, "_cleanup_registry_based_on_opset_version"):
        return _registration.ONNXRegistry.from_torchlib(opset_version=opset)  # built as it is
    registry = _registration.ONNXRegistry()
    registry._opset_version = opset
    registry.functions = {target: list(functions)
                          for target, functions in _torchlib_functions().items()}
    registry._cleanup_registry_based_on_opset_version()
    return registry


@lru_cache(maxsize=1)
def _torchlib_functions() -> dict:
    """Every torchlib function, registered as `from_torchlib` registers them, before its
    clean-up by opset (shared by :func:`torchlib_registry`; never changed: each registry
    copies the lists it keeps)."""
    from torch.onnx._internal.exporter import _registration  # private torch internals

    class Uncleaned(_registration.ONNXRegistry):
        def _cleanup_registry_based_on_opset_version(self) -> None:
            pass
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        return Uncleaned.from_torchlib().functions
    finally:
        logger.setLevel(level)


@lru_cache(maxsize=4)
def exporter_registry(opset: int):
    """The registry the exporter builds."""
    # private torch internals: absent ones mean fallback
    from torch.onnx._internal.exporter import _constants
    return torchlib_registry(max(opset, _constants.TORCHLIB_OPSET))


@lru_cache(maxsize=4)
def registered_packets(opset: int | None = None) -> frozenset[str]:
    """aten packet names (no namespace) with at least one registered overload."""
    names = set()
    for key in exporter_registry(opset or default_opset()).functions:
        if isinstance(key, str) and key.startswith("aten::"):
            names.add(key.split("::", 1)[1].split(".", 1)[0])
    return frozenset(names)


def registered_rows(opset: int | None = None) -> frozenset[str]:
    """Listing rows the registry translates (through any packet merged into the row)."""
    rows = {row_name(p) for p in registered_packets(opset)}
    rows |= {p.lstrip("_") for p in registered_packets(opset) if p.startswith("_")}
    return frozenset(r for r in rows if r)

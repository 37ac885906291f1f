"""The dynamo exporter's own registry, asked directly: which aten packets have
a translation, and which ops of a spec's decomposed graph have none.

This is what the page's `registered` column shows, and what known-gap notes
are checked against (:func:`opsweep.engine.attribution.untranslated_ops`): a
`no-translation` note on an operator that has since gained a translation fails.
"""

from __future__ import annotations

import logging
from functools import cache, lru_cache

from opsweep.catalog.listing import row_name


def default_opset() -> int:
    """The opset the public call uses when none is given."""
    try:
        from torch.onnx import _constants  # a private module: absent from some releases
        return int(_constants.ONNX_DEFAULT_OPSET)
    except (ImportError, AttributeError):  # pragma: no cover - older/newer torch
        return 20


#: where a traced function keeps the signature it worked out first (its instance dict)
_REMEMBERED = "_opsweep_function_ir"


def remember_exporter_work() -> None:
    """Spare this process the work the dynamo exporter repeats at every public call and
    whose answer cannot have changed since it last did it: traced functions' signatures
    (:func:`remember_signatures`) and the CompositeImplicitAutograd operators' lookup
    (:func:`materialize_once`). Called before each of opsweep's own exports; the exports
    are the same byte for byte (tests/integration/test_repeated_work.py)."""
    remember_signatures()
    materialize_once()


@cache  # once a process: the lookup it installs is kept for the process's life
def materialize_once() -> None:
    """Make torch.export look up the CompositeImplicitAutograd operators only when that
    can find something new.

    Every collection of the CIA operators (``torch._export.utils._collect_all_valid_cia_ops``,
    which each public call's decomposition table runs several times) first looks up every
    CIA operator the dispatcher has, once for each operator namespace (about 64 times an
    export; a quarter of a small model's public export). A lookup only puts each operator's
    packet into its namespace, and nothing but a library's removal takes one out. So it is
    done again only when the dispatcher's CIA registrations or a namespace's operators
    differ from what they were right after the last lookup; otherwise it would change
    nothing. Where torch has no such function, nothing changes."""
    try:
        import torch  # private torch internals, asked for only where an export is to run
        from torch._export import utils
    except ImportError:
        return
    look_up = getattr(utils, "_materialize_cpp_cia_ops", None)
    registrations = getattr(torch._C, "_dispatch_get_registrations_for_dispatch_key", None)
    if not callable(look_up) or not callable(registrations) or hasattr(look_up, "__wrapped__"):
        return
    after: tuple | None = None  # what the last lookup left (registrations, namespaces)

    def state() -> tuple:
        spaces = tuple((name, tuple(getattr(getattr(torch.ops, name), "_dir", ())))
                       for name in tuple(getattr(torch.ops, "_dir", ())))
        return tuple(registrations("CompositeImplicitAutograd")), spaces

    def _materialize_cpp_cia_ops() -> None:
        nonlocal after
        if after is not None and state() == after:
            return
        look_up()
        after = state()
    _materialize_cpp_cia_ops.__wrapped__ = look_up  # type: ignore[attr-defined]
    utils._materialize_cpp_cia_ops = _materialize_cpp_cia_ops


class _Signature:
    """A traced function's signature whose domain is known without working it out.

    onnxscript translates a traced function's signature with a converter whose module is
    the function's opset, and the signature's domain is that opset's domain (read from
    ``Converter.translate_function_signature``). Every caller in torch and onnxscript reads
    only ``.domain`` (the registry's build, a graph's calls of traced functions), so the
    source is read, parsed and translated only when anything else is asked of it, once;
    then it answers as that signature does (tests/integration/test_repeated_work.py checks
    both of every torchlib function against the one worked out afresh)."""

    __slots__ = ("domain", "_work", "_worked")

    def __init__(self, domain: str, work) -> None:
        self.domain, self._work, self._worked = domain, work, None

    def worked_out(self):
        """The signature onnxscript works out (worked out at the first ask, then kept)."""
        if self._worked is None:
            self._worked = self._work()
        return self._worked

    def __getattr__(self, name: str):
        if name.startswith("__") or name in _Signature.__slots__:  # Python's protocols, and
            raise AttributeError(name)  # a slot not set yet (a copy being made), are its own
        return getattr(self.worked_out(), name)

    def __repr__(self) -> str:
        return repr(self.worked_out())


@cache  # once a process: the property it installs is kept for the process's life
def remember_signatures() -> None:
    """Make onnxscript's traced functions work out their signature once in this process.

    A traced function's ``function_ir`` (its signature: the function's source read,
    tokenized, parsed and translated) is worked out again each time it is asked for, and it
    is asked for often: ``ONNXRegistry.from_torchlib``, which every public
    ``torch.onnx.export(dynamo=True)`` runs, asks it twice of each of some 500 torchlib
    functions for their domain, and translating a graph asks it at every call of a traced
    function. The answer depends only on the function (its source, its module's names,
    its opset), all fixed once the function is made, and every caller only reads it, so
    each function keeps its first answer; and as they read only its domain, which is the
    opset's, the answer is a :class:`_Signature` that works out the rest only when asked
    (the registry's build: 0.93 of a fresh process's CPU). The exports are the same byte for byte
    (`benchmarks/bench_exporter_work.py`, tests/integration/test_repeated_work.py). Called
    before opsweep's own exports; where onnxscript has no such property, nothing changes."""
    try:
        from onnxscript._internal import values  # private onnxscript internals
    except ImportError:
        return
    traced = getattr(values, "TracedOnnxFunction", None)
    if not isinstance(traced, type):
        return
    found = vars(traced).get("function_ir")
    if not isinstance(found, property) or found.fget is None or found.fset is not None:
        return
    work_out = found.fget

    def function_ir(self):
        kept = getattr(self, "__dict__", None)
        if kept is not None and _REMEMBERED in kept:  # every ask but a function's first
            return kept[_REMEMBERED]
        domain = getattr(getattr(self, "_opset", None), "domain", None)
        if kept is None or not isinstance(domain, str):
            return work_out(self)  # no place to keep it, or no domain to know: as before
        kept[_REMEMBERED] = _Signature(domain, lambda: work_out(self))
        return kept[_REMEMBERED]
    function_ir.__wrapped__ = work_out  # type: ignore[attr-defined]
    setattr(traced, "function_ir", property(function_ir, doc=found.__doc__))


def torchlib_registry(opset: int):
    """A registry of its own, equal to ``ONNXRegistry.from_torchlib(opset_version=opset)``.

    `from_torchlib` registers every torchlib function, asking each one's signature for its
    domain (most of its cost where a signature is worked out in full: remember_signatures),
    then keeps per operator the functions of the highest opset at most
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
    remember_exporter_work()

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

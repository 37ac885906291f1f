"""The aten operator listing of the installed torch, read from its dispatcher.

Row names follow the support page: ``_``-prefixed identifiers dropped,
in-place variants (``add_``) merged into their base, backward and ``sym_``
names dropped. No scraping, no network.
"""

from __future__ import annotations

import builtins
import dis
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

import torch


@dataclass(frozen=True)
class Row:
    name: str
    core: bool
    inplace: bool  # an in-place variant (name_) exists and was merged here
    overloads: tuple[str, ...]


@dataclass(frozen=True)
class Listing:
    torch_version: str
    rows: dict[str, Row]
    core_packets: frozenset[str]  # every packet carrying torch.Tag.core, '_' names included

    @property
    def core_rows(self) -> frozenset[str]:
        return frozenset(n for n, r in self.rows.items() if r.core)


def packet_names() -> list[str]:
    names = {n.split("::", 1)[1].split(".", 1)[0]
             for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::")}
    return sorted(names)


def row_name(packet: str) -> str | None:
    """The listing row a packet belongs to, or None if the listing drops it."""
    if packet.startswith("_") or packet.startswith("sym_") or "backward" in packet:
        return None
    if packet.endswith("_") and not packet.endswith("__"):
        return packet[:-1]
    return packet


def _is_core(packet: str) -> bool:
    pkt = getattr(torch.ops.aten, packet, None)
    if pkt is None:
        return False
    try:
        return any(torch.Tag.core in getattr(pkt, ov).tags for ov in pkt.overloads())
    except (AttributeError, RuntimeError):
        return False


@lru_cache(maxsize=1)
def installed_listing() -> Listing:
    rows: dict[str, dict] = {}
    core_packets = set()
    for packet in packet_names():
        core = _is_core(packet)
        if core:
            core_packets.add(packet)
        name = row_name(packet)
        if name is None:
            continue
        row = rows.setdefault(name, {"core": False, "inplace": False, "overloads": set()})
        row["core"] |= core
        row["inplace"] |= packet != name
        pkt = getattr(torch.ops.aten, packet, None)
        if pkt is not None:
            row["overloads"].update(f"{packet}.{ov}" for ov in pkt.overloads())
    return Listing(torch.__version__, {
        n: Row(n, r["core"], r["inplace"], tuple(sorted(r["overloads"]))) for n, r in sorted(rows.items())},
        frozenset(core_packets))


@lru_cache(maxsize=1)
def row_names() -> frozenset[str]:
    """The listing's row names alone: cheap (no tags read), for presence checks."""
    return frozenset(filter(None, map(row_name, packet_names())))


_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def _in_torch(module_name: object) -> bool:
    """Whether `module_name` names torch or one of its modules."""
    return isinstance(module_name, str) and module_name.split(".")[0] == "torch"


def missing_references(fn: object) -> tuple[str, ...]:
    """Dotted names a function's own code reaches through a torch module that the
    installed torch does not have (``torch.cholesky`` once it is removed). Only
    attribute chains rooted in a global that is a torch module are followed.

    A function torch defines itself (``fn=torch.nn.functional.pad``) is not read: the spec
    reached it, so it exists, and its code is torch's, not the spec's. Following its
    references would also import the torch submodules it reaches lazily (``pad`` reaches
    torch._dynamo and torch._inductor: over a second of CPU in a process that loads the
    catalog and exports nothing, such as `opsweep draw` or a pooled sweep's parent)."""
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or scope is None or _in_torch(getattr(fn, "__module__", None)):
        return ()
    missing: list[str] = []
    base, path = None, ""
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL":
            value = scope.get(ins.argval, getattr(builtins, ins.argval, None))
            is_torch = isinstance(value, ModuleType) and _in_torch(value.__name__)
            base, path = (value, ins.argval) if is_torch else (None, "")
        elif ins.opname in _ATTRIBUTE_OPS and base is not None:
            path = f"{path}.{ins.argval}"
            base = getattr(base, ins.argval, None)
            if base is None:
                missing.append(path)
            elif not isinstance(base, ModuleType):
                base = None  # a function or class: what it is called with is not a reference
        else:
            base = None
    return tuple(dict.fromkeys(missing))

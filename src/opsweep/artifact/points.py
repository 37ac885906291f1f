"""The order of the history's points: no step moves a pin backwards.

Points are pin sets (torch, onnx, onnxruntime, onnxscript, hypothesis). Sorted by pins alone,
two points can sit in a row where one pin moves forward and another backwards (torch 2.13.0
with onnxscript 0.7.2, then torch 2.14.1 with onnxscript 0.6.2): such a step invents the
transitions the next step undoes. So the points form a *chain*, the longest run in which
every step moves each pin forward or leaves it (ending at the newest point), and every other
point sits *beside* the chain point it differs from least, compared with it, never stepped
through. "Full since", the last bump and "removed in" all read the chain.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar


class Record(Protocol):
    """What ordering needs of a history record (artifact.records.Record): its pins and its
    torch release. A protocol, so that records may use this module without a circle."""

    @property
    def pins(self) -> tuple[tuple[str, str], ...]: ...

    @property
    def version(self) -> str: ...


#: the records ordered: what `order` is given is what its `Order` holds
R = TypeVar("R", bound=Record)


def version_key(version: str) -> tuple:
    """Release order: 2.9.1 < 2.13.0 < 2.14.0rc1 < 2.14.0 (pre-releases before their release)."""
    m = re.match(r"^(\d+(?:\.\d+)*)(.*)$", version)
    if not m:
        return ((), 1, version)
    numbers = tuple(int(x) for x in m.group(1).split("."))
    return (numbers, 0 if m.group(2) else 1, m.group(2))


_key = version_key


def forward(old: Record, new: Record) -> bool:
    """Every pin of `new` is the same release as `old`'s or a later one."""
    return all(_key(a) <= _key(b) for (_, a), (_, b) in zip(old.pins, new.pins, strict=True))


def differing(a: Record, b: Record) -> int:
    return sum(x != y for x, y in zip(a.pins, b.pins, strict=True))


@dataclass(frozen=True)
class Order(Generic[R]):
    chain: tuple[R, ...]  # oldest first; each step moves pins forward only
    beside: tuple[tuple[R, R], ...]  # (a point off the chain, the chain point it sits beside)

    @property
    def points(self) -> tuple[R, ...]:
        """Every point for display: the chain, each off-chain point right after its own."""
        out: list[R] = []
        for r in self.chain:
            out.append(r)
            out += [side for side, at in self.beside if at is r]
        return tuple(out)

    def on_chain(self, r: Record) -> bool:
        return any(r is c for c in self.chain)


def order(records: Sequence[R]) -> Order[R]:
    """`records` sorted by pins (as `load_all` gives them): the longest forward chain ending
    at the last of them, the rest beside their nearest chain point."""
    if not records:
        return Order[R]((), ())
    best: list[tuple[int, int]] = []  # per record: (chain length ending here, predecessor)
    for i, r in enumerate(records):
        options = [(best[j][0] + 1, j) for j in range(i) if forward(records[j], r)]
        best.append(max(options, default=(1, -1)))
    chain: list[R] = []
    i = len(records) - 1
    while i >= 0:
        chain.append(records[i])
        i = best[i][1]
    chain.reverse()
    beside: list[tuple[R, R]] = []
    for r in records:
        if any(r is c for c in chain):
            continue
        at = min(chain, key=lambda c: (differing(r, c), c.version != r.version,
                                       abs(records.index(c) - records.index(r))))
        beside.append((r, at))
    return Order(tuple(chain), tuple(beside))

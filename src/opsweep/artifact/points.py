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
from typing import Protocol


class Record(Protocol):
    """What ordering needs of a history record (artifact.records.Record): its pins and its
    torch release. A protocol, so that records may use this module without a circle."""

    pins: tuple[tuple[str, str], ...]
    version: str


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
class Order:
    chain: tuple[Record, ...]  # oldest first; each step moves pins forward only
    beside: tuple[tuple[Record, Record], ...]  # (a point off the chain, the chain point it sits beside)

    @property
    def points(self) -> tuple[Record, ...]:
        """Every point for display: the chain, each off-chain point right after its own."""
        out: list[Record] = []
        for r in self.chain:
            out.append(r)
            out += [side for side, at in self.beside if at is r]
        return tuple(out)

    def on_chain(self, r: Record) -> bool:
        return any(r is c for c in self.chain)


def order(records: Sequence[Record]) -> Order:
    """`records` sorted by pins (as `load_all` gives them): the longest forward chain ending
    at the last of them, the rest beside their nearest chain point."""
    if not records:
        return Order((), ())
    best: list[tuple[int, int]] = []  # per record: (chain length ending here, predecessor)
    for i, r in enumerate(records):
        options = [(best[j][0] + 1, j) for j in range(i) if forward(records[j], r)]
        best.append(max(options, default=(1, -1)))
    chain, i = [], len(records) - 1
    while i >= 0:
        chain.append(records[i])
        i = best[i][1]
    chain.reverse()
    beside = []
    for r in records:
        if any(r is c for c in chain):
            continue
        at = min(chain, key=lambda c: (differing(r, c), c.version != r.version,
                                       abs(records.index(c) - records.index(r))))
        beside.append((r, at))
    return Order(tuple(chain), tuple(beside))

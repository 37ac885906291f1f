"""Drift: the (dtype, rank) cells whose observed error grew between two artifacts, even
when both are within tolerance (issue 51). A cell drifts when its largest absolute error
more than doubled, or, at float16 and bfloat16, its largest error in ULP grew by more than
4; a cell whose numbers are the same says nothing, and neither does a spec whose digest
changed (its draws are other examples: measured anew, not drift). Listed by growth, the
largest first, each naming the pins that moved ("with onnxruntime 1.31.1").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from opsweep.artifact.data import PINS, Artifact, moved_fields
from opsweep.artifact.numerics import CellError
from opsweep.targets import is_stock

#: a cell drifts when its largest absolute error grows by more than this factor ...
FACTOR = 2.0
#: ... or, at float16/bfloat16, its largest error by more than this many ULP
ULPS = 4


@dataclass(frozen=True)
class Drift:
    spec: str
    target: str
    old: CellError
    new: CellError
    pins: str  # "onnxruntime 1.31.1": the pins that moved, at their new versions ("": none)

    @property
    def growth(self) -> float:
        """How many times the largest absolute error grew (infinite from an exact 0)."""
        if self.old.max_abs == 0:
            return math.inf
        return self.new.max_abs / self.old.max_abs

    @property
    def ulp_growth(self) -> int:
        if self.old.ulp is None or self.new.ulp is None:
            return 0
        return self.new.ulp - self.old.ulp


def drifted(old: CellError, new: CellError) -> bool:
    if new.max_abs > FACTOR * old.max_abs:
        return True
    return (old.ulp is not None and new.ulp is not None and new.ulp - old.ulp > ULPS)


def moved_pins(old: Artifact, new: Artifact) -> str:
    fields = set(moved_fields(old.fingerprint, new.fingerprint))
    return ", ".join(f"{p} {getattr(new.fingerprint, p)}" for p in PINS if p in fields)


def drift(old: Artifact, new: Artifact) -> tuple[Drift, ...]:
    """Every drifting cell of every spec and target both artifacts measured alike, the
    largest growth first (then the largest growth in ULP, then by name)."""
    pins = moved_pins(old, new)
    found = []
    for name in new.target_names:
        a, b = old.target(name), new.target(name)
        if a is None or b is None:
            continue
        for spec in sorted(set(a.specs) & set(b.specs)):
            before, after = a.specs[spec], b.specs[spec]
            if before.digest != after.digest or not before.errors or not after.errors:
                continue
            cells = {c.key: c for c in before.errors}
            found += [Drift(spec, name, cells[c.key], c, pins) for c in after.errors
                      if c.key in cells and drifted(cells[c.key], c)]
    return tuple(sorted(found, key=lambda d: (-d.growth, -d.ulp_growth, d.spec, d.target,
                                              d.new.dtype, d.new.rank)))

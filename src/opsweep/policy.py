"""The tolerance policy numerics are graded against: one versioned data file
(``opsweep/data/tolerance_policy.json``, the built-in one; ``[tool.opsweep]
tolerance-policy`` names a project's own), with a tolerance per dtype and per-operator
overrides that each give their reason. docs/tolerances.md describes it.

An element agrees when ``|onnxruntime - PyTorch| <= atol + rtol * |PyTorch|``. Which
tolerance holds for a spec at a dtype: an override of one of the operators the spec
declares (the loosest, when several do), else the spec's own (``OpSpec.tolerances``),
else the policy's default for the dtype; a dtype with none compares exactly.

:func:`judge` re-grades one recorded example against another policy from what the sweep
recorded of its error (:class:`opsweep.model.Observed`), without measuring it again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from opsweep.files import load
from opsweep.model import OpSpec, Tolerance

#: the built-in policy: package data beside this module
BUILTIN = Path(__file__).parent / "data" / "tolerance_policy.json"
SCHEMA = "tolerance_policy"


@dataclass(frozen=True)
class Override:
    """One operator's tolerance at one dtype, and why it differs from the default."""

    operator: str
    dtype: str
    tolerance: Tolerance
    reason: str


@dataclass(frozen=True)
class Policy:
    """A named, versioned set of tolerances (:func:`load` reads one)."""

    name: str
    version: int
    defaults: Mapping[str, Tolerance]
    overrides: tuple[Override, ...] = ()

    @property
    def label(self) -> str:
        """How the artifact and the pages name it, e.g. ``opsweep v1``."""
        return f"{self.name} v{self.version}"

    def tolerance(self, spec: OpSpec | None, dtype: str) -> Tolerance | None:
        """The tolerance `spec`'s outputs of `dtype` are compared with (None: exactly)."""
        if spec is None:
            return self.defaults.get(dtype)
        return self.tolerance_for(spec.aten_ops, spec.tolerances.get(dtype), dtype)

    def overridden(self, operators: Iterable[str], dtype: str) -> Tolerance | None:
        """The loosest override of one of `operators` at `dtype`, if any."""
        ops = set(operators)
        found = [o.tolerance for o in self.overrides if o.dtype == dtype and o.operator in ops]
        if not found:
            return None
        return Tolerance(max(t.rtol for t in found), max(t.atol for t in found))

    def tolerance_for(self, operators: Iterable[str], own: Tolerance | None,
                      dtype: str) -> Tolerance | None:
        """The tolerance of a spec declaring `operators`, with its `own` at `dtype`."""
        return self.overridden(operators, dtype) or own or self.defaults.get(dtype)

    def for_spec(self, spec: OpSpec | None) -> Callable[[str], Tolerance | None]:
        """`tolerance` for one spec, as the comparison asks it: by dtype."""
        return functools.partial(self.tolerance, spec)


def parse(data: dict[str, Any]) -> Policy:
    """A policy from its validated data."""
    defaults = {d: Tolerance(float(t["rtol"]), float(t["atol"]))
                for d, t in data["defaults"].items()}
    overrides = tuple(Override(o["operator"], o["dtype"],
                               Tolerance(float(o["rtol"]), float(o["atol"])), o["reason"])
                      for o in data["overrides"])
    return Policy(data["name"], data["version"], MappingProxyType(defaults), overrides)


@functools.lru_cache(maxsize=8)
def read(path: str = "") -> Policy:
    """The policy in the file at `path` ("": the built-in one); a file that is not one is a
    DataFileError naming the file and the field."""
    return parse(load(Path(path) if path else BUILTIN, SCHEMA))


def builtin() -> Policy:
    return read("")


def judge(excess: float, measured: Tolerance, new: Tolerance, max_abs: float,
          max_rel: float) -> bool | None:
    """Whether one example recorded under the `measured` tolerance agrees under `new`:
    True, False, or None when what was recorded cannot say (a new rtol below the one
    measured with, and an error between what each allows: measure again).

    `excess` is the example's largest ``|error| - rtol * |PyTorch|`` at the measured rtol
    (never below 0): the smallest atol that passes it there. `max_abs` and `max_rel` are
    its cell's largest absolute and relative error (upper bounds of its own; the relative
    error of a nonzero error where PyTorch gives 0 is infinite)."""
    if max_abs <= new.atol or max_rel <= new.rtol:
        return True
    if new.rtol == measured.rtol:
        return excess <= new.atol
    if new.rtol < measured.rtol:
        return False if excess > new.atol else None
    return True if excess <= new.atol else None

"""A sweep's targets as it plans them (each :class:`opsweep.targets.Target` with its
fingerprint entry), and the key of one result, a spec measured by a target.

A target is written by its name everywhere results are stored (the artifact, the
journal, the run log): see :mod:`opsweep.targets`.
"""

from __future__ import annotations

from dataclasses import dataclass

from opsweep.artifact.results import TargetEntry
from opsweep.targets import STOCK_TARGET, Target, is_stock


@dataclass(frozen=True)
class Planned:
    """A target of the sweep with its fingerprint entry: the table's source, or the other
    exporter's release and opset (None: the stock target, which has none)."""

    target: Target = STOCK_TARGET
    entry: TargetEntry | None = None

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def is_stock(self) -> bool:
        return self.target.is_stock


@dataclass(frozen=True, order=True)
class Key:
    """One result of a sweep: `spec` measured by the target named `target`."""

    target: str
    spec: str

    @property
    def journal(self) -> str:
        """How the checkpoint names it: the spec, then ``@target`` for a custom target."""
        return self.spec if is_stock(self.target) else f"{self.spec}@{self.target}"

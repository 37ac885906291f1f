"""Targets: what a sweep measures with, the stock exporter, the stock exporter with
one custom translation table, or another exporter (``torchscript``: the TorchScript
exporter, ``--torchscript``), and the key of one result, a spec measured by a target.

A target is written by its name everywhere results are stored (the artifact, the
journal, the run log): `STOCK`, the table's ``MODULE:TABLE``, or ``torchscript``.
"""

from __future__ import annotations

from dataclasses import dataclass

from opsweep.artifact.data import STOCK, TargetEntry
from opsweep.engine.translations import load


@dataclass(frozen=True)
class Target:
    translations: TargetEntry | None = None  # None: the stock exporter

    @property
    def name(self) -> str:
        return STOCK if self.translations is None else self.translations.name

    @property
    def is_stock(self) -> bool:
        return self.translations is None


def short_label(name: str) -> str:
    """How progress lines name a target: `""` for the stock exporter, else the table's
    name without its module."""
    return "" if name == STOCK else name.rpartition(":")[2]


def targets_of(translations: tuple[str, ...]) -> tuple[Target, ...]:
    """The stock target, then one per ``--translations MODULE:TABLE`` (loaded)."""
    return (Target(), *(Target(info) for info, _ in map(load, translations)))


@dataclass(frozen=True, order=True)
class Key:
    """One result of a sweep: `spec` measured by the target named `target`."""

    target: str
    spec: str

    @property
    def journal(self) -> str:
        """How the checkpoint names it: the spec, then ``@target`` for a custom target."""
        return self.spec if self.target == STOCK else f"{self.spec}@{self.target}"

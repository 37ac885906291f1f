"""Planning a regeneration, before anything is measured: the fingerprint, the
previous artifact to build on, the targets, this run's (this shard's) specs, and for
every target and spec whether its previous result is reused or re-measured, and why.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata

from opsweep.artifact import data as art
from opsweep.artifact.data import PINS, Artifact, Fingerprint
from opsweep.artifact.results import ExporterEntry, SpecResult, TargetResult
from opsweep.artifact.shard import DEFAULT_COST, assign
from opsweep.catalog.load import Catalog
from opsweep.catalog.registry import default_opset
from opsweep.engine.adapter import PUBLIC_PATH
from opsweep.engine.sweepconfig import SweepConfig
from opsweep.engine.fastpath import exporter_path
from opsweep.engine.torchscript import opset_for
from opsweep.engine.translations import load
from opsweep.errors import ArtifactError, UsageError
from opsweep.model import OpSpec
from opsweep.sweep.request import Request
from opsweep.sweep.reuse import Decision, decide, spec_digest
from opsweep.sweep.targets import Key, Planned
from opsweep.targets import Kind, Target
from opsweep.policy import read as read_policy

#: The decision recorded for a spec --only did not select, carried from the previous artifact.
NOT_SELECTED = Decision(True, "not selected", " (--only)")

#: Target -> spec -> why it is reused or re-measured.
Decisions = Mapping[str, Mapping[str, Decision]]


def planned(target: Target) -> Planned:
    """`target` with its fingerprint entry: a table's source (loaded: its digest and the
    operators it translates); for the TorchScript exporter, torch's release (the exporter
    ships in torch) and the opset it exports at (the sweep's, unless beyond what it
    supports); for an opset target, torch's release and its opset (which must not be the
    sweep's: the stock target measures that one); the stock target has none."""
    if target.kind is Kind.TABLE:
        return Planned(target, load(target.table)[0])
    if target.kind is Kind.TORCHSCRIPT:
        return Planned(target, ExporterEntry(target.name, versions()["torch"],
                                                 opset_for(target.opset)))
    if target.kind is Kind.OPSET:
        assert target.opset is not None  # an opset target has one
        if target.opset == default_opset():
            raise UsageError(f"opsets: {target.opset} is the sweep's own opset, which the stock "
                             "target measures; list only other opsets ([tool.opsweep] opsets, "
                             "--opset)")
        return Planned(target, ExporterEntry(target.name, versions()["torch"], target.opset))
    return Planned(target)


def versions() -> dict[str, str]:
    out = {}
    for dist in PINS:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def current_fingerprint(exporter_path: str = PUBLIC_PATH, opset: int | None = None,
                        dynamic: bool = True) -> Fingerprint:
    return Fingerprint(**versions(), opset=default_opset() if opset is None else opset,
                       exporter=exporter_path, dynamic=dynamic)


@dataclass(frozen=True)
class Plan:
    """What a regeneration will do."""

    fingerprint: Fingerprint
    regen_index: int
    targets: tuple[Planned, ...]  # stock first, then each custom target
    specs: tuple[OpSpec, ...]  # this run's, after --only and --shard
    digests: Mapping[str, str]  # every selected spec's (before --shard)
    decisions: Decisions  # for every selected spec
    previous: Artifact | None
    previous_digest: str  # of the previous artifact's bytes ("" without one)
    #: --only, whole, over an artifact of the same fingerprint and profile: the specs not
    #: selected keep their previous results
    carries: bool
    notes: tuple[str, ...]

    @property
    def keys(self) -> tuple[Key, ...]:
        """Every result this run's artifact gets from this run (reused, resumed or measured)."""
        return tuple(Key(t.name, s.name) for t in self.targets for s in self.specs)

    def reused(self) -> dict[Key, SpecResult]:
        """The previous results this run carries over."""
        previous = self.previous
        if previous is None:  # nothing to reuse: no decision reuses
            return {}
        return {k: previous.results[k.target].specs[k.spec]
                for k in self.keys if self.decisions[k.target][k.spec].reuse}

    def unselected(self, catalog: Catalog) -> dict[Key, SpecResult]:
        """The previous results the artifact keeps for the catalog's specs this run
        does not measure (see `carries`; never those of another table)."""
        previous = self.previous
        if not self.carries or previous is None:
            return {}
        carried = {}
        for target in self.targets:
            view = previous.target(target.name)
            if view is None or not _same_table(view, target):
                continue
            carried.update({Key(target.name, n): r for n, r in view.specs.items()
                            if n in catalog.specs})
        return carried


def _same_table(previous: TargetResult, target: Planned) -> bool:
    """The previous artifact measured this target's table (the stock target has none), or
    this exporter target under the same torch and opset."""
    return previous.entry == target.entry


def make_plan(catalog: Catalog, config: SweepConfig, request: Request) -> Plan:
    targets = tuple(planned(t) for t in config.targets)
    previous, note = _load_previous(request)
    fingerprint = current_fingerprint(exporter_path(config.fast), dynamic=config.dynamic)
    regen_index = previous.regen_index + 1 if previous else 0
    specs = catalog.select(list(request.only) or None)
    digests = {s.name: spec_digest(s) for s in specs}
    decisions = {t.name: _target_decisions(specs, digests, previous, fingerprint, config,
                                           regen_index, request.no_reuse, t) for t in targets}
    if request.shard:
        specs = _shard_slice(specs, decisions, previous, request.shard)
    path = request.previous_path
    previous_digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else ""
    carries = bool(request.only and not request.shard and previous is not None
                   and previous.fingerprint == fingerprint
                   and previous.profile == config.profile.name)
    return Plan(fingerprint, regen_index, targets, tuple(specs), digests, decisions, previous,
                previous_digest, carries, (note,) if note else ())


def _load_previous(request: Request) -> tuple[Artifact | None, str]:
    path = request.previous_path
    if not path.exists():
        if request.previous is not None:
            raise ArtifactError(path, "", "no such file (given as --previous)")
        return None, ""
    try:
        previous = art.load(path)
    except ArtifactError as exc:
        if request.no_reuse:
            return None, f"previous artifact ignored ({exc})"
        raise ArtifactError(exc.path, exc.field, f"{str(exc).split(': ', 1)[-1]} "
                            "(refusing to reuse from it; --no-reuse sweeps without it)") from None
    return previous, ""


def _target_decisions(specs: Sequence[OpSpec], digests: Mapping[str, str],
                      previous: Artifact | None, fingerprint: Fingerprint, config: SweepConfig,
                      regen_index: int, no_reuse: bool, target: Planned) -> dict[str, Decision]:
    """Reuse decisions for one target: a custom target is reused only from the
    same table (its source hash) measured under the same fingerprint."""
    view = previous.target(target.name) if previous else None
    if previous is not None and not no_reuse:
        why = ""
        if view is None:
            why = "target not measured before"
        elif not _same_table(view, target):
            why = "translation table changed"
        if why:
            return {s.name: Decision(False, why) for s in specs}
    return {s.name: decide(s, digests[s.name], previous, fingerprint, config.profile, regen_index,
                           no_reuse, target.name, read_policy(config.policy).label)
            for s in specs}


def _shard_slice(specs: list[OpSpec], decisions: Decisions, previous: Artifact | None,
                 shard: tuple[int, int]) -> list[OpSpec]:
    """This shard's specs (every target of a spec goes to the same shard): a
    cost-balanced split of the work (reused results cost nothing)."""
    def cost(target: str, name: str) -> int:
        if decisions[target][name].reuse:
            return 0
        view = previous.target(target) if previous else None
        return view.specs[name].signatures if view and name in view.specs else DEFAULT_COST

    costs = {s.name: sum(cost(t, s.name) for t in decisions) for s in specs}
    owner = assign(costs, shard[1])
    return [s for s in specs if owner[s.name] == shard[0]]

"""Sharding a sweep across runners, and merging the shard artifacts back.

Every shard computes the same assignment: a greedy longest-processing-time
split of the specs still to measure, each costed by the number of exports it
took last time (reused specs cost nothing). ``merge`` checks that the parts
are one sweep's complete set of shards and rebuilds the single artifact, which
is byte-identical to a single-machine sweep.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from opsweep.artifact.data import STOCK, Artifact, make_artifact
from opsweep.errors import ArtifactError, UsageError

DEFAULT_COST = 20  # exports for a spec never measured before (ci draws ~20 signatures)
MAX_SHARDS = 256  # the artifact schema's bound on shard.count


def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m:
        raise UsageError(f"--shard: expected I/N such as 2/4, got {text!r}")
    index, count = int(m.group(1)), int(m.group(2))
    if count > MAX_SHARDS:
        raise UsageError(f"--shard: at most {MAX_SHARDS} shards (an artifact records no more), "
                         f"got {text!r}")
    if not 1 <= index <= count:
        raise UsageError(f"--shard: index must be between 1 and {count}, got {text!r}")
    return index, count


def assign(costs: Mapping[str, int], count: int) -> dict[str, int]:
    """Spec name -> shard index (1-based), balancing total cost."""
    loads = [0] * count
    owner = {}
    for name in sorted(costs, key=lambda n: (-costs[n], n)):
        target = min(range(count), key=lambda i: (loads[i], i))
        loads[target] += costs[name]
        owner[name] = target + 1
    return owner


def merge(parts: Sequence[tuple[Path, Artifact]]) -> Artifact:
    if not parts:
        raise UsageError("merge: no shard artifacts given")
    first_path, first = parts[0]
    for path, part in parts:
        if part.shard is None:
            raise ArtifactError(path, "shard", "not a shard artifact (written without --shard)")
        for field in ("fingerprint", "profile", "examples", "regen_index"):
            if getattr(part, field) != getattr(first, field):
                raise ArtifactError(path, field, f"{getattr(part, field)!r} differs from "
                                    f"{getattr(first, field)!r} in {first_path}")
        if {n: t.translations for n, t in part.targets.items()} != \
                {n: t.translations for n, t in first.targets.items()}:
            raise ArtifactError(path, "targets", f"translation targets differ from those in "
                                f"{first_path}")
        if part.shard[1] != first.shard[1]:
            raise ArtifactError(path, "shard.count", f"{part.shard[1]} differs from "
                                f"{first.shard[1]} in {first_path}")
    count = first.shard[1]
    seen: dict[int, Path] = {}
    for path, part in parts:
        if part.shard[0] in seen:
            raise ArtifactError(path, "shard.index", f"shard {part.shard[0]}/{count} was already "
                                f"given as {seen[part.shard[0]]}")
        seen[part.shard[0]] = path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise UsageError(f"merge: shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing")
    merged: dict[str, dict] = {}
    for target in first.target_names:
        specs: dict = {}
        owners: dict[str, Path] = {}
        where = "specs" if target == STOCK else f"targets.{target}.specs"
        for path, part in parts:
            for name, result in part.view(target).specs.items():  # type: ignore[union-attr]
                if name in specs:
                    raise ArtifactError(path, f"{where}.{name}", f"also measured by {owners[name]}")
                specs[name], owners[name] = result, path
        merged[target] = specs
    return make_artifact(first.fingerprint, first.profile, first.examples, first.regen_index,
                         merged[STOCK], None,
                         {n: (t.translations, merged[n]) for n, t in first.targets.items()},
                         absent={n: why for _, part in parts for n, why in part.absent.items()})

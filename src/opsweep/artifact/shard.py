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

from opsweep.artifact.data import Artifact, make_artifact
from opsweep.errors import ArtifactError, UsageError
from opsweep.targets import STOCK, is_stock

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
    shards: dict[Path, tuple[int, int]] = {}
    for path, part in parts:
        if part.shard is None:
            raise ArtifactError(path, "shard", "not a shard artifact (written without --shard)")
        shards[path] = part.shard
        for field in ("fingerprint", "profile", "examples", "regen_index", "policy"):
            if getattr(part, field) != getattr(first, field):
                raise ArtifactError(path, field, f"{getattr(part, field)!r} differs from "
                                    f"{getattr(first, field)!r} in {first_path}")
        if [t.entry for t in part.others] != [t.entry for t in first.others]:
            raise ArtifactError(path, "targets", f"translation targets differ from those in "
                                f"{first_path}")
        if shards[path][1] != shards[first_path][1]:
            raise ArtifactError(path, "shard.count", f"{shards[path][1]} differs from "
                                f"{shards[first_path][1]} in {first_path}")
    count = shards[first_path][1]
    seen: dict[int, Path] = {}
    for path, _ in parts:
        index = shards[path][0]
        if index in seen:
            raise ArtifactError(path, "shard.index", f"shard {index}/{count} was already "
                                f"given as {seen[index]}")
        seen[index] = path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise UsageError(f"merge: shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing")
    merged: dict[str, dict] = {}
    for target in first.target_names:
        specs: dict = {}
        owners: dict[str, Path] = {}
        where = "specs" if is_stock(target) else f"targets.{target}.specs"
        for path, part in parts:
            measured = part.target(target)
            for name, result in (measured.specs if measured is not None else {}).items():
                if name in specs:
                    raise ArtifactError(path, f"{where}.{name}", f"also measured by {owners[name]}")
                specs[name], owners[name] = result, path
        merged[target] = specs
    return make_artifact(first.fingerprint, first.profile, first.examples, first.regen_index,
                         merged[STOCK], None,
                         {t.name: (t.entry, merged[t.name]) for t in first.others},
                         absent={n: why for _, part in parts for n, why in part.absent.items()},
                         policy=first.policy)


def partial_reason(old: Artifact | None, new: Artifact,
                   catalog: frozenset[str] | None = None) -> str:
    """Why `new` cannot stand for a whole sweep ('' when it can): a shard, or an
    artifact that lost specs the committed one measured (`--shard` with `--only`
    merges to a few specs). A spec the new artifact records as absent (its torch does not
    have the operator) is accounted for. With `catalog`, only specs still in it count as lost."""
    if new.broken is not None:  # a pin set that breaks the exporter: a whole result of its own
        return ""
    if new.shard is not None:
        return f"it is shard {new.shard[0]}/{new.shard[1]}, not a merged sweep"
    if old is None:
        return ""
    for target in new.target_names:
        before, after = old.target(target), new.target(target)
        if before is None or after is None:
            continue
        lost = set(before.specs) - set(after.specs) - set(new.absent)
        if catalog is not None:
            lost &= catalog
        if lost:
            shown = ", ".join(sorted(lost)[:5]) + (", ..." if len(lost) > 5 else "")
            where = "" if is_stock(target) else f" of target {target}"
            return (f"{len(lost)} spec(s){where} measured before are missing ({shown}): a partial "
                    "sweep (--shard with --only, or a lost shard)")
    return ""


def combine(parts: Sequence[tuple[Path, Artifact]]) -> Artifact:
    """What a sweep's parts stand for: one whole artifact as it is, every shard merged, or
    the breakage when any part records that the pin set breaks the exporter."""
    if not parts:
        raise UsageError("no artifact given")
    if len(parts) > 1 and not all(a.shard for _, a in parts):
        raise UsageError("several artifacts given, but they are not all shards")
    broken = next((a for _, a in parts if a.broken is not None), None)
    return broken or (merge(parts) if parts[0][1].shard else parts[0][1])

"""What one regeneration measured again, and why: the reuse decisions of its sweeps, counted
per target, for the review bot's comment ("spec `roll` changed: re-measured; 81 in
rotation; nothing else can change at these pins").

Built from the run logs the sweeps leave beside their artifacts (``*.run.jsonl``, one line
per target and spec); carried to the privileged job as one small JSON file of the result,
which is data a pull request chose: every string is checked here and reaches the comment
only inside a code span.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opsweep.errors import ArtifactError
from opsweep.files import write_atomic

#: The result file that carries the account (beside the repository's files, never committed).
ACCOUNT_FILE = "reuse-account.json"
#: Why a result is carried when nothing that could change it moved (sweep.reuse), and
#: what that means, as summaries and comments say it.
UNCHANGED = "unchanged fingerprint and spec"
NOTHING_MOVED = "nothing that could change them moved"
#: Reasons a spec was re-measured because the spec itself is new or changed.
CHANGED_SPEC = ("spec changed", "new spec")
#: Spec names listed by name, per target (the rest are counted).
MAX_NAMED = 10
_NAME = re.compile(r"^[A-Za-z0-9_.:+-]{1,120}$")
#: a target: `stock`, or a translation table as `path/to/table.py:NAME`
_TARGET = re.compile(r"^[A-Za-z0-9_./:+-]{1,240}$")
_WHY = re.compile(r"^[A-Za-z0-9 _.,:()/+-]{1,120}$")
_MAX_ENTRIES = 64
MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class TargetAccount:
    remeasured: Mapping[str, int] = field(default_factory=dict)  # why -> how many specs
    reused: Mapping[str, int] = field(default_factory=dict)  # why -> how many specs
    changed: tuple[str, ...] = ()  # specs re-measured because new or changed (the first few)
    changed_count: int = 0  # how many there were in all
    #: what its groups did with the export cache (engine.cache): loaded, exported, unusable
    cache: Mapping[str, int] = field(default_factory=dict)

    @property
    def measured(self) -> int:
        return sum(self.remeasured.values())


@dataclass(frozen=True)
class Account:
    targets: Mapping[str, TargetAccount]
    #: the fingerprint's fields that moved, when that is why specs were re-measured
    moved: tuple[str, ...] = ()


#: What an export cache's counts may say.
CACHE_COUNTS = ("loaded", "exported", "unusable")


def run_path(out: Path) -> Path:
    """The run log a sweep writes beside the artifact `out` (git-ignored)."""
    return out.with_name(out.name + ".run.jsonl")


def read_run(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run log's header and its per-spec lines."""
    try:
        first, *rest = Path(path).read_text("utf-8").splitlines()
        return json.loads(first), [json.loads(line) for line in rest if line.strip()]
    except FileNotFoundError:
        raise ArtifactError(path, "", "no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ArtifactError(path, "", f"not a readable run log: {exc}") from None


def beside(artifacts: Sequence[tuple[Path, int]]) -> Account | None:
    """The account of the run logs beside the artifacts (each with its ``regen_index``):
    None unless every one has a run log written by the sweep that wrote it."""
    lines: list[Mapping] = []
    cache: dict[str, dict[str, int]] = {}
    moved: set[str] = set()
    for path, regen_index in artifacts:
        log = run_path(Path(path))
        if not log.is_file():
            return None
        header, entries = read_run(log)
        if header.get("artifact") != Path(path).name or header.get("regen_index") != regen_index:
            return None  # left by an earlier sweep
        try:
            from_run_logs(entries)
        except ValueError as exc:
            raise ArtifactError(log, "", str(exc)) from None
        lines += entries
        moved.update(_fields(header.get("moved", []), "moved", log))
        for target, counts in (header.get("cache") or {}).items():
            mine = cache.setdefault(str(target), {})
            for what, n in _cache_counts(counts, f"cache.{str(target)[:40]!r}", log).items():
                mine[what] = mine.get(what, 0) + n
    return from_run_logs(lines, cache, sorted(moved)) if lines else None


def from_run_logs(lines: Iterable[Mapping],
                  cache: Mapping[str, Mapping[str, int]] | None = None,
                  moved: Sequence[str] = ()) -> Account:
    """The account of the run-log lines of every shard (``{"target", "spec", "reused",
    "why"}``; a log from before ``why`` was recorded counts its ``reason``), with the
    export cache's counts per target and the fingerprint's moved fields of their headers.
    A spec that two logs name counts once."""
    decided: dict[tuple[str, str], tuple[bool, str]] = {}
    for line in lines:
        try:
            decided[str(line["target"]), str(line["spec"])] = \
                bool(line["reused"]), str(line.get("why") or line["reason"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a run-log line: {exc}") from None
    counts: dict[str, tuple[Counter, Counter, set]] = {}
    for (target, spec), (reused, why) in decided.items():
        again, kept, changed = counts.setdefault(target, (Counter(), Counter(), set()))
        (kept if reused else again)[why] += 1
        if not reused and why in CHANGED_SPEC:
            changed.add(spec)
    cache = cache or {}
    return Account({t: TargetAccount(dict(a), dict(k), tuple(sorted(c))[:MAX_NAMED], len(c),
                                     dict(cache.get(t, {})))
                    for t, (a, k, c) in sorted(counts.items())},
                   tuple(moved))


def to_data(account: Account) -> dict:
    return {"targets": {t: {"remeasured": dict(a.remeasured), "reused": dict(a.reused),
                            "changed": list(a.changed), "changed_count": a.changed_count,
                            "cache": dict(a.cache)}
                        for t, a in account.targets.items()},
            "moved": list(account.moved)}


def save(path: Path, account: Account) -> None:
    write_atomic(path, (json.dumps(to_data(account), indent=1, sort_keys=True) + "\n").encode())


def _counts(value: object, where: str, path: Path) -> dict[str, int]:
    if not isinstance(value, dict) or len(value) > _MAX_ENTRIES:
        raise ArtifactError(path, where, "not an object of at most 64 reasons")
    for why, n in value.items():
        if not isinstance(why, str) or not _WHY.match(why) or not isinstance(n, int) \
                or isinstance(n, bool) or n < 0:
            raise ArtifactError(path, f"{where}.{str(why)[:40]!r}", "not a reason with a count")
    return dict(value)


def _cache_counts(value: object, where: str, path: Path) -> dict[str, int]:
    counts = _counts(value, where, path)
    unknown = sorted(set(counts) - set(CACHE_COUNTS))
    if unknown:
        raise ArtifactError(path, f"{where}.{unknown[0][:40]!r}",
                            f"not one of {', '.join(CACHE_COUNTS)}")
    return counts


def load(path: Path) -> Account:
    """The account in `path`, checked field by field (the error names the field)."""
    try:
        if Path(path).stat().st_size > MAX_BYTES:
            raise ArtifactError(path, "", f"over {MAX_BYTES} bytes: not a reuse account")
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ArtifactError(path, "", f"not a readable reuse account: {exc}") from None
    targets = data.get("targets") if isinstance(data, dict) else None
    if not isinstance(targets, dict) or len(targets) > _MAX_ENTRIES:
        raise ArtifactError(path, "targets", "not an object of targets")
    out = {}
    for name, entry in targets.items():
        where = f"targets.{name[:40]!r}"
        if not _TARGET.match(name) or not isinstance(entry, dict):
            raise ArtifactError(path, where, "not a target name with its account")
        changed = entry.get("changed", [])
        total = entry.get("changed_count", len(changed))
        if not isinstance(changed, list) or len(changed) > MAX_NAMED \
                or not all(isinstance(s, str) and _NAME.match(s) for s in changed) \
                or not isinstance(total, int) or isinstance(total, bool) or total < len(changed):
            raise ArtifactError(path, f"{where}.changed", "not a list of spec names")
        out[name] = TargetAccount(_counts(entry.get("remeasured", {}), f"{where}.remeasured", path),
                                  _counts(entry.get("reused", {}), f"{where}.reused", path),
                                  tuple(changed), total,
                                  _cache_counts(entry.get("cache", {}), f"{where}.cache", path))
    return Account(out, tuple(_fields(data.get("moved", []), "moved", path)))


def _fields(value: object, where: str, path: Path) -> list[str]:
    """A list of the fingerprint's field names, checked (data a pull request's run wrote)."""
    if not isinstance(value, list) or len(value) > _MAX_ENTRIES \
            or not all(isinstance(m, str) and _NAME.match(m) for m in value):
        raise ArtifactError(path, where, "not a list of fingerprint fields")
    return list(value)

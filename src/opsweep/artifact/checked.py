"""The models record: `opsweep check --json` of a project's ``[tool.opsweep] models``
against the artifact, kept beside it (``docs/models_checked.json``) by the main command
when models are configured. The bot reads two of them (the committed one and the new
measurement's) as data and shows each model's verdict transitions
(`opsweep.artifact.models_diff`). Only what the bot needs is read here (it never imports
the check itself, nor torch).

The record is validated against ``schema/models.schema.json``. Version 2 gives every
entry its ``check_fingerprint`` (`opsweep.check.fingerprint`), by which the main command
reuses it instead of checking the model again; a version-1 record reads the same, and
reuses nothing. An entry with ``lost`` is a model whose worker died (a machine failure):
no verdict. Version 3 adds, when the models were checked with other targets (``opsweep
check --targets``), each entry's ``targets``: per other target's name its real verdicts
and export, and its table's prediction and uses when the table measured that target; the
stock exporter's stay where they were, so a version-1 or -2 record reads as one with the
stock target alone (`target_names`, `target_entry`).

A sharded measuring run checks its models in the shard jobs, each a share of the list
(`shard_models`), into a record of its own beside the shard's artifact (`part_name`); the
assemble job reads those records by that name and joins their entries with the merged
table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opsweep.errors import DataFileError
from opsweep.files import validate
from opsweep.targets import STOCK, is_stock, label, stock_first

#: the versions of the record this opsweep reads (it writes the last)
VERSIONS = (1, 2, 3)

AXES = ("export", "runtime", "numerics", "dynamic")
#: how a shard job's models record is named beside its shard artifact
PART_PREFIX = "onnx-models-"
VALUES = frozenset({"pass", "fail", "not reached"})


@dataclass(frozen=True)
class ModelEntry:
    name: str
    verdict: Mapping[str, str] | None  # axis -> pass | fail | not reached (None: not exported)
    ops: frozenset[str]  # the aten operators the model uses
    failed: bool


def part_name(shard: int, shards: int) -> str:
    """The file name of shard `shard` of `shards`'s models record."""
    return f"{PART_PREFIX}shard-{shard}-of-{shards}.json"


def is_part(path: Path) -> bool:
    """Whether `path` is named as a shard job's models record (not a shard artifact)."""
    return path.name.startswith(PART_PREFIX)


def shard_models(sources: tuple[str, ...], shard: int, shards: int) -> tuple[str, ...]:
    """The models shard `shard` (1-based) of `shards` checks: every `shards`-th of the list
    from the `shard`-th on, so that a family's models, listed together, spread over the
    shards rather than all landing on one."""
    return sources[shard - 1::shards]


def _entry(path: object, i: int, m: Any) -> ModelEntry:
    where = f"models[{i}]"
    if not isinstance(m, dict) or not isinstance(m.get("name"), str):
        raise DataFileError(path, f"{where}.name", "expected a model with a name")
    verdict = m.get("verdict")
    if verdict is not None and (not isinstance(verdict, dict) or not set(verdict) <= set(AXES)
                                or not set(verdict.values()) <= VALUES):
        raise DataFileError(path, f"{where}.verdict", f"expected axes {AXES} -> {sorted(VALUES)}")
    uses = m.get("uses")
    if not isinstance(uses, list) or not all(isinstance(u, dict) and isinstance(u.get("op"), str)
                                             for u in uses):
        raise DataFileError(path, f"{where}.uses", "expected a list of uses with an op")
    return ModelEntry(m["name"], verdict, frozenset(u["op"] for u in uses), bool(m.get("failed")))


def entries_by_source(data: Any, path: object = "<models>") -> dict[str, dict[str, Any]]:
    """The record's entries as data, by the source each model was given as (for reuse);
    a DataFileError naming the field when it is not a models record."""
    from_data(data, path)
    return {m["source"]: m for m in data["models"] if isinstance(m.get("source"), str)}


def from_data(data: Any, path: object = "<models>") -> dict[str, ModelEntry]:
    if not isinstance(data, dict) or data.get("models_version") not in VERSIONS:
        raise DataFileError(path, "models_version", f"expected one of {VERSIONS} (an opsweep "
                            "check --json record)")
    if not isinstance(data.get("models"), list):
        raise DataFileError(path, "models", "expected a list")
    entries = [_entry(path, i, m) for i, m in enumerate(data["models"])]
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise DataFileError(path, "models", "two models share a name")
    validate(data, "models", path)  # the rest of the shape (fingerprints, lost models)
    return {e.name: e for e in entries}


def load(path: str | Path) -> dict[str, ModelEntry]:
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataFileError(path, "", f"cannot read the models record: {exc}") from None
    return from_data(data, path)


def target_names(entries: Any) -> tuple[str, ...]:
    """The targets a record's entries (``record["models"]``) have verdicts for: the stock
    exporter first, then every other target any entry was checked with, by name."""
    others = {name for e in entries if isinstance(e, Mapping)
              for name in (e.get("targets") or {})}
    return (STOCK, *sorted(others, key=stock_first))


def target_entry(entry: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The entry as the target called `name` checked it, in the stock entry's shape (its
    verdict, prediction, reality, uses, counts, gaps and failed that target's; its name,
    source, capture and fingerprint the entry's), for what reads an entry (the score, the
    page, the history); the entry itself for the stock target; None when the model was not
    checked with that target (a lost model is lost on every target)."""
    if is_stock(name) or entry.get("lost"):
        return dict(entry)
    found = (entry.get("targets") or {}).get(name)
    if not isinstance(found, Mapping):
        return None
    kept = {k: v for k, v in entry.items() if k not in found and k not in ("targets", "against")}
    return {**kept, **found}


@dataclass(frozen=True)
class Loss:
    """An axis the model passes with one exporter and fails with the other."""

    axis: str
    passes: str  # the target it passes with
    fails: str  # the target it fails with

    @property
    def words(self) -> tuple[str, str]:
        """How a page names the two targets (`opsweep.targets.label`)."""
        return label(self.passes), label(self.fails)

    @property
    def to_stock(self) -> bool:
        """The model passes the axis with the stock exporter only: moving to it gains it."""
        return is_stock(self.passes)


def losses(entry: Mapping[str, Any], one: str, other: str) -> tuple[Loss, ...]:
    """The axes the model passes with target `one` and fails with `other`, and back (the
    migration page's "what would I lose", per model); () when it was not checked with both
    or either has no verdict."""
    a, b = target_entry(entry, one), target_entry(entry, other)
    va, vb = (a or {}).get("verdict"), (b or {}).get("verdict")
    if not isinstance(va, Mapping) or not isinstance(vb, Mapping):
        return ()
    out = []
    for axis in AXES:
        x, y = va.get(axis), vb.get(axis)
        if x == "pass" and y == "fail":
            out.append(Loss(axis, one, other))
        elif x == "fail" and y == "pass":
            out.append(Loss(axis, other, one))
    return tuple(out)

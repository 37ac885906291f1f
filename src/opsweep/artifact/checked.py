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
no verdict.

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

#: the versions of the record this opsweep reads (it writes the last)
VERSIONS = (1, 2)

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

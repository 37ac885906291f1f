"""Cell tables: the part of an artifact `opsweep check` joins on, compact enough to ship
in the wheel (``opsweep/data/tables/torch-<version>.json.gz``), so that a check runs from
``pip install opsweep`` anywhere.

A table is the artifact's stock target with what the check never reads dropped: the other
targets (TorchScript, translation tables) and each spec's `arguments` (the values its
draws reached; the overloads it called as declared packets stay, without their values: the
check joins a packet the listing has no row for, ``_to_copy``, on them). Everything the
join reads stays as the sweep wrote it: per operator its specs; per spec its outcome
counts per (dtype, rank, stage), its failure groups (stage, error, count and smallest
example: the failing verdict and its repro), its `cells` and `errors`; the fingerprint and
the tolerance policy. The artifact inside validates as any artifact does (its operators
are derived again from the kept spec results), so the check runs on it unchanged. Around
it the table names the opsweep that wrote it and, when a history record of the same pins
said so, the opsweep that measured it.

The file is gzip-compressed JSON with fixed header bytes (no time, no name), so the same
artifact always gives the same bytes.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from opsweep.artifact import data as art
from opsweep.artifact.points import version_key
from opsweep.artifact.records import public_version
from opsweep.coverage import INDIRECT
from opsweep.errors import ArtifactError
from opsweep.files import write_atomic

TABLE_VERSION = 1
#: where the packaged tables live: opsweep/data/tables in the wheel (src/opsweep/data/tables
#: in a checkout), one per measured torch
PACKAGED = Path(__file__).resolve().parents[1] / "data" / "tables"
SUFFIX = ".json.gz"
#: a table larger than this once decompressed is refused (a compressed file can expand
#: without bound); the current one is a few MB
MAX_BYTES = 256 * 1024 * 1024
_NAME = re.compile(r"^torch-(\d[0-9A-Za-z.]*)\.json\.gz$")


@dataclass(frozen=True)
class CellTable:
    """A table read back: the artifact the check joins on and who made it."""

    path: Path
    artifact: art.Artifact
    opsweep: str  # the opsweep that wrote the table
    measured_by: str  # the opsweep that measured it ("": not recorded)

    @property
    def torch(self) -> str:
        return public_version(self.artifact.fingerprint.torch)


def file_name(artifact: art.Artifact) -> str:
    """``torch-2.15.0.json.gz``: the measured torch's public version (a local label such
    as ``+cpu`` is the same release's build)."""
    return f"torch-{public_version(artifact.fingerprint.torch)}{SUFFIX}"


def compact(artifact: art.Artifact) -> art.Artifact:
    """The stock target alone, each spec without its `arguments`; a shard or a pin set that
    broke the exporter is refused (nothing to check against)."""
    if artifact.shard is not None:
        raise ValueError("a shard's artifact measures part of the catalog: assemble the "
                         "shards first (opsweep sweep --merge)")
    if artifact.broken is not None:
        raise ValueError(artifact.broken.headline(artifact.fingerprint))
    specs = {name: replace(r, arguments=_overloads(r.arguments))
             for name, r in artifact.specs.items()}
    return art.make_artifact(artifact.fingerprint, artifact.profile, artifact.examples,
                             artifact.regen_index, specs, absent=artifact.absent,
                             policy=artifact.policy)


def _overloads(arguments) -> dict[str, dict] | None:
    """The overloads a spec called as declared packets, without the values it reached
    (an overload reached only on the way is marked ``~`` and left out)."""
    kept: dict[str, dict] = {o: {} for o in arguments or ()
                             if not o.startswith(INDIRECT) and "." in o}
    return kept or None


def to_bytes(artifact: art.Artifact, opsweep: str, measured_by: str = "") -> bytes:
    """The table of `artifact`, gzip-compressed, written by opsweep `opsweep`."""
    data = {"table_version": TABLE_VERSION, "opsweep": opsweep, "measured_by": measured_by,
            "artifact": art.to_data(compact(artifact))}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    out = io.BytesIO()
    # mtime 0 and no file name: the bytes depend on the artifact alone
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=out, mtime=0) as z:
        z.write(text.encode("utf-8"))
    return out.getvalue()


def _text(path: Path) -> str:
    try:
        with gzip.open(path, "rb") as z:
            raw = z.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise ArtifactError(path, "", "no such file") from None
    except (OSError, EOFError) as exc:
        raise ArtifactError(path, "", f"not a gzip-compressed table: {exc}") from None
    if len(raw) > MAX_BYTES:
        raise ArtifactError(path, "", f"larger than {MAX_BYTES >> 20} MB once decompressed")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArtifactError(path, "", f"not UTF-8: {exc}") from None


def load(path: str | Path) -> CellTable:
    """A table written by `to_bytes`; a file that is not one is an ArtifactError naming it
    and the field."""
    path = Path(path)
    try:
        data = json.loads(_text(path))
    except (ValueError, RecursionError) as exc:
        raise ArtifactError(path, "", f"not readable JSON: {str(exc)[:200]}") from None
    if not isinstance(data, dict) or data.get("table_version") != TABLE_VERSION:
        found = data.get("table_version") if isinstance(data, dict) else None
        raise ArtifactError(path, "table_version", f"{found!r}: this opsweep reads cell "
                            f"tables of version {TABLE_VERSION}")
    for key in ("opsweep", "measured_by"):
        if not isinstance(data.get(key), str) or len(data[key]) > 100:
            raise ArtifactError(path, key, "missing, or not a short string")
    if not isinstance(data.get("artifact"), dict):
        raise ArtifactError(path, "artifact", "missing, or not an object")
    try:
        artifact = art.from_data(data["artifact"], path)
    except RecursionError:
        raise ArtifactError(path, "artifact", "nested too deeply") from None
    return CellTable(path, artifact, data["opsweep"], data["measured_by"])


def packaged(directory: Path | None = None) -> dict[str, Path]:
    """The tables in `directory` (default: the packaged ones) by the torch version that
    measured them, oldest first."""
    directory = PACKAGED if directory is None else directory
    found = {}
    for path in directory.glob(f"torch-*{SUFFIX}") if directory.is_dir() else ():
        m = _NAME.match(path.name)
        if m:
            found[m.group(1)] = path
    return {v: found[v] for v in sorted(found, key=version_key)}


@dataclass(frozen=True)
class Choice:
    """Which measured torch a check is set against for the installed one."""

    installed: str  # the installed torch's public version ("" when none)
    chosen: str  # the measured torch whose table is used
    below: str = ""  # the nearest measured torch older than the installed one ("": none)
    above: str = ""  # the nearest newer one ("": none)

    @property
    def exact(self) -> bool:
        return self.chosen == self.installed

    def sentence(self) -> str:
        """Why this table, in one clause."""
        if self.exact:
            return f"opsweep's packaged table for torch {self.chosen}, the installed torch"
        if not self.installed:
            return (f"opsweep's packaged table for torch {self.chosen}, the newest measured: "
                    "torch is not installed")
        near = (f"the nearest measured below is {self.below or 'none'}, above "
                f"{self.above or 'none'}")
        return (f"opsweep's packaged table for torch {self.chosen}: the installed torch "
                f"{self.installed} was not measured ({near}); the prediction is torch "
                f"{self.chosen}'s")


def choose(installed: str, versions: Iterable[str]) -> Choice:
    """The table for the installed torch: its own when measured, else the nearest
    measured release below it (the newest the installed one has moved past), else the
    nearest above; ValueError when there is none at all."""
    measured = sorted(set(versions), key=version_key)
    if not measured:
        raise ValueError("this opsweep carries no measured table")
    here = public_version(installed)
    if not here:
        return Choice("", measured[-1])
    if here in measured:
        return Choice(here, here)
    below = [v for v in measured if version_key(v) < version_key(here)]
    above = [v for v in measured if version_key(v) > version_key(here)]
    lower, upper = (below[-1] if below else ""), (above[0] if above else "")
    return Choice(here, lower or upper, lower, upper)


def resolve(version: str, tables: Mapping[str, Path]) -> Path:
    """The packaged table of a measured torch `version` (``2.15.0``, ``2.15.0+cpu``);
    ValueError naming the measured ones when it is not one."""
    path = tables.get(public_version(version.strip()))
    if path is None:
        have = ", ".join(tables) or "none"
        raise ValueError(f"torch {version} has no packaged table (measured: {have})")
    return path


def write(artifact: art.Artifact, directory: Path, opsweep: str, measured_by: str = "") -> Path:
    """Write `artifact`'s table into `directory` under its torch's name; its path."""
    path = directory / file_name(artifact)
    payload = to_bytes(artifact, opsweep, measured_by)
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(path, payload)
    return path


def summary(table: CellTable) -> dict[str, Any]:
    """What a table holds, for the command's one line."""
    return {"torch": table.torch, "specs": len(table.artifact.specs),
            "operators": len(table.artifact.operators), "opsweep": table.opsweep,
            "measured_by": table.measured_by}

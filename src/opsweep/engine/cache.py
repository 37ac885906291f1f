"""A content-addressed cache of exported models and their outcomes up to the checker.

A regeneration whose moved pins cannot change an export (onnxruntime: it builds no model)
loads each group's model from here and re-runs only what can move: the onnxruntime
session, the runs and the comparisons. Everything else is measured in full.

The key of an entry is everything its export and the checker's verdict depend on, nothing
less: the engine's own code (every module of :mod:`opsweep.engine`), the target (its
exporter, opset, fast-path options and translation table's digest), the spec's digest,
the exact example exported (its arguments, parameters and seed: a module's weights are in
the model), the dynamic shapes it was traced with, Python's version, and the versions of
the packages the target's export depends on (:data:`EXPORT_DEPENDS_ON`). A pin that is not
named there can move and every entry still applies.

An entry is one file named by the SHA-256 of its key: a JSON header line (the key itself,
the stage, the error line, the stock exporter's trace, the model's SHA-256) and the
model's bytes. An entry that cannot be read, whose key is not the one asked for, or whose
model does not match its hash is *unusable*: the group is exported again, the entry
rewritten, and the count reported. Entries are written whole (a temporary file, then a
rename), so two workers writing the same key race harmlessly.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import pickle
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

#: What each kind of target's export (and the checker's verdict on it) depends on, by the
#: installed distribution's name: established by exporting a sample under two versions of
#: each pin and comparing the model bytes, the checker's verdicts and the stages
#: (scripts/export_dependence.py; its measurements are in docs/refreshing.md, and
#: tests/integration/test_export_cache.py proves the independence of onnxruntime).
#: onnx is named for both because the checker is onnx's own; onnx-ir serialises the
#: dynamo exporter's models (a dependency of onnxscript, pinned by nobody: named so that a
#: move of it cannot go unseen). onnxruntime and hypothesis are absent: neither takes part
#: in building a model (the examples themselves are in the key).
EXPORT_DEPENDS_ON: dict[str, tuple[str, ...]] = {
    "dynamo": ("torch", "onnxscript", "onnx-ir", "onnx"),
    "torchscript": ("torch", "onnx"),
}

#: Bumped when the entry format changes (older entries are then never asked for).
FORMAT = 1

#: where a sweep keeps its cache unless told otherwise (git-ignored in the project)
DEFAULT_DIR = Path(".opsweep-cache")
#: the environment's choice of directory, or ``off``
CACHE_ENV = "OPSWEEP_CACHE"

_SUFFIX = ".export"


@cache
def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def versions(kind: str) -> dict[str, str]:
    """The installed versions of what `kind`'s export depends on."""
    return {name: _version(name) for name in EXPORT_DEPENDS_ON[kind]}


@cache
def engine_digest() -> str:
    """Every module of the engine, hashed: a change to any of them re-exports."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Entry:
    """What an export came to: the stage up to the checker (``ok``: it exported and passed
    the checker), its error line, the stock exporter's trace, the model's bytes."""

    stage: str
    error: str = ""
    trace: dict[str, Any] | None = None
    model: bytes = b""


class ExportCache:
    """The entries under `root`, and what this process did with them (`counts`, by target
    and ``loaded``/``exported``/``unusable``)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.counts: Counter[tuple[str, str]] = Counter()

    def key(self, *, target: str, identity: str, kind: str, spec: str, digest: str,
            example: str, dynamic: str) -> str:
        return json.dumps({
            "format": FORMAT, "engine": engine_digest(), "python": sys.version.split()[0],
            "target": target, "exporter": identity, "versions": versions(kind),
            "spec": spec, "digest": digest, "example": example, "dynamic": dynamic,
        }, sort_keys=True)

    def _path(self, key: str) -> Path:
        name = hashlib.sha256(key.encode()).hexdigest()
        return self.root / name[:2] / (name + _SUFFIX)

    def get(self, key: str, target: str) -> Entry | None:
        """The entry for `key`, or None (counted unusable when a file was there but could
        not serve)."""
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError:
            self.counts[target, "unusable"] += 1
            return None
        head, _, model = data.partition(b"\n")
        try:
            header = json.loads(head)
            ok = (header["key"] == key and hashlib.sha256(model).hexdigest() == header["sha256"]
                  and isinstance(header["stage"], str) and isinstance(header["error"], str))
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            self.counts[target, "unusable"] += 1
            return None
        self.counts[target, "loaded"] += 1
        return Entry(header["stage"], header["error"], header.get("trace"), model)

    def put(self, key: str, target: str, entry: Entry) -> None:
        """Write `entry` whole; a cache that cannot be written costs a re-export later,
        never the measurement."""
        self.counts[target, "exported"] += 1
        path = self._path(key)
        header = {"key": key, "stage": entry.stage, "error": entry.error, "trace": entry.trace,
                  "sha256": hashlib.sha256(entry.model).hexdigest()}
        _write_whole(path, json.dumps(header, sort_keys=True).encode() + b"\n" + entry.model)

    def take_counts(self) -> dict[str, dict[str, int]]:
        """This process's counts since the last call, by target, and reset."""
        out: dict[str, dict[str, int]] = {}
        for (target, what), n in sorted(self.counts.items()):
            out.setdefault(target, {})[what] = n
        self.counts.clear()
        return out


def size(root: Path | str) -> tuple[int, int]:
    """(entries, bytes) under `root`."""
    entries = total = 0
    for path in Path(root).glob(f"*/*{_SUFFIX}"):
        try:
            total += path.stat().st_size
        except OSError:
            continue
        entries += 1
    return entries, total


def merge_counts(into: dict[str, dict[str, int]], more: dict[str, dict[str, int]]) -> None:
    for target, counts in more.items():
        mine = into.setdefault(target, {})
        for what, n in counts.items():
            mine[what] = mine.get(what, 0) + n


def trace_data(exporter: object) -> dict[str, Any] | None:
    """The stock exporter's trace of its last export, as an entry keeps it (None when it
    was not watching)."""
    trace = getattr(exporter, "last_trace", None)
    if trace is None:
        return None
    return {"captured": trace.captured, "before": sorted(trace.before),
            "after": sorted(trace.after), "decomposed": sorted(trace.decomposed)}


def restore_trace(exporter: object, data: dict[str, Any] | None) -> None:
    """Give a watching exporter the trace its export had when the entry was made. An
    entry without one leaves None: the shortcut then cannot judge, and every target is
    measured in full (engine.group), so a cached export never takes a shortcut that a
    fresh one would not."""
    if not hasattr(exporter, "last_trace"):
        return
    from opsweep.engine.fastpath import Trace  # only exporters with a trace reach here
    exporter.last_trace = None if data is None else Trace(
        bool(data["captured"]), frozenset(data["before"]), frozenset(data["after"]),
        frozenset(data["decomposed"]))


def store_key() -> str:
    """A name for the whole cache as a CI cache stores it: changes whenever any entry's
    key would (the engine, Python, any version an export depends on), so that a restored
    cache holds entries this stack can use; onnxruntime's version is not in it."""
    kinds = {kind: versions(kind) for kind in sorted(EXPORT_DEPENDS_ON)}
    text = json.dumps({"format": FORMAT, "engine": engine_digest(),
                       "python": sys.version.split()[0], "versions": kinds}, sort_keys=True)
    return f"opsweep-export-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


if __name__ == "__main__":  # `python -m opsweep.engine.cache key`: the workflows' cache key
    if sys.argv[1:] != ["key"]:
        sys.exit("usage: python -m opsweep.engine.cache key")
    print(store_key())


# --- drawn examples ------------------------------------------------------------------
#
# A derandomized profile's draws depend only on the spec (its digest covers the code that
# draws), the profile, the hypothesis version and, through the catalog's own checks, the
# torch version: with the models in the cache, drawing them again is what a cached
# regeneration would otherwise spend most of its time on. A randomized profile (nightly)
# is never kept. Entries are pickles written by this machine's own sweeps (the cache
# directory is the project's, and in the workflows the unprivileged job's own).

def draws_key(spec: str, digest: str, profile: str, max_examples: int) -> str:
    return json.dumps({"format": FORMAT, "spec": spec, "digest": digest, "profile": profile,
                       "max_examples": max_examples, "python": sys.version.split()[0],
                       "hypothesis": _version("hypothesis"), "torch": _version("torch")},
                      sort_keys=True)


def _draws_path(root: Path | str, key: str) -> Path:
    return Path(root) / "draws" / (hashlib.sha256(key.encode()).hexdigest() + ".pickle")


def load_draws(root: Path | str, key: str) -> list | None:
    """The examples kept under `key`, or None (no entry, or one that does not load)."""
    try:
        head, _, body = _draws_path(root, key).read_bytes().partition(b"\n")
        if json.loads(head) != {"key": key, "sha256": hashlib.sha256(body).hexdigest()}:
            return None
        examples = pickle.loads(body)  # noqa: S301 - written by this cache (above)
    except (OSError, ValueError, pickle.UnpicklingError, EOFError, AttributeError,
            ImportError, TypeError):
        return None
    return examples if isinstance(examples, list) else None


def save_draws(root: Path | str, key: str, examples: list) -> None:
    """Keep `examples` under `key`, whole; examples that do not pickle are not kept."""
    try:
        body = pickle.dumps(examples, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a value that does not pickle: drawn again next time
        return
    head = json.dumps({"key": key, "sha256": hashlib.sha256(body).hexdigest()}).encode()
    _write_whole(_draws_path(root, key), head + b"\n" + body)


def _write_whole(path: Path, payload: bytes) -> None:
    """`payload` into `path` through a temporary file and a rename, so that a reader sees
    the old entry, none, or the new one whole. Not files.write_atomic: an entry is never
    the only copy of anything (its hash catches a torn one, which is then exported again),
    so it needs no fsync, which a sweep's 47,000 exports would each pay. A cache that
    cannot be written costs a re-export later, never the measurement."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass

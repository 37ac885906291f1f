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
import stat
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from opsweep.model import DTYPE_TAGS, Example, Stage, TensorArg

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
            data = _read_regular(path)
        except FileNotFoundError:
            return None
        except OSError:
            self.counts[target, "unusable"] += 1
            return None
        head, _, model = data.partition(b"\n")
        try:
            header = json.loads(head)
            ok = (header["key"] == key and hashlib.sha256(model).hexdigest() == header["sha256"]
                  and header["stage"] in _STAGES and type(header["error"]) is str
                  and _is_trace(header.get("trace")))
        except (ValueError, KeyError, TypeError, RecursionError):
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


#: the stages an entry may record: where an export ended, up to the checker's verdict
_STAGES = frozenset(s.value for s in Stage if s.depth >= 0 and not s.ran) | {Stage.OK.value}


def _is_trace(data: Any) -> bool:
    """Whether `data` is a trace as `trace_data` gives it (or None)."""
    return data is None or (
        type(data) is dict and set(data) == {"captured", "before", "after", "decomposed"}
        and type(data["captured"]) is bool
        and all(type(data[k]) is list and all(type(n) is str for n in data[k])
                for k in ("before", "after", "decomposed")))


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
# is never kept. A cache is untrusted input (a CI cache is whatever some run saved under
# its key): an entry is JSON holding a closed set of value types, read back by building
# exactly those types and checking every field, so an entry can be wrong, never run code;
# one that does not read back is a miss. An example holding any other value is not kept.

_DRAWS_SUFFIX = ".json"


class _Unreadable(ValueError):
    """A draws entry, or an example, that the draws cache cannot hold or give back."""


@cache
def _torch_values(kind: str) -> dict[str, Any]:
    import torch  # only examples that hold torch values reach here, with torch loaded
    return {str(v).removeprefix("torch."): v for v in vars(torch).values()
            if type(v).__name__ == kind and type(v).__module__ == "torch"}


def _encode(value: Any) -> Any:
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return {"float": value.hex()}
    if kind is list:
        return [_encode(v) for v in value]
    if kind is tuple:
        return {"tuple": [_encode(v) for v in value]}
    if kind is TensorArg:
        return {"tensor": [_encode(value.shape), value.dtype, _encode(value.low),
                           _encode(value.high), _encode(value.choices)]}
    if kind.__module__ == "torch" and kind.__name__ in ("dtype", "memory_format"):
        return {kind.__name__: str(value).removeprefix("torch.")}
    raise _Unreadable(f"a {kind.__qualname__} is not kept")


def _decode(data: Any) -> Any:
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is list:
        return [_decode(v) for v in data]
    if type(data) is not dict or len(data) != 1:
        raise _Unreadable(f"not a value: {str(data)[:40]}")
    ((tag, inner),) = data.items()
    if tag == "float" and type(inner) is str:
        return float.fromhex(inner)
    if tag == "tuple" and type(inner) is list:
        return tuple(_decode(v) for v in inner)
    if tag == "tensor":
        return _tensor(inner)
    if tag in ("dtype", "memory_format") and inner in (known := _torch_values(tag)):
        return known[inner]
    raise _Unreadable(f"not a value: {tag!r}")


def _tensor(inner: Any) -> TensorArg:
    shape, dtype, low, high, choices = (inner if type(inner) is list and len(inner) == 5
                                        else [None] * 5)
    shape, low, high, choices = map(_decode, (shape, low, high, choices))
    bounds_ok = all(b is None or type(b) in (int, float) for b in (low, high))
    if not (type(shape) is tuple and all(type(s) is int and s >= 0 for s in shape)
            and isinstance(dtype, str) and dtype in DTYPE_TAGS and bounds_ok
            and (choices is None or (type(choices) is tuple
                                     and all(type(c) in (int, float) for c in choices)))):
        raise _Unreadable("not a tensor recipe")
    return TensorArg(shape, dtype, low, high, choices)


def _pairs(data: Any) -> tuple[tuple[str, Any], ...]:
    pairs = _decode(data)
    if type(pairs) is not tuple or not all(
            type(p) is tuple and len(p) == 2 and type(p[0]) is str for p in pairs):
        raise _Unreadable("not keyword pairs")
    return pairs


def _example(data: Any) -> Example:
    if type(data) is not dict or set(data) != {"args", "kwargs", "init", "seed"}:
        raise _Unreadable("not an example")
    args, seed = _decode(data["args"]), data["seed"]
    if type(args) is not tuple or type(seed) is not int:
        raise _Unreadable("not an example")
    return Example(args, _pairs(data["kwargs"]), _pairs(data["init"]), seed)


def draws_key(spec: str, digest: str, profile: str, max_examples: int,
              cells: bool = False) -> str:
    """The key of a spec's kept draws: with `cells`, eager PyTorch's answers are part of the
    draws (opsweep.catalog.cells), which the torch version already keys."""
    return json.dumps({"format": FORMAT, "spec": spec, "digest": digest, "profile": profile,
                       "max_examples": max_examples, "cells": cells,
                       "python": sys.version.split()[0],
                       "hypothesis": _version("hypothesis"), "torch": _version("torch")},
                      sort_keys=True)


def _draws_path(root: Path | str, key: str) -> Path:
    return Path(root) / "draws" / (hashlib.sha256(key.encode()).hexdigest() + _DRAWS_SUFFIX)


def load_draws(root: Path | str, key: str) -> list[Example] | None:
    """The examples kept under `key`, or None: no entry, or one that is not exactly an
    entry of `key` holding examples (read as data only; nothing in it is ever run)."""
    entry = load_draws_entry(root, key)
    return None if entry is None else entry[0]


def load_draws_entry(root: Path | str, key: str
                     ) -> tuple[list[Example], dict[str, str] | None] | None:
    """`load_draws`, and the cells no example stands for kept beside them (None: the
    draws were not of a profile that covers cells)."""
    try:
        entry = json.loads(_read_regular(_draws_path(root, key)))
        if type(entry) is not dict or entry.get("key") != key:
            return None
        examples = entry["examples"]
        cells = entry.get("cells")
        if type(examples) is not list or not (cells is None or _text_map(cells)):
            return None
        return [_example(e) for e in examples], cells
    except (OSError, ValueError, KeyError, RecursionError):  # _Unreadable is a ValueError
        return None


def _text_map(value: object) -> bool:
    return type(value) is dict and all(type(k) is str and type(v) is str
                                       for k, v in value.items())


def save_draws(root: Path | str, key: str, examples: list[Example],
               cells: dict[str, str] | None = None) -> None:
    """Keep `examples` under `key`, whole, with the cells no example stands for (`cells`,
    when the profile covers cells); examples holding a value the entry format does not
    hold are not kept (drawn again next time)."""
    try:
        if not all(type(e) is Example for e in examples):
            return
        body: dict[str, object] = {"key": key, "examples": [
            {"args": _encode(e.args), "kwargs": _encode(e.kwargs), "init": _encode(e.init),
             "seed": e.seed} for e in examples]}
        if cells is not None:
            body["cells"] = dict(cells)
    except _Unreadable:
        return
    _write_whole(_draws_path(root, key), json.dumps(body, sort_keys=True).encode())


def _read_regular(path: Path) -> bytes:
    """The bytes of `path` when it is a regular file (OSError otherwise): a cache restored
    from an archive can hold a symbolic link, a FIFO (whose opening would wait forever) or
    a device where an entry belongs."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        return handle.read()


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

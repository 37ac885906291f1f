"""What a model's check depends on, as the key its entry in the models record is reused
by: the stack that measured the table it is set against (the artifact's fingerprint:
torch, onnx, onnxruntime, onnxscript, the opset), a hash of the model's source file, the
opsweep that checked it, the tolerance policy its outputs were compared at and whether
it was exported for real. An entry of the previous record with the same source and the
same key is that model's check again: it is reused, not run.

The model's source file is the file its ``module:callable`` names (a ``.py`` path, or a
dotted module's file) or the ``.pt2`` file; what that file imports is not hashed (a
helper module edited on its own does not re-check the model: docs/check.md). A file
that cannot be read has no hash, and its model is always checked. Torch-free.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import opsweep
from opsweep.artifact.data import Artifact
from opsweep.engine.translations import is_path

#: the key of each entry of the models record
KEY = "check_fingerprint"


def source_file(source: str) -> Path | None:
    """The file `source` (``module:callable`` or a ``.pt2``) is read from; None when it
    cannot be found without importing the model itself."""
    if source.endswith(".pt2"):
        return Path(source)
    module = source.rpartition(":")[0]
    if is_path(module):
        return Path(module)
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin and origin not in ("built-in", "frozen") else None


def model_digest(source: str) -> str:
    """``sha256:<hex>`` of the model's source file; "" when it cannot be read."""
    path = source_file(source)
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() if path else ""
    except OSError:
        return ""


def fingerprint(source: str, artifact: Artifact, policy: str, export: bool = True,
                targets: Sequence[str] = ()) -> dict[str, Any]:
    """The key `source`'s check against `artifact` is reused by (`policy`: the label of the
    tolerance policy the outputs are compared at; `targets`: the other targets the model
    is checked with, only in the key when there are any, so that a stock-only check's key
    is the one it had before targets)."""
    stack = {k: v for k, v in asdict(artifact.fingerprint).items() if k != "opset"}
    key = {"stack": stack, "opset": artifact.fingerprint.opset, "model": model_digest(source),
           "opsweep": opsweep.__version__, "tolerance_policy": policy, "export": export}
    return {**key, "targets": list(targets)} if targets else key


def reusable(previous: Mapping[str, Any] | None, source: str,
             key: Mapping[str, Any]) -> dict[str, Any] | None:
    """The entry of the previous record (its entries by source) that is `source`'s check
    at `key`, or None: no such entry, another key, no model hash, or a model whose check
    was lost (a machine failure is never reused)."""
    entry = (previous or {}).get(source)
    if not isinstance(entry, dict) or not key.get("model") or entry.get("lost"):
        return None
    return entry if entry.get(KEY) == dict(key) else None

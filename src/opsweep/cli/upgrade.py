"""``opsweep init --upgrade``: the settings an earlier init wrote into the caller workflows
(shards, default branch, install and pip arguments, the action and whether every caller
runs it by commit), read back so that the rewritten files keep them. What the user passes
on the command line wins; ``[tool.opsweep]`` is never rewritten (its keys are the user's)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from opsweep import __version__
from opsweep.errors import UsageError

MEASURE = ".github/workflows/onnx-measure.yml"
_VERSION_TAG = re.compile(r"^v\d+(\.\d+)*$")


def _value(text: str, key: str) -> str | None:
    """A `key: value` of the caller's sweep job (init writes strings as JSON)."""
    found = re.search(rf"^\s+{re.escape(key)}: (.+?)\s*$", text, re.MULTILINE)
    if found is None:
        return None
    raw = re.sub(r"\s+#.*$", "", found.group(1))
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, str) else str(value)


def carry(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The values of the options the user left unset (option name -> value), read from
    the existing onnx-measure.yml; init runs with its options so replaced."""
    path = Path(root, MEASURE)
    if not path.is_file():
        raise UsageError(f"--upgrade: {MEASURE} does not exist in {root}; run `opsweep init` "
                         "without --upgrade")
    text = path.read_text("utf-8")
    carried: dict[str, Any] = {}
    if args.shards is None and (shards := _value(text, "shards")) is not None:
        if not shards.isdigit():
            raise UsageError(f"{path}: shards: expected a whole number, got {shards!r}")
        carried["shards"] = int(shards)
    if args.branch is None and (found := re.search(r"branches: \[([^\],]+)\]", text)):
        carried["branch"] = found.group(1).strip().strip("\"'")
    for attr, key in (("install", "install"), ("pip_args", "pip-args")):
        if getattr(args, attr) is None:
            carried[attr] = _value(text, key) or ""
    uses = re.search(r"^\s+uses: ([^\s#]+)(\s+#.*)?$", text, re.MULTILINE)
    if uses is None:
        return carried
    repository, _, ref = uses.group(1).partition("@")
    if args.pin_sha is None:
        carried["pin_sha"] = bool(re.fullmatch(r"[0-9a-f]{40}", ref))
    if args.action is None:
        if re.fullmatch(r"[0-9a-f]{40}", ref) or _VERSION_TAG.match(ref):
            ref = f"v{__version__.split('.')[0]}"  # this opsweep's major tag
        carried["action"] = f"{repository}@{ref}"
    return carried

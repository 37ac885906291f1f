"""What the retired TorchScript exporter's listing claimed.

PyTorch's docs built ``onnx_torchscript_supported_aten_ops`` from two sets:
every forward aten schema (trailing ``_`` removed) and the TorchScript
exporter's symbolic registry; a schema name the registry held was listed as
supported "since opset N" (the lowest opset with a symbolic). We recompute
that claim the same way, from either

* the installed torch, whose TorchScript symbolic registry is still shipped
  internally (torch 2.9-2.13 keep it under ``torch.onnx._internal.torchscript_exporter``), or
* a torch wheel file (e.g. the 2.8 wheel, downloaded without dependencies),
  read statically: its ``symbolic_opset*.py`` sources are parsed for
  ``_onnx_symbolic("aten::...")`` registrations, without importing them.

The result is committed as data (``docs/data/documented.json``) together with
``scripts/recompute_documented.py``, which rebuilds it.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
import zipfile
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path

from opsweep import files
from opsweep.errors import DataFileError
from opsweep.files import write_atomic

_OPSET_FILE = re.compile(r"symbolic_opset(\d+)\.py$")
_DECORATORS = {"_onnx_symbolic", "onnx_symbolic"}


def _claims(symbolics: Mapping[str, int]) -> dict[str, int]:
    """aten name -> lowest opset, for names in the aten namespace, as the docs listed them."""
    out: dict[str, int] = {}
    for name, opset in symbolics.items():
        if not name.startswith("aten::"):
            continue
        op = name.split("::", 1)[1].removesuffix("_")
        if op and (op not in out or opset < out[op]):
            out[op] = opset
    return dict(sorted(out.items()))


def from_installed() -> dict[str, int]:
    """From the TorchScript symbolic registry shipped inside the installed torch."""
    try:
        package = importlib.import_module("torch.onnx._internal.torchscript_exporter")
    except ImportError:
        package = importlib.import_module("torch.onnx")  # torch <= 2.8 layout
    for info in pkgutil.iter_modules(package.__path__):
        if _OPSET_FILE.search(info.name + ".py"):
            importlib.import_module(f"{package.__name__}.{info.name}")
    registry = importlib.import_module(f"{package.__name__}.registration").registry
    symbolics = {}
    for name in registry.all_functions():
        group = registry.get_function_group(name)
        opsets = [o for o in getattr(group, "_functions", {})]
        if opsets:
            symbolics[name] = min(opsets)
    return _claims(symbolics)


def _string_tuples(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """Module-level `NAME = ("a", "b", ...)` assignments."""
    out: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)):
            strings = [e.value for e in node.value.elts
                       if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(strings) == len(node.value.elts):
                out.update((t.id, tuple(strings)) for t in node.targets if isinstance(t, ast.Name))
    return out


def _names(arg: ast.expr, loops: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return (arg.value,)
    # f"aten::{op}" inside `for op in NAMES:` (the opset 7/8 block lists)
    if isinstance(arg, ast.JoinedStr) and len(arg.values) == 2:
        head, value = arg.values
        if isinstance(head, ast.Constant) and isinstance(head.value, str) \
                and isinstance(value, ast.FormattedValue) \
                and isinstance(value.value, ast.Name) and value.value.id in loops:
            return tuple(head.value + v for v in loops[value.value.id])
    return ()


def _registrations(source: str) -> Iterable[str]:
    tree = ast.parse(source)
    tuples = _string_tuples(tree)
    loops = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) \
                and isinstance(node.iter, ast.Name) and node.iter.id in tuples:
            loops[node.target.id] = tuples[node.iter.id]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _DECORATORS and node.args:
                yield from _names(node.args[0], loops)


def from_sources(files: Mapping[str, str]) -> dict[str, int]:
    """From symbolic_opset*.py sources (path -> text), parsed, never imported."""
    symbolics: dict[str, int] = {}
    for path, text in files.items():
        m = _OPSET_FILE.search(path)
        if not m:
            continue
        for name in _registrations(text):
            opset = int(m.group(1))
            symbolics[name] = min(opset, symbolics.get(name, opset))
    return _claims(symbolics)


def from_wheel(wheel: Path) -> dict[str, int]:
    with zipfile.ZipFile(wheel) as archive:
        files = {n: archive.read(n).decode("utf-8") for n in archive.namelist()
                 if n.startswith("torch/onnx/") and _OPSET_FILE.search(n)}
    if not files:
        raise DataFileError(wheel, "", "no torch/onnx/**/symbolic_opset*.py in this wheel")
    return from_sources(files)


def save(path: Path, claims: Mapping[str, int], source: str) -> None:
    data = {"source": source, "since_opset": dict(claims)}
    files.validate(data, "documented", path)  # never write what would be refused on load
    write_atomic(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8"))


PACKAGED = "data/documented.json"  # the copy the installed package ships (pyproject.toml)
CHECKOUT = "docs/data/documented.json"  # the same file in opsweep's source tree


def find(path: Path) -> Path:
    """`path` when the project keeps its own copy of the claims, else the copy the installed
    package ships (an adopter's repository has none), else, when opsweep runs from a source
    checkout (``src/`` on the path: the Action's own steps, a developer's tree), that
    checkout's ``docs/data`` copy, else `path` (load names it)."""
    if Path(path).is_file():
        return Path(path)
    package = Path(str(resources.files("opsweep")))
    for found in (package / PACKAGED, package.parents[1] / CHECKOUT):
        if found.is_file():
            return found
    return Path(path)


def load(path: Path) -> tuple[str, dict[str, int]]:
    """The claims and their source, validated against ``schema/documented.schema.json``."""
    data = files.load(path, "documented", missing="no such file; run "
                         "scripts/recompute_documented.py")
    return data["source"], data["since_opset"]

"""Your own translations as a second target: ``--translations module:TABLE``.

``module`` is a dotted module name importable from the working directory, or
a path to a ``.py`` file; ``TABLE`` names a mapping from torch operators
(``torch.ops.aten.x.default`` and the like) to onnxscript functions, exactly
what ``torch.onnx.export(..., custom_translation_table=TABLE)`` takes. The
target's fingerprint entry records the module, the table and a hash of the
module's source, so a changed table is never reused.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from opsweep.errors import UsageError
from opsweep.model import Translations
from opsweep.targets import STOCK, is_stock

_SPEC = re.compile(r"^(?P<module>[^\s:]+):(?P<table>[A-Za-z_][A-Za-z0-9_]*)$")


def parse(text: str) -> tuple[str, str]:
    m = _SPEC.match(text or "")
    if not m:
        raise UsageError(f"--translations: expected MODULE:TABLE (a dotted module or a .py file, "
                         f"then the table's name), got {text!r}")
    if is_stock(text):
        raise UsageError(f"--translations: {STOCK!r} names the stock exporter")
    return m.group("module"), m.group("table")


def is_path(module: str) -> bool:
    """Whether `module` (the part of ``MODULE:NAME`` before the colon) names a file rather
    than a dotted module."""
    return module.endswith(".py") or "/" in module or "\\" in module


class SourceImportError(Exception):
    """A module named on the command line (a dotted name or a .py file) could not be
    imported: the message says which and why; each caller names where it was given."""


def _package_of(path: Path, prefix: str) -> str | None:
    """For a file in a directory with an ``__init__.py``: the name of a package standing for
    that directory (made once, its ``__init__`` not run: importing a file never runs its
    siblings), so the file's relative imports of its siblings resolve; else None."""
    where = path.resolve().parent
    if not (where / "__init__.py").is_file():
        return None
    name = prefix + "pkg_" + hashlib.sha256(str(where).encode()).hexdigest()[:12]
    if name not in sys.modules:
        package = types.ModuleType(name, f"the directory {where.name}/ as a package")
        package.__path__ = [str(where)]
        package.__package__ = name
        sys.modules[name] = package
    return name


def import_source(module: str, prefix: str):
    """The module `module` names: a .py file (imported once per resolved path, under a name
    made from `prefix`; a file in a package directory as a member of that package, so its
    relative imports work) or a dotted module (the working directory importable)."""
    if is_path(module):
        path = Path(module)
        if not path.is_file():
            raise SourceImportError(f"no such file {module}")
        name = prefix + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
        package = _package_of(path, prefix)
        if package:  # a member of its directory's package: `from . import helpers` works
            name = f"{package}.{path.stem}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        loaded = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = loaded
        try:
            spec.loader.exec_module(loaded)  # type: ignore[union-attr]
        except Exception as exc:
            del sys.modules[name]
            raise SourceImportError(f"importing {module} failed: {type(exc).__name__}: {exc}") \
                from None
        return loaded
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(module)
    except Exception as exc:
        raise SourceImportError(f"importing {module} failed: {type(exc).__name__}: {exc}") from None


def _import(module: str, where: str):
    try:
        return import_source(module, "opsweep_translations_")
    except SourceImportError as exc:
        raise UsageError(f"--translations {where}: {exc}") from None


def _op_name(key: Any) -> str | None:
    name = getattr(key, "name", None)
    if callable(name) and type(key).__module__ == "torch._ops":
        return str(name())  # OpOverload: 'aten::add.Tensor'; packet: 'aten::add'
    return None


def load(text: str) -> tuple[Translations, dict[Callable, Any]]:
    """The target's fingerprint entry and its table, validated."""
    module_name, table_name = parse(text)
    module = _import(module_name, text)
    if not hasattr(module, table_name):
        raise UsageError(f"--translations {text}: module {module_name} has no {table_name!r}")
    table = getattr(module, table_name)
    if not isinstance(table, Mapping) or not table:
        raise UsageError(f"--translations {text}: {table_name} must be a non-empty mapping of "
                         f"torch operators to onnxscript functions, got {type(table).__name__}")
    overrides = []
    for key, value in table.items():
        op = _op_name(key)
        if op is None:
            raise UsageError(f"--translations {text}: key {key!r} is not a torch operator "
                             "(use e.g. torch.ops.aten.hypot.default)")
        if not callable(value) and not isinstance(value, (list, tuple)):
            raise UsageError(f"--translations {text}: the translation of {op} is not callable")
        overrides.append(op)
    source = Path(getattr(module, "__file__", "") or "")
    digest = hashlib.sha256(source.read_bytes() if source.is_file() else repr(sorted(overrides))
                            .encode()).hexdigest()[:16]
    return Translations(module_name, table_name, digest, tuple(sorted(overrides))), dict(table)

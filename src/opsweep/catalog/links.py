"""Documentation links and aliases for listing rows, from the installed torch.

A row is resolved to the Python callable that documents it: ``linalg_det`` to
``torch.linalg.det``, ``special_erfcx`` to ``torch.special.erfcx``, ``relu`` to
``torch.relu``, else ``torch.nn.functional.X`` or the ``torch.Tensor`` method.
Its docstring says when it is an alias ("Alias for :func:`torch.acos`").
The result is cached per torch version in a JSON file that is rebuilt
automatically when the installed version changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import torch

from opsweep import files
from opsweep.files import write_atomic

DOCS_ROOT = "https://docs.pytorch.org/docs"
_ALIAS = re.compile(r"Alias for :(?:func|meth):`~?(torch\.[\w.]+)`")
_PREFIXED = (("linalg_", "torch.linalg"), ("special_", "torch.special"), ("fft_", "torch.fft"))
_PLAIN = ("torch", "torch.nn.functional", "torch.Tensor")


@dataclass(frozen=True)
class Link:
    qualname: str
    url: str
    alias_of: str | None  # the row this one is an alias of


def _resolve(qualname: str):
    module, _, attr = qualname.rpartition(".")
    owner = {"torch": torch, "torch.nn.functional": torch.nn.functional, "torch.Tensor": torch.Tensor,
             "torch.linalg": torch.linalg, "torch.special": torch.special, "torch.fft": torch.fft}
    return getattr(owner.get(module), attr, None) if module in owner else None


def _candidates(row: str) -> list[str]:
    for prefix, namespace in _PREFIXED:
        if row.startswith(prefix):
            return [f"{namespace}.{row[len(prefix):]}", f"torch.{row}"]
    return [f"{ns}.{row}" for ns in _PLAIN]


def _row_of(qualname: str) -> str:
    namespace, _, attr = qualname.rpartition(".")
    for prefix, ns in _PREFIXED:
        if namespace == ns:
            return prefix + attr
    return attr


def doc_url(qualname: str, version: str) -> str:
    minor = ".".join(version.split("+")[0].split(".")[:2])
    if qualname.startswith("torch.special."):
        return f"{DOCS_ROOT}/{minor}/special.html#{qualname}"
    return f"{DOCS_ROOT}/{minor}/generated/{qualname}.html"


def compute(rows: Iterable[str], version: str) -> dict[str, Link]:
    links = {}
    for row in rows:
        for qualname in _candidates(row):
            fn = _resolve(qualname)
            if fn is None or not callable(fn):
                continue
            m = _ALIAS.search(getattr(fn, "__doc__", None) or "")
            alias_of = _row_of(m.group(1)) if m else None
            links[row] = Link(qualname, doc_url(qualname, version),
                              alias_of if alias_of != row else None)
            break
    return links


def cache_path(directory: Path, version: str) -> Path:
    return Path(directory) / f"doc-links-torch-{version.split('+')[0]}.json"


def cached(rows: Iterable[str], version: str, directory: Path) -> dict[str, Link]:
    """The links for `version`, from its cache file; computed and written when absent."""
    path = cache_path(directory, version)
    if path.exists():  # validated against schema/links.schema.json
        return {row: Link(**entry) for row, entry in files.load(path, "links").items()}
    links = compute(rows, version)
    text = json.dumps({r: vars(l) for r, l in sorted(links.items())}, indent=1, sort_keys=True)
    write_atomic(path, (text + "\n").encode("utf-8"))
    return links

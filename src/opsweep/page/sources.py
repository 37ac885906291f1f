"""The spec sources pages (``specs/``, beside the support page): one page per file of
specs, one section per spec, and an index.

Each spec gets an anchor (``#spec-<name>``) holding the file and line of the statement
that builds it (recorded when the spec was constructed, :func:`opsweep.model.caller`), what it
declares (aten operators, dtypes, ranks, batch inputs, tolerances, known gap) and the
source of that statement and of the module-level functions and classes it names.
Sections are grouped by file (a page each), in source order. An operator's page links each
"measured by" spec here (``specs/<file>/#spec-<name>``, :func:`page_name`); with a source
URL, the file and line link to the repository too.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opsweep.model import OpSpec
from opsweep.policy import builtin as builtin_policy
from opsweep.page.definitions import Definition, builtin, definition, display_path
from opsweep.page.templates import environment

if TYPE_CHECKING:
    from opsweep.catalog.load import Catalog



@dataclass(frozen=True)
class Location:
    """Where a spec is defined, as the pages show it."""

    path: str  # "specs/activations.py", or a --specs module's path; "" when not recorded
    line: int  # 0 when not recorded
    builtin: bool  # a file of the built-in catalog, which the repository holds

    def url(self, source_url: str) -> str:
        """The file at its line in the repository ("" without a URL or outside the catalog)."""
        if not (source_url and self.builtin and self.path):
            return ""
        return f"{source_url.rstrip('/')}/{self.path}#L{self.line}"


def locate(spec: OpSpec) -> Location:
    if spec.origin is None:
        return Location("", 0, False)
    return Location(display_path(spec.origin.path), spec.origin.line, builtin(spec.origin.path))


def anchor(name: str) -> str:
    return f"spec-{name}"


NO_FILE = "(no source file)"


def page_name(path: str) -> str:
    """The page (file name without ``.md``) of the specs defined in `path`:
    ``specs/activations.py`` -> ``activations``, ``user_specs/mine.py`` -> ``user_specs-mine``."""
    if not path or path == NO_FILE:
        return "no-source-file"
    stem = path.removesuffix(".py").removeprefix("specs/")
    return re.sub(r"[^A-Za-z0-9_]+", "-", stem).strip("-") or "no-source-file"


@dataclass(frozen=True)
class SpecSection:
    name: str
    anchor: str
    family: str
    where: Location
    url: str  # the file at its line, "" when no source URL applies
    ops: tuple[tuple[str, bool], ...]  # (aten name, has a section on the operators page)
    dtypes: tuple[str, ...]
    ranks: str
    batch: str
    tolerances: tuple[str, ...]  # its own, "float16 rtol 0.05, atol 0.01"; else the defaults
    nondeterministic: bool
    gap: str  # "" when the spec carries no known-gap note
    absent: str  # why the installed torch cannot measure it, "" when it can
    definition: Definition


@dataclass(frozen=True)
class SpecFile:
    path: str
    sections: tuple[SpecSection, ...]

    @property
    def page(self) -> str:
        return page_name(self.path)


@dataclass(frozen=True)
class SpecsPage:
    files: tuple[SpecFile, ...]
    source_url: str
    torch_version: str
    default_tolerances: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return sum(len(f.sections) for f in self.files)


def _batch(spec: OpSpec) -> str:
    if spec.batch is None:
        return "per example (from eager PyTorch's evidence)"
    if not spec.batch:
        return "none (never re-exported with a dynamic leading dimension)"
    return "leading dimension of tensor input " + ", ".join(map(str, spec.batch))


def _tolerances(spec: OpSpec) -> tuple[str, ...]:
    """The spec's own tolerances (the defaults hold for every other float dtype)."""
    return tuple(f"{d} rtol {t.rtol:g}, atol {t.atol:g}"
                 for d, t in sorted(spec.tolerances.items()))


def defaults() -> tuple[str, ...]:
    return tuple(f"{d} rtol {t.rtol:g}, atol {t.atol:g}" for d, t in builtin_policy().defaults.items())


def _gap(spec: OpSpec) -> str:
    if spec.gap is None:
        return ""
    closed = f"; closed by {', '.join(spec.gap.closed_by)}" if spec.gap.closed_by else ""
    return f"{spec.gap.stage.value}: {spec.gap.reason}{closed}"


def section(spec: OpSpec, operators: Collection[str], source_url: str,
            absent: str = "") -> SpecSection:
    where = locate(spec)
    low, high = spec.ranks
    return SpecSection(
        name=spec.name, anchor=anchor(spec.name), family=spec.family, where=where,
        url=where.url(source_url), ops=tuple((op, op in operators) for op in spec.aten_ops),
        dtypes=spec.dtypes, ranks=f"{low}" if low == high else f"{low} to {high}",
        batch=_batch(spec), tolerances=_tolerances(spec), nondeterministic=spec.nondeterministic,
        gap=_gap(spec), absent=absent, definition=definition(spec.origin))


def build(catalog: Catalog, operators: Collection[str], source_url: str = "",
          torch_version: str = "") -> SpecsPage:
    """Every spec of the catalog (those the installed torch lacks too, saying why);
    `operators`: the names with a section on the operators page."""
    sections = [section(s, operators, source_url) for s in catalog.specs.values()]
    sections += [section(a.spec, operators, source_url, a.reason) for a in catalog.absent.values()]
    files: dict[tuple[bool, str], list[SpecSection]] = {}
    for s in sections:
        files.setdefault((not s.where.builtin, s.where.path), []).append(s)
    return SpecsPage(tuple(SpecFile(path or NO_FILE,
                                    tuple(sorted(group, key=lambda s: (s.where.line, s.name))))
                           for (_, path), group in sorted(files.items())),
                     source_url, torch_version, defaults())


def render(page: SpecsPage) -> dict[str, str]:
    """The index (``index.md``) and one page per file of specs (file name -> text)."""
    env = environment()
    pages = {"index.md": env.get_template("specs.md.j2").render(page=page)}
    one = env.get_template("spec_file.md.j2")
    for f in page.files:
        pages[f"{f.page}.md"] = one.render(page=page, file=f)
    return pages

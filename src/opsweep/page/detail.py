"""One page per operator: the ``operators/`` pages beside the support page.

Each operator gets a page (``operators/<name>.md``, its heading anchored ``#op-<name>``) holding every failing group
(stage, dtype, rank, count, error line, smallest example), the repro snippet
``opsweep diff`` produces (:func:`opsweep.page.snippets.snippet`) for the smallest
example of each failing stage, the specs that measured it and where they live,
the documented and registered claims, and its grades per recorded torch
release with the version it has been ``full`` since.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opsweep.artifact.data import Artifact
from opsweep.artifact.grade import FailureGroup
from opsweep.artifact.points import order
from opsweep.artifact.records import Record, same_specs
from opsweep.artifact.regrading import REGRADED_EXAMPLE
from opsweep.artifact.results import OperatorResult, TargetResult
from opsweep.model import Stage
from opsweep.page.errors import ErrorView, error_view
from opsweep.page.grid import Grids, grids
from opsweep.page.snippets import NEEDS_CATALOG, Scripts, snippet
from opsweep.page.sources import anchor as spec_anchor
from opsweep.page.sources import locate, page_name
from opsweep.page.templates import anchor, operator_href  # noqa: F401  (the page's links)
from opsweep.targets import STOCK, is_stock, unless_stock

if TYPE_CHECKING:
    from opsweep.catalog.load import Catalog


@dataclass(frozen=True)
class SpecRef:
    name: str
    family: str
    path: str  # where the spec is defined, relative to the repository for built-in specs
    url: str  # a link to that file at the spec's line, or "" when no source URL was given
    line: int = 0  # the line of the statement that builds the spec (0: not recorded)
    anchor: str = ""  # its section on the spec sources page ("" when it has none)
    page: str = ""  # the spec sources page of its file (sources.page_name)


@dataclass(frozen=True)
class GroupView:
    target: str  # "" for the stock exporter
    dynamic: bool
    stage: str
    dtype: str
    rank: int
    count: int
    error: str
    example: str
    spec: str


@dataclass(frozen=True)
class Repro:
    title: str
    code: str


@dataclass(frozen=True)
class ReleaseGrade:
    version: str  # how the history names the point: the torch, plus pins telling points apart
    code: str  # four grade letters, "" when not measured in that release
    torch: str = ""  # the point's torch release alone


@dataclass(frozen=True)
class OperatorDetail:
    name: str
    anchor: str
    url: str
    alias_of: str
    aliases: tuple[str, ...]
    inplace: bool
    core: bool
    coverage: str
    documented: str
    registered: str
    grades: tuple[tuple[str, str], ...]  # (target label, four glyphs)
    specs: tuple[SpecRef, ...]
    groups: tuple[GroupView, ...]
    repros: tuple[Repro, ...]
    releases: tuple[ReleaseGrade, ...]
    #: the point export has stayed full since (None: not full in the newest point)
    since: ReleaseGrade | None
    #: the observed error per cell (None: none recorded)
    errors: ErrorView | None = None
    #: the dtype × rank grid per target (stock first; another target's where it differs)
    grids: Grids = Grids(())

    @property
    def family(self) -> str:
        """The family of the first spec measuring it ("" when none does): its group on the
        operators' index."""
        return self.specs[0].family if self.specs else ""

    @property
    def full_since(self) -> str:
        return self.since.version if self.since is not None else ""

    @property
    def release_runs(self) -> list[tuple[str, str, str]]:
        """(first point, last point, code) of each run of points with the same grades."""
        runs: list[list] = []
        for r in self.releases:
            if runs and runs[-1][2] == r.code:
                runs[-1][1] = r.version
            else:
                runs.append([r.version, r.version, r.code])
        return [tuple(r) for r in runs]

    @property
    def blocks(self) -> list[tuple[GroupView, ...]]:
        """The groups, runs sharing target, kind, stage and error line together (the page
        prints the error once per run)."""
        runs: list[list[GroupView]] = []
        for g in self.groups:
            if runs and _run_key(runs[-1][0]) == _run_key(g):
                runs[-1].append(g)
            else:
                runs.append([g])
        return [tuple(r) for r in runs]


def _run_key(g: GroupView) -> tuple:
    return (g.target, g.dynamic, g.stage, g.error)


def spec_ref(catalog: Catalog, name: str, source_url: str) -> SpecRef:
    spec = catalog.specs.get(name)
    if spec is None:
        return SpecRef(name, "", "", "")
    where = locate(spec)
    return SpecRef(name, spec.family, where.path, where.url(source_url), where.line,
                   spec_anchor(name), page_name(where.path))


def _spec_of(view: TargetResult, op: str, g: FailureGroup, dynamic: bool) -> str:
    """The spec whose own groups hold this (merged) group's smallest example."""
    names = view.operators[op].specs
    for name in names:
        spec = view.specs[name]
        for f in spec.dynamic_failures if dynamic else spec.failures:
            if f.example == g.example and f.stage == g.stage and f.error == g.error:
                return name
    return names[0]


def _groups(view: TargetResult, op: str, result: OperatorResult) -> list[GroupView]:
    label = unless_stock(view.name)
    out = []
    for dynamic, groups in ((False, result.failures), (True, result.dynamic_failures)):
        for g in groups:
            if g.stage is Stage.INVALID:
                continue
            out.append(GroupView(label, dynamic, g.stage.value, g.dtype, g.rank, g.count, g.error,
                                 g.example, _spec_of(view, op, g, dynamic)))
    return sorted(out, key=lambda v: (v.dynamic, Stage(v.stage).depth, v.error, v.dtype, v.rank))


def _repros(groups: Sequence[GroupView], scripts: Scripts | None = None) -> tuple[Repro, ...]:
    """One snippet per (target, static/dynamic, stage): the group with the smallest example;
    `scripts` writes it self-contained (engine.standalone), when given and it can."""
    chosen: dict[tuple, GroupView] = {}
    for g in groups:
        if g.example == REGRADED_EXAMPLE:  # no drawn example to rebuild (opsweep regrade)
            continue
        key = (g.target, g.dynamic, g.stage)
        if key not in chosen or (len(g.example), g.example) < (len(chosen[key].example),
                                                                 chosen[key].example):
            chosen[key] = g
    out = []
    for (target, dynamic, stage), g in chosen.items():
        where = f" with {target}" if target else ""
        title = f"{'dynamic ' if dynamic else ''}{stage}{where}: {g.example} (spec {g.spec})"
        inline = scripts(g.spec, g.example, dynamic, target, title) if scripts else None
        out.append(Repro(title, inline or NEEDS_CATALOG + snippet(
            g.spec, g.example, translations=target, dynamic=dynamic)))
    return tuple(out)


def releases(records: Sequence[Record], op: str
             ) -> tuple[tuple[ReleaseGrade, ...], ReleaseGrade | None]:
    """Grades per recorded point (stock exporter, in display order) and the point export has
    been full since, walking back along the points' chain (no step moves a pin backwards)."""
    found = order(records)

    def grade(r: Record) -> ReleaseGrade:
        return ReleaseGrade(r.name, r.targets.get(STOCK, {}).get(op, ""), r.version)
    since, later = None, None
    for r in reversed(found.chain):  # never back across a step measured by other specs
        if not grade(r).code.startswith("f") or (later is not None and not same_specs(r, later, op)):
            break
        since, later = grade(r), r
    return tuple(grade(r) for r in found.points), since


def target_groups(artifact: Artifact, op: str) -> list[GroupView]:
    """Failing groups of every target; a custom target's only where its grades differ."""
    out: list[GroupView] = []
    stock = artifact.operators.get(op)
    for view in artifact.results.values():
        result = view.operators.get(op)
        if result is None or (not is_stock(view.name) and stock is not None
                              and result.grades == stock.grades):
            continue
        out += _groups(view, op, result)
    return out


def op_grids(artifact: Artifact | None, catalog: Catalog, op: str) -> Grids:
    """`op`'s dtype × rank grids, its specs' declared dtypes and ranks read from `catalog`."""
    if artifact is None:
        return Grids(())
    names = {n for t in artifact.results.values() if op in t.operators
             for n in t.operators[op].specs}
    declared = {n: (catalog.specs[n].dtypes, catalog.specs[n].ranks) for n in sorted(names)
                if n in catalog.specs}
    return grids(artifact.results.values(), op, declared)


def detail(row, artifact: Artifact | None, catalog: Catalog,
           grades_per_release: tuple[tuple[ReleaseGrade, ...], ReleaseGrade | None],
           target_cells: Mapping[str, str], source_url: str,
           scripts: Scripts | None = None) -> OperatorDetail:
    """`row`: the support page's RowView of this operator; `grades_per_release`: what
    `releases` gives for it."""
    groups = target_groups(artifact, row.name) if artifact is not None else []
    history, since = grades_per_release
    return OperatorDetail(
        name=row.name, anchor=anchor(row.name), url=row.url, alias_of=row.alias_of,
        aliases=row.aliases, inplace=row.inplace, core=row.core, coverage=row.coverage,
        documented=row.documented, registered=row.registered, grades=tuple(target_cells.items()),
        specs=tuple(spec_ref(catalog, s, source_url) for s in catalog.by_operator.get(row.name, ())),
        groups=tuple(groups), repros=_repros(groups, scripts), releases=history, since=since,
        errors=error_view(artifact, row.name), grids=op_grids(artifact, catalog, row.name))

"""Rendering the support page: artifact + installed listing -> markdown, and
beside it the operators page (one section per operator, ``page_detail``) and the
spec sources page (one section per spec, ``page_specs``). The
filter data and dtype matrices are added by ``page_view``.

The template sees view-models built here, never raw JSON. Both headline bars
share denominators that do not depend on what we measured: the core opset,
then the full aten listing, each without the excluded rows; the numerator
is the number of rows measured ``full``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

from opsweep.page import sources as page_specs
from opsweep.artifact.data import STOCK, Artifact, OperatorResult
from opsweep.catalog.load import Catalog
from opsweep.errors import UsageError
from opsweep.artifact.grade import AXES, Grades
from opsweep.artifact.history import Record
from opsweep.catalog.links import Link
from opsweep.catalog.listing import Listing
from opsweep.model import Grade, Stage
from opsweep.page.detail import OperatorDetail
from opsweep.page.dtypes import CLASSES, SHORT, STAGE_LEGEND, MatrixRow
from opsweep.page.view import enrich
from opsweep.artifact.specgrade import GapStatus

GLYPHS = {Grade.FULL: "✅", Grade.PARTIAL: "🟡", Grade.NONE: "❌", Grade.BLOCKED: "⚠️",
          Grade.SKIPPED: "skipped", None: "n/a"}
UNMEASURED = "-"
LEGEND = (
    ("✅", "full", "every generated example exported"),
    ("🟡", "partial", "some examples exported, others raised. The artifact keeps the failing "
                      "shapes/dtypes"),
    ("❌", "none", "no example exported, and the exporter refused at least one"),
    ("⚠️", "blocked", "torch.export could not capture the module, so the ONNX exporter never "
                      "ran. Not an ONNX verdict"),
    ("-", "unmeasured", "no spec covers it, so we did not measure it here. Not unsupported"),
)


@dataclass(frozen=True)
class Bar:
    label: str
    numerator: int
    denominator: int

    @property
    def percent(self) -> float:
        return round(100.0 * self.numerator / self.denominator, 1) if self.denominator else 0.0


@dataclass(frozen=True)
class RowView:
    name: str
    url: str
    aliases: tuple[str, ...]
    alias_of: str
    inplace: bool
    core: bool
    export: str
    runtime: str
    numerics: str
    dynamic: str
    documented: str
    registered: str
    coverage: str
    failures: tuple[str, ...]
    confirmed: bool  # measured full
    targets: tuple[str, ...] = ()  # one cell per custom-translation target
    #: four grade letters per target (stock first), "" where not measured: the filters' data
    codes: tuple[str, ...] = ()
    changed: tuple[bool, ...] = ()  # per target: grades differ across the last recorded bump
    failing_classes: tuple[str, ...] = ()  # dtype classes with a failing example (stock)
    #: the first recorded point from which export (stock) has stayed full; "" when not full
    full_since: str = ""
    #: that point's torch release alone ("" when not full)
    full_since_torch: str = ""


@dataclass(frozen=True)
class AbsentRow:
    """A spec the measured torch does not have: listed with why, never graded."""

    spec: str
    ops: tuple[str, ...]
    reason: str
    removed_in: str  # the first recorded point without it, "" when no record says


@dataclass(frozen=True)
class ChangedRow:
    name: str
    stock: str  # the four glyphs, export/runtime/numerics/dynamic
    target: str


@dataclass(frozen=True)
class TargetView:
    """A custom-translation target, beside the stock exporter."""

    name: str
    label: str  # the table's name, for column headers
    module: str
    digest: str
    overrides: tuple[str, ...]
    bar: Bar  # listing rows measured full with the table
    changed: tuple[ChangedRow, ...]  # rows whose grades differ from the stock exporter's
    closed_gaps: tuple[str, ...]  # known-gap notes the table closes, as measured


@dataclass(frozen=True)
class PageView:
    torch_version: str
    listing_version: str
    report: bool
    fingerprint: Mapping[str, str]
    profile: str
    examples: int
    documented_source: str
    bars: tuple[Bar, Bar]
    measured: int
    measured_full: int
    rows: tuple[RowView, ...]
    excluded: tuple[tuple[str, str], ...]
    claimed_unconfirmed: tuple[RowView, ...]
    confirmed_unclaimed: tuple[RowView, ...]
    targets: tuple[TargetView, ...] = ()
    legend: tuple[tuple[str, str, str], ...] = LEGEND
    target_names: tuple[str, ...] = (STOCK,)
    bump: tuple[str, str] | None = None  # (old, new) torch versions of the last recorded bump
    absent: tuple[AbsentRow, ...] = ()  # specs the measured torch does not have
    dtype_rows: tuple[MatrixRow, ...] = ()
    rank_rows: tuple[MatrixRow, ...] = ()
    details: tuple[OperatorDetail, ...] = ()
    stages: tuple[tuple[str, str, str], ...] = STAGE_LEGEND  # the dtype matrix's legend


def _failures(result: OperatorResult | None) -> tuple[str, ...]:
    if result is None:
        return ()
    lines: tuple[str, ...] = ()
    worst = {result.grades.export, result.grades.runtime, result.grades.numerics}
    if worst & {Grade.PARTIAL, Grade.NONE}:
        lines = tuple(g.describe() for g in result.failures if g.stage is not Stage.INVALID)
    return lines + tuple(f"dynamic: {g.describe()}" for g in result.dynamic_failures)


def glyph_cell(grades: Grades | None) -> str:
    """Every axis of one operator in one cell: export runtime numerics dynamic."""
    if grades is None:
        return UNMEASURED
    return " ".join(GLYPHS[getattr(grades, axis)] for axis in AXES)


def glyphs(result: OperatorResult | None) -> str:
    return glyph_cell(result.grades if result else None)


def _target_view(artifact: Artifact, name: str, rows: list[RowView]) -> TargetView:
    target = artifact.targets[name]
    listed = {r.name for r in rows}
    full = {op for op, r in target.operators.items()
            if op in listed and r.grades.export is Grade.FULL}
    changed = tuple(ChangedRow(op, glyphs(artifact.operators.get(op)), glyphs(r))
                    for op, r in target.operators.items()
                    if r.grades != (artifact.operators[op].grades if op in artifact.operators
                                    else None))
    closed = tuple(sorted(n for n, r in target.specs.items()
                          if r.gap is not None and r.gap.status == GapStatus.CLOSED))
    t = target.translations
    return TargetView(name, t.table, t.module, t.digest, t.overrides,
                      Bar(f"full aten listing with {t.table}", len(full), len(rows)),
                      changed, closed)


def _coverage(name: str, catalog: Catalog, artifact: Artifact | None) -> str:
    if name in catalog.excluded:
        return f"excluded: {catalog.excluded[name].reason}"
    specs = catalog.by_operator.get(name, ())
    if not specs:
        return "missing spec"
    if artifact is not None and name not in artifact.operators:
        return f"spec {', '.join(specs)} (not in this report)"
    return f"spec {', '.join(specs)}"


def build_view(listing: Listing, catalog: Catalog, artifact: Artifact | None,
               documented: tuple[str, Mapping[str, int]], registered: frozenset[str],
               links: Mapping[str, Link], torch_version: str, *,
               records: Sequence[Record] = (), source_url: str = "") -> PageView:
    """`records`: the history records (oldest first), for the per-release grades and the
    "changed in the last bump" filter; `source_url`: where spec files link to."""
    source, claims = documented
    aliases: dict[str, list[str]] = {}
    for row, link in links.items():
        if link.alias_of:
            aliases.setdefault(link.alias_of, []).append(row)
    rows = []
    for name, row in listing.rows.items():
        if name in catalog.excluded:
            continue
        result = artifact.operators.get(name) if artifact else None
        g = result.grades if result else None
        link = links.get(name)
        rows.append(RowView(
            name=name, url=link.url if link else "", aliases=tuple(sorted(aliases.get(name, ()))),
            alias_of=(link.alias_of or "") if link else "", inplace=row.inplace, core=row.core,
            export=GLYPHS[g.export] if g else UNMEASURED,
            runtime=GLYPHS[g.runtime] if g else UNMEASURED,
            numerics=GLYPHS[g.numerics] if g else UNMEASURED,
            dynamic=GLYPHS[g.dynamic] if g else UNMEASURED,
            targets=_target_cells(artifact, name, result),
            documented=f"since opset {claims[name]}" if name in claims else "no",
            registered="yes" if name in registered else "no",
            coverage=_coverage(name, catalog, artifact), failures=_failures(result),
            confirmed=bool(g and g.export is Grade.FULL)))
    full = {r.name for r in rows if r.confirmed}
    core = [r for r in rows if r.core]
    bars = (Bar("core opset", len(full & {r.name for r in core}), len(core)),
            Bar("full aten listing", len(full), len(rows)))
    measured = [r for r in rows if r.export != UNMEASURED]
    claimed = [r for r in rows if r.documented != "no" or r.registered == "yes"]
    fp = artifact.fingerprint if artifact else None
    targets = tuple(_target_view(artifact, t, rows) for t in sorted(artifact.targets)) \
        if artifact else ()
    return enrich(PageView(
        torch_version=torch_version, listing_version=listing.torch_version, report=artifact is not None,
        fingerprint={k: str(getattr(fp, k)) for k in fp.__dataclass_fields__} if fp else {},
        profile=artifact.profile if artifact else "", examples=artifact.examples if artifact else 0,
        documented_source=source, bars=bars,
        measured=len(measured), measured_full=len(full), rows=tuple(rows),
        excluded=tuple(sorted((op, e.reason) for op, e in catalog.excluded.items())),
        claimed_unconfirmed=tuple(r for r in claimed if r.export != UNMEASURED and not r.confirmed),
        confirmed_unclaimed=tuple(r for r in rows if r.confirmed and r.documented == "no"
                                  and r.registered == "no"), targets=targets),
        artifact, catalog, records, source_url)


def _target_cells(artifact: Artifact | None, name: str,
                  stock: OperatorResult | None) -> tuple[str, ...]:
    """Per custom target: 'same' when its grades equal the stock exporter's, else its glyphs."""
    if artifact is None:
        return ()
    cells = []
    for target in sorted(artifact.targets):
        result = artifact.targets[target].operators.get(name)
        same = (result.grades if result else None) == (stock.grades if stock else None)
        cells.append("same" if same and result is not None else glyphs(result))
    return tuple(cells)


_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|"})


def cell(text: str) -> str:
    """Text safe inside a markdown table cell: no raw HTML, no markup, one line."""
    text = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.translate(_MARKDOWN_SPECIAL).replace("\n", " ")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("opsweep", "templates"), undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["cell"] = cell
    return env


def render_page(view: PageView) -> str:
    return environment().get_template("supported_operators.md.j2").render(
        page=view, classes=[c for c, _ in CLASSES], short=SHORT)


def render_details(view: PageView) -> str:
    """The operators page: one anchored section per operator of the support page."""
    from opsweep.page.detail import glyph_code
    return environment().get_template("operators.md.j2").render(page=view, glyph=glyph_code)


def details_path(page: Path) -> Path:
    """The operators page is written beside the support page."""
    return Path(page).with_name("operators.md")


def check_versions(artifact: Artifact | None, installed: str, explicit: str | None) -> str:
    """The torch version the page describes. Refuses an artifact measured on
    another torch than the installed one unless --torch-version says so."""
    chosen = explicit or installed
    if artifact is not None and artifact.broken is not None:
        raise UsageError(f"nothing to render: {artifact.broken.headline(artifact.fingerprint)}")
    if artifact is not None and explicit is None:
        measured = artifact.fingerprint.torch.split("+")[0]
        if measured != installed.split("+")[0]:
            raise UsageError(
                f"the report was measured on torch {artifact.fingerprint.torch} but torch "
                f"{installed} is installed, so the operator listing and the measured column "
                "would describe different releases; install that torch, or pass "
                "--torch-version explicitly to target it")
    return chosen


def write_page(path: Path, text: str) -> None:
    from opsweep.files import write_atomic
    write_atomic(path, text.encode("utf-8"))


def render_files(report_path: Path | None, out: Path, *, torch_version: str | None = None,
                 documented_path: Path, data_dir: Path, history_dir: Path,
                 specs: Sequence[Path] = (), source_url: str = ""):
    """Render the support page at `out`, the operators and spec sources pages beside it,
    from the artifact at `report_path` (None: only the retired listing's claims), the installed
    torch's listing and the history records; return the page's view."""
    import torch

    from opsweep.artifact import data as art
    from opsweep.page import documented
    from opsweep.artifact import history
    from opsweep.catalog import links
    from opsweep.catalog.load import load_catalog
    from opsweep.catalog.listing import installed_listing
    from opsweep.catalog.registry import registered_rows
    report = art.load(report_path) if report_path else None
    version = check_versions(report, torch.__version__, torch_version)
    listing = installed_listing()
    catalog = load_catalog(specs, check_draws=False)
    opset = report.fingerprint.opset if report else None
    view = build_view(listing, catalog, report, documented.load(documented_path),
                      registered_rows(opset), links.cached(listing.rows, version, data_dir),
                      version, records=history.load_all(history_dir), source_url=source_url)
    sources = page_specs.build(catalog, {d.name for d in view.details}, source_url, version)
    pages = {out: render_page(view), details_path(out): render_details(view),
             page_specs.page_path(out): page_specs.render(sources)}  # all rendered, then written
    for path, text in pages.items():
        write_page(path, text)
    return view

"""Rendering the support page: artifact + installed listing -> markdown, and beside it
the operators' pages (one page per operator, :mod:`opsweep.page.detail`) and the dtype
matrix. Each row is
built once, with its filter data and dtype matrices (:mod:`opsweep.page.view`).

The template sees view-models built here, never raw JSON. Both headline bars
share denominators that do not depend on what we measured: the core opset,
then the full aten listing, each without the excluded rows; the numerator
is the number of rows measured ``full``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from opsweep.artifact.data import STOCK, Artifact
from opsweep.artifact.records import Record, letters
from opsweep.artifact.results import ExporterEntry, OperatorResult, TargetEntry, TargetResult
from opsweep.artifact.specgrade import GapStatus
from opsweep.errors import UsageError
from opsweep.model import Grade, Stage
from opsweep.page.detail import detail, releases
from opsweep.page.dtypes import CLASSES, SHORT
from opsweep.page.errors import within_ulp
from opsweep.page.glyphs import CELLS, GLYPHS, UNMEASURED, glyph_code, glyphs
from opsweep.page.migration import MigrationView
from opsweep.page.opsets import OpsetsView
from opsweep.page.snippets import Scripts
from opsweep.page.templates import environment
from opsweep.page.view import (
    absent_rows,
    failing_at,
    last_bump,
    matrices,
    result_grades,
    target_cells,
)
from opsweep.page.viewmodel import Bar, ChangedRow, PageView, RowView, TargetView
from opsweep.targets import Kind, label, of_name

if TYPE_CHECKING:  # the installed stack's facts arrive as data: no torch here
    from opsweep.catalog.links import Link
    from opsweep.catalog.listing import Listing
    from opsweep.catalog.load import Catalog


def _failures(result: OperatorResult | None) -> tuple[str, ...]:
    if result is None:
        return ()
    lines: tuple[str, ...] = ()
    worst = {result.grades.export, result.grades.runtime, result.grades.numerics}
    if worst & {Grade.PARTIAL, Grade.NONE}:
        lines = tuple(g.describe() for g in result.failures if g.stage is not Stage.INVALID)
    return lines + tuple(f"dynamic: {g.describe()}" for g in result.dynamic_failures)


def _target_view(artifact: Artifact, target: TargetResult, rows: list[RowView]) -> TargetView:
    name = target.name
    listed = {r.name for r in rows}
    full = {op for op, r in target.operators.items()
            if op in listed and r.grades.export is Grade.FULL}
    changed = tuple(ChangedRow(op, glyphs(artifact.operators.get(op)), glyphs(r))
                    for op, r in target.operators.items()
                    if r.grades != (artifact.operators[op].grades if op in artifact.operators
                                    else None))
    closed = tuple(sorted(n for n, r in target.specs.items()
                          if r.gap is not None and r.gap.status == GapStatus.CLOSED))
    t = target.entry
    assert t is not None  # a target other than the stock one
    kind = of_name(name).kind
    # an exporter target has no table: its name (or label) and torch.onnx stand in
    table = getattr(t, "table", label(name))
    module = getattr(t, "module", "torch.onnx")
    bar = f"full aten listing {'at' if kind is Kind.OPSET else 'with'} {table}"
    return TargetView(name, table, module, t.digest, t.overrides, Bar(bar, len(full), len(rows)),
                      changed, closed, _exporter_line(t, artifact.fingerprint.opset), kind.value)


#: what an exporter target is, in one sentence, by its kind
_EXPORTERS = {
    Kind.TORCHSCRIPT: (
        "The TorchScript exporter, `torch.onnx.export(..., dynamo=False)` of torch {torch}, at "
        "opset {opset}, on the same examples. What a switch to the dynamo exporter loses and "
        "gains, operator by operator: [Migrating from the TorchScript exporter](migrating.md)."),
    Kind.OPSET: (
        "The dynamo exporter of torch {torch} at opset {opset}, "
        "`torch.onnx.export(..., dynamo=True, opset_version={opset})`, beside the stock "
        "exporter's opset {stock}, on the same examples. What a move between the opsets "
        "measured changes, operator by operator: [Moving between opsets](migrating.md#opsets)."),
}


def _exporter_line(t: TargetEntry, stock_opset: int = 0) -> str:
    """What an exporter target is, in one sentence (empty for a translation table);
    `stock_opset`: the stock target's."""
    kind = of_name(t.name).kind
    if not isinstance(t, ExporterEntry) or kind not in _EXPORTERS:
        return ""
    said = _EXPORTERS[kind].format(torch=t.torch, opset=t.opset, stock=stock_opset)
    return said + (f" Absent from this pin set: {t.absent}." if t.absent else "")


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
               records: Sequence[Record] = (), source_url: str = "",
               scripts: Scripts | None = None) -> PageView:
    """`records`: the history records (oldest first), for the per-release grades and the
    "changed in the last bump" filter; `source_url`: where spec files link to."""
    source, claims = documented
    aliases: dict[str, list[str]] = {}
    for alias, target in links.items():
        if target.alias_of:
            aliases.setdefault(target.alias_of, []).append(alias)
    names = artifact.target_names if artifact is not None else (STOCK,)
    bump, changed = last_bump(records)
    listed = [(n, r) for n, r in listing.rows.items() if n not in catalog.excluded]
    dtypes, ranks = matrices([n for n, _ in listed], artifact, catalog) \
        if artifact is not None else ((), ())
    failing = {m.name: m.failing for m in dtypes}
    rows, details = [], []
    for name, row in listed:
        result = artifact.operators.get(name) if artifact else None
        g = result.grades if result else None
        link = links.get(name)
        history, since = releases(records, name)
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
            confirmed=bool(g and g.export is Grade.FULL),
            codes=tuple(letters(result_grades(artifact, t, name)) for t in names),
            changed=tuple(name in changed.get(t, ()) for t in names),
            failing_classes=failing.get(name, ()),
            failing_ranks=failing_at(result.failures) if result else (),
            full_since=since.version if since is not None else "",
            full_since_torch=since.torch if since is not None else "",
            ulp=within_ulp(artifact, name)))
        details.append(detail(rows[-1], artifact, catalog, (history, since),
                              target_cells(artifact, names, name), source_url, scripts))
    full = {r.name for r in rows if r.confirmed}
    core = [r for r in rows if r.core]
    bars = (Bar("core opset", len(full & {r.name for r in core}), len(core)),
            Bar("full aten listing", len(full), len(rows)))
    measured = [r for r in rows if r.export != UNMEASURED]
    claimed = [r for r in rows if r.documented != "no" or r.registered == "yes"]
    fp = artifact.fingerprint if artifact else None
    targets = tuple(_target_view(artifact, t, rows) for t in artifact.others) \
        if artifact else ()
    return PageView(
        torch_version=torch_version, listing_version=listing.torch_version, report=artifact is not None,
        fingerprint={k: str(getattr(fp, k)) for k in fp.__dataclass_fields__} if fp else {},
        profile=artifact.profile if artifact else "", examples=artifact.examples if artifact else 0,
        documented_source=source, bars=bars,
        measured=len(measured), measured_full=len(full), rows=tuple(rows),
        excluded=tuple(sorted((op, e.reason) for op, e in catalog.excluded.items())),
        claimed_unconfirmed=tuple(r for r in claimed if r.export != UNMEASURED and not r.confirmed),
        confirmed_unclaimed=tuple(r for r in rows if r.confirmed and r.documented == "no"
                                  and r.registered == "no"), targets=targets,
        target_names=names, bump=bump, dtype_rows=dtypes, rank_rows=ranks,
        details=tuple(details), absent=absent_rows(artifact, catalog, records),
        ranks=tuple(sorted({r for row in rows for _, at in row.failing_ranks for r in at})))


def _target_cells(artifact: Artifact | None, name: str,
                  stock: OperatorResult | None) -> tuple[str, ...]:
    """Per custom target: 'same' when its grades equal the stock exporter's, else its glyphs."""
    if artifact is None:
        return ()
    cells = []
    for target in artifact.others:
        result = target.operators.get(name)
        same = (result.grades if result else None) == (stock.grades if stock else None)
        cells.append("same" if same and result is not None else glyphs(result))
    return tuple(cells)


def render_page(view: PageView) -> str:
    return environment().get_template("supported_operators.md.j2").render(
        page=view, classes=[c for c, _ in CLASSES], short=SHORT, cells=CELLS)


def render_home(view: PageView, repo_url: str = "") -> str:
    """The site's home page: what opsweep answers, the headline numbers, how to install it
    and where its repository lives (`repo_url`, "" when not configured)."""
    return environment().get_template("index.md.j2").render(page=view, repo_url=repo_url)


def render_details(view: PageView, mig: MigrationView | None = None,
                   steps: OpsetsView | None = None) -> dict[str, str]:
    """The operators' pages: an index by family (``index.md``) and one page per operator of
    the support page (``<name>.md``), with its dtype row and, when `mig` measured it, its
    migration pair, and when `steps` did, its grades across opsets; file name -> text."""
    env = environment()
    dtypes = {m.name: m for m in view.dtype_rows}
    ranks = {m.name: m for m in view.rank_rows}
    moves = {r.name: r for r in mig.rows} if mig is not None else {}
    across = {r.name: r for r in steps.rows} if steps is not None else {}
    families: dict[str, list] = {}
    for op in view.details:
        families.setdefault(op.family, []).append(op)
    ordered = sorted(families.items(), key=lambda item: (not item[0], item[0]))
    pages = {"index.md": env.get_template("operators.md.j2").render(page=view, families=ordered)}
    one = env.get_template("operator.md.j2")
    for op in view.details:
        pages[f"{op.name}.md"] = one.render(page=view, op=op, dtype=dtypes.get(op.name),
                                            rank=ranks.get(op.name), mig=moves.get(op.name),
                                            across=across.get(op.name), glyph=glyph_code)
    return pages


def render_dtypes(view: PageView) -> str:
    """Dtypes at a glance: the dtype matrix of every operator, and rank 0 against the rest."""
    return environment().get_template("dtypes.md.j2").render(
        page=view, classes=[c for c, _ in CLASSES])


def render_migration(view: MigrationView, steps: OpsetsView | None = None) -> str:
    """The migration page: the TorchScript exporter beside the dynamo exporter, and the
    dynamo exporter's lowest opset measured beside its highest (`steps`, when measured)."""
    return environment().get_template("migrating.md.j2").render(
        mig=view, steps=steps if steps is not None else OpsetsView((), (), (), {}))


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

"""The support page's filter data and its dtype matrices, from the artifact,
the catalog and the history records.

Every row carries, per target, its four grade letters (the history records'
letters: ``f`` full, ``p`` partial, ``n`` none, ``b`` blocked, ``s`` skipped,
``-`` not reached; ``""`` when not measured), whether its grades changed across
the last recorded torch bump, and the dtype classes where it has a failing
example. The page's script filters and counts rows from these attributes
alone; without the script the table is complete as it stands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from opsweep.artifact.data import STOCK, Artifact
from opsweep.catalog.load import Catalog
from opsweep.artifact.grade import AXES, Grades
from opsweep.artifact.history import CODES, Record, removed_in
from opsweep.page.detail import OperatorDetail, detail
from opsweep.page.dtypes import MatrixRow, dtype_row, rank_row


def code(grades: Grades | None) -> str:
    return "" if grades is None else "".join(CODES[getattr(grades, axis)] for axis in AXES)


def last_bump(records: Sequence[Record]) -> tuple[tuple[str, str] | None, Mapping[str, frozenset]]:
    """The last two recorded releases and, per target both hold, the operators whose
    four grades differ between them (measured in one and not the other counts)."""
    if len(records) < 2:
        return None, {}
    old, new = records[-2], records[-1]
    changed = {}
    for target in set(old.targets) & set(new.targets):
        a, b = old.targets[target], new.targets[target]
        changed[target] = frozenset(op for op in set(a) | set(b) if a.get(op) != b.get(op))
    return (old.name, new.name), changed


def _matrices(rows, artifact: Artifact, catalog: Catalog):
    dtypes, ranks = [], []
    for row in rows:
        result = artifact.operators.get(row.name)
        if result is None:
            continue
        specs = [catalog.specs[s] for s in result.specs if s in catalog.specs]
        counted = [artifact.specs[s].outcomes for s in result.specs if s in artifact.specs]
        outcomes = None if not counted or None in counted else [c for cs in counted for c in cs]
        dtypes.append(dtype_row(row.name, specs, result.failures, outcomes))
        rank = rank_row(row.name, specs, result.failures, outcomes)
        if rank is not None:
            ranks.append(rank)
    return tuple(dtypes), tuple(ranks)


def enrich(view, artifact: Artifact | None, catalog: Catalog, records: Sequence[Record],
           source_url: str = ""):
    """The page view with filter data, dtype matrices and per-operator details added."""
    names = artifact.target_names if artifact is not None else (STOCK,)
    bump, changed = last_bump(records)
    dtypes: tuple[MatrixRow, ...] = ()
    ranks: tuple[MatrixRow, ...] = ()
    if artifact is not None:
        dtypes, ranks = _matrices(view.rows, artifact, catalog)
    failing = {m.name: m.failing for m in dtypes}
    rows, details = [], []
    for row in view.rows:
        codes = tuple(code(_result_grades(artifact, t, row.name)) for t in names)
        row = replace(row, codes=codes, failing_classes=failing.get(row.name, ()),
                      changed=tuple(row.name in changed.get(t, ()) for t in names))
        details.append(_detail(row, names, artifact, catalog, records, source_url))
        since = details[-1].since
        rows.append(replace(row, full_since=details[-1].full_since,
                            full_since_torch=since.torch if since is not None else ""))
    return replace(view, rows=tuple(rows), target_names=names, bump=bump, dtype_rows=dtypes,
                   rank_rows=ranks, details=tuple(details),
                   absent=absent_rows(artifact, catalog, records))


def absent_rows(artifact: Artifact | None, catalog: Catalog, records: Sequence[Record]):
    """The specs the measured torch does not have, with why and since when."""
    from opsweep.page.render import AbsentRow
    out = []
    for name, why in sorted((artifact.absent if artifact is not None else {}).items()):
        spec = catalog.absent[name].spec if name in catalog.absent else catalog.specs.get(name)
        out.append(AbsentRow(name, spec.aten_ops if spec is not None else (), why,
                             removed_in(records, name)))
    return tuple(out)


def _result_grades(artifact: Artifact | None, target: str, op: str) -> Grades | None:
    view = artifact.view(target) if artifact is not None else None
    result = view.operators.get(op) if view is not None else None
    return result.grades if result is not None else None


def _detail(row, names, artifact, catalog, records, source_url) -> OperatorDetail:
    from opsweep.page.render import glyph_cell
    cells = {("stock exporter" if t == STOCK else t): glyph_cell(_result_grades(artifact, t, row.name))
             for t in names}
    return detail(row, artifact, catalog, records, cells, source_url)

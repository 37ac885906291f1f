"""The support page's filter data and its dtype matrices, from the artifact,
the catalog and the history records.

Every row carries, per target, its four grade letters (the history records'
letters: ``f`` full, ``p`` partial, ``n`` none, ``b`` blocked, ``s`` skipped,
``-`` not reached; ``""`` when not measured), whether its grades changed across
the last recorded torch bump, the dtype classes where it has a failing
example, and the ranks it fails at in each (`failing_at`). The page's script filters and counts rows from these attributes
alone; without the script the table is complete as it stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from opsweep.artifact.data import Artifact
from opsweep.artifact.grade import FailureGroup, Grades
from opsweep.artifact.records import Record, chain, removed_in, same_specs
from opsweep.model import UNGRADED, Stage
from opsweep.page.dtypes import CLASSES, class_of, dtype_row, rank_row
from opsweep.page.glyphs import glyph_cell
from opsweep.page.viewmodel import AbsentRow
from opsweep.targets import label

if TYPE_CHECKING:
    from opsweep.catalog.load import Catalog


def last_bump(records: Sequence[Record]) -> tuple[tuple[str, str] | None, Mapping[str, frozenset]]:
    """The last step of the points' chain (no pin moves backwards) and, per target both hold, the operators whose
    four grades differ between them (measured in one and not the other counts; a difference
    of an operator measured by other specs at each end does not: a changed catalog or engine,
    not torch, records.same_specs)."""
    line = chain(records)
    if len(line) < 2:
        return None, {}
    old, new = line[-2], line[-1]
    changed = {}
    for target in set(old.targets) & set(new.targets):
        a, b = old.targets[target], new.targets[target]
        changed[target] = frozenset(op for op in set(a) | set(b) if a.get(op) != b.get(op)
                                    and (op not in a or op not in b
                                         or same_specs(old, new, op)))
    return (old.name, new.name), changed


def matrices(names: Sequence[str], artifact: Artifact, catalog: Catalog):
    """The dtype and rank matrices of the measured operators among `names`, in order."""
    dtypes, ranks = [], []
    for name in names:
        result = artifact.operators.get(name)
        if result is None:
            continue
        specs = [catalog.specs[s] for s in result.specs if s in catalog.specs]
        counted = [artifact.specs[s].outcomes for s in result.specs if s in artifact.specs]
        outcomes = None if not counted or None in counted else \
            [c for cs in counted if cs is not None for c in cs]
        dtypes.append(dtype_row(name, specs, result.failures, outcomes))
        rank = rank_row(name, specs, result.failures, outcomes)
        if rank is not None:
            ranks.append(rank)
    return tuple(dtypes), tuple(ranks)


def failing_at(groups: Iterable[FailureGroup]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Per dtype class with a failing (static) example, the ranks it fails at, in the
    matrix's order: (("float16", (0, 4)), ("integer", (2,))); the support page's rows carry
    them as ``data-fail="float16:0,4 integer:2"``."""
    ranks: dict[str, set[int]] = {}
    for g in groups:
        cls = class_of(g.dtype)
        if cls is not None and g.stage is not Stage.OK and g.stage not in UNGRADED:
            ranks.setdefault(cls, set()).add(g.rank)
    return tuple((c, tuple(sorted(ranks[c]))) for c, _ in CLASSES if c in ranks)


def absent_rows(artifact: Artifact | None, catalog: Catalog, records: Sequence[Record]):
    """The specs the measured torch does not have, with why and since when."""
    out = []
    for name, why in sorted((artifact.absent if artifact is not None else {}).items()):
        spec = catalog.absent[name].spec if name in catalog.absent else catalog.specs.get(name)
        out.append(AbsentRow(name, spec.aten_ops if spec is not None else (), why,
                             removed_in(records, name)))
    return tuple(out)


def result_grades(artifact: Artifact | None, target: str, op: str) -> Grades | None:
    return artifact.grades(op, target) if artifact is not None else None


def target_cells(artifact: Artifact | None, names: Sequence[str], op: str) -> dict[str, str]:
    """Each target's four glyphs for `op`, labelled as the operators page shows them."""
    return {label(t): glyph_cell(result_grades(artifact, t, op))
            for t in names}

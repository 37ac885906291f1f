"""The opsets view: the dynamo exporter at each opset measured (the opset targets, ``opsetN``,
and the stock target at the sweep's own opset), per operator and per axis, from one
artifact where every one measured the same drawn examples.

What a project choosing its opset asks, for a move from the lowest opset measured to the
highest (the two ends), as the migration view's lists (:mod:`opsweep.page.migration`):

- **lose**: the lower opset exports the operator (full or partial), the higher exports none;
- **gain**: the reverse;
- **runs** / **matches**: both export, but only one's models run in onnxruntime, or match
  PyTorch;

each with the smallest example the worse end fails (chosen where the other end passed every
example of that dtype and rank) and a snippet per call; and per operator one sentence
naming the opsets where it fails ("fails at opset 28 only (export): translation-error: ...").

Torch-free: it reads the artifact and (when given) the :class:`~opsweep.page.snippets.Scripts`
that writes a snippet self-contained.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from opsweep.artifact.data import Artifact
from opsweep.artifact.grade import FAILS, FailureGroup, Grades
from opsweep.artifact.results import TargetResult
from opsweep.model import Grade
from opsweep.page.glyphs import glyph_cell
from opsweep.page.migration import Pair, kind_of, pair
from opsweep.page.snippets import Scripts
from opsweep.targets import label, opset_of

#: the lists, in the order the page shows them: key -> (heading, what it means), where
#: {low} and {high} are the two ends' opsets
KINDS = {
    "lose": ("What you lose moving up",
             "Opset {low} exports it; at opset {high} none of its examples export."),
    "gain": ("What you gain moving up",
             "Opset {high} exports it; at opset {low} none of its examples export."),
    "runs": ("Both export, only one runs",
             "Both opsets export it, but only one's models run in onnxruntime."),
    "matches": ("Both export, only one matches PyTorch",
                "Both opsets export it and run it, but only one's results match PyTorch."),
}
_EXPORTS = frozenset({Grade.FULL, Grade.PARTIAL})
#: the axes a sentence can name, in the order an example reaches them
_AXES = ("export", "runtime", "numerics")


@dataclass(frozen=True)
class Point:
    """One opset measured: the target that measured it and how the page names it."""

    opset: int
    target: str
    label: str  # "opset 18", "opset 20 (stock)"


@dataclass(frozen=True)
class OpsetRow:
    name: str
    kind: str  # a KINDS key, "same" (every axis graded alike at both ends) or "differs"
    cells: tuple[tuple[str, str], ...]  # (point's label, four badges), lowest opset first
    failing: Failing | None  # where it fails (None: every opset passes or fails alike)
    pair: Pair | None  # the ends' smallest difference, a snippet per call


@dataclass(frozen=True)
class OpsetsView:
    points: tuple[Point, ...]  # the opsets measured, lowest first (fewer than 2: not measured)
    rows: tuple[OpsetRow, ...]
    lists: tuple[tuple[str, str, str, tuple[OpsetRow, ...]], ...]  # key, heading, says, rows
    counts: Mapping[str, int]
    absent: tuple[tuple[str, str], ...] = ()  # opset targets absent from the pin set, why

    @property
    def measured(self) -> bool:
        return len(self.points) > 1

    @property
    def low(self) -> Point:
        return self.points[0]

    @property
    def high(self) -> Point:
        return self.points[-1]


def points_of(artifact: Artifact) -> tuple[tuple[Point, ...], tuple[tuple[str, str], ...]]:
    """The opsets the artifact measured (its opset targets and, with one at least, the stock
    target's), lowest first; and its opset targets absent from the pin set, with why."""
    found: dict[int, TargetResult] = {}
    for t in artifact.others:
        opset = opset_of(t.name)
        if opset is not None:
            found[opset] = t
    absent = tuple((t.name, t.absent) for t in found.values() if t.absent)
    found = {n: t for n, t in found.items() if not t.absent}
    if not found:
        return (), absent
    stock = artifact.fingerprint.opset
    points = [Point(n, t.name, label(t.name)) for n, t in found.items()]
    points.append(Point(stock, artifact.stock.name, f"opset {stock} (stock)"))
    return tuple(sorted(points, key=lambda p: p.opset)), absent


def _exports(g: Grade | None) -> bool:
    return g in _EXPORTS


def _axis(kind: str, low: Grades) -> tuple[str, bool] | None:
    """(axis, whether the high end is the worse) of the pair a listed kind shows."""
    if kind in ("lose", "gain"):
        return "export", kind == "lose"
    if kind in ("runs", "matches"):
        axis = "runtime" if kind == "runs" else "numerics"
        return axis, _exports(getattr(low, axis))
    return None


def _smallest(view: TargetResult, specs: Iterable[str], axis: str) -> FailureGroup | None:
    groups = [g for name in specs if name in view.specs
              for g in view.specs[name].failures if g.stage in FAILS[axis]]
    return min(groups, key=lambda g: (g.size, len(g.example), g.example), default=None)


@dataclass(frozen=True)
class Failing:
    """Where an operator fails, on the first axis whose verdict differs between the opsets:
    `where` ("at opset 28 only", "at opsets 18 and 20, not at opset 28"), and the smallest
    failing group of the first opset failing (stage and error line, "" when none is kept)."""

    where: str
    axis: str
    stage: str
    error: str


def failing(op: str, points: Sequence[Point], views: Mapping[str, TargetResult]
            ) -> Failing | None:
    """Where `op` fails (see `Failing`); None where every opset passes or fails alike."""
    results = {p.target: r for p in points if (r := views[p.target].operators.get(op))}
    if len(results) < len(points):
        return None
    for axis in _AXES:
        fails = [p for p in points if not _exports(getattr(results[p.target].grades, axis))]
        if fails and len(fails) < len(points):
            names = " and ".join(str(p.opset) for p in fails)
            where = (f"at opset {names} only" if len(fails) == 1 else f"at opsets {names}, not at "
                     + " and ".join(f"opset {p.opset}" for p in points if p not in fails))
            worst = _smallest(views[fails[0].target], results[fails[0].target].specs, axis)
            return Failing(where, axis, worst.stage.value if worst else "",
                           worst.error if worst else "")
    return None


def build(artifact: Artifact | None, *, scripts: Scripts | None = None,
          listed: Iterable[str] | None = None) -> OpsetsView:
    """The view from `artifact` (None or without an opset target: an empty view);
    `listed`: the operators the support page lists (default every operator both ends
    measured)."""
    if artifact is None:
        return OpsetsView((), (), (), {})
    points, absent = points_of(artifact)
    if len(points) < 2:
        return OpsetsView((), (), (), {}, absent)
    views = {p.target: artifact.results[p.target] for p in points}
    low, high = points[0], points[-1]
    names = sorted(set(views[low.target].operators) & set(views[high.target].operators))
    if listed is not None:
        keep = set(listed)
        names = [n for n in names if n in keep]
    rows = tuple(_row(name, points, views, scripts) for name in names)
    lists = tuple((key, heading, said.format(low=low.opset, high=high.opset),
                   tuple(r for r in rows if r.kind == key))
                  for key, (heading, said) in KINDS.items())
    counts = {key: len(found) for key, _, _, found in lists}
    counts |= {"operators": len(rows), "same": sum(r.kind == "same" for r in rows),
               "differs": sum(r.kind == "differs" for r in rows)}
    return OpsetsView(points, rows, lists, counts, absent)


def _row(name: str, points: Sequence[Point], views: Mapping[str, TargetResult],
         scripts: Scripts | None) -> OpsetRow:
    low, high = points[0], points[-1]
    a, b = views[low.target].operators[name], views[high.target].operators[name]
    kind = kind_of(a.grades, b.grades)
    shown = _axis(kind, a.grades)
    found = None
    if shown is not None:
        axis, high_worse = shown
        worse = high if high_worse else low
        calls = {p.target: f"opset_version={p.opset}" for p in (low, high)}
        found = pair({low.target: views[low.target], high.target: views[high.target]}, calls,
                     tuple(dict.fromkeys(a.specs + b.specs)), axis, worse.target,
                     f"opset {worse.opset}", scripts)
    cells = tuple((p.label, glyph_cell(r.grades if (r := views[p.target].operators.get(name))
                                       else None)) for p in points)
    return OpsetRow(name, kind, cells, failing(name, points, views), found)


"""The migration view: the TorchScript exporter (the ``torchscript`` target,
``torch.onnx.export(..., dynamo=False)``) beside the dynamo exporter (the stock target), per
operator and per axis, from one artifact where both measured the same drawn examples.

What a team leaving the TorchScript exporter asks, as lists:

- **lose**: TorchScript exports the operator (full or partial), dynamo exports none of it;
- **gain**: the reverse;
- **runs** / **matches**: both export, but only one gives a model that runs in onnxruntime
  (``runtime``), or only one matches PyTorch (``numerics``);

each with the smallest example the worse exporter fails, chosen where the better one
passed every example of that dtype and rank on that axis (so that the pair of snippets,
one per call, shows the difference), and the retired TorchScript listing's claims checked
against the measured TorchScript exporter: a claim is *contradicted* when the listing says
the operator exports at the measured opset and the exporter exported none of its examples,
measured in the mode the claim is about. The listing described the exporter's symbolic
functions, which export a model in eval mode (``torch.onnx.export``'s default
``training=TrainingMode.EVAL``; dropout is then the identity): a claim about an operator whose
specs all hold it to another mode (``OpSpec.mode``, e.g. dropout called with ``train=True``)
is not checked, and the row says which mode was measured (``other-mode``).

Torch-free: it reads the artifact, the listing's claims and (when given) the
:class:`~opsweep.page.snippets.Scripts` that writes a snippet self-contained.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from opsweep.artifact.data import Artifact
from opsweep.artifact.grade import AXES, FAILS, FailureGroup, Grades
from opsweep.artifact.results import ExporterEntry, OperatorResult, TargetResult
from opsweep.model import Grade, Stage
from opsweep.page.detail import Repro
from opsweep.page.glyphs import glyph_cell
from opsweep.page.snippets import NEEDS_CATALOG, Scripts, snippet
from opsweep.targets import STOCK, TORCHSCRIPT, behaviour, is_stock, unless_stock

#: the lists, in the order the page shows them: key -> (heading, what it means)
KINDS = {
    "lose": ("What you lose by switching",
             "TorchScript exports it; the dynamo exporter exports none of its examples."),
    "gain": ("What you gain by switching",
             "The dynamo exporter exports it; TorchScript exports none of its examples."),
    "runs": ("Both export, only one runs",
             "Both export, but only one exporter's models run in onnxruntime."),
    "matches": ("Both export, only one matches PyTorch",
                "Both export and run, but only one exporter's results match PyTorch."),
}
_EXPORTS = frozenset({Grade.FULL, Grade.PARTIAL})


@dataclass(frozen=True)
class Pair:
    """The smallest example the worse exporter fails on `axis`, and a snippet per call."""

    spec: str
    signature: str
    axis: str
    worse: str  # how the page names the worse one: "dynamo", "TorchScript", "opset 28"
    stage: str
    error: str
    better_clean: bool  # the better exporter passed every example of this dtype and rank
    repros: tuple[Repro, ...]  # dynamo's call, then TorchScript's


@dataclass(frozen=True)
class MigrationRow:
    name: str
    kind: str  # a KINDS key, "same" (every axis graded alike) or "differs"
    torchscript: str  # the four axes' badges
    dynamo: str
    documented: str  # the retired listing's claim: "since opset N" or "no"
    #: "contradicted", "other-mode" (nothing exported, but measured only in a mode the claim
    #: is not about), "unlisted" (exports though the listing omits it) or ""
    claim: str
    exported: tuple[int, int, int]  # examples TorchScript exported, dynamo exported, drawn
    pair: Pair | None
    #: the modes the operator's specs held it to, where every spec held it to one (else ())
    modes: tuple[str, ...] = ()


@dataclass(frozen=True)
class MigrationView:
    measured: bool  # the artifact has the torchscript target, measured
    absent: str  # why the target is absent from this pin set ("" when measured or not asked)
    torch: str
    opset: int
    dynamo_opset: int
    rows: tuple[MigrationRow, ...]
    lists: tuple[tuple[str, str, str, tuple[MigrationRow, ...]], ...]  # key, heading, says, rows
    contradicted: tuple[MigrationRow, ...]
    unlisted: tuple[MigrationRow, ...]
    counts: Mapping[str, int]
    #: claims not checked: nothing exported, measured only in another mode
    other_mode: tuple[MigrationRow, ...] = ()


def _exports(g: Grade | None) -> bool:
    return g in _EXPORTS


def kind_of(ts: Grades, dynamo: Grades) -> str:
    """Which list an operator falls in, from its two grades."""
    if _exports(ts.export) and not _exports(dynamo.export):
        return "lose"
    if _exports(dynamo.export) and not _exports(ts.export):
        return "gain"
    if _exports(ts.export) and _exports(dynamo.export):
        if _exports(ts.runtime) != _exports(dynamo.runtime):
            return "runs"
        if _exports(ts.runtime) and _exports(ts.numerics) != _exports(dynamo.numerics):
            return "matches"
    same = all(getattr(ts, a) == getattr(dynamo, a) for a in AXES)
    return "same" if same else "differs"


def _axis(kind: str, ts: Grades, dynamo: Grades) -> tuple[str, str] | None:
    """(axis, worse exporter's target) the pair shows, for a listed kind."""
    if kind == "lose":
        return "export", STOCK
    if kind == "gain":
        return "export", TORCHSCRIPT
    if kind in ("runs", "matches"):
        axis = "runtime" if kind == "runs" else "numerics"
        return axis, (STOCK if _exports(getattr(ts, axis)) else TORCHSCRIPT)
    return None


def _examples(view: TargetResult, specs: Iterable[str]) -> tuple[int, int]:
    """(exported, drawn) examples of the operator's specs (invalid draws not counted)."""
    exported = drawn = 0
    for name in specs:
        result = view.specs.get(name)
        if result is None:
            continue
        for stage, n in result.stages.items():
            if stage is Stage.INVALID:
                continue
            drawn += n
            if stage.exported:
                exported += n
    return exported, drawn


def _failing(view: TargetResult, specs: Iterable[str], stages: frozenset[Stage]):
    """(spec, failure group) of `specs` at `stages`, and failing counts per (dtype, rank)."""
    groups: list[tuple[str, FailureGroup]] = []
    per: defaultdict[tuple[str, int], int] = defaultdict(int)
    for name in specs:
        result = view.specs.get(name)
        for g in (result.failures if result is not None else ()):
            if g.stage in stages:
                groups.append((name, g))
                per[g.dtype, g.rank] += g.count
    return groups, per


def _reached(view: TargetResult, spec: str, dtype: str, rank: int) -> bool:
    result = view.specs.get(spec)
    return result is not None and result.outcomes is not None and any(
        c.dtype == dtype and c.rank == rank and c.stage is not Stage.INVALID
        for c in result.outcomes)


def _pair(stock: TargetResult, ts_view: TargetResult, specs: tuple[str, ...], axis: str,
          worse: str, scripts: Scripts | None) -> Pair | None:
    calls = {STOCK: "dynamo=True", TORCHSCRIPT: "dynamo=False"}
    return pair({STOCK: stock, TORCHSCRIPT: ts_view}, calls, specs, axis, worse,
                "dynamo" if behaviour(worse).dynamo else "TorchScript", scripts)


def pair(views: Mapping[str, TargetResult], calls: Mapping[str, str], specs: tuple[str, ...],
         axis: str, worse: str, said: str, scripts: Scripts | None) -> Pair | None:
    """The smallest example the target `worse` fails on `axis` among `specs`, preferring one
    where the other target of `views` (two, by name) passed every example of that dtype and
    rank; with a snippet per target, in the order of `views`, titled by its `calls` (how its
    export is called); `said`: how the page names the worse one."""
    better = next(name for name in views if name != worse)
    groups, _ = _failing(views[worse], specs, FAILS[axis])
    _, against = _failing(views[better], specs, FAILS[axis])
    if not groups:
        return None

    def rank(item):
        spec, g = item
        clean = against.get((g.dtype, g.rank), 0) == 0 and _reached(views[better], spec, g.dtype, g.rank)
        return (not clean, g.size, len(g.example), g.example, spec), clean
    (spec, g), clean = min(((item, rank(item)[1]) for item in groups), key=lambda p: rank(p[0])[0])
    repros = []
    for target in views:
        title = (f"{calls[target]}: {g.example} (spec {spec}); "
                 f"{'fails at ' + g.stage.value if target == worse else 'passes ' + axis}")
        code = scripts(spec, g.example, False, unless_stock(target), title) \
            if scripts else None
        repros.append(Repro(title, code or NEEDS_CATALOG + snippet(
            spec, g.example, translations=unless_stock(target))))
    return Pair(spec, g.example, axis, said, g.stage.value, g.error, clean, tuple(repros))


#: the mode the retired listing's claims are about: the TorchScript exporter's default
#: (``training=TrainingMode.EVAL``)
CLAIMED_MODE = "inference"


def held_to(view: TargetResult, specs: Iterable[str]) -> tuple[str, ...]:
    """The modes `specs` held their operator to, sorted; () when any spec held it to none
    (its draws reach every mode) or no result is recorded."""
    modes = set()
    for name in specs:
        result = view.specs.get(name)
        if result is None or not result.mode:
            return ()
        modes.add(result.mode)
    return tuple(sorted(modes))


def build(artifact: Artifact | None, claims: Mapping[str, int], *,
          scripts: Scripts | None = None, listed: Iterable[str] | None = None) -> MigrationView:
    """The view from `artifact` (None or without the target: an empty view saying so);
    `claims`: the retired listing's operator -> opset; `listed`: the operators the support
    page lists (default every operator both targets measured)."""
    ts_view = artifact.target(TORCHSCRIPT) if artifact is not None else None
    absent = ts_view.absent if ts_view is not None else ""
    if artifact is None or ts_view is None or absent:
        return MigrationView(False, absent, artifact.fingerprint.torch if artifact else "", 0,
                             artifact.fingerprint.opset if artifact else 0, (), (), (), (), {})
    translations = ts_view.entry
    assert isinstance(translations, ExporterEntry)  # the torchscript target's entry
    names = sorted(set(artifact.operators) & set(ts_view.operators))
    if listed is not None:
        keep = set(listed)
        names = [n for n in names if n in keep]
    rows = []
    for name in names:
        d: OperatorResult = artifact.operators[name]
        t: OperatorResult = ts_view.operators[name]
        kind = kind_of(t.grades, d.grades)
        axis = _axis(kind, t.grades, d.grades)
        pair = _pair(artifact.stock, ts_view, d.specs, *axis, scripts) if axis else None
        opset = claims.get(name)
        claim = ""
        modes = held_to(ts_view, t.specs)
        if opset is not None and opset <= translations.opset and t.grades.export is Grade.NONE:
            claim = "contradicted" if CLAIMED_MODE in modes or not modes else "other-mode"
        elif opset is None and _exports(t.grades.export):
            claim = "unlisted"
        ts_n, drawn = _examples(ts_view, t.specs)
        dy_n, _ = _examples(artifact.stock, d.specs)
        rows.append(MigrationRow(
            name, kind, glyph_cell(t.grades), glyph_cell(d.grades),
            f"since opset {opset}" if opset is not None else "no", claim, (ts_n, dy_n, drawn), pair,
            modes))
    lists = tuple((key, heading, says, tuple(r for r in rows if r.kind == key))
                  for key, (heading, says) in KINDS.items())
    counts = {key: len(found) for key, _, _, found in lists}
    counts |= {"operators": len(rows), "same": sum(r.kind == "same" for r in rows),
               "differs": sum(r.kind == "differs" for r in rows),
               "contradicted": sum(r.claim == "contradicted" for r in rows),
               "unlisted": sum(r.claim == "unlisted" for r in rows),
               "other-mode": sum(r.claim == "other-mode" for r in rows),
               "claimed": sum(r.documented != "no" for r in rows)}
    return MigrationView(True, "", translations.torch, translations.opset,
                         artifact.fingerprint.opset, tuple(rows), lists,
                         tuple(r for r in rows if r.claim == "contradicted"),
                         tuple(r for r in rows if r.claim == "unlisted"), counts,
                         tuple(r for r in rows if r.claim == "other-mode"))

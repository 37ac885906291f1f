"""Diff reports: markdown for the pull-request comment and JSON for machines."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from .artifact import STOCK, Artifact
from .bot import GITHUB_COMMENT_LIMIT, MARKER
from .diff import KINDS_ORDER as KINDS
from .diff import Diff, Transition, smallest
from .grade import FailureGroup
from .render import cell, environment
from .repro import snippet


@dataclass(frozen=True)
class TransitionView:
    op: str
    axis: str
    old_label: str
    new_label: str
    lines: tuple[str, ...]
    spec: str
    example: str
    snippet: str
    target: str = ""  # empty for the stock exporter


def _label(grade) -> str:
    return grade.value if grade is not None else "unmeasured"


def _spec_of(new: Artifact, t: Transition, g: FailureGroup) -> str:
    for name in new.operators[t.op].specs if t.op in new.operators else ():
        failures = new.specs[name].dynamic_failures if t.axis == "dynamic" else new.specs[name].failures
        if any(f.example == g.example and f.stage == g.stage for f in failures):
            return name
    return t.spec


def _view(t: Transition, new: Artifact | None) -> TransitionView:
    example, spec, code = "", t.spec, ""
    view = new.view(t.target) if new is not None else None
    if t.kind == "regression" and view is not None:
        worst = smallest(t.failures)
        if worst is not None:
            example, spec = worst.example, _spec_of(view, t, worst)
            code = snippet(spec, example, translations="" if t.target == STOCK else t.target,
                           dynamic=t.axis == "dynamic")
    return TransitionView(t.op, t.axis, _label(t.old), _label(t.new),
                          tuple(cell(g.describe(example=False)) for g in t.failures), spec, example,
                          code, "" if t.target == STOCK else t.target)


def to_markdown(d: Diff, new: Artifact | None = None, *, title: str = "grade transitions",
                limit: int = GITHUB_COMMENT_LIMIT, history: str = "") -> str:
    """`history`: a link to the history view, shown under the counts."""
    counts = Counter(t.kind for t in d.transitions)
    template = environment().get_template("diff.md.j2")
    regressions = [_view(t, new) for t in d.regressions]
    improvements = [_view(t, new) for t in d.improvements]
    others = [(k, [f"`{t.op}`" + ("" if t.kind.endswith("measured") else f" {t.axis}")
                   + ("" if t.target == STOCK else f" (with `{t.target}`)")
                   for t in d.of_kind(k)]) for k in KINDS[2:]]

    def render(regs, imps, other, truncated=False) -> str:
        return template.render(marker=MARKER, title=title, d=d, history=history,
                               counts=[(k, counts[k]) for k in KINDS], regressions=regs,
                               improvements=imps, others=other, truncated=truncated)

    text = render(regressions, improvements, others)
    if len(text) <= limit:
        return text
    # keep regressions first; drop detail until the comment fits
    for keep in range(len(regressions), -1, -1):
        text = render(regressions[:keep], [], [(k, items[:50]) for k, items in others], True)
        if len(text) <= limit:
            return text
    return text[: limit - 200] + "\n\n*Cut at GitHub's comment limit: see the job summary.*\n"


def to_json(d: Diff) -> dict[str, Any]:
    return {
        "fingerprint": {"old": d.old_fingerprint, "new": d.new_fingerprint,
                        "changes": list(d.fingerprint_changes)},
        "counts": {k: len(d.of_kind(k)) for k in KINDS},
        "target_changes": list(d.target_changes),
        "transitions": [{"op": t.op, "axis": t.axis, "old": _label(t.old), "new": _label(t.new),
                         "kind": t.kind, "spec": t.spec, "target": t.target,
                         "failures": [{"dtype": g.dtype, "rank": g.rank, "stage": g.stage.value,
                                       "error": g.error, "count": g.count, "example": g.example}
                                      for g in t.failures]}
                        for t in d.transitions]}

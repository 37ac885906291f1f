"""Diff reports: markdown for the pull-request comment and JSON for machines.

Every string that comes from an artifact (operator, spec and target names,
examples, error lines, fingerprint versions) is data a pull request chose.
It reaches the comment only inside a code span (markdown) or an escaped
``<code>`` element (HTML blocks), where GitHub renders no markup, HTML,
@mention, owner/repo#N reference, link or heading; control characters
become spaces and long strings are cut.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from opsweep.artifact.data import PINS, STOCK, Artifact
from opsweep.artifact.diff import KINDS_ORDER as KINDS
from opsweep.artifact.diff import Diff, Kind, Transition, smallest
from opsweep.artifact.grade import FailureGroup
from opsweep.repro import snippet

#: The sticky comment's marker: the bot edits the one comment of its own that carries it.
MARKER = "<!-- opsweep:onnx-support -->"
GITHUB_COMMENT_LIMIT = 65_536

MAX_SHOWN = 300  # characters of one artifact string shown in the comment
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def _plain(text: object) -> str:
    text = _CONTROL.sub(" ", str(text))
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def code(text: object) -> str:
    """A markdown code span holding `text` verbatim, whatever backticks it contains."""
    text = _plain(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if not text.strip(" ") or text[0] == "`" or text[-1] == "`" or \
        (text[0] == " " and text[-1] == " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def html_code(text: object) -> str:
    """An HTML <code> element holding `text` escaped (for lines inside HTML blocks)."""
    return f"<code>{html.escape(_plain(text), quote=True)}</code>"


def fence(block: str) -> str:
    """A code fence longer than any backtick run inside `block`."""
    return "`" * max(3, max((len(r) for r in re.findall(r"`+", block)), default=0) + 1)


def _environment():
    """The comment's own template environment: no torch needed where the bot publishes."""
    import jinja2
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("opsweep", "templates"), undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters.update(code=code, html_code=html_code, fence=fence)
    return env


def partial_reason(old: Artifact | None, new: Artifact,
                   catalog: frozenset[str] | None = None) -> str:
    """Why `new` cannot stand for a whole sweep ('' when it can): a shard, or an
    artifact that lost specs the committed one measured (`--shard` with `--only`
    merges to a few specs). A spec the new artifact records as absent (its torch does not
    have the operator) is accounted for. With `catalog`, only specs still in it count as lost."""
    if new.broken is not None:  # a pin set that breaks the exporter: a whole result of its own
        return ""
    if new.shard is not None:
        return f"it is shard {new.shard[0]}/{new.shard[1]}, not a merged sweep"
    if old is None:
        return ""
    for target in new.target_names:
        before, after = old.view(target), new.view(target)
        if before is None or after is None:
            continue
        lost = set(before.specs) - set(after.specs) - set(new.absent)
        if catalog is not None:
            lost &= catalog
        if lost:
            shown = ", ".join(sorted(lost)[:5]) + (", ..." if len(lost) > 5 else "")
            where = "" if target == STOCK else f" of target {target}"
            return (f"{len(lost)} spec(s){where} measured before are missing ({shown}): a partial "
                    "sweep (--shard with --only, or a lost shard)")
    return ""


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
    example, spec, snip = "", t.spec, ""
    view = new.view(t.target) if new is not None else None
    if t.kind == Kind.REGRESSION and view is not None:
        worst = smallest(t.failures)
        if worst is not None:
            example, spec = worst.example, _spec_of(view, t, worst)
            snip = snippet(spec, example, translations="" if t.target == STOCK else t.target,
                           dynamic=t.axis == "dynamic")
    return TransitionView(t.op, t.axis, _label(t.old), _label(t.new),
                          tuple(g.describe(example=False) for g in t.failures), spec, example,
                          snip, "" if t.target == STOCK else t.target)


def to_markdown(d: Diff, new: Artifact | None = None, *, title: str = "grade transitions",
                limit: int = GITHUB_COMMENT_LIMIT, history: str = "") -> str:
    """`history`: a link to the history view, shown under the counts."""
    counts = Counter(t.kind for t in d.transitions)
    template = _environment().get_template("diff.md.j2")
    regressions = [_view(t, new) for t in d.regressions]
    improvements = [_view(t, new) for t in d.improvements]
    others = [(k, [code(t.op) + ("" if t.kind.whole_operator else f" {t.axis}")
                   + ("" if t.target == STOCK else f" (with {code(t.target)})")
                   for t in d.of_kind(k)]) for k in KINDS[2:]]

    def render(regs, imps, other, truncated=False) -> str:
        return template.render(marker=MARKER, title=title, d=d, history=history, pins=PINS,
                               counts=[(k, counts[k]) for k in KINDS], regressions=regs,
                               improvements=imps, others=other, truncated=truncated)

    text = render(regressions, improvements, others)
    if len(text) <= limit:
        return text
    # keep regressions first; drop detail until the comment fits: the most regressions that
    # fit, found by bisection (each one kept lengthens the comment)
    def cut(keep: int) -> str:
        return render(regressions[:keep], [], [(k, items[:50]) for k, items in others], True)
    low, high = 0, len(regressions)
    while low < high:
        middle = (low + high + 1) // 2
        if len(cut(middle)) <= limit:
            low = middle
        else:
            high = middle - 1
    text = cut(low)
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

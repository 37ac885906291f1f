"""Diff reports: markdown for the pull-request comment and JSON for machines.

Every string that comes from an artifact (operator, spec and target names,
examples, error lines, fingerprint versions) is data a pull request chose.
It reaches the comment only inside a code span (markdown) or an escaped
``<code>`` element (HTML blocks), where GitHub renders no markup, HTML,
@mention, owner/repo#N reference, link or heading; control characters
become spaces and long strings are cut.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from opsweep.artifact.account import CHANGED_SPEC, NOTHING_MOVED, UNCHANGED, Account
from opsweep.artifact.data import PINS, Artifact
from opsweep.artifact.diff import KINDS_ORDER as KINDS
from opsweep.artifact.diff import Diff, Kind, Transition, smallest
from opsweep.artifact.drift import Drift
from opsweep.artifact.grade import FailureGroup
from opsweep.artifact.models_diff import STATUSES, Failure, ModelsDiff, ModelTransition
from opsweep.artifact.results import TargetResult
from opsweep.page.snippets import snippet
from opsweep.page.templates import code, environment
from opsweep.targets import is_stock, unless_stock

#: The sticky comment's marker: the bot edits the one comment of its own that carries it.
MARKER = "<!-- opsweep:onnx-support -->"
GITHUB_COMMENT_LIMIT = 65_536
#: kinds the comment lists in sections of their own (the rest: operator names per kind)
_APART = (Kind.REGRESSION, Kind.IMPROVEMENT, Kind.MEASURED_ANEW)



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


def _spec_of(new: TargetResult, t: Transition, g: FailureGroup) -> str:
    for name in new.operators[t.op].specs if t.op in new.operators else ():
        failures = new.specs[name].dynamic_failures if t.axis == "dynamic" else new.specs[name].failures
        if any(f.example == g.example and f.stage == g.stage for f in failures):
            return name
    return t.spec


def _view(t: Transition, new: Artifact | None) -> TransitionView:
    example, spec, snip = "", t.spec, ""
    view = new.target(t.target) if new is not None else None
    if t.kind == Kind.REGRESSION and view is not None:
        worst = smallest(t.failures)
        if worst is not None:
            example, spec = worst.example, _spec_of(view, t, worst)
            snip = snippet(spec, example, translations=unless_stock(t.target),
                           dynamic=t.axis == "dynamic")
    return TransitionView(t.op, t.axis, _label(t.old), _label(t.new),
                          tuple(g.describe(example=False) for g in t.failures), spec, example,
                          snip, unless_stock(t.target))


def drift_line(d: Drift) -> str:
    """One drifting cell, every name from the artifact in a code span: "`softmax`
    float16 rank 3: max error 2 → 9 ULP (0.000977 → 0.0044) with `onnxruntime 1.31.1`"."""
    o, n = d.old, d.new
    if o.ulp is not None and n.ulp is not None:
        error = f"{o.ulp} → {n.ulp} ULP ({o.max_abs:.3g} → {n.max_abs:.3g})"
    else:
        error = f"{o.max_abs:.3g} → {n.max_abs:.3g}"
    target = "" if is_stock(d.target) else f" (with {code(d.target)})"
    pins = (" with " + ", ".join(code(p) for p in d.pins.split(", "))) if d.pins \
        else " at unchanged pins"
    return f"{code(d.spec)}{target} {n.dtype} rank {n.rank}: max error {error}{pins}"


def account_lines(account: Account | None) -> list[str]:
    """One line per target: what this regeneration measured again and why, what it carried."""
    lines = []
    for target, a in (account.targets.items() if account else ()):
        why = []
        for reason, n in sorted(a.remeasured.items(), key=lambda item: (-item[1], item[0])):
            named = ""
            if reason in CHANGED_SPEC and a.changed:
                more = a.changed_count - len(a.changed)
                named = " (" + ", ".join(code(s) for s in a.changed) + \
                    (f" and {more} more" if more > 0 else "") + ")"
            why.append(f"{n} {code(reason)}{named}")
        kept = dict(a.reused)
        unchanged = kept.pop(UNCHANGED, 0)
        carried = [f"{unchanged} because {NOTHING_MOVED}"] if unchanged else []
        carried += [f"{n} {code(reason)}" for reason, n in sorted(kept.items())]
        text = f"re-measured {a.measured}" + (f": {'; '.join(why)}" if why else "")
        text += f"; reused {sum(a.reused.values())}" + (f": {'; '.join(carried)}" if carried else "")
        lines.append(f"- {code(target)} {text}{cache_phrase(a.cache)}.")
    return cache_headline(account) + lines


def cache_phrase(counts) -> str:
    """What a target's exports came from: the export cache, or exporting anew."""
    loaded, made, unusable = (counts.get(k, 0) for k in ("loaded", "exported", "unusable"))
    if not (loaded or made):
        return ""
    text = f"; exports: {loaded:,} from the export cache, {made:,} made anew"
    return text + (f" ({unusable:,} cache entries unusable)" if unusable else "")


def cache_headline(account: Account | None) -> list[str]:
    """One line when the pin set moved: which stages this regeneration re-measured, and
    why ("`onnxruntime` moved: runtime and numerics re-measured from 31,000 cached
    models"). An export is served by the cache only when nothing it depends on moved
    (engine.cache), so the counts themselves say which stages were measured again."""
    if account is None or not account.moved:
        return []
    loaded = sum(a.cache.get("loaded", 0) for a in account.targets.values())
    made = sum(a.cache.get("exported", 0) for a in account.targets.values())
    moved = ", ".join(code(m) for m in account.moved)
    if loaded:
        return [f"- {moved} moved: runtime and numerics re-measured from {loaded:,} cached "
                "models" + (f"; {made:,} exports made anew (not in the cache)" if made else
                            " (no export depends on what moved)") + "."]
    if made:
        return [f"- {moved} moved: every stage re-measured ({made:,} exports made)."]
    return []


def to_markdown(d: Diff, new: Artifact | None = None, *, title: str = "grade transitions",
                limit: int = GITHUB_COMMENT_LIMIT, history: str = "",
                account: Account | None = None) -> str:
    """`history`: a link to the history view, shown under the counts; `account`: what the
    regeneration measured again and why, shown under the environment."""
    counts = Counter(t.kind for t in d.transitions)
    template = environment().get_template("diff.md.j2")
    regressions = [_view(t, new) for t in d.regressions]
    improvements = [_view(t, new) for t in d.improvements]
    anew = [_view(t, new) for t in d.measured_anew]
    others = [(k, [code(t.op) + ("" if t.kind.whole_operator else f" {t.axis}")
                   + ("" if is_stock(t.target) else f" (with {code(t.target)})")
                   for t in d.of_kind(k)]) for k in KINDS if k not in _APART]

    drifting = [drift_line(x) for x in d.drift]

    def render(regs, imps, other, truncated=False, new_anew=None, drift=None) -> str:
        return template.render(marker=MARKER, title=title, d=d, history=history, pins=PINS,
                               account=account_lines(account),
                               counts=[(k, counts[k]) for k in KINDS], regressions=regs,
                               improvements=imps, anew=anew if new_anew is None else new_anew,
                               others=other, truncated=truncated,
                               drift=drifting if drift is None else drift)

    text = render(regressions, improvements, others)
    if len(text) <= limit:
        return text
    # keep regressions first; drop detail until the comment fits: the most regressions that
    # fit, found by bisection (each one kept lengthens the comment)
    def cut(keep: int) -> str:
        return render(regressions[:keep], [], [(k, items[:50]) for k, items in others], True,
                      anew[:50], drifting[:50])
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
                        for t in d.transitions],
        "drift": [{"spec": x.spec, "target": x.target, "dtype": x.new.dtype, "rank": x.new.rank,
                   "old": {"max_abs": x.old.max_abs, "ulp": x.old.ulp},
                   "new": {"max_abs": x.new.max_abs, "ulp": x.new.ulp},
                   "growth": None if x.growth == float("inf") else x.growth,
                   "pins": x.pins} for x in d.drift]}


# --- "Models": the project's [tool.opsweep] models, their verdict transitions ---------------

MODELS_HEADING = "### Models"
_STATUS_WORDS = {"regression": "**regression**", "lost": "**lost**"}


def _aten(op: str) -> str:
    return op if "::" in op else f"aten::{op}"


def failure_words(f: Failure, dynamic: bool = False) -> str:
    """Where a model fails, as the record says: "first diverging node `n` (`aten::op`)",
    "fails in `no-translation` at node `n` (`aten::op`): `the error`"."""
    op = code(_aten(f.op)) if f.op else ""
    if f.stage == "numerics" and not dynamic:
        if f.node:
            return f"first diverging node {code(f.node)}" + (f" ({op})" if op else "")
        return "no single node diverges first" + (f": {code(f.error[:160])}" if f.error else "")
    where = f" at node {code(f.node)}" + (f" ({op})" if op else "") if f.node else \
        f" at {op}" if op else ""
    text = f"fails in {code(f.stage)}{where}" + (f": {code(f.error[:160])}" if f.error else "")
    return f"with its dynamic shapes, {text}" if dynamic else text


def _value(v: str | None) -> str:
    return "—" if v is None else v


def _was(t: ModelTransition) -> str:
    old = [f"{a.axis} {a.old}" for a in t.axes if a.old is not None]
    return f" (before: {', '.join(old)})" if old else ""


def transition_line(t: ModelTransition, at: str = "") -> str:
    """One model's transition: "**regression** `resnet50`: numerics pass → **fail** at
    `torch 2.16.0`; first diverging node `convolution_12` (`aten::convolution`)"."""
    head = f"- {_STATUS_WORDS.get(t.status, t.status)} {code(t.name)}" + \
        ("" if is_stock(t.target) else f" with {code(t.target)}")
    if t.removed:
        return f"{head}: no longer checked{_was(t)}"
    if t.lost:
        return f"{head}: machine failure, no verdict{at}: {code(t.lost)}{_was(t)}"
    if t.added:
        moved = ", ".join(f"{a.axis} " + (f"**{a.new}**" if a.new == "fail" else str(a.new))
                          for a in t.axes if a.new is not None) or "not exported"
    else:
        moved = ", ".join(f"{a.axis} {_value(a.old)} → " + (f"**{_value(a.new)}**"
                          if a.kind == "regression" else _value(a.new)) for a in t.axes)
    again = f" (lost to a machine failure before: {code(t.was_lost)})" if t.was_lost else ""
    where = [failure_words(a.where, a.axis == "dynamic") for a in t.axes if a.where is not None]
    return f"{head}{again}: {moved}{at}" + "".join(f"; {w}" for w in dict.fromkeys(where))


def _pins(md: ModelsDiff) -> str:
    """" at `torch 2.16.0`, `onnx 1.23.2`, ...": the new record's pin set ("" if unknown)."""
    return (" at " + ", ".join(code(f"{p} {v}") for p, v in md.pins.items())) if md.pins else ""


def _pin_line(md: ModelsDiff) -> str:
    moved = f" (moved: {', '.join(code(m) for m in md.moved)})" if md.moved else ""
    return f"Checked{_pins(md)}{moved}"


def _counts(md: ModelsDiff) -> str:
    parts = [f"{len(md.of_status(s))} {s}" for s in STATUSES if md.of_status(s)]
    return "; ".join(parts + [f"{md.unchanged} unchanged"])


def _target_lines(md: ModelsDiff) -> list[str]:
    """The targets only one record checked: the new ones counted, the dropped ones named."""
    lines = [f"First checked with {code(name)}: {models} model(s), {failing} failing an axis "
             "(no base verdicts to move from)." for name, models, failing in md.first]
    if md.dropped:
        lines.append("No longer checked with " + ", ".join(code(n) for n in md.dropped) + ".")
    return ["", *lines] if lines else []


def _touching(t: ModelTransition, d: Diff | None, new: Artifact | None) -> list[str]:
    """The operator transitions that touch the operators model `t` uses, with the
    regressions' repro snippets."""
    touching = [x for x in (d.transitions if d else ()) if x.op in t.ops and x.target == t.target]
    if not touching:
        return []
    with_ = "" if is_stock(t.target) else f" with {code(t.target)}"
    lines = ["", f"{code(t.name)} uses {len(touching)} operator(s) whose grade moved{with_}:"]
    for x in touching:
        view = _view(x, new)
        lines.append(f"- {code(x.op)} {x.axis}: {view.old_label} → {view.new_label} ({x.kind})")
        if view.snippet:
            lines += ["", "  ```python", *("  " + s for s in view.snippet.splitlines()), "  ```"]
    return lines


def models_markdown(md: ModelsDiff, d: Diff | None, new: Artifact | None, *,
                    limit: int = 20_000) -> str:
    """The sticky comment's "Models" section, after the operator transitions: each model
    whose verdict moved (artifact.models_diff), regressions first, with where the new
    record says it fails, then the operator transitions that touch the operators those
    models use. Cut to `limit` characters, regressions kept first."""
    at = (" at " + ", ".join(code(f"{p} {md.pins[p]}") for p in md.moved_pins)) \
        if md.moved_pins else ""
    head = [MODELS_HEADING, "", f"{_pin_line(md)}: {_counts(md)}.", *_target_lines(md), ""]
    if not md.transitions:
        head[2] = f"{_pin_line(md)}: every one of the {md.unchanged} models keeps its verdicts."
        return "\n".join(head)
    lines = [transition_line(t, at) for t in md.transitions]
    touching = [x for t in md.transitions if not t.removed for x in _touching(t, d, new)]
    text = "\n".join(head + lines + touching) + "\n"
    if len(text) <= limit:
        return text
    kept = list(lines)
    while kept and len("\n".join(head + kept)) + 120 > limit:
        kept.pop()
    cut = f"*… and {len(lines) - len(kept)} more: the job summary lists every model.*"
    return "\n".join(head + kept + ["", cut]) + "\n"


def models_json(md: ModelsDiff) -> dict[str, Any]:
    """`opsweep diff --json --models`: the models whose verdicts moved, as data."""
    return {"pins": dict(md.pins), "moved": list(md.moved), "unchanged": md.unchanged,
            "counts": {s: len(md.of_status(s)) for s in STATUSES},
            "first": [{"target": n, "models": m, "failing": f} for n, m, f in md.first],
            "dropped": list(md.dropped),
            "transitions": [{"model": t.name, "target": t.target, "status": t.status,
                             "lost": t.lost,
                             "was_lost": t.was_lost,
                             "axes": [{"axis": a.axis, "old": a.old, "new": a.new,
                                       "where": None if a.where is None else asdict(a.where)}
                                      for a in t.axes]} for t in md.transitions]}


def models_first_markdown(md: ModelsDiff, path: str) -> str:
    """The section when the base has no models record yet: one line, what was checked."""
    failing = sum(t.status == "added" and any(a.new == "fail" for a in t.axes)
                  for t in md.transitions)
    lost = len(md.of_status("lost"))
    return (f"{MODELS_HEADING}\n\nNo models record on the base yet ({code(path)}): this run "
            f"checked {md.models} model(s){_pins(md)}, {failing} failing an axis, {lost} lost "
            "to a machine failure; their verdict transitions are shown from the next "
            "regeneration on.\n")


def models_gone_markdown(path: str) -> str:
    """The section when the base has a models record and this run wrote none."""
    return (f"{MODELS_HEADING}\n\nThis run wrote no models record: the committed "
            f"{code(path)} is left as it is (no model was checked at these pins).\n")

"""One model's check: its uses, the table's verdict on each, the prediction those make,
what really happened, and where the two disagree, with what would close the gap.

`to_data` is the JSON (``opsweep check --json``) and the record the main command keeps
beside the artifact for the bot (`opsweep.artifact.checked` reads it); `to_markdown` is
the human summary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from opsweep.artifact.data import Artifact
from opsweep.artifact.numerics import cell_text
from opsweep.check.real import FAIL, NOT_REACHED, PASS, Reality
from opsweep.check.table import (FAILING, FINE, NOT_MEASURED, STATUSES, UNATTRIBUTABLE, Verdict,
                                 lookup)
from opsweep.capture.uses import Capture, Use
from opsweep.check.advice import STATUS_WORDS, advice, failure_line, outcome, repro
from opsweep.artifact.checked import losses
from opsweep.targets import STOCK, TORCHSCRIPT, Kind, of_name

AXES = ("export", "runtime", "numerics", "dynamic")
FINE_P, FAILING_P, UNKNOWN_P = "fine", "failing", "unknown"
COULD_NOT_SAY = "The table could not say"


@dataclass(frozen=True)
class Change:
    """A use whose verdict differs between the artifact and `--against`'s."""

    op: str
    dtype: str
    rank: int
    old: str  # the other artifact's status (and failing stages)
    new: str


@dataclass(frozen=True)
class Report:
    name: str
    source: str
    capture: Capture
    verdicts: tuple[Verdict, ...]
    dynamic: bool  # the model gives dynamic_shapes
    reality: Reality | None = None  # None with --no-export
    against: tuple[Change, ...] | None = None
    fingerprint: dict = field(default_factory=dict)
    #: the target this report's verdicts and real export are of (opsweep.targets' name)
    target: str = STOCK
    #: whether the table measured that target (False: no prediction, only the real export)
    measured: bool = True
    #: the model checked with each other target asked for (`opsweep.check.pertarget`)
    targets: tuple[Report, ...] = ()

    @property
    def prediction(self) -> dict[str, str]:
        if not self.measured:
            return {}
        return predict(self.verdicts, self.dynamic, bool(self.capture.error),
                       bool(self.capture.fallback), bool(self.capture.other))

    @property
    def gaps(self) -> tuple[str, ...]:
        return gaps(self)

    def shown_gaps(self, verbose: bool = False) -> tuple[str, ...]:
        """The gaps a report shows: where the table and the model disagree; where the table
        could not say (what measuring more would close) only with `verbose`."""
        return tuple(g for g in self.gaps if verbose or not g.startswith(COULD_NOT_SAY))

    @property
    def failed(self) -> bool:
        """What makes the command exit 1: the model does not export, run and match (with
        --no-export: a use is measured failing)."""
        if self.reality is None:
            return bool(self.capture.error) or any(v.status == FAILING for v in self.verdicts)
        return not self.reality.ok


def queries_line(c: Capture) -> str:
    """The shape queries of a capture, counted apart from the operator uses."""
    return ("Shape queries (not operator uses, not looked up): "
            + ", ".join(f"{name} ×{n}" for name, n in c.queries))


def other_line(c: Capture, cell: Callable[[str], str] = str) -> str:
    """The calls of a capture no spec can measure: outside aten, and made by no aten
    operator's decomposition (the prediction is unknown while there are any)."""
    return ("Calls no spec measures (outside aten, made by no aten operator's decomposition): "
            + ", ".join(map(cell, c.other)))


def fallback_line(c: Capture) -> str:
    return f"uses from a static capture: the dynamic one failed: {c.fallback}"


def label(v: Verdict) -> str:
    stages = sorted({f.stage for f in v.failures})
    return v.status + (f" ({', '.join(stages)})" if stages else "")


def predict(verdicts: Sequence[Verdict], dynamic: bool, blocked: bool,
            dynamic_blocked: bool = False, untestable: bool = False) -> dict[str, str]:
    """Per axis: failing when a use fails on it, unknown when a use is not measured (or
    unattributable) or the graph calls what no spec measures (`untestable`: a call outside
    aten that no aten operator decomposed into), else fine; the dynamic axis only when the
    model is dynamic, failing when its dynamic capture failed (`dynamic_blocked`: the uses
    are a static capture's)."""
    if blocked:
        return {a: FAILING_P if a == "export" else UNKNOWN_P for a in AXES if a != "dynamic" or dynamic}
    unknown = untestable or any(v.status in (NOT_MEASURED, UNATTRIBUTABLE) for v in verdicts)
    out = {}
    for axis in AXES:
        if axis == "dynamic" and not dynamic:
            continue
        failing = any(f.axis == axis for v in verdicts for f in v.failures) or (
            axis == "export" and any(v.status == FAILING and not v.failures for v in verdicts)) or (
            axis == "dynamic" and dynamic_blocked)
        out[axis] = FAILING_P if failing else UNKNOWN_P if unknown else FINE_P
    return out


def _real(r: Reality) -> dict[str, str]:
    out = {"export": r.export, "runtime": r.runtime, "numerics": r.numerics}
    if r.dynamic is not None:
        out["dynamic"] = r.dynamic
    return out


def _use_of(report: Report, op: str) -> Verdict | None:
    return next((v for v in report.verdicts if v.use.op == op), None)


def gaps(report: Report) -> tuple[str, ...]:
    """Plain sentences where the table's prediction and the real export disagree, each
    naming the spec or argument that would close the gap."""
    r = report.reality
    if r is None:
        return ()
    out = []
    where = f" at node {r.node} (aten::{r.op})" if r.node else f" (aten::{r.op})" if r.op else ""
    real = _real(r)
    for axis, said in report.prediction.items():
        got = real.get(axis)
        if said == FINE_P and got == FAIL:
            v = _use_of(report, r.op) if r.op else None
            fix = (f"{', '.join(v.specs)} passed {v.passed}/{v.measured} at {v.use.dtype} rank "
                   f"{v.use.rank}: it does not draw the arguments this model gives that node; "
                   "a spec (or argument) drawing them would close the gap") if v and v.specs else (
                "a spec measuring the failing operator at this model's dtype and rank would "
                "close the gap")
            out.append(f"The table said {axis} is fine, but the model fails {axis}{where}: "
                       f"{r.error if axis != 'dynamic' else r.dynamic_error}. {fix}.")
        elif said == FAILING_P and got == PASS:
            failing = [v for v in report.verdicts if any(f.axis == axis for f in v.failures)]
            names = ", ".join(f"{v.use.op} {v.use.dtype} rank {v.use.rank} "
                              f"({next(f for f in v.failures if f.axis == axis).example})"
                              for v in failing[:3])
            out.append(f"The table said {axis} fails, but the model passes {axis}: the failing "
                       f"examples ({names}) are cases this model does not reach; the specs draw "
                       "more than the model uses, which is not a gap in the table.")
        elif said == UNKNOWN_P and got in (PASS, FAIL):
            missing = [f"{v.use.op} {v.use.dtype} rank {v.use.rank}" for v in report.verdicts
                       if v.status in (NOT_MEASURED, UNATTRIBUTABLE)]
            missing += [f"{o} (no spec measures it)" for o in report.capture.other]
            names = ", ".join(missing[:4])
            blamed = _use_of(report, r.op) if got == FAIL and r.op else None
            if blamed is not None and blamed.status == FINE:
                out.append(f"The table measured aten::{r.op} fine at {blamed.use.dtype} rank "
                           f"{blamed.use.rank} ({blamed.passed}/{blamed.measured} passed, "
                           f"{', '.join(blamed.specs)}), but the model fails {axis}{where}: "
                           f"{', '.join(blamed.specs)} does not draw the arguments this model "
                           "gives that node; a spec (or argument) drawing them would close "
                           "the gap.")
                continue
            verb = "passes" if got == PASS else "fails"
            out.append(f"{COULD_NOT_SAY} for {axis} ({len(missing)} uses not measured: "
                       f"{names}{', …' if len(missing) > 4 else ''}); the model {verb} {axis}"
                       f"{where if got == FAIL else ''}: measuring those uses would close the gap.")
    return tuple(out)


def _verdict_data(v: Verdict, opset: int) -> dict[str, Any]:
    return {"op": v.use.op, "overload": v.use.overload, "dtype": v.use.dtype,
            "rank": v.use.rank, "count": v.use.count, "node": v.use.node, "status": v.status,
            "why": v.why, "hint": v.hint, "specs": list(v.specs), "passed": v.passed,
            "measured": v.measured,
            "failures": [{**asdict(f), "says": failure_line(v, f), "snippet": repro(f, opset)}
                         for f in v.failures],
            "errors": {spec: cell_text(c) for spec, c in v.errors}}


def target_view(artifact: Artifact, name: str) -> Artifact | None:
    """The artifact as the target called `name` measured it (its results in the stock
    target's place, where `lookup` reads them); None when the artifact has no results of
    that target (not measured, a cell table, an exporter absent at its pins)."""
    measured = artifact.target(name)
    if measured is None or measured.absent:
        return None
    return replace(artifact, results={STOCK: measured})


def _uses(entry: Mapping[str, Any]) -> tuple[Use, ...]:
    return tuple(Use.from_data(u) for u in entry.get("uses") or ())


def _reality(real: Mapping[str, Any] | None) -> Reality | None:
    kept = {f.name for f in fields(Reality)} - {"agreement", "divergence"}  # not re-read
    return None if real is None else Reality(**{k: v for k, v in real.items() if k in kept})


def _rejoin_target(stock: Report, name: str, t: Mapping[str, Any], artifact: Artifact,
                   excluded: Mapping[str, str]) -> dict[str, Any]:
    """Another target's part of a reused entry joined with `artifact` again (its real
    export kept; its uses are the stock capture's, as when it was checked)."""
    view = target_view(artifact, name)
    verdicts = () if view is None else lookup(view, stock.capture.uses, excluded, stock.dynamic)
    report = replace(stock, verdicts=verdicts, reality=_reality(t.get("reality")), against=None,
                     target=name, measured=view is not None, targets=())
    joined = target_data(report)
    return {**t, **{k: joined[k] for k in ("measured", "prediction", "counts", "uses", "gaps",
                                           "failed")}}


def rejoin(entry: Mapping[str, Any], artifact: Artifact, excluded: Mapping[str, str],
           other: Artifact | None = None) -> dict[str, Any]:
    """A record's `entry` joined with `artifact`'s table again: its capture and its real
    export are kept (the pins and the model are those it was checked at, and neither
    depends on the table), its uses' verdicts, counts, prediction, gaps and, with `other`,
    the uses that change verdict against it, are the table's now."""
    uses = _uses(entry)
    dynamic = "dynamic" in (entry.get("prediction") or {})
    verdicts = lookup(artifact, uses, excluded, dynamic)
    c = entry.get("capture") or {}
    capture = Capture(uses, tuple(c.get("other", ())), c.get("error", ""),
                      c.get("capture_seconds", 0.0), c.get("decompose_seconds", 0.0),
                      queries=tuple((c.get("shape_queries") or {}).items()),
                      fallback=c.get("fallback", ""))
    reality = _reality(entry.get("reality"))
    changes = None if other is None else against(verdicts, lookup(other, uses, excluded, dynamic))
    report = Report(entry["name"], entry["source"], capture, verdicts, dynamic, reality, changes,
                    dict(entry.get("fingerprint") or {}))
    data = dict(entry)
    data.update(uses=[_verdict_data(v, opset_of(report)) for v in verdicts],
                counts={s: sum(v.status == s for v in verdicts) for s in STATUSES},
                prediction=report.prediction, gaps=list(report.gaps), failed=report.failed)
    if changes is not None:
        data["against"] = [asdict(x) for x in changes]
    if entry.get("targets"):
        data["targets"] = {name: _rejoin_target(report, name, t, artifact, excluded)
                           for name, t in entry["targets"].items()}
    return data


def opset_of(report: Report) -> int:
    """The opset the model is (or would be) exported at: the table's."""
    return int(report.fingerprint.get("opset") or 0)


def to_data(report: Report) -> dict[str, Any]:
    c = report.capture
    return {
        "name": report.name, "source": report.source, "fingerprint": dict(report.fingerprint),
        "capture": {"error": c.error, "capture_seconds": round(c.capture_seconds, 3),
                    "decompose_seconds": round(c.decompose_seconds, 3), "other": list(c.other),
                    "shape_queries": dict(c.queries), "fallback": c.fallback},
        "uses": [_verdict_data(v, opset_of(report)) for v in report.verdicts],
        "counts": {s: sum(v.status == s for v in report.verdicts) for s in STATUSES},
        "prediction": report.prediction,
        "verdict": None if report.reality is None else _real(report.reality),
        "reality": None if report.reality is None else asdict(report.reality),
        "outcome": [] if report.reality is None else outcome(report.reality),
        "gaps": list(report.gaps), "failed": report.failed,
        **({} if report.against is None else {"against": [asdict(c) for c in report.against]}),
        **({"targets": {t.target: target_data(t) for t in report.targets}} if report.targets
           else {})}


def target_rows(report: Report) -> list[tuple[str, list[str], str]]:
    """Each target the model was checked with, the stock exporter first: (its name, per
    axis the real verdict and the table's prediction, the first line of its failure)."""
    out = []
    for t in (report, *report.targets):
        real = _real(t.reality) if t.reality else {}
        said = t.prediction
        cells = [f"{real.get(a, 'not run')}" + (f" (table: {said[a]})" if a in said else
                                                "" if t.measured else " (table: not measured)")
                 for a in AXES if a != "dynamic" or report.dynamic]
        r = t.reality
        why = "" if r is None or r.ok else (r.error or r.dynamic_error).split("\n")[0][:200]
        out.append((t.target, cells, why))
    return out


def lose_lines(report: Report) -> list[str]:
    """What moving between the TorchScript exporter and dynamo would lose, when the model
    was checked with both (the models page's *What would I lose*, for one model)."""
    seen = {"verdict": _real(report.reality) if report.reality else None,
            "targets": {t.target: {"verdict": _real(t.reality) if t.reality else None}
                        for t in report.targets}}
    found = losses(seen, TORCHSCRIPT, STOCK)
    lost = [x.axis for x in found if not x.to_stock]
    gained = [x.axis for x in found if x.to_stock]
    if not any(of_name(t.target).kind is Kind.TORCHSCRIPT for t in report.targets) or \
            report.reality is None:
        return []
    if not found:
        return ["From TorchScript to dynamo: the same verdict on every axis."]
    return [f"From TorchScript to dynamo: {', '.join(lost) or 'nothing'} lost (passes with "
            f"TorchScript only), {', '.join(gained) or 'nothing'} gained (passes with dynamo "
            "only)."]


def targets_markdown(report: Report) -> list[str]:
    """The per-target table of a report checked with other targets ([] when it was not)."""
    if not report.targets:
        return []
    axes = [a for a in AXES if a != "dynamic" or report.dynamic]
    lines = ["", "| target | " + " | ".join(axes) + " | first failure |",
             "| --- |" + " --- |" * (len(axes) + 1)]
    for name, cells, why in target_rows(report):
        lines.append(f"| {_cell(name)} | " + " | ".join(cells) + f" | {_cell(why) if why else ''} |")
    return lines + [f"\n{line}" for line in lose_lines(report)]


def compact_use(v: Verdict) -> dict[str, Any]:
    """A use as another target's entry keeps it: its cell, the table's status there and its
    failures, without the words and snippets the stock target's entry gives."""
    return {"op": v.use.op, "overload": v.use.overload, "dtype": v.use.dtype,
            "rank": v.use.rank, "count": v.use.count, "node": v.use.node, "status": v.status,
            "passed": v.passed, "measured": v.measured,
            "failures": [{k: getattr(f, k) for k in ("axis", "stage", "error", "spec", "example",
                                                     "count", "dynamic")} for f in v.failures]}


def target_data(report: Report) -> dict[str, Any]:
    """Another target's check in the record: its real verdicts and export, and (when the
    table measured that target) its prediction, counts and uses as that target's table
    answers them."""
    r = report.reality
    return {"measured": report.measured, "prediction": report.prediction,
            "verdict": None if r is None else _real(r),
            "reality": None if r is None else asdict(r),
            "outcome": [] if r is None else outcome(r),
            "counts": {s: sum(v.status == s for v in report.verdicts) for s in STATUSES}
            if report.measured else {},
            "uses": [compact_use(v) for v in report.verdicts] if report.measured else [],
            "gaps": list(report.gaps), "failed": report.failed}


def against(report_verdicts: Iterable[Verdict], other: Iterable[Verdict]) -> tuple[Change, ...]:
    """The uses whose verdict differs between two artifacts (same uses, joined twice)."""
    before = {v.use.key: label(v) for v in other}
    return tuple(Change(v.use.op, v.use.dtype, v.use.rank, before.get(v.use.key, NOT_MEASURED),
                        label(v)) for v in report_verdicts
                 if before.get(v.use.key, NOT_MEASURED) != label(v))


def summary_line(item) -> str | None:
    """The one line a model without a report of its own gets (None for a `Report`): a
    lost model's machine failure, or a reused entry's verdict (an entry of the previous
    record, as data)."""
    if isinstance(item, Report):
        return None
    if isinstance(item, dict):
        verdict = item.get("verdict") or {}
        axes = ", ".join(f"{a} {verdict[a]}" for a in AXES if a in verdict)
        return (f"{item.get('name')} ({item.get('source')}): reused from the previous record "
                f"(same check fingerprint, not checked again): {axes or 'not exported'}")
    return item.line()


def failed(item) -> bool:
    """A report, a lost model or a reused entry: does it make the command exit 1?"""
    return bool(item.get("failed")) if isinstance(item, dict) else bool(item.failed)


def _cell(text: str) -> str:
    return "`" + str(text).replace("`", "'").replace("|", "/").replace("\n", " ") + "`"


def to_markdown(reports: Sequence[Report], table=None, verbose: bool = False) -> str:
    """The reports as markdown; `table` (check.stack.Table): the head naming the measured
    table and the installed stack; `verbose`: the spec author's hints too."""
    lines = [] if table is None else _markdown_head(table)
    for rep in reports:
        brief = summary_line(rep)
        if brief is not None:
            name = rep.get("name") if isinstance(rep, dict) else rep.name
            lines += [f"## {_cell(str(name))}", "", brief, ""]
            continue
        lines += [f"## {_cell(rep.name)}", ""]
        if rep.capture.error:
            lines += [f"Capture failed: {_cell(rep.capture.error)}", ""]
        if rep.capture.fallback:
            lines += [_cell(fallback_line(rep.capture)), ""]
        lines += ["| axis | table predicts | real export |", "| --- | --- | --- |"]
        real = _real(rep.reality) if rep.reality else {}
        for axis, said in rep.prediction.items():
            lines.append(f"| {axis} | {said} | {real.get(axis, 'not run')} |")
        lines += targets_markdown(rep)
        if rep.reality:
            lines += ["", *(f"**{text}**" if i == 0 else text
                            for i, text in enumerate(outcome(rep.reality)))]
        lines += ["", "| operator | dtype | rank | calls | table | what the table says |",
                  "| --- | --- | --- | --- | --- | --- |"]
        order = sorted(rep.verdicts, key=lambda v: (STATUSES.index(v.status), v.use.key))
        for v in order:
            lines.append(f"| {_cell(v.use.op)} | {v.use.dtype} | {v.use.rank} | {v.use.count} | "
                         f"{STATUS_WORDS[v.status]} | {_cell(advice(v, verbose))} |")
        if rep.capture.other:
            lines += ["", other_line(rep.capture, _cell)]
        if rep.capture.queries:
            lines += ["", queries_line(rep.capture)]
        for v in order:
            for f in v.failures:
                lines += ["", _cell(failure_line(v, f)), "", "```python",
                          repro(f, opset_of(rep)).rstrip(), "```"]
        for gap in rep.shown_gaps(verbose):
            lines += ["", f"**Prediction vs reality:** {gap}"]
        if rep.against is not None:
            lines += ["", f"Against the other artifact: {len(rep.against)} uses change verdict"]
            lines += [f"- {_cell(c.op)} at {c.dtype} rank {c.rank}: {c.new} in this table, "
                      f"{c.old} in the other" for c in rep.against]
        lines.append("")
    return "\n".join(lines)


def _markdown_head(table) -> list[str]:
    lines = [f"- **{label}:** {text}" for label, text in table.lines()]
    warning = table.warning()
    return ([f"> **Warning:** {warning}", ""] if warning else []) + lines + [""]


__all__ = ["FAIL", "FINE", "NOT_REACHED", "PASS", "Report", "against", "failed", "summary_line",
           "to_data", "to_markdown"]

"""The sweep's summary, as the command line prints it: a screen at most."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from opsweep.artifact.account import UNCHANGED
from opsweep.artifact.grade import AXES
from opsweep.artifact.results import TargetResult
from opsweep.artifact.specgrade import GapStatus
from opsweep.cli.progress import clock
from opsweep.engine.cache import size
from opsweep.model import Stage

#: The summary's lines stay within this many columns, names of files aside.
SUMMARY_WIDTH = 80
#: Names listed in one summary line before it says "and N more" (the summary fits a screen).
MAX_NAMES = 8
#: A further target's grades, per axis, on one line: these counts, in this order.
COMPACT = ("full", "partial", "none")


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")


def summary(result, out: Path, seconds: float, in_tox_sweep: bool = False,
            cache: Path | None = None) -> str:
    """The sweep's summary: per target, reuse, grades and stages; then what was written
    (and, with the export `cache` directory, what the sweep did with it and its size)."""
    artifact = result.artifact
    fp = artifact.fingerprint
    lines = [(f"opsweep: {len(artifact.specs)} specs, {len(artifact.operators)} aten operators "
              f"in {clock(seconds)}"),
             (f" measured with torch {fp.torch}, opset {fp.opset}, exporter {fp.exporter}, "
              f"profile {artifact.profile}")]
    first = None  # the first target's reuse: a further target's that reads the same says so
    legend = False
    for target, measured in artifact.results.items():
        absent = measured.absent
        if absent:  # an exporter this pin set does not have: one line, no empty grades
            lines.append(f" target {target}: absent from this pin set ({absent})")
            continue
        block, reuse = _target_summary(measured, target,
                                       result.decisions.get(target, {}), first)
        if first and not legend:
            lines.append(f" further targets' grades per axis: {'/'.join(COMPACT)}")
            legend = True
        lines += block
        first = first or (target, reuse)
    if result.resumed:
        lines.append(f"  resumed  {result.resumed} specs from the checkpoint")
    lines += [f"  note: {n}" for n in result.notes]
    if cache is not None:
        lines.append(cache_line(getattr(result, "cache", {}) or {}, cache))
    return "\n".join(lines + _next_steps(out, result.run_log, in_tox_sweep))


def cache_line(counts, directory: Path) -> str:
    """What the sweep did with the export cache, and what the cache holds now."""
    total: Counter[str] = Counter()
    for c in counts.values():
        total.update(c)
    entries, size_bytes = size(directory)
    unusable = f", {total['unusable']} unusable (exported again)" if total["unusable"] else ""
    return (f" cache      {total['loaded']} exports loaded, {total['exported']} made{unusable}; "
            f"{entries} entries, {size_bytes / 2**20:.1f} MB in {directory}")


def _next_steps(out: Path, run_log: Path | None = None, in_tox_sweep: bool = False) -> list[str]:
    lines = [f" wrote      {out} (the artifact)"]
    if run_log:
        lines.append(f" wrote      {run_log} (why each spec was reused or re-measured)")
    if in_tox_sweep:  # its next command renders the pages
        return lines + [" next       tox renders the support page and the history view from it,",
                        "            then `git diff docs/` shows what changed"]
    return lines + [f" next       opsweep render --onnx-report {out}   # the support page",
                    f"            opsweep diff OLD.json {out}   # grade transitions"]


def _wrapped(label: str, items: list[str], width: int = SUMMARY_WIDTH,
             sep: str = "  ") -> list[str]:
    """`  label    a 1  b 2 ...`, continued on indented lines to stay within `width`."""
    lines, line = [], f"  {label:<10}"
    for item in items:
        if len(line) + len(item) + len(sep) > width and line.strip() != label:
            lines.append(line.rstrip())
            line = " " * 12
        line += item + sep
    return lines + [line.rstrip().removesuffix(sep.strip())]


def _stage_counts(counts: Counter) -> list[str]:
    return [f"{s.value} {counts[s.value]}" for s in reversed(Stage) if counts[s.value]]


def _target_summary(measured: TargetResult, target: str, decisions,
                    first: tuple[str, str] | None = None) -> tuple[list[str], str]:
    """A target's lines and its reuse. The first target's: reuse, grades, and what its
    examples and re-exports came to. A further target's (`first` = the first one's name and
    reuse): its grades, and its reuse unless it reads as the first's; its stages are in the
    artifact and on the pages, so that three targets still fit a screen."""
    # the run's decisions, not the artifact's: specs carried from it (--only) were not decided
    decided = {n: d for n, d in decisions.items() if n in measured.specs}
    title, reuse = f" target {target}", _reuse(decided, len(measured.specs) - len(decided))
    shown = f"reuse as for {first[0]}" if first and first[1] == reuse else reuse
    fits = len(title) + len(shown) + 2 <= SUMMARY_WIDTH
    lines = ([f"{title}: {shown}"] if fits
             else [title, *_wrapped("reuse", shown.split("; "), sep="; ")])
    order = ["full", "partial", "none", "blocked", "skipped", "n/a"]
    counts = {axis: Counter((getattr(r.grades, axis).value if getattr(r.grades, axis) else "n/a")
                            for r in measured.operators.values()) for axis in AXES}
    if first:  # one line: full/partial/none per axis (COMPACT), the rest is on the pages
        items = [f"{axis} " + "/".join(str(counts[axis][k]) for k in COMPACT) for axis in AXES]
        line = "  " + "  ".join(items)
        lines += [line] if len(line) <= SUMMARY_WIDTH else [
            "  " + "  ".join(items[:2]), "  " + "  ".join(items[2:])]
        return lines + _spec_notes(measured), reuse
    for axis in AXES:
        lines.append(f"  {axis:<10}" + "  ".join(f"{k} {counts[axis][k]}" for k in order
                                                 if counts[axis][k]))
    stages: Counter = Counter()
    dynamic: Counter = Counter()
    for name in (n for n, d in decided.items() if not d.reuse):
        stages.update({s.value: n for s, n in measured.specs[name].stages.items()})
        dynamic.update({s.value: n for s, n in measured.specs[name].dynamic_stages.items()})
    lines += _wrapped("examples", _stage_counts(stages) or ["none run"])
    if dynamic:
        invalid = Stage.INVALID.value
        share = f"{invalid} {dynamic[invalid]} ({dynamic[invalid] / sum(dynamic.values()):.1%})"
        lines += _wrapped("re-export", [share if item.startswith(f"{invalid} ") else item
                                        for item in _stage_counts(dynamic)])  # the dynamic axis
    return lines + _spec_notes(measured), reuse


def _reuse(decided, carried: int) -> str:
    """`reused 685 (nothing moved), re-measured 83; 81 rotation; 2 machine failure`: the
    reasons a spec was measured again, and why the others were not when that was not
    simply that nothing that could change them moved."""
    reasons = Counter(d.why for d in decided.values() if not d.reuse)
    kept = Counter(d.why for d in decided.values() if d.reuse)
    unchanged = kept.pop(UNCHANGED, 0)
    text = (f"reused {unchanged + sum(kept.values())}"
            + (" (nothing moved)" if unchanged and not kept else "")
            + f", re-measured {sum(reasons.values())}"
            + "".join(f"; {n} {why}" for why, n in sorted(reasons.items())))
    if kept:
        text += f"; {unchanged} reused as nothing moved" if unchanged else ""
        text += "".join(f"; {n} reused: {why}" for why, n in sorted(kept.items()))
    return text + (f"; {carried} not selected, carried over" if carried else "")


def _spec_notes(measured) -> list[str]:
    lines = []
    invalid = sorted(n for n, r in measured.specs.items() if Stage.INVALID in r.stages)
    if invalid:
        lines.append(f"  spec bugs: PyTorch rejected drawn examples of {_names(invalid)}")
    lost = sorted(n for n, r in measured.specs.items() if Stage.LOST in r.stages)
    if lost:
        lines.append(f"  lost: workers died or timed out before exporting examples of "
                     f"{_names(lost)} (no verdict either way)")
    stale = sorted(f"{n} ({r.gap.status})" for n, r in measured.specs.items()
                   if r.gap is not None and not GapStatus(r.gap.status).holds)
    if stale:
        lines.append(f"  known-gap notes that no longer hold: {_names(stale)}")
    closed = sorted(n for n, r in measured.specs.items()
                    if r.gap and r.gap.status == GapStatus.CLOSED)
    if closed:
        lines.append(f"  known gaps this target closes: {_names(closed)}")
    return lines

"""Score a measured table on the public model set (examples/models): `opsweep check --json` of
every model against the artifact, then, counted from what check reports,

- the share of operator uses the table measured at their (dtype, rank) cell (issue 50's
  target: 95%): a use is one row of a model's report, an (operator, dtype, rank) the model
  calls, measured when the table says "measured fine" or "measured failing" there;
- the share of models whose prediction is definite (fine or failing, not unknown) on the
  export axis and on the runtime axis (target: 80%), and how often a definite prediction
  matched the real export;
- per axis, the precision and recall of "the table predicts this model fails" against the
  real verdict, and every miss with its reason.

All of it is counted by `opsweep.artifact.scoring` (the models page shows the same score).

    HF_HUB_OFFLINE=1 python scripts/score_models.py [--artifact FILE] [--only NAME...]
                                                    [--no-export] [--records FILE]
    python scripts/score_models.py --list          # the set's specs, for opsweep check
    python scripts/score_models.py --from-records records.json   # score saved reports

The shares come from the table lookup alone, so `--no-export` (check's own option, several
times faster) gives them too; only the match with the real export needs the export.
Models are checked `--batch` at a time in one `opsweep check` process each; a batch whose
process does not end with a report (a crash, a model that cannot be built) is checked
again one model per process, and a model that still yields none is counted as such.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from opsweep.artifact import scoring
from opsweep.artifact.checked import target_entry, target_names
from opsweep.artifact.scoring import Score

ROOT = Path(__file__).resolve().parents[1]
ARTIFACT = ROOT / "docs" / "onnx_support_measured.json"
TARGET_USES, TARGET_MODELS = 95.0, 80.0


def model_set():
    """The examples/models package, imported from its directory whatever the path holds."""
    here = ROOT / "examples" / "models"
    spec = importlib.util.spec_from_file_location("opsweep_public_models", here / "__init__.py",
                                                  submodule_search_locations=[str(here)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def chosen(names, patterns) -> list[str]:
    if not patterns:
        return list(names)
    picked = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    if not picked:
        raise SystemExit(f"score_models: --only {' '.join(patterns)} matches no model")
    return picked


def run_check(specs: list[str], artifact: Path,
              options: tuple[str, ...] = ()) -> tuple[list[dict] | None, str]:
    """`opsweep check --json` of `specs` in its own process: the models' reports, or None
    and the last line it wrote to stderr when it ended without one."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "opsweep", "check", *specs, "--artifact",
                           str(artifact), "--json", *options], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=False)
    if done.returncode in (0, 1):
        try:
            return json.loads(done.stdout)["models"], ""
        except (ValueError, KeyError):
            pass
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    return None, f"exit {done.returncode}: {lines[-1] if lines else 'no output'}"


def save(path: Path | None, reports: list[dict], lost: dict[str, str]) -> None:
    """The reports so far, to `path` (atomically: a run cut short keeps its batches)."""
    if path is not None:
        partial = path.with_name(path.name + ".part")
        partial.write_text(json.dumps({"models": reports, "lost": lost}, indent=1) + "\n",
                           "utf-8")
        os.replace(partial, path)


def check_all(names: list[str], specs: dict[str, str], artifact: Path, batch: int,
              records: Path | None = None,
              options: tuple[str, ...] = ()) -> tuple[list[dict], dict[str, str]]:
    """Every model's report, in batches, saved to `records` after each; (reports, model ->
    why it has none)."""
    reports, lost = [], {}
    for start in range(0, len(names), batch):
        part = names[start:start + batch]
        began = time.perf_counter()
        got, why = run_check([specs[n] for n in part], artifact, options)
        if got is None and len(part) > 1:
            got = []
            for name in part:
                one, why = run_check([specs[name]], artifact, options)
                got += one or []
                if one is None:
                    lost[name] = why
        elif got is None:
            lost[part[0]] = why
        reports += got
        save(records, reports, lost)
        print(f"  {start + len(part)}/{len(names)} checked ({time.perf_counter() - began:.0f} s"
              f" for {', '.join(part)})", file=sys.stderr, flush=True)
    return reports, lost


def pct(part: int, whole: int) -> str:
    return f"{part} of {whole} ({100.0 * part / whole:.1f}%)" if whole else "0 of 0"


def use_lines(s: Score) -> list[str]:
    out = [f"operator uses measured at their (dtype, rank): {pct(s.measured, s.uses)}"
           f"   [target {TARGET_USES:.0f}%]",
           f"  weighted by calls: {pct(s.measured_calls, s.calls)}",
           "  by status: " + ", ".join(f"{st} {n}" for st, n in sorted(s.statuses.items()))]
    out += [f"  at {dtype}: {pct(*counts)}" for dtype, counts in s.by_dtype.items()]
    return out


def axis_lines(s: Score, axis: str) -> list[str]:
    a = s.axis(axis)
    scored = a.true_positive + a.false_positive + a.false_negative + a.true_negative
    lines = [f"models with a definite {axis} prediction: {pct(a.definite, a.predicted)}"
             f"   [target {TARGET_MODELS:.0f}%]",
             "  predicted: " + ", ".join(f"{p} {n}" for p, n in sorted(a.counts.items()))]
    if not s.exported:
        return lines + ["  against the real export: not exported (--no-export)"]
    return lines + [
        f"  definite and matching the real export: {pct(a.definite_right, a.definite_real)}",
        f"  \"the table predicts it fails\": precision {_share(a.precision)}, recall "
        f"{_share(a.recall)} ({a.true_positive} predicted and failing, {a.false_positive} "
        f"predicted but passing, {a.false_negative} failing unpredicted, of {scored} "
        f"scored{f'; {a.not_reached} not reached' if a.not_reached else ''})"]


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{100.0 * value:.1f}%"


def miss_lines(s: Score) -> list[str]:
    if not s.misses:
        return []
    return [f"misses ({len(s.misses)}):"] + [
        f"  {m.model} {m.axis}: {m.kind} (predicted {m.predicted}), {m.reason}: {m.detail}"
        for m in s.misses]


def missing_lines(s: Score, top: int) -> list[str]:
    """The cells most often missing across the set: where measuring would help most."""
    if not s.unmeasured:
        return []
    common = sorted(s.unmeasured.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [f"most common unmeasured cells (of {len(s.unmeasured)} distinct), in how many "
            "models:"] + [f"  {op} {dtype} rank {rank}: {n}" for (op, dtype, rank), n in common]


def score(reports: list[dict], lost: dict[str, str], top: int = 10) -> str:
    s = scoring.score(reports)
    captured = [r for r in reports if not (r.get("capture") or {}).get("error")]
    verdict = Counter("fails" if r["failed"] else "passes" for r in reports
                      if r.get("verdict") is not None)
    exported = sum(r.get("verdict") is not None for r in reports)
    lines = [f"models checked: {len(reports)} ({len(reports) - len(captured)} not captured)",
             f"  exported for real: {exported} ({verdict['passes']} export, run and match; "
             f"{verdict['fails']} do not)" if exported else
             "  exported for real: none (--no-export: the table's predictions alone)"]
    lines += [f"  no report for {name}: {why}" for name, why in sorted(lost.items())]
    lines += use_lines(s) + axis_lines(s, "export") + axis_lines(s, "runtime") + \
        axis_lines(s, "numerics") + axis_lines(s, "dynamic")
    return "\n".join(lines + miss_lines(s) + missing_lines(s, top) + target_lines(reports))


def target_lines(reports: list[dict]) -> list[str]:
    """The same precision and recall per other target the reports were checked with
    (`opsweep check --targets`), each target's real verdicts against its own table's
    prediction; a target the table did not measure has no prediction to score."""
    lines = []
    for name in target_names(reports)[1:]:
        seen = [e for r in reports if (e := target_entry(r, name)) is not None]
        if not any(e.get("measured", True) for e in seen if not e.get("lost")):
            lines.append(f"with target {name}: {len(seen)} models checked; the table does not "
                         "measure this target, nothing to score")
            continue
        s = scoring.score([e for e in seen if e.get("measured", True)])
        lines.append(f"with target {name} ({s.models} models):")
        lines += ["  " + ln for a in scoring.AXES for ln in axis_lines(s, a)]
        lines += ["  " + ln for ln in miss_lines(s)]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifact", type=Path, default=ARTIFACT,
                        help="the measured table (default: the committed artifact)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="the models to check, by name or glob (default: the whole set)")
    parser.add_argument("--batch", type=int, default=6,
                        help="models per opsweep check process (default: 6)")
    parser.add_argument("--records", type=Path,
                        help="also write the reports here (JSON), after each batch")
    parser.add_argument("--from-records", type=Path,
                        help="score the reports of an earlier --records instead of checking")
    parser.add_argument("--no-export", action="store_true",
                        help="the table lookup alone (opsweep check --no-export): the shares "
                        "need no real export, only the match with reality does")
    parser.add_argument("--list", action="store_true", help="print the set's specs and stop")
    args = parser.parse_args(argv)
    if args.from_records:
        saved = json.loads(args.from_records.read_text("utf-8"))
        print(score(saved["models"], saved.get("lost", {})))
        return 0
    models = model_set()
    names = chosen(models.MODELS, args.only)
    specs = {n: models.spec(n, ROOT) for n in names}
    if args.list:  # relative to the current directory, where opsweep check will run
        print("\n".join(models.spec(n) for n in names))
        return 0
    if models.MISSING:
        print("left out (package not installed): " + ", ".join(
            f"{f} ({p})" for f, p in models.MISSING.items()), file=sys.stderr)
    began = time.perf_counter()
    reports, lost = check_all(names, specs, args.artifact.resolve(), args.batch, args.records,
                              ("--no-export",) if args.no_export else ())
    seconds = time.perf_counter() - began
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)  # the check processes' own time
    shown = args.artifact.resolve()
    print(f"artifact: {shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown}")
    print(score(reports, lost))
    used = cpu.ru_utime + cpu.ru_stime
    print(f"time: {seconds:.0f} s for {len(names)} models ({seconds / len(names):.1f} s a model); "
          f"CPU of the check processes {used:.0f} s ({used / len(names):.1f} s a model)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

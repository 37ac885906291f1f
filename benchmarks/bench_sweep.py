"""Sweep throughput for the main command's full work, measured side by side in
one run on the same drawn examples (not a timed test).

The main command measures every spec for two targets (the stock exporter and the
example translation table), each with the dynamic axis. Here, on a sample of specs
spread over the families:

  plain     one process, public ``torch.onnx.export(dynamo=True)`` calls: per
            example and target, one static export and one dynamic re-export (what a
            hand-written loop does); timed on the first --plain-examples of each spec;
  previous  the engine before the second-target shortcut: one export per signature,
            the fast path, --jobs workers, the custom target measured in full, every
            program decomposed (``Tuning(shortcut=False, skip=False)``);
  shortcut  with the shortcut: the custom target measured only where its table can
            change the outcome, references computed once per group;
  skip      also skipping the decomposition's re-trace where it must give back the
            program it was given (``fastpath.decomposes_to_itself``);
  single    also tracing a module once, straight to the decomposed graph, where the last
            export of its kind was re-traced (``FastExporter.export``);
  phases    also with the workers' phase files in a memory-backed directory
            (``engine.pool.phase_root``) instead of the disk's temporary directory;
  new       also recording no Python stack trace per traced node (torch's
            ``torch.fx.config.do_not_emit_stack_traces``, ``Tuning.traces``).

Every row before "phases" writes its phase files to disk, and every row before "new"
records stack traces, as the engines they stand for did.

Prints examples/s (an example measured for one target counts once), the ratio to
plain, whether previous and new give identical results per target, a per-stage
time breakdown of the new path (inline, --breakdown specs), the full-catalog time
extrapolated from the sample by exports (signatures in the committed artifact) and
the peak resident memory of a worker.

    python benchmarks/bench_sweep.py [--jobs 2] [--specs N ...]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

from opsweep.artifact import data as art
from opsweep.artifact.data import STOCK
from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.catalog.load import load_catalog
from opsweep.engine.adapter import Exporter, quiet_exporter
from opsweep.engine.sweepconfig import RECYCLE, SweepConfig, Tuning
from opsweep.engine.group import run_group
from opsweep.sweep.driver import Job, measure
from opsweep.sweep.reuse import spec_digest
from opsweep.targets import configured

ROOT = Path(__file__).resolve().parents[1]
TABLE = "examples/custom_translations.py:TABLE"
#: 40 specs over the families, with the six the example table touches
SAMPLE = ["sin", "relu", "add", "mul", "sum", "amax", "softmax", "cat", "index_select", "conv2d",
          "layer_norm", "mm", "where", "eq", "cdist", "equal", "hypot", "fmax", "fmin",
          "detach_copy", "fft_fftfreq", "fft_rfftfreq", "frobenius_norm", "pairwise_distance",
          "linalg_vecdot", "cross_entropy", "gelu", "max_pool2d", "batch_norm", "embedding",
          "sort", "cumsum", "scatter_add", "gather", "flip", "reshape", "atan2", "logsumexp",
          "nll_loss", "lstm_cell"]


def sweep(specs, profile, jobs: int, shortcut: bool = True, skip: bool = True,
          recycle: int = RECYCLE, preload: bool = True, single: bool = True,
          memory: bool = True, traces: bool = False):
    """(results by (target, spec), examples measured over both targets, seconds)."""
    results = {}
    tuning = Tuning(shortcut=shortcut, skip=skip, single=single, traces=traces,
                    phases_in_memory=memory)
    config = SweepConfig(profile, jobs=jobs, targets=configured([TABLE]), recycle=recycle,
                         preload=preload, tuning=tuning)
    targets = (STOCK, _target_name())
    start = time.perf_counter()
    measure([Job(s, spec_digest(s), targets) for s in specs], config,
            lambda job, t, r: results.__setitem__((t, job.spec.name), r))
    return results, sum(r.examples for r in results.values()), time.perf_counter() - start


def _target_name() -> str:
    from opsweep.engine.translations import load
    return load(TABLE)[0].name


def plain(specs, profile, per_spec: int):
    """Examples measured (per target) and seconds, public call per example, both
    targets, each example re-exported with the dynamic axis."""
    from opsweep.engine.translations import load
    quiet_exporter()
    exporters = [Exporter(), Exporter(load(TABLE)[1])]
    n, start = 0, time.perf_counter()
    for spec in specs:
        for example in draw_examples(spec, profile)[:per_spec]:
            for exporter in exporters:
                run_group(spec, [example], exporter, dynamic=True)
                n += 1
    return n, time.perf_counter() - start


def breakdown(specs, profile) -> dict[str, float]:
    """Seconds per stage of the new path, inline (one process), by wrapping the
    exporter's steps and the runner's."""
    import onnx
    from torch.onnx._internal.exporter import _capture_strategies, _core, _onnx_program

    from opsweep.engine import group as targets_of_group
    from opsweep.engine import runner
    from opsweep.engine.phase import ignore
    from opsweep.engine.pool import inline_exporters
    from opsweep.engine.worker import wanted_outcomes
    spent: dict[str, float] = defaultdict(float)

    def timed(owner, name, stage):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - start
        setattr(owner, name, wrapper)
        return owner, name, original

    from torch.onnx._internal.exporter import _fx_passes
    config = SweepConfig(profile, jobs=0, targets=configured([TABLE]))
    exporters = inline_exporters(config)  # the fast path's decomposition is installed now
    patches = [timed(_capture_strategies.CaptureStrategy, "__call__", "capture"),
               timed(_fx_passes, "decompose_with_registry", "decomposition"),
               timed(_core, "_exported_program_to_onnx_program", "translation"),
               timed(_onnx_program.ONNXProgram, "optimize", "optimize"),
               timed(onnx.checker, "check_model", "checker"),
               timed(runner, "make_session", "session"),
               timed(runner, "run_session", "runs"),
               timed(runner, "choose_plan", "references"),
               timed(runner, "_dynamic_reference", "references"),
               timed(targets_of_group, "references_of", "references")]
    start = time.perf_counter()
    try:
        for spec in specs:
            for group in group_by_signature(draw_examples(spec, profile)):
                wanted_outcomes(spec, group, exporters, (STOCK, _target_name()), ignore, True,
                                config.tuning)
    finally:
        for owner, name, original in patches:
            setattr(owner, name, original)
    total = time.perf_counter() - start
    spent["other (draws, comparison, export glue)"] = total - sum(spent.values())
    spent["total"] = total
    return dict(spent)


def committed_signatures() -> dict[str, int]:
    committed = art.load(ROOT / "docs" / "onnx_support_measured.json")
    return {n: r.signatures for n, r in committed.specs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--specs", nargs="+", default=SAMPLE)
    parser.add_argument("--plain-examples", type=int, default=1,
                        help="examples per spec timed through the plain loop")
    parser.add_argument("--breakdown", type=int, default=8,
                        help="specs of the sample timed inline for the per-stage breakdown")
    args = parser.parse_args()
    quiet_exporter()
    catalog = load_catalog(check_draws=False)
    specs = catalog.select(args.specs)
    profile = PROFILES["ci"]
    families = sorted({s.family for s in specs})
    print(f"specs: {len(specs)} over {len(families)} families ({', '.join(families)}), "
          f"profile ci, targets: {STOCK} + {TABLE}, dynamic axis on, {args.jobs} workers")

    before = {"memory": False, "traces": True}  # the engines before both
    previous, prev_n, prev_s = sweep(specs, profile, args.jobs, shortcut=False, skip=False,
                                     single=False, **before)
    short, short_n, short_s = sweep(specs, profile, args.jobs, skip=False, single=False,
                                    **before)
    skipped, skip_n, skip_s = sweep(specs, profile, args.jobs, single=False, **before)
    single, single_n, single_s = sweep(specs, profile, args.jobs, **before)
    phases, phases_n, phases_s = sweep(specs, profile, args.jobs, traces=True)
    new, new_n, new_s = sweep(specs, profile, args.jobs)
    worker_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    plain_n, plain_s = plain(specs, profile, args.plain_examples)
    plain_rate = plain_n / plain_s

    def line(label, n, s, what):
        print(f"{label:9}: {n:5} examples in {s:7.1f}s = {n / s:7.2f} examples/s "
              f"= {(n / s) / plain_rate:5.1f}x plain ({what})")
    line("plain", plain_n, plain_s, f"public call per example and target, static + dynamic, "
         f"first {args.plain_examples} example(s) of each spec")
    line("previous", prev_n, prev_s, "export per signature, fast path, custom target in full")
    line("shortcut", short_n, short_s, "custom target only where its table can change the outcome")
    line("skip", skip_n, skip_s, "and no re-trace of a program that decomposes to itself")
    line("single", single_n, single_s, "and one trace after a re-trace of the same kind")
    line("phases", phases_n, phases_s, "and the workers' phase files in memory")
    line("new", new_n, new_s, "and no stack trace recorded per traced node")
    ratio = (new_n / new_s) / plain_rate
    print(f"new / previous: {prev_s / new_s:.2f}x faster, new / shortcut: {short_s / new_s:.2f}x, "
          f"new / skip: {skip_s / new_s:.2f}x, new / single: {single_s / new_s:.2f}x, "
          f"new / phases: {phases_s / new_s:.2f}x; "
          f"goal for the main command's full work: >= 40x plain, measured {ratio:.1f}x "
          f"({'met' if ratio >= 40 else 'not met'})")
    for label, other in (("shortcut", short), ("skip", skipped), ("single", single),
                         ("phases", phases), ("new", new)):
        print(f"results identical per target (previous vs {label}): {previous == other}")
        for key in sorted(k for k in previous if previous[k] != other.get(k)):
            print(f"  differs: {key}")

    signatures = committed_signatures()
    sample = sum(signatures.get(s.name, 0) for s in specs)
    total = sum(signatures.values())
    print(f"full catalog ({len(signatures)} specs, {total} signatures in the committed artifact; "
          f"the sample has {sample}): new ~{new_s * total / sample / 60:.1f} min, shortcut "
          f"~{short_s * total / sample / 60:.1f} min, previous "
          f"~{prev_s * total / sample / 60:.1f} min (scaled by signatures; "
          f"by spec count: new ~{new_s * len(signatures) / len(specs) / 60:.1f} min)")
    print(f"peak memory per worker: {worker_peak:.0f} MiB (largest resident set of any worker)")

    spent = breakdown(specs[:args.breakdown], profile)
    names = ", ".join(s.name for s in specs[:args.breakdown])
    print(f"per-stage time of the new path, inline, both targets + dynamic ({names}):")
    for stage, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        if stage != "total":
            print(f"  {stage:40} {seconds:7.2f}s {100 * seconds / spent['total']:5.1f}%")
    print(f"  {'total':40} {spent['total']:7.2f}s")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

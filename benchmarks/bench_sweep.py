"""Sweep throughput, measured side by side in one run (not a timed test).

A fixed subset of the catalog is measured on the same drawn examples:

  plain    one process, one public ``torch.onnx.export(dynamo=True)`` call per
           example (what a hand-written loop does);
  opsweep  the sweep as shipped: one export per signature, the fast path,
           a pool of --jobs workers, first without the dynamic axis (the same
           work as plain), then with it (one more export per signature that
           exported, with the leading dimension dynamic, run at a second size).

Prints examples per second for each, the ratio, whether every grade is
identical, what the dynamic axis costs, and the peak resident memory of a worker.

    python benchmarks/bench_sweep.py [--jobs 2] [--specs N ...]
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace

from opsweep.adapter import Exporter, quiet_exporter
from opsweep.catalog import load_catalog
from opsweep.draw import PROFILES, draw_examples
from opsweep.reuse import spec_digest
from opsweep.runner import run_group
from opsweep.sweep import SweepConfig, _Job, measure, spec_result

SUBSET = ["sin", "relu", "add", "mul", "sum", "amax", "softmax", "cat", "index_select",
          "conv2d", "layer_norm", "mm", "where", "eq", "cdist", "equal"]


def plain(specs, profile):
    quiet_exporter()
    exporter = Exporter()
    results, n = {}, 0
    for spec in specs:
        examples = draw_examples(spec, profile)
        outcomes = [o for e in examples for o in run_group(spec, [e], exporter)]
        n += len(outcomes)
        results[spec.name] = spec_result(spec, outcomes, profile, "", len(examples)).grades
    return results, n


def opsweep(specs, profile, jobs, dynamic):
    results, n = {}, 0

    def done(job, result):
        nonlocal n
        results[job.spec.name] = result.grades
        n += result.examples

    measure([_Job(s, spec_digest(s), "benchmark") for s in specs],
            SweepConfig(profile, jobs=jobs, dynamic=dynamic), done)
    return results, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--specs", nargs="+", default=SUBSET)
    args = parser.parse_args()
    catalog = load_catalog(check_draws=False)
    specs = catalog.select(args.specs)
    profile = PROFILES["ci"]

    t = time.perf_counter()
    fast_grades, fast_n = opsweep(specs, profile, args.jobs, dynamic=False)
    fast_s = time.perf_counter() - t
    t = time.perf_counter()
    dyn_grades, dyn_n = opsweep(specs, profile, args.jobs, dynamic=True)
    dyn_s = time.perf_counter() - t
    worker_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    t = time.perf_counter()
    plain_grades, plain_n = plain(specs, profile)
    plain_s = time.perf_counter() - t

    print(f"specs: {len(specs)} ({', '.join(s.name for s in specs)}), profile ci")
    print(f"plain   : {plain_n} examples in {plain_s:7.1f}s = {plain_n / plain_s:6.2f} examples/s "
          "(public call per example, one process)")
    print(f"opsweep : {fast_n} examples in {fast_s:7.1f}s = {fast_n / fast_s:6.2f} examples/s "
          f"(export per signature, fast path, {args.jobs} workers)")
    print(f"ratio   : {(fast_n / fast_s) / (plain_n / plain_s):.1f}x")
    print(f"dynamic : {dyn_n} examples in {dyn_s:7.1f}s = {dyn_n / dyn_s:6.2f} examples/s "
          f"(opsweep with the dynamic axis); the axis costs {dyn_s / fast_s:.2f}x the time "
          f"of the sweep without it, and is still {(dyn_n / dyn_s) / (plain_n / plain_s):.1f}x "
          "plain")
    static_same = all(dyn_grades[n] == replace(g, dynamic=dyn_grades[n].dynamic)
                      for n, g in fast_grades.items())
    print(f"static grades unchanged by the dynamic axis: {static_same}")
    same = plain_grades == fast_grades
    print(f"grades identical: {same}")
    if not same:
        for name in sorted(plain_grades):
            if plain_grades[name] != fast_grades.get(name):
                print(f"  {name}: plain {plain_grades[name]} opsweep {fast_grades.get(name)}")
    print(f"peak memory per worker: {worker_peak:.0f} MiB (largest resident set of any worker)")


if __name__ == "__main__":
    main()

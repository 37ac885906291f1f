"""What the main command pays for the TorchScript target (issue 33) and for recording
arguments (issue 32), the real engine measured side by side in one run on the benchmark
sample (not a timed test).

  main     the main command's work on the sample: the engine, the stock exporter and the
           example table, each with the dynamic axis, --jobs workers, arguments recorded;
  +ts      the same with the `torchscript` target (``SweepConfig.torchscript``): the public
           ``torch.onnx.export(..., dynamo=False)`` on the same drawn examples, checked,
           run in onnxruntime, compared, and again with ``dynamic_axes``;
  no-args  the same as main without recording arguments (``Tuning(arguments=False)``),
           the engine before them.

The three take turns for --rounds rounds (the order rotates each round, so a slow
moment of a shared machine does not fall on one of them). Prints each round's seconds,
the growths against main and against no-args with their budgets (issue 33: the main
command grows by at most 30 % with the new target; issue 32: at most 25 % with
arguments), and the torchscript target's outcomes per stage beside the stock exporter's.

    python benchmarks/bench_torchscript.py [--jobs 2] [--rounds 2] [--specs N ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sweep import SAMPLE, TABLE, _target_name

from opsweep.artifact.data import STOCK
from opsweep.catalog.draw import PROFILES
from opsweep.catalog.load import load_catalog
from opsweep.engine.adapter import quiet_exporter
from opsweep.engine.config import SweepConfig, Tuning
from opsweep.engine.torchscript import TORCHSCRIPT
from opsweep.sweep.driver import Job, measure
from opsweep.sweep.reuse import spec_digest

SETTINGS = {
    "main": {},
    "+ts": {"torchscript": True},
    "no-args": {"tuning": Tuning(arguments=False)},
}


def sweep(specs, profile, jobs: int, setting: str):
    """(results by (target, spec), seconds) with one of `SETTINGS`."""
    options = SETTINGS[setting]
    config = SweepConfig(profile, jobs=jobs, translations=(TABLE,), **options)
    targets = (STOCK, _target_name()) + ((TORCHSCRIPT,) if config.torchscript else ())
    results: dict = {}
    start = time.perf_counter()
    measure([Job(s, spec_digest(s), targets) for s in specs], config,
            lambda job, t, r: results.__setitem__((t, job.spec.name), r))
    return results, time.perf_counter() - start


def stages(results, target: str) -> Counter:
    counts: Counter = Counter()
    for (t, _), result in results.items():
        if t == target:
            counts.update({s.value: n for s, n in result.stages.items()})
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--specs", nargs="+", default=SAMPLE)
    args = parser.parse_args()
    quiet_exporter()
    specs = load_catalog(check_draws=False).select(args.specs)
    profile = PROFILES["ci"]
    names = list(SETTINGS)
    seconds: dict[str, list[float]] = {n: [] for n in names}
    last: dict = {}
    for round_ in range(args.rounds):
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for name in order:
            last[name], took = sweep(specs, profile, args.jobs, name)
            seconds[name].append(took)
        print(f"round {round_ + 1}: " + ", ".join(f"{n} {seconds[n][-1]:.1f} s" for n in order),
              flush=True)
    mean = {n: statistics.mean(v) for n, v in seconds.items()}
    print(f"sample: {len(specs)} specs, profile ci, --jobs {args.jobs}, {args.rounds} rounds")
    for name in names:
        print(f"  {name:8} {mean[name]:7.1f} s on average ({', '.join(f'{s:.1f}' for s in seconds[name])})")
    ts = mean["+ts"] / mean["main"] - 1
    paired = [b / a - 1 for a, b in zip(seconds["main"], seconds["+ts"])]
    print(f"  torchscript target: +{100 * ts:.0f}% on main (per round: "
          f"{', '.join(f'{100 * p:+.0f}%' for p in paired)}; budget 30%: "
          f"{'within' if ts <= 0.30 else 'over'})")
    arg = mean["main"] / mean["no-args"] - 1
    paired = [a / b - 1 for a, b in zip(seconds["main"], seconds["no-args"])]
    print(f"  arguments recorded: {100 * arg:+.0f}% on the engine without them (per round: "
          f"{', '.join(f'{100 * p:+.0f}%' for p in paired)}; budget 25%: "
          f"{'within' if arg <= 0.25 else 'over'})")
    for target in (STOCK, TORCHSCRIPT):
        counts = stages(last["+ts"], target)
        print(f"  {target} outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()

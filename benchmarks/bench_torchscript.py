"""What the main command pays for the TorchScript target (issue 33) and for recording
arguments (issue 32), the real engine measured side by side in one run on the benchmark
sample (not a timed test).

  main     the main command's work on the sample: the engine, the stock exporter and the
           example table, each with the dynamic axis, --jobs workers, arguments recorded;
  +ts      the same with the `torchscript` target (``SweepConfig.targets``): the public
           ``torch.onnx.export(..., dynamo=False)`` on the same drawn examples, checked,
           run in onnxruntime, compared, and again with ``dynamic_axes``;
  no-args  the same as main without recording arguments (``Tuning(arguments=False)``),
           the engine before them.

The three take turns for --rounds rounds (the order rotates each round, so a slow
moment of a shared machine does not fall on one of them). Each is timed twice: wall time,
and the CPU time of this process and every process under it (the workers, read from
/proc every 0.2 s), which another job on the machine moves far less. Prints each round's seconds,
the growths against main and against no-args with their budgets (issue 33: the main
command grows by at most 30 % with the new target; issue 32: at most 25 % with
arguments), and the torchscript target's outcomes per stage beside the stock exporter's.

    python benchmarks/bench_torchscript.py [--jobs 2] [--rounds 2] [--specs N ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sweep import SAMPLE, TABLE

from opsweep.artifact.data import STOCK, TORCHSCRIPT
from opsweep.catalog.draw import PROFILES
from opsweep.catalog.load import load_catalog
from opsweep.engine.adapter import quiet_exporter
from opsweep.engine.sweepconfig import SweepConfig, Tuning
from opsweep.targets import configured
from opsweep.sweep.driver import Job, measure
from opsweep.sweep.reuse import spec_digest

SETTINGS = {
    "main": {"targets": configured([TABLE])},
    "+ts": {"targets": configured([TABLE], torchscript=True)},
    "no-args": {"targets": configured([TABLE]), "tuning": Tuning(arguments=False)},
}


class TreeCPU:
    """CPU seconds (user + system) of this process and its descendants, from /proc: every
    descendant's latest reading, sampled every `interval` seconds while running."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval, self.seen, self._stop = interval, {}, threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK")
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        parents, ticks = {}, {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
            ticks[int(entry)] = int(fields[11]) + int(fields[12])  # utime, stime
        mine = {os.getpid()}
        changed = True
        while changed:
            changed = False
            for pid, parent in parents.items():
                if parent in mine and pid not in mine:
                    mine.add(pid)
                    changed = True
        for pid in mine - {os.getpid()}:
            self.seen[pid] = max(self.seen.get(pid, 0), ticks[pid])

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> TreeCPU:
        self.start = os.times()
        self._thread.start()
        return self

    def __exit__(self, *_) -> None:
        self._sample()
        self._stop.set()
        self._thread.join()
        end = os.times()
        own = (end.user - self.start.user) + (end.system - self.start.system)
        self.seconds = own + sum(self.seen.values()) / self._tick


def sweep(specs, profile, jobs: int, setting: str):
    """(results by (target, spec), wall seconds, CPU seconds) with one of `SETTINGS`."""
    return sweep_with(specs, profile, jobs, **SETTINGS[setting])


def sweep_with(specs, profile, jobs: int, **options):
    """(results by (target, spec), wall seconds, CPU seconds) with `options` of SweepConfig."""
    config = SweepConfig(profile, jobs=jobs, **options)
    targets = tuple(t.name for t in config.targets)
    results: dict = {}
    start = time.perf_counter()
    with TreeCPU() as cpu:
        measure([Job(s, spec_digest(s), targets) for s in specs], config,
                lambda job, t, r: results.__setitem__((t, job.spec.name), r))
    return results, time.perf_counter() - start, cpu.seconds


def stages(results, target: str) -> Counter:
    counts: Counter = Counter()
    for (t, _), result in results.items():
        if t == target:
            counts.update({s.value: n for s, n in result.stages.items()})
    return counts


def _growth(label: str, base: dict, other: dict, budget: float) -> None:
    for kind in ("wall", "cpu"):
        mean = statistics.mean(other[kind]) / statistics.mean(base[kind]) - 1
        paired = [b / a - 1 for a, b in zip(base[kind], other[kind])]
        print(f"  {label}, {kind:4}: {100 * mean:+.0f}% (per round: "
              f"{', '.join(f'{100 * p:+.0f}%' for p in paired)}; budget {100 * budget:.0f}%: "
              f"{'within' if mean <= budget else 'over'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--specs", nargs="+", default=SAMPLE)
    parser.add_argument("--warmup", type=int, default=8,
                        help="specs swept once, untimed, before the rounds (the process's first "
                             "sweep pays imports and caches: 95.6 s against 36-38 s on 2026-12-03)")
    args = parser.parse_args()
    quiet_exporter()
    specs = load_catalog(check_draws=False).select(args.specs)
    profile = PROFILES["ci"]
    names = list(SETTINGS)
    if args.warmup:
        sweep(specs[:args.warmup], profile, args.jobs, "+ts")
    took: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": []} for n in names}
    last: dict = {}
    for round_ in range(args.rounds):
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for name in order:
            last[name], wall, cpu = sweep(specs, profile, args.jobs, name)
            took[name]["wall"].append(wall)
            took[name]["cpu"].append(cpu)
        print(f"round {round_ + 1}: " + ", ".join(
            f"{n} {took[n]['wall'][-1]:.1f} s wall / {took[n]['cpu'][-1]:.1f} s CPU" for n in order),
            flush=True)
    print(f"sample: {len(specs)} specs, profile ci, --jobs {args.jobs}, {args.rounds} rounds")
    for name in names:
        print(f"  {name:8} wall {statistics.mean(took[name]['wall']):7.1f} s, "
              f"CPU {statistics.mean(took[name]['cpu']):7.1f} s on average")
    _growth("torchscript target on main", took["main"], took["+ts"], 0.30)
    _growth("arguments on the engine without them", took["no-args"], took["main"], 0.25)
    for target in (STOCK, TORCHSCRIPT):
        counts = stages(last["+ts"], target)
        print(f"  {target} outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()

"""How workers start and how long they live, measured side by side in one run on the same
specs (not a timed test).

torch keeps something of every export alive in the process that made it (generated
code in linecache, shape environments held by caches, fake-tensor cache entries): a
worker's memory grows with every group it measures, and so does the work of each of
its full garbage collections. ``SweepConfig.recycle`` replaces a worker by a fresh one
after that many groups, at the price of a new worker's set-up: a spawned worker imports
torch, loads the catalog and builds the registries itself (about five seconds), a worker
forked from the set-up server (``SweepConfig.preload``, :mod:`opsweep.engine.forkserver`)
inherits them.

The effect shows only over many groups per worker, so the sample is large: every
--stride-th spec of the catalog (default 2: ~385 specs, ~8000 groups, about half the
main command's work). A setting is ``START:GROUPS[:PHASES]``: START ``spawn`` or
``fork``, GROUPS the groups a worker measures before it is replaced (0: never), PHASES
``memory`` (default) or ``disk``: where the workers' phase files live
(``Tuning.phases_in_memory``). Each setting runs the sample through the real pool
(--jobs workers, both targets, the dynamic axis) in a process of its own and prints wall
time, the workers' CPU time, the largest resident set of any process it started (the
fork server included), the largest worker's peak resident set and private pages (sampled
every second, `Peaks`), and whether the results are identical; --rounds repeats every
setting, in reverse order every other round (this machine's speed drifts within a run),
and the summary gives each setting's mean wall time and its ratio to the first
setting's. With --paired, the settings of a round run at the same time instead (use
--jobs 1 on two cores), and the summary gives the mean of each round's ratio: this
machine's speed drifts by several percent from one run to the next, which hides a gain of
a few percent from runs made one after another, while settings run at once share it.

    python benchmarks/bench_workers.py [--stride 2] [--rounds 2] [--settings spawn:250 fork:250]
    python benchmarks/bench_workers.py --stride 12 --settings fork:1000:disk fork:1000:memory
    python benchmarks/bench_workers.py --paired --jobs 1 --stride 12 --settings fork:1000 fork:250
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
from pathlib import Path

from bench_sweep import sweep  # the same measured sweep (benchmarks/ is on sys.path)

from opsweep.catalog.draw import PROFILES
from opsweep.catalog.load import load_catalog
from opsweep.engine.adapter import quiet_exporter
from opsweep.engine.sweepconfig import RECYCLE

START = {"spawn": False, "fork": True}  # -> SweepConfig.preload


PHASES = {"memory": True, "disk": False}  # -> Tuning.phases_in_memory


def parse(setting: str) -> tuple[str, int, str]:
    start, _, rest = setting.partition(":")
    groups, _, phases = rest.partition(":")
    phases = phases or "memory"
    if start not in START or not groups.isdigit() or phases not in PHASES:
        raise SystemExit(f"bench_workers: setting {setting!r} is not START:GROUPS[:PHASES] "
                         f"(START one of {', '.join(START)}, GROUPS >= 0, PHASES one of "
                         f"{', '.join(PHASES)})")
    return start, int(groups), phases


class Peaks(threading.Thread):
    """Samples, every `every` seconds, the resident set and the private pages (Linux
    /proc/PID/smaps_rollup) of every process descended from this one, and keeps each
    process's peak. A descendant seen with children of its own is the fork server; the
    others are the workers (and multiprocessing's small resource tracker)."""

    def __init__(self, every: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.every, self.halt = every, threading.Event()
        self.rss: dict[int, float] = {}
        self.private: dict[int, float] = {}
        self.servers: set[int] = set()

    def run(self) -> None:
        while not self.halt.wait(self.every):
            parents = {}
            for stat in Path("/proc").glob("[0-9]*/stat"):
                try:  # the command name may hold spaces: the fields after its ')' count
                    parents[int(stat.parent.name)] = int(stat.read_text().rpartition(")")[2].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
            mine, grew = {os.getpid()}, True
            while grew:
                found = {p for p, parent in parents.items() if parent in mine} - mine
                grew, mine = bool(found), mine | found
            mine.discard(os.getpid())
            self.servers |= {parents[p] for p in mine if parents[p] in mine}
            for pid in mine:
                self._sample(pid)

    def _sample(self, pid: int) -> None:
        try:
            fields = dict(line.split(":", 1) for line in
                          Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:])
        except (OSError, ValueError):
            return
        kib = {k: int(v.split()[0]) for k, v in fields.items()}
        self.rss[pid] = max(self.rss.get(pid, 0), kib["Rss"] / 1024)
        private = (kib["Private_Clean"] + kib["Private_Dirty"]) / 1024
        self.private[pid] = max(self.private.get(pid, 0), private)

    def workers(self) -> tuple[float, float]:
        """(the largest worker's peak resident set, the largest worker's peak private
        pages), in MiB."""
        pids = [p for p in self.rss if p not in self.servers]
        return (max((self.rss[p] for p in pids), default=0.0),
                max((self.private[p] for p in pids), default=0.0))


def one(stride: int, jobs: int, setting: str) -> dict:
    """One sweep of the sample, in this process: what `main` prints for it."""
    start, recycle, phases = parse(setting)
    quiet_exporter()
    catalog = load_catalog(check_draws=False)
    specs = catalog.select(sorted(catalog.specs)[::stride])
    peaks = Peaks()
    peaks.start()
    results, _, wall = sweep(specs, PROFILES["ci"], jobs, recycle=recycle, preload=START[start],
                             memory=PHASES[phases])
    peaks.halt.set()
    peaks.join()
    worker_rss, worker_private = peaks.workers()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    digest = hashlib.sha256(repr(sorted(results.items())).encode()).hexdigest()
    return {"specs": len(specs), "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak": usage.ru_maxrss / 1024, "worker_rss": worker_rss,
            "worker_private": worker_private, "results": digest}


def _command(stride: int, jobs: int, setting: str) -> list[str]:
    return [sys.executable, __file__, "--stride", str(stride), "--jobs", str(jobs),
            "--one", setting]


def _report(round_: int, setting: str, got: dict, first: dict) -> None:
    print(f"round {round_ + 1} {setting:>10}: wall {got['wall']:7.1f}s, workers' CPU "
          f"{got['cpu']:7.1f}s, largest process {got['peak']:5.0f} MiB, largest worker "
          f"{got['worker_rss']:5.0f} MiB resident ({got['worker_private']:4.0f} MiB "
          f"private, sampled each second), results "
          f"identical to the first run's: {got['results'] == first['results']}", flush=True)


def paired(stride: int, jobs: int, rounds: int, settings: list[str]) -> None:
    """Every round runs all settings at once, each in a process of its own with `jobs`
    workers. This machine's speed drifts by several percent within minutes (and by twice
    between days); settings measured at the same moment share that drift, so a gain of a
    few percent shows in each round's ratio where one run after another hides it."""
    print(f"every {stride}th spec, {jobs} worker(s) per setting, the {len(settings)} settings "
          f"of each round at the same time, both targets, dynamic axis on, {rounds} round(s)")
    first = None
    ratios: dict[str, list[float]] = {setting: [] for setting in settings}
    for round_ in range(rounds):
        running = [subprocess.Popen(_command(stride, jobs, s), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for s in settings]
        got = {}
        try:
            for setting, process in zip(settings, running):
                out, err = process.communicate()
                if process.returncode:
                    raise SystemExit(f"bench_workers: setting {setting} failed (exit status "
                                     f"{process.returncode}): {err.strip()[-2000:]}")
                got[setting] = json.loads(out.strip().splitlines()[-1])
        finally:  # a failed setting stops the others of its round
            for process in running:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        first = first or got[settings[0]]
        for setting in settings:
            _report(round_, setting, got[setting], first)
            ratios[setting].append(got[settings[0]]["wall"] / got[setting]["wall"])
    for setting, values in ratios.items():
        print(f"{setting:>10}: {statistics.mean(values):4.2f}x {settings[0]}'s speed, the mean of "
              f"the rounds' ratios ({', '.join(f'{v:.3f}' for v in values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--stride", type=int, default=2)
    parser.add_argument("--settings", nargs="+", default=[f"spawn:{RECYCLE}", f"fork:{RECYCLE}"],
                        help="START:GROUPS[:PHASES], START spawn or fork, GROUPS per worker before "
                             "it is replaced (0: never), PHASES memory or disk; the first is "
                             "the baseline")
    parser.add_argument("--rounds", type=int, default=2,
                        help="runs of every setting, the order reversed every other round")
    parser.add_argument("--paired", action="store_true",
                        help="run the settings of a round at the same time, --jobs workers each "
                             "(use --jobs 1 on two cores): each sees the machine's speed of the "
                             "moment, and the summary compares them within each round")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.stride, args.jobs, args.one)))
        return
    for setting in args.settings:
        parse(setting)
    if args.paired:
        paired(args.stride, args.jobs, args.rounds, args.settings)
        return
    first = None
    walls: dict[str, list[float]] = {setting: [] for setting in args.settings}
    for round_ in range(args.rounds):
        # odd rounds run the settings in reverse: this machine drifts within a run, and a
        # setting always run first (or last) would carry that drift as its own
        order = args.settings if round_ % 2 == 0 else args.settings[::-1]
        for setting in order:  # each in a process of its own: its own workers' peak
            done = subprocess.run(_command(args.stride, args.jobs, setting),
                                  capture_output=True, text=True, check=True)
            got = json.loads(done.stdout.strip().splitlines()[-1])
            if first is None:
                first = got
                print(f"{got['specs']} specs (every {args.stride}th spec), {args.jobs} workers, "
                      f"both targets, dynamic axis on, {args.rounds} round(s)")
            walls[setting].append(got["wall"])
            _report(round_, setting, got, first)
    base = statistics.mean(walls[args.settings[0]])
    for setting, times in walls.items():
        mean = statistics.mean(times)
        print(f"{setting:>10}: mean wall {mean:7.1f}s over {len(times)} run(s) = "
              f"{base / mean:4.2f}x {args.settings[0]}'s speed")

if __name__ == "__main__":
    main()

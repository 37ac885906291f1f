"""What the export cache saves when only onnxruntime moves (issue 35), measured side by
side in one run with the real main command (not a timed test).

First the pinned stack (onnxruntime as pinned) measures the sample with the export cache
on: that run fills the cache, as the regeneration before a bump would have. Then, under
the other onnxruntime (installed with pip into a directory of its own and put first on
the path), two sweeps take turns for --rounds rounds:

  full    ``opsweep sweep --no-reuse --no-cache``: every export made, as before the cache;
  cached  ``opsweep sweep --no-reuse --cache DIR``: every export loaded, only the
          sessions, the runs and the comparisons re-measured.

Each sweep is the real command in a fresh process with every target of the main command
(stock, the example table, torchscript) and the dynamic axis, --jobs workers. Prints the
seconds (wall, and the CPU time of the sweep and its workers), the ratio cached / full
against the goal (at most 10 %), the peak memory of the largest process (a worker), the
cache's size, and whether the two artifacts are byte-identical (they must be).

    python benchmarks/bench_cache.py [--specs N] [--rounds 1] [--jobs 2] [--work DIR]

--specs 0 measures the whole catalog.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sweep import SAMPLE, TABLE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OTHER_ORT = "1.31.1"
GOAL = 0.10


def sample(n: int) -> list[str]:
    """The 40-spec benchmark sample, then specs spread evenly over the rest of the catalog;
    0 (or more than the catalog holds): the whole catalog."""
    from opsweep.catalog.load import load_catalog
    names = sorted(load_catalog(check_draws=False).specs)
    if n <= 0 or n >= len(names):
        return names
    rest = [s for s in names if s not in SAMPLE]
    extra = max(0, n - len(SAMPLE))
    step = len(rest) / extra if extra else 1
    return SAMPLE[:n] + [rest[int(i * step)] for i in range(extra)]


def install_apart(distribution: str, version: str, work: Path) -> Path:
    """`distribution==version` alone (no dependencies) in a directory of its own, to put
    first on a sweep's path (scripts/export_dependence.py installs its variants so too)."""
    target = work / f"{distribution}-{version}"
    if not (target / ".done").is_file():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--target", str(target), f"{distribution}=={version}"], check=True)
        (target / ".done").write_text("")
    return target


def run(specs: list[str], out: Path, jobs: int, cache: Path | None,
        first: Path | None) -> tuple[float, float, int]:
    """The main command's sweep of `specs` (every target, the dynamic axis) in a fresh
    process, with `first` first on its path: (wall seconds, CPU seconds of the sweep and
    its workers, peak RSS in MB so far)."""
    env = dict(os.environ)
    if first is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(first), env.get("PYTHONPATH")) if p)
    cached = ["--cache", str(cache)] if cache else ["--no-cache"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "opsweep", "sweep", "--only", *specs, "--no-reuse",
                    "--quiet", "--torchscript", "--translations", TABLE, "--jobs", str(jobs),
                    "--out", str(out), *cached], check=True, cwd=ROOT, env=env,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, after.ru_maxrss // 1024


def counts(out: Path) -> dict:
    return json.loads(Path(f"{out}.run.jsonl").read_text().splitlines()[0])["cache"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=80, help="0: the whole catalog")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=Path("bench-cache"))
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    from opsweep.engine.cache import size
    specs = sample(args.specs)
    other = install_apart("onnxruntime", OTHER_ORT, work)
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    wall, cpu, _ = run(specs, work / "pinned.json", args.jobs, cache, None)
    entries, size_bytes = size(cache)
    print(f"{len(specs)} specs; the pinned stack filled the cache in {wall:.0f}s wall "
          f"({cpu:.0f}s CPU): {entries} exports, {size_bytes / 2**20:.1f} MB")
    times: dict[str, list[tuple[float, float]]] = {"full": [], "cached": []}
    for r in range(args.rounds):
        order = ["full", "cached"] if r % 2 == 0 else ["cached", "full"]
        for name in order:
            wall, cpu, peak = run(specs, work / f"{name}.json", args.jobs,
                                  cache if name == "cached" else None, other)
            times[name].append((wall, cpu))
            print(f"round {r + 1} {name:<7} {wall:7.1f}s wall {cpu:7.1f}s CPU")
    full = sum(w for w, _ in times["full"]) / args.rounds
    cached = sum(w for w, _ in times["cached"]) / args.rounds
    full_cpu = sum(c for _, c in times["full"]) / args.rounds
    cached_cpu = sum(c for _, c in times["cached"]) / args.rounds
    identical = (work / "full.json").read_bytes() == (work / "cached.json").read_bytes()
    used = counts(work / "cached.json")
    print(f"\nonnxruntime moved to {OTHER_ORT}: cached regeneration / full sweep = "
          f"{cached / full:.1%} wall, {cached_cpu / full_cpu:.1%} CPU (goal: at most {GOAL:.0%})")
    print(f"cache use in the cached sweep: {json.dumps(used, sort_keys=True)}")
    print(f"peak memory of the largest process (a worker): "
          f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024} MB")
    print(f"artifacts byte-identical: {identical}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())

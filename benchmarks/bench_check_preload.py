"""`opsweep check --jobs 2`: its workers' fork server with what a first export imports
preloaded (`opsweep.check.preload`, as it is) and without it (as it was), side by side in
one process, rounds alternating which goes first. Each setting checks the same models
(real exports, against the committed artifact) in a pool of its own; the CPU counted is
the pool's processes' (its fork server and workers, reaped: RUSAGE_CHILDREN). It prints
each setting's CPU per round, the ratio, and whether both gave the same verdicts (the
exit status says so).

    python benchmarks/bench_check_preload.py [--rounds 2] [--jobs 2]
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

from opsweep.artifact import data as art
from opsweep.check import isolate
from opsweep.cli.check import run_checks

ROOT = Path(__file__).resolve().parents[1]
MODELS = [f"examples/models/plain.py:{name}" for name in
          ("mlp_f32", "cnn_f32", "gru_f32", "temporal_conv_f32")]
SETTINGS = {"preloaded": isolate.PRELOAD, "before": (isolate.__name__,)}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _verdicts(reports) -> list[str]:
    return [f"{r.source}: {[v.status for v in r.verdicts]} {r.prediction} failed={r.failed}"
            for r in reports]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))  # the models' modules, as `opsweep check` run here finds them
    artifact = art.load(ROOT / "docs" / "onnx_support_measured.json")
    seen: dict[str, list[str]] = {}
    cpu: dict[str, list[float]] = {name: [] for name in SETTINGS}
    for n in range(args.rounds):
        order = list(SETTINGS) if n % 2 == 0 else list(reversed(SETTINGS))
        for name in order:
            isolate.PRELOAD = SETTINGS[name]
            start = _children_cpu()
            reports = run_checks(MODELS, artifact, jobs=args.jobs)
            cpu[name].append(_children_cpu() - start)
            seen.setdefault(name, _verdicts(reports))
        print(f"round {n}: preloaded {cpu['preloaded'][-1]:.2f} s, before {cpu['before'][-1]:.2f} s"
              f" of the pool's CPU: {cpu['preloaded'][-1] / cpu['before'][-1]:.3f}")
    isolate.PRELOAD = SETTINGS["preloaded"]
    ratios = [p / b for p, b in zip(cpu["preloaded"], cpu["before"])]
    same = seen["preloaded"] == seen["before"]
    print(f"{len(MODELS)} models, --jobs {args.jobs}: preloaded/before "
          f"{', '.join(f'{r:.3f}' for r in ratios)}; the same verdicts: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

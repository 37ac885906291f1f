"""The cell covering's questions to eager PyTorch: a forked child per spec against one
child for the whole drawing (`catalog.draw.one_eager_child`, as a sweep draws), side by
side in one process, rounds alternating which goes first. Prints each way's CPU (this
process and its children: a fork's cost is system time on both sides), the ratio, and
whether the two gave the same cell plans.

    python benchmarks/bench_eager_child.py [--stride 4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import resource
import warnings
from contextlib import nullcontext

from opsweep.catalog import draw
from opsweep.catalog.load import load_catalog


def _cpu() -> float:
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _plans(specs, one: bool) -> tuple[float, list]:
    start = _cpu()
    with draw.one_eager_child(specs) if one else nullcontext():
        plans = [draw.plan_for(s, draw.PROFILES["ci"]) for s in specs]
    return _cpu() - start, plans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stride", type=int, default=4, help="every Nth spec of the catalog")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    catalog = load_catalog(check_draws=False)
    specs = [catalog.specs[n] for n in sorted(catalog.specs)][::args.stride]
    _plans(specs[:5], False)  # imports and first calls, untimed
    cpu: dict[str, list[float]] = {"per spec": [], "one": []}
    same = True
    for k in range(args.rounds):
        order = ("per spec", "one") if k % 2 == 0 else ("one", "per spec")
        got = {}
        for name in order:
            seconds, got[name] = _plans(specs, name == "one")
            cpu[name].append(seconds)
        same = same and got["per spec"] == got["one"]
    print(f"{len(specs)} specs' cell plans, {args.rounds} rounds, CPU seconds "
          f"(this process and its children):")
    for name, values in cpu.items():
        print(f"  {name:9} " + "  ".join(f"{v:6.2f}" for v in values))
    ratios = [o / p for o, p in zip(cpu["one"], cpu["per spec"])]
    print(f"  ratio     " + "  ".join(f"{r:6.3f}" for r in ratios) + "  (one child / a child per spec)")
    print(f"  the same plans: {'yes' if same else 'NO'}")
    raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()

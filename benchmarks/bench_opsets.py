"""What each opset target costs beside the stock exporter (issue 49), the real engine
measured side by side in one run on the benchmark sample (not a timed test).

  stock     the stock exporter alone (opset 20 at torch 2.15), dynamic axis;
  +opsetN   the same with the opset target at N (``[tool.opsweep] opsets = [N]``): the
            dynamo exporter at opset N on the same drawn examples, taking the stock export's
            capture and decomposition (engine.opsets), then translating, converting,
            checking, running in onnxruntime and comparing for itself;
  +all      with every opset of --opsets at once.

Pooled (--rounds, the main command's path: --jobs workers forked from a set-up server),
the settings take turns, the order rotating each round; each is timed twice: wall time,
and the CPU time of this process and every process under it (the workers). Inline
(--inline N: the first N specs in this process, each setting with its own exporters, after
one untimed pass of every setting, for --inline-rounds rounds in rotating order), the CPU
time of this one process, which other jobs on a shared machine hardly move. Both print each setting's ratio to stock with
the budget (issue 49: at most +35% per extra opset target); pooled, each target's outcomes
per stage; inline, how many exports took the stock export's capture and decomposition,
and with --profile, cProfile's view of the last setting.

    python benchmarks/bench_opsets.py [--jobs 2] [--rounds 2] [--inline 40] [--opsets 18 28]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sweep import SAMPLE
from bench_torchscript import stages, sweep_with

from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.catalog.load import load_catalog
from opsweep.engine.adapter import quiet_exporter
from opsweep.engine.sweepconfig import SweepConfig
from opsweep.engine.exporters import sweep_exporters
from opsweep.engine.group import run_targets
from opsweep.targets import STOCK, configured

#: issue 49: each extra opset target at most this much more than the stock target alone
BUDGET = 0.35


def settings(opsets: list[int]) -> dict[str, tuple]:
    out = {"stock": configured()}
    out |= {f"+opset{n}": configured(opsets=[n]) for n in opsets}
    if len(opsets) > 1:
        out["+all"] = configured(opsets=opsets)
    return out


def growth(label: str, base: dict, other: dict, budget: float) -> None:
    for kind in ("wall", "cpu"):
        mean = statistics.mean(other[kind]) / statistics.mean(base[kind])
        paired = [b / a for a, b in zip(base[kind], other[kind])]
        print(f"  {label:9} {kind:4}: {mean:.2f}x stock (per round: "
              f"{', '.join(f'{p:.2f}x' for p in paired)}; budget {1 + budget:.2f}x: "
              f"{'within' if mean <= 1 + budget else 'over'})")


def inline(specs, profile, chosen: dict[str, tuple], rounds: int, profiled: bool) -> None:
    """The specs measured in this process, setting by setting, each with its own exporters,
    after one untimed pass of every setting (the process's caches warm for all): CPU
    seconds of this process, which other jobs on a shared machine hardly move, for `rounds`
    rounds in rotating order; the exports that took the stock export's capture and
    decomposition, per opset target; with `profiled`, where the time of the last setting
    of the last round goes."""
    groups = [(s, g) for s in specs for g in group_by_signature(draw_examples(s, profile))]
    made = {name: sweep_exporters(SweepConfig(profile, jobs=0, targets=targets))
            for name, targets in chosen.items()}
    for exporters in made.values():
        for spec, group in groups:
            run_targets(spec, group, exporters, dynamic=True)
    names = list(made)
    spent: dict[str, list[float]] = {name: [] for name in names}
    profiler = None
    for round_ in range(rounds):
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for name in order:
            last = profiled and round_ == rounds - 1 and name == order[-1]
            profiler = cProfile.Profile() if last else profiler
            start = time.process_time()
            if last:
                profiler.enable()
            for spec, group in groups:
                run_targets(spec, group, made[name], dynamic=True)
            if last:
                profiler.disable()
            spent[name].append(time.process_time() - start)
    _inline_report(specs, groups, chosen, spent, made[names[-1]])
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        print(out.getvalue())


def _inline_report(specs, groups, chosen, spent, exporters) -> None:
    print(f"inline, one process, {len(specs)} specs, {len(groups)} groups, CPU seconds "
          f"({len(spent['stock'])} rounds, each setting's mean):")
    base = statistics.mean(spent["stock"])
    for name, seconds in spent.items():
        extra = len(chosen[name]) - 1
        ratio = statistics.mean(seconds) / base
        rounds = ", ".join(f"{s / b:.2f}x" for s, b in zip(seconds, spent["stock"]))
        print(f"  {name:9} {statistics.mean(seconds):7.1f} s = {ratio:.2f}x stock (per round: "
              f"{rounds})" + (f"; budget {1 + BUDGET * extra:.2f}x: "
                              f"{'within' if ratio <= 1 + BUDGET * extra else 'over'}"
                              if extra else ""))
    for name, exporter in exporters.items():
        taken = getattr(exporter, "taken", None)
        if taken is not None:
            full = exporter.retraced + exporter.skipped + exporter.traced_once
            print(f"    {name}: {taken} exports took the stock export's capture and "
                  f"decomposition, {full} were decomposed anew")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="pooled rounds (0: inline only)")
    parser.add_argument("--opsets", type=int, nargs="+", default=[18, 28])
    parser.add_argument("--specs", nargs="+", default=SAMPLE)
    parser.add_argument("--warmup", type=int, default=8,
                        help="specs swept once, untimed, before the rounds")
    parser.add_argument("--inline", type=int, default=0, metavar="N",
                        help="also measure the first N specs in this process (CPU time)")
    parser.add_argument("--inline-rounds", type=int, default=2, metavar="R")
    parser.add_argument("--profile", action="store_true", help="cProfile the inline run")
    args = parser.parse_args()
    quiet_exporter()
    specs = load_catalog(check_draws=False).select(args.specs)
    profile = PROFILES["ci"]
    chosen = settings(args.opsets)
    names = list(chosen)
    if args.warmup and args.rounds:
        sweep_with(specs[:args.warmup], profile, args.jobs, targets=chosen[names[-1]])
    took: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": []} for n in names}
    last: dict = {}
    for round_ in range(args.rounds):
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for name in order:
            last[name], wall, cpu = sweep_with(specs, profile, args.jobs, targets=chosen[name])
            took[name]["wall"].append(wall)
            took[name]["cpu"].append(cpu)
        print(f"round {round_ + 1}: " + ", ".join(
            f"{n} {took[n]['wall'][-1]:.1f} s wall / {took[n]['cpu'][-1]:.1f} s CPU" for n in order),
            flush=True)
    if args.rounds:
        pooled(specs, args, names, chosen, took, last)
    if args.inline:
        inline(specs[:args.inline], profile, chosen, args.inline_rounds, args.profile)


def pooled(specs, args, names, chosen, took, last) -> None:
    print(f"pooled: {len(specs)} specs, profile ci, dynamic axis, --jobs {args.jobs}, "
          f"{args.rounds} rounds")
    for name in names:
        print(f"  {name:9} wall {statistics.mean(took[name]['wall']):7.1f} s, "
              f"CPU {statistics.mean(took[name]['cpu']):7.1f} s on average")
    for name in names[1:]:
        extra = len(chosen[name]) - 1
        growth(name, took["stock"], took[name], BUDGET * extra)
    for target in (STOCK, *(f"opset{n}" for n in args.opsets)):
        counts = stages(last[names[-1]], target)
        print(f"  {target} outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()

"""The cell covering's cost, side by side on the 40-spec sample (not a timed test).

``without`` is the ci profile as it was (25 hypothesis draws and the argument covering);
``with`` is today's ci profile, which also gives every accepted (dtype, rank) cell an
example (opsweep.catalog.cells). For each: the examples drawn, the signatures (one export
each, per target), the cells held (of the sample's cells eager accepts), the drawing's own
time (eager's probes included) and the wall time of a sweep of the sample, both targets,
--jobs workers, no cache (the main command's work on these specs). Prints the ratios.

    python benchmarks/bench_cells.py [--jobs 2] [--specs NAME ...] [--draw-only]
    python benchmarks/bench_cells.py --catalog   # every spec, drawing only: the cell counts
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sweep import SAMPLE, sweep  # noqa: E402

from opsweep.catalog import cells as C  # noqa: E402
from opsweep.catalog.draw import PROFILES, draw_examples, plan_for  # noqa: E402
from opsweep.catalog.load import load_catalog  # noqa: E402

WITHOUT = replace(PROFILES["ci"], cells=False)
WITH = PROFILES["ci"]


def drawing(specs, profile):
    """(examples, signatures, the drawn cells by spec, seconds) of drawing every spec."""
    start = time.perf_counter()
    drawn = {s.name: draw_examples(s, profile) for s in specs}
    seconds = time.perf_counter() - start
    examples = sum(map(len, drawn.values()))
    signatures = sum(len({e.signature for e in es}) for es in drawn.values())
    held = {name: {C.cell_of(e) for e in es} for name, es in drawn.items()}
    return examples, signatures, held, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--specs", nargs="*", default=SAMPLE)
    parser.add_argument("--draw-only", action="store_true", help="no sweep, drawing only")
    parser.add_argument("--catalog", action="store_true",
                        help="every spec of the catalog, drawing only")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    catalog = load_catalog(check_draws=False)
    names = list(catalog.specs) if args.catalog else args.specs
    specs = [catalog.specs[n] for n in names]
    args.draw_only |= args.catalog
    accepted, statuses = {}, dict.fromkeys(C.STATUSES, 0)
    start = time.perf_counter()
    for s in specs:
        plan = plan_for(s, WITH)
        accepted[s.name] = {c for c, v in plan.status.items() if v in (C.DRAWN, C.ADDED)}
        for status in C.STATUSES:
            statuses[status] += plan.count(status)
    planning = time.perf_counter() - start
    total = sum(map(len, accepted.values()))
    print("cells: " + ", ".join(f"{n} {s}" for s, n in statuses.items())
          + f" (planned in {planning:.1f} s)")
    rows = {}
    for name, profile in (("without", WITHOUT), ("with", WITH)):
        examples, signatures, held, seconds = drawing(specs, profile)
        covered = sum(len(accepted[n] & held[n]) for n in accepted)
        rows[name] = {"examples": examples, "signatures": signatures, "cells": covered,
                      "draw s": seconds}
        if not args.draw_only:
            _, _, wall = sweep(specs, profile, args.jobs)
            rows[name]["sweep s"] = wall
    print(f"{len(specs)} specs, {total} accepted cells, jobs={args.jobs}")
    for key in rows["with"]:
        a, b = rows["without"][key], rows["with"][key]
        fmt = (lambda v: f"{v:10.1f}") if isinstance(a, float) else (lambda v: f"{v:10d}")
        print(f"  {key:<11} without {fmt(a)}   with {fmt(b)}   ratio {b / a if a else 0:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

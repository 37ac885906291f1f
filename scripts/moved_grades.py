"""Which operators' grades moved between two artifacts of the same pin set, and what the new
one says about why: the failure groups set apart by an argument value (``only_with``), for
a re-measure after the catalog changed what it draws (issue 32's count).

    python scripts/moved_grades.py OLD.json NEW.json [--target stock]

Prints, per axis, the operators that moved from full to a lower grade (and back), each with
the new failing groups' argument values and smallest example, then the totals.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from opsweep.artifact import data as art
from opsweep.artifact.grade import FAILS
from opsweep.model import Grade


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--target", default=art.STOCK)
    args = parser.parse_args(argv)
    old, new = art.load(args.old).view(args.target), art.load(args.new).view(args.target)
    if old is None or new is None:
        print(f"target {args.target} is not in both artifacts", file=sys.stderr)
        return 2
    if any(getattr(old.fingerprint, p) != getattr(new.fingerprint, p) for p in art.PINS):
        print("note: the pins differ; moves below mix exporter changes with catalog changes",
              file=sys.stderr)
    totals: Counter = Counter()
    for axis in ("export", "runtime", "numerics"):
        for op in sorted(set(old.operators) & set(new.operators)):
            before = getattr(old.operators[op].grades, axis)
            after = getattr(new.operators[op].grades, axis)
            if before is Grade.FULL and after not in (Grade.FULL, None):
                groups = [(s, g) for s in new.operators[op].specs if s in new.specs
                          for g in new.specs[s].failures if g.stage in FAILS[axis]]
                apart = sorted({v for _, g in groups for v in g.only_with})
                smallest = min(groups, key=lambda sg: (sg[1].size, sg[1].example), default=None)
                why = f"only with {' or '.join(apart)}" if apart else "not set apart by an argument"
                example = f"{smallest[1].example} (spec {smallest[0]}, {smallest[1].stage.value})" \
                    if smallest else "-"
                print(f"{axis:9} {op:40} full -> {after.value:8} {why}; e.g. {example}")
                totals[axis, "down", bool(apart)] += 1
            elif after is Grade.FULL and before not in (Grade.FULL, None):
                print(f"{axis:9} {op:40} {before.value} -> full")
                totals[axis, "up", False] += 1
    for axis in ("export", "runtime", "numerics"):
        down = totals[axis, "down", True] + totals[axis, "down", False]
        print(f"{axis}: {down} moved down from full ({totals[axis, 'down', True]} set apart by an "
              f"argument value), {totals[axis, 'up', False]} moved up to full")
    return 0


if __name__ == "__main__":
    sys.exit(main())

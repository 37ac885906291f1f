"""Which operators' grades moved between two artifacts of the same pin set, and what the new
one says about why: the failure groups set apart by an argument value (``only_with``), for
a re-measure after the catalog changed what it draws (issue 32's count).

    python scripts/moved_grades.py OLD.json NEW.json [--target stock] [--verify]

Prints, per axis, the operators that moved from full to a lower grade (and back), each with
the new failing groups' argument values and smallest example, then the totals. With
``--verify``, each smallest example's standalone repro (the operators page's snippet: torch,
onnx, onnxruntime and numpy only) is run in its own Python, and the step it failed at is
printed beside the stage the artifact names.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
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
    parser.add_argument("--verify", action="store_true",
                        help="run each move's standalone repro and say where it fails")
    args = parser.parse_args(argv)
    scripts = None
    if args.verify:
        from opsweep.catalog.load import load_catalog
        from opsweep.engine.standalone import Scripts
        scripts = Scripts(load_catalog(check_draws=False), "ci")
    before_artifact, after_artifact = art.load(args.old), art.load(args.new)
    old, new = before_artifact.target(args.target), after_artifact.target(args.target)
    if old is None or new is None:
        print(f"target {args.target} is not in both artifacts", file=sys.stderr)
        return 2
    if any(getattr(before_artifact.fingerprint, p) != getattr(after_artifact.fingerprint, p)
           for p in art.PINS):
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
                if scripts is not None and smallest:
                    target = "" if args.target == art.STOCK else args.target
                    where = _reproduce(scripts, smallest[0], smallest[1].example, target)
                    agrees = where == STEP.get(smallest[1].stage.value)
                    print(f"{'':9} repro: fails at {where}"
                          f"{'' if agrees else ' (the artifact says ' + smallest[1].stage.value + ')'}")
                    totals["verified", agrees] += 1
            elif after is Grade.FULL and before not in (Grade.FULL, None):
                print(f"{axis:9} {op:40} {before.value} -> full")
                totals[axis, "up", False] += 1
    for axis in ("export", "runtime", "numerics"):
        down = totals[axis, "down", True] + totals[axis, "down", False]
        print(f"{axis}: {down} moved down from full ({totals[axis, 'down', True]} set apart by an "
              f"argument value), {totals[axis, 'up', False]} moved up to full")
    if scripts is not None:
        print(f"repros: {totals['verified', True]} fail at the artifact's stage, "
              f"{totals['verified', False]} do not")
        return 1 if totals["verified", False] else 0
    return 0


#: the artifact's failure stage -> the step (a repro line's closing comment) that raises
STEP = {"no-translation": "export", "translation-error": "export", "raw-error": "export",
        "capture": "export", "checker": "checker", "runtime": "runtime",
        "numerics": "numerics"}


def _reproduce(scripts, spec: str, example: str, target: str) -> str:
    """Run the standalone repro of `example` in a fresh Python: the step it failed at."""
    text = scripts.for_example(spec, example, False, target, f"{spec}: {example}")
    if text is None:
        return "no standalone repro"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "repro.py")
        path.write_text(text, "utf-8")
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                              timeout=300, cwd=tmp)
    if done.returncode == 0:
        return "nowhere"
    lines = [int(n) for n in re.findall(rf'File "{re.escape(str(path))}", line (\d+), in <module>',
                                        done.stderr)]
    if not lines:
        return "outside the script's top level"
    raised = text.splitlines()[lines[-1] - 1]
    return raised.rsplit("# ", 1)[-1].strip() if "# " in raised else f"line {lines[-1]}"


if __name__ == "__main__":
    sys.exit(main())

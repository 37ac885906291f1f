"""A command's exit, side by side in one run (not a timed test).

``run`` is the `opsweep` command as installed (``opsweep.cli.run``: main, then
``cli.main.leave``, which skips the teardown of every module); ``teardown`` is the same
``main`` ended by ``sys.exit``, the interpreter's own exit. Each round runs one small sweep
both ways in fresh processes, in turns, with the export cache off, and checks the two
wrote the same artifact byte for byte; prints the median CPU seconds (user + system, the
process and its children) of each and the ratio.

    python benchmarks/bench_exit.py [--rounds 5] [--only sin]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HOW = {"run": "from opsweep.cli import run; run()",
       "teardown": "import sys; from opsweep.cli import main; sys.exit(main())"}


def once(how: str, only: list[str], out: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", HOW[how], "sweep", "--only", *only, "--jobs", "0",
                    "--no-reuse", "--quiet", "--out", str(out)], check=True,
                   capture_output=True, env={**os.environ, "OPSWEEP_CACHE": "off"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="+", default=["sin"])
    args = parser.parse_args()
    cpu: dict[str, list[float]] = {how: [] for how in HOW}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for how in HOW:
                cpu[how].append(once(how, args.only, Path(tmp) / f"{how}.json"))
            if (Path(tmp) / "run.json").read_bytes() != (Path(tmp) / "teardown.json").read_bytes():
                sys.exit("the two exits wrote different artifacts")
    run, teardown = statistics.median(cpu["run"]), statistics.median(cpu["teardown"])
    print(f"sweep --only {' '.join(args.only)}, {args.rounds} rounds, median CPU seconds")
    print(f"  teardown (sys.exit)  {teardown:7.2f}")
    print(f"  run (leave)          {run:7.2f}")
    print(f"  run/teardown         {run / teardown:7.3f}")


if __name__ == "__main__":
    main()

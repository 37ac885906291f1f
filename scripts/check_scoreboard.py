"""Check opsweep's scoreboard (its ``[tool.opsweep] models``: the public model set,
examples/models) against the committed artifact, exactly as the main command's models step
does (`opsweep.cli.assemble.check_models`: the record docs/models_checked.json, a model reused
when its entry there has the same check fingerprint), with `--jobs` workers:

    HF_HUB_OFFLINE=1 python scripts/check_scoreboard.py [--jobs 2] [--artifact FILE]
                                                        [--chunk N] [--first N]

A second run at unchanged pins and model files checks only the models whose check was
lost (a machine failure is never reused); every other model is reused. With
`--chunk N` the record is written after every N models (the first N, then the first 2N,
...: each time the step itself over that prefix of the list, the models before it reused
from the record just written), so a run cut short keeps what it checked: a record of the
first models only is one the main command reads as it is, checking the models it lacks.
`--first N`: the step over the first N models of the list only (the record then holds
those). Run it from anywhere: the project is the repository this script lies in.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def step(layout, artifact, sources, jobs: int):
    """check_models' body over `sources` (a prefix of the project's list): each model
    checked or reused from the record, the record written; the `Checked` run."""
    from opsweep.cli.check import check_or_reuse, previous_entries, record_data
    from opsweep.files import write_atomic
    record = ROOT / layout.models
    done = check_or_reuse(sources, artifact, previous_entries(record), jobs=jobs)
    text = json.dumps(record_data(done.items, keys=done.keys), indent=1, sort_keys=True)
    write_atomic(record, (text + "\n").encode("utf-8"))
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="models checked at a time, each "
                        "in a worker of its own (default: 2)")
    parser.add_argument("--artifact", type=Path, default=None,
                        help="the measured table (default: the project's artifact)")
    parser.add_argument("--chunk", type=int, default=0, metavar="N",
                        help="write the record after every N models (default: 0, once)")
    parser.add_argument("--first", type=int, default=0, metavar="N",
                        help="only the first N models of the list (default: 0, all)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing downloaded: the models are built
    from opsweep import config
    from opsweep.artifact import data as art
    from opsweep.cli.assemble import check_models
    from opsweep.files import Layout
    project = config.load(ROOT / "pyproject.toml")
    layout = Layout.of(project)
    artifact = art.load(args.artifact or ROOT / layout.artifact)
    sources = project.models[:args.first] if args.first > 0 else project.models
    if not sources:
        print("check_scoreboard: the project lists no models", file=sys.stderr)
        return 2
    began = time.perf_counter()
    for end in range(args.chunk, len(sources), args.chunk) if args.chunk > 0 else ():
        done = step(layout, artifact, sources[:end], args.jobs)
        print(f"check_scoreboard: {end} of {len(sources)} in the record ({done.checked} "
              f"checked now) at {time.perf_counter() - began:.0f} s", flush=True)
    if args.first > 0:
        done = step(layout, artifact, sources, args.jobs)
        line = f"{done.checked} checked, {done.reused} reused by fingerprint"
    else:
        line = check_models(ROOT, layout, artifact, jobs=args.jobs).line()
    print(f"check_scoreboard: {line} in {time.perf_counter() - began:.1f} s, "
          f"--jobs {args.jobs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

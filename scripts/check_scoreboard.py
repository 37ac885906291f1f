"""Check opsweep's scoreboard (its ``[tool.opsweep] models``: the public model set,
examples/models) against the committed artifact, exactly as the main command's models step
does (`opsweep.cli.site.check_models`: the record docs/models_checked.json, a model reused
when its entry there has the same check fingerprint), with `--jobs` workers:

    HF_HUB_OFFLINE=1 python scripts/check_scoreboard.py [--jobs 2] [--artifact FILE]

A second run at unchanged pins and model files checks nothing (every model reused). Run it
from anywhere: the project is the repository this script lies in.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="models checked at a time, each "
                        "in a worker of its own (default: 2)")
    parser.add_argument("--artifact", type=Path, default=None,
                        help="the measured table (default: the project's artifact)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing downloaded: the models are built
    from opsweep import config
    from opsweep.artifact import data as art
    from opsweep.cli.site import check_models
    from opsweep.files import Layout
    layout = Layout.of(config.load(ROOT / "pyproject.toml"))
    artifact = art.load(args.artifact or ROOT / layout.artifact)
    began = time.perf_counter()
    done = check_models(ROOT, layout, artifact, jobs=args.jobs)
    if done is None:
        print("check_scoreboard: the project lists no models", file=sys.stderr)
        return 2
    print(f"check_scoreboard: {done.line()} in {time.perf_counter() - began:.1f} s, "
          f"--jobs {args.jobs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

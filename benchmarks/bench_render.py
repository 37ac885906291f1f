"""What the export cache's draws save a render (not a timed test): `opsweep render` of the
committed artifact, whole processes side by side in one run, in a clone of this checkout:

  anew     OPSWEEP_CACHE=off: every spec's examples drawn again for the snippets;
  cached   OPSWEEP_CACHE=DIR, a cache whose draws a first (untimed) render filled, as the
           sweep before a render leaves them.

The settings take turns for --rounds rounds (the order rotating); each prints its wall time
and the ratio; the pages of both settings must be byte-identical (checked every round).

    python benchmarks/bench_render.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def render(clone: Path, cache: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "opsweep", "render"], cwd=clone, check=True,
                   env={**os.environ, "OPSWEEP_CACHE": cache}, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def pages(clone: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted((clone / "docs").rglob("*.md")):
        digest.update(path.as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone, cache = Path(tmp, "clone"), Path(tmp, "cache")
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        cache.mkdir()
        render(clone, str(cache))  # the draws, as a sweep leaves them
        settings = {"anew": "off", "cached": str(cache)}
        took: dict[str, list[float]] = {name: [] for name in settings}
        for round_ in range(args.rounds):
            names = list(settings)[round_ % 2:] + list(settings)[:round_ % 2]
            seen = set()
            for name in names:
                took[name].append(render(clone, settings[name]))
                seen.add(pages(clone))
            assert len(seen) == 1, "the pages differ between the settings"
            print(f"round {round_ + 1}: " + ", ".join(f"{n} {took[n][-1]:.1f} s" for n in names),
                  flush=True)
        anew, cached = statistics.mean(took["anew"]), statistics.mean(took["cached"])
        paired = ", ".join(f"{c / a:.2f}x" for a, c in zip(took["anew"], took["cached"]))
        print(f"render of the committed artifact: anew {anew:.1f} s, cached {cached:.1f} s: "
              f"{cached / anew:.2f}x (per round: {paired}); pages identical")


if __name__ == "__main__":
    main()

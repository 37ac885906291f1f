"""The bot's commit of a regenerated site, side by side in one run (not a timed test).

``batched`` is `opsweep.bot.git.commit_files`'s way today: every page's blob written by one
`git hash-object --stdin-paths`, the stale pages told by one `git cat-file --batch`;
``per-file`` is the way before it, one `git hash-object` per page and one `git cat-file blob`
per page the result does not hold. Each round makes both in turns against the same
repository (a site of `--pages` rendered pages, a tenth of them gone from the new render),
checks they found the same blobs and the same stale pages, and prints the median wall and
CPU seconds (this process and its git children) of each and their ratios.

    python benchmarks/bench_commit.py [--rounds 5] [--pages 700]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from opsweep.bot.git import _blobs, stale_pages  # noqa: E402
from opsweep.files import RENDERED_MARK  # noqa: E402

PAGES = "docs/operators"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def per_file(repo: Path, head: str, files: dict[str, Path]) -> tuple[dict[str, str], list[str]]:
    blobs = {path: git(repo, "hash-object", "-w", "--no-filters", "--",
                       str(source.resolve())).strip() for path, source in files.items()}
    stale = []
    for name in git(repo, "ls-tree", "--name-only", f"{head}:{PAGES}").split("\n"):
        path = f"{PAGES}/{name}"
        if name.endswith(".md") and path not in blobs:
            if RENDERED_MARK in git(repo, "cat-file", "blob", f"{head}:{path}")[:4096]:
                stale.append(path)
    return blobs, stale


def batched(repo: Path, head: str, files: dict[str, Path]) -> tuple[dict[str, str], list[str]]:
    blobs = _blobs(repo, files)
    return blobs, stale_pages(repo, head, [PAGES], blobs)


def timed(how, *args) -> tuple[float, float, object]:
    before = (os.times(), resource.getrusage(resource.RUSAGE_CHILDREN))
    start = time.perf_counter()
    result = how(*args)
    wall = time.perf_counter() - start
    after = (os.times(), resource.getrusage(resource.RUSAGE_CHILDREN))
    cpu = sum((after[0][i] - before[0][i]) for i in (0, 1)) + (
        after[1].ru_utime - before[1].ru_utime) + (after[1].ru_stime - before[1].ru_stime)
    return wall, cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pages", type=int, default=700)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, out = Path(tmp, "repo"), Path(tmp, "out")
        (repo / PAGES).mkdir(parents=True)
        out.mkdir()
        for n in range(args.pages):
            (repo / PAGES / f"op{n}.md").write_text(f"{RENDERED_MARK}\n# op{n}\n" + "x" * 2000)
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-qm", "site")
        head = git(repo, "rev-parse", "HEAD").strip()
        files = {}
        for n in range(args.pages // 10, args.pages):  # a tenth of the operators gone
            (out / f"op{n}.md").write_text(f"{RENDERED_MARK}\n# op{n}, again\n" + "y" * 2000)
            files[f"{PAGES}/op{n}.md"] = out / f"op{n}.md"
        times: dict[str, list[tuple[float, float]]] = {"per-file": [], "batched": []}
        for round_ in range(args.rounds):
            order = [("per-file", per_file), ("batched", batched)]
            results = {}
            for name, how in order if round_ % 2 == 0 else order[::-1]:
                wall, cpu, results[name] = timed(how, repo, head, files)
                times[name].append((wall, cpu))
            assert results["batched"] == results["per-file"], "the two ways disagree"
            assert len(results["batched"][1]) == args.pages // 10
        print(f"{len(files)} pages written, {args.pages // 10} stale, {args.rounds} rounds "
              "(median; CPU: this process and its git children)")
        med = {name: (statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts))
               for name, ts in times.items()}
        for name, (wall, cpu) in med.items():
            print(f"  {name:9} {wall:7.3f} s wall {cpu:7.3f} s CPU")
        print(f"  batched/per-file: wall {med['batched'][0] / med['per-file'][0]:.3f}, "
              f"CPU {med['batched'][1] / med['per-file'][1]:.3f}")


if __name__ == "__main__":
    main()

"""Which pin each stage depends on, measured: export a sample of the catalog under two versions
of each pin and compare the models, the checker's verdicts and the stages.

For the pinned stack and for each variant (one pin moved to another release, installed with
pip into a directory of its own and put first on the path), the real sweep measures the
sample with every target (stock, the example table, torchscript) and the dynamic axis,
writing its exports into an export cache of its own (:mod:`opsweep.engine.cache`). An
entry's header holds its full key; with the key's versions set aside, the entries of two
runs that exported the same example for the same target at the same dynamic shapes are
matched, and for each target kind this prints how many models are byte-identical, how many
differ, and how many outcomes up to the checker (stage, error line) differ. Then the two
artifacts are compared stage by stage: what a move changes at all.

    python scripts/export_dependence.py [--specs NAME ...] [--work DIR] [--json OUT]

The pinned versions come from the installed stack; each variant names a distribution and a
version (default: the table below: onnxruntime, onnx and onnxscript, each one release back).
Its measurements are kept in docs/refreshing.md; the table they establish is
opsweep.engine.cache.EXPORT_DEPENDS_ON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_cache import install_apart, run  # noqa: E402
from bench_sweep import SAMPLE  # noqa: E402

#: distribution -> the release compared with the pinned one
VARIANTS = {"onnxruntime": "1.31.1", "onnx": "1.23.1", "onnxscript": "0.7.1"}


def sweep(name: str, specs: list[str], work: Path, first: Path | None) -> tuple[Path, Path, float]:
    """The real sweep of `specs` with its own cache (bench_cache.run): (artifact, cache,
    seconds)."""
    out, cache = work / f"{name}.json", work / f"{name}.cache"
    seconds, _, _ = run(specs, out, os.cpu_count() or 1, cache, first)
    return out, cache, seconds


def entries(cache: Path) -> dict[str, tuple[str, str, str, str]]:
    """(key without versions) -> (kind, stage, error, model sha256), for every entry."""
    found = {}
    for path in cache.glob("*/*.export"):
        head = json.loads(path.read_bytes().partition(b"\n")[0])
        key = json.loads(head["key"])
        kind = "torchscript" if key["target"] == "torchscript" else "dynamo"
        key.pop("versions")
        found[json.dumps(key, sort_keys=True)] = (kind, head["stage"], head["error"],
                                                 head["sha256"])
    return found


def stages(artifact: Path) -> dict[tuple[str, str, str], object]:
    """(target, spec, field) -> the artifact's per-stage record of it."""
    data = json.loads(artifact.read_text())
    out = {}
    for target, specs in [("stock", data["specs"])] + [
            (t, v.get("specs", {})) for t, v in data.get("targets", {}).items()]:
        for spec, result in specs.items():
            for field in ("export", "runtime", "numerics", "dynamic", "stages", "dynamic_stages",
                          "failures", "dynamic_failures"):
                out[target, spec, field] = result.get(field)
    return out


def compare(base: dict, other: dict) -> dict[str, Counter]:
    by_kind: dict[str, Counter] = {}
    for key, (kind, stage, error, sha) in base.items():
        c = by_kind.setdefault(kind, Counter())
        if key not in other:
            c["unmatched"] += 1
            continue
        _, stage2, error2, sha2 = other[key]
        c["entries"] += 1
        c["same model" if sha == sha2 else "model differs"] += 1
        if (stage, error) != (stage2, error2):
            c["outcome up to checker differs"] += 1
    return by_kind


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--specs", nargs="+", default=SAMPLE)
    parser.add_argument("--work", type=Path, default=Path("export-dependence"))
    parser.add_argument("--json", type=Path, default=None, help="write the counts here too")
    parser.add_argument("--variant", action="append", default=[], metavar="DIST==VERSION",
                        help="compare only these (default: " +
                             ", ".join(f"{d}=={v}" for d, v in VARIANTS.items()) + ")")
    args = parser.parse_args(argv)
    variants = dict(v.split("==") for v in args.variant) or VARIANTS
    args.work.mkdir(parents=True, exist_ok=True)
    work = args.work.resolve()
    base_art, base_cache, base_s = sweep("pinned", args.specs, work, None)
    base, base_stages = entries(base_cache), stages(base_art)
    print(f"pinned stack: {len(args.specs)} specs, {len(base)} exports in {base_s:.0f}s")
    report = {}
    for dist, version in variants.items():
        art_path, cache, seconds = sweep(f"{dist}-{version}", args.specs, work,
                                         install_apart(dist, version, work))
        counts = compare(base, entries(cache))
        other_stages = stages(art_path)
        moved = sorted({f"{t}:{s}" for (t, s, f), v in base_stages.items()
                        if other_stages.get((t, s, f)) != v})
        report[f"{dist}=={version}"] = {"kinds": {k: dict(c) for k, c in counts.items()},
                                        "artifact_specs_moved": moved}
        print(f"\n{dist} {version} ({seconds:.0f}s):")
        for kind, c in sorted(counts.items()):
            print(f"  {kind:<12} {c['entries']:>5} matched exports: {c['same model']:>5} "
                  f"identical models, {c['model differs']:>5} differ, "
                  f"{c['outcome up to checker differs']:>4} outcomes up to the checker differ"
                  + (f", {c['unmatched']} unmatched" if c["unmatched"] else ""))
        print(f"  artifact: {len(moved)} (target, spec) records differ"
              + (f": {', '.join(moved[:12])}" + (" ..." if len(moved) > 12 else "") if moved else ""))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

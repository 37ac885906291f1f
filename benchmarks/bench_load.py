"""Loading the committed artifact (read, validate, build the frozen results): validation
by the compiled validator (jsonschema-rs) against the reference implementation alone
(jsonschema, what the bot's hash-pinned install uses), side by side in one process; then
the load's check that the operators tables follow from the specs as it is (the tables
alone derived again) against the way it was before (the whole artifact spelled again, as
saving it does, then its tables compared).

    python benchmarks/bench_load.py [--rounds 3] [--artifact docs/onnx_support_measured.json]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from opsweep import files
from opsweep.artifact import data as art

ROOT = Path(__file__).resolve().parents[1]


def _timed(path: Path) -> float:
    start = time.perf_counter()
    art.load(path)
    return time.perf_counter() - start


def _derived_check(path: Path, rounds: int) -> dict[str, float]:
    """Best CPU seconds of the load's derived check, now and as it was."""
    data = files.read_json(path, error=art.ArtifactError)
    artifact = art.load(path)

    def now() -> None:
        art._check_derived(artifact, data, path)

    def before() -> None:  # to_data, then the same comparisons as now
        art.to_data(artifact)
        art._check_derived(artifact, data, path)
    best = {"now": float("inf"), "before": float("inf")}
    for _ in range(rounds):
        for name, run in (("now", now), ("before", before)):
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--artifact", type=Path, default=ROOT / "docs" / "onnx_support_measured.json")
    args = parser.parse_args()
    if files.jsonschema_rs is None:
        raise SystemExit("jsonschema-rs is not installed: nothing to compare")
    compiled = files.jsonschema_rs
    times: dict[str, list[float]] = {"compiled": [], "reference": []}
    for _ in range(args.rounds):
        for name in ("compiled", "reference"):
            files.jsonschema_rs = compiled if name == "compiled" else None
            files.fast_validator.cache_clear()
            times[name].append(_timed(args.artifact))
    files.jsonschema_rs = compiled
    best = {name: min(values) for name, values in times.items()}
    size = args.artifact.stat().st_size / 1e6
    print(f"{args.artifact.name} ({size:.1f} MB), best of {args.rounds}:")
    for name, value in best.items():
        print(f"  {name:9} {value:7.2f} s")
    print(f"  ratio     {best['compiled'] / best['reference']:.3f} (compiled / reference)")
    check = _derived_check(args.artifact, args.rounds)
    print(f"the derived check, best CPU of {args.rounds}: tables alone {check['now']:.2f} s, "
          f"with the whole artifact spelled again {check['before']:.2f} s")
    print(f"  ratio     {check['now'] / check['before']:.3f} (tables alone / spelled again)")


if __name__ == "__main__":
    main()

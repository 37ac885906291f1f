"""The exporter registries a sweep builds, side by side in one run (not a timed test).

A sweep of the stock target and two opset targets builds one registry per opset. ``public``
builds each as the public call does (``ONNXRegistry.from_torchlib``, every function's
signature worked out again); ``shared`` is opsweep's (``catalog.registry.torchlib_registry``:
the registration once per process, then a copy and the clean-up per opset). Each round
runs both in fresh processes, in turns, and checks the shared registries equal the
public call's (function by function, in the same process); prints the
median seconds of the registries' building and the ratio.

    python benchmarks/bench_registry.py [--rounds 5] [--opsets 20 18 28]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
from torch.onnx._internal.exporter import _registration
from opsweep.catalog.registry import torchlib_registry
opsets, how = json.loads(sys.argv[1]), sys.argv[2]
build = (lambda o: _registration.ONNXRegistry.from_torchlib(opset_version=o)) if how == "public" \
    else torchlib_registry
start = time.perf_counter()
built = [build(o) for o in opsets]
seconds = time.perf_counter() - start
def shape(registry):
    return registry.opset_version, {k: [(id(d.onnx_function), d.fx_target, d.is_custom,
                                         d.is_complex, d.opset_introduced, repr(d.signature))
                                        for d in v] for k, v in registry.functions.items()}
equal = how == "public" or all(  # the public call's registries, built after the timing
    shape(r) == shape(_registration.ONNXRegistry.from_torchlib(opset_version=o))
    for r, o in zip(built, opsets))
print(json.dumps({"seconds": seconds, "equal": equal}))
"""


def run(opsets: list[int], how: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(opsets), how],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--opsets", type=int, nargs="+", default=[20, 18, 28])
    args = parser.parse_args()
    times: dict[str, list[float]] = {"public": [], "shared": []}
    for _ in range(args.rounds):
        public, shared = run(args.opsets, "public"), run(args.opsets, "shared")
        if not shared["equal"]:
            sys.exit("the shared registries differ from the public call's")
        times["public"].append(public["seconds"])
        times["shared"].append(shared["seconds"])
    ratios = [s / p for s, p in zip(times["shared"], times["public"])]
    for how, seconds in times.items():
        print(f"{how:7s} {statistics.median(seconds):.3f} s for opsets {args.opsets} (median of "
              f"{args.rounds})")
    print(f"shared/public {statistics.median(ratios):.3f} (median of the rounds' ratios); "
          "the registries are equal")


if __name__ == "__main__":
    main()

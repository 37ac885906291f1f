"""`opsweep check` against a plain public export, side by side in one run, per test model
(examples/tiny_models.py; not a timed test).

For each model, in one process and in alternating order over --rounds:

* plain: ``torch.onnx.export(model, inputs, dynamo=True)`` (with the model's
  ``dynamic_shapes`` when it gives them) then an onnxruntime session and one run: what a
  user does by hand;
* capture: ``torch.export`` plus the exporter's decomposition (opsweep.capture.uses);
* lookup: `opsweep check --no-export`'s work, the capture and the join with the artifact;
  the join alone is lookup - capture (target: under one second);
* full: the whole check (the public export, checker, onnxruntime, numerics against eager
  PyTorch, the join with the uses read from the export's own decomposed program; a second
  export only when the dynamic one fails), the first-divergence search excluded
  (it runs only on a numerics failure) (target: within 2x plain).

A first warm-up round (every model once) is not counted: the first export of a process
builds the exporter's registry, and both sides would pay it. Prints the medians and the
ratios.

    HF_HUB_OFFLINE=1 python benchmarks/bench_check.py [--rounds 3] [--models bert vit]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import onnxruntime  # noqa: E402
import tiny_models  # noqa: E402
import torch  # noqa: E402

from opsweep.artifact import data as art  # noqa: E402
from opsweep.catalog.load import exclusions  # noqa: E402
from opsweep.capture.cases import load_model  # noqa: E402
from opsweep.check.run import check  # noqa: E402
from opsweep.check.table import lookup  # noqa: E402
from opsweep.capture.uses import capture  # noqa: E402
from opsweep.engine.adapter import quiet_exporter  # noqa: E402
from opsweep.engine.runner import quiet_runtime  # noqa: E402


def plain(case) -> None:
    """The export, a session and one run; a model onnxruntime refuses stops there (as it
    would for a user), and so does the check."""
    program = torch.onnx.export(case.model, case.inputs, dynamo=True, verbose=False,
                                dynamic_shapes=case.dynamic_shapes)
    try:
        session = onnxruntime.InferenceSession(program.model_proto.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
    except Exception:  # e.g. a bfloat16 Conv: the model does not load
        return
    session.run(None, {i.name: t.numpy() for i, t in zip(session.get_inputs(), case.inputs)})


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(tiny_models.ALL))
    args = parser.parse_args()
    quiet_exporter()
    quiet_runtime()
    artifact = art.load(ROOT / "docs" / "onnx_support_measured.json")
    excluded = exclusions()
    cases = {m: load_model(f"{ROOT / 'examples' / 'tiny_models.py'}:{m}") for m in args.models}
    opset = artifact.fingerprint.opset
    kinds = {
        "plain": lambda c: plain(c),
        "capture": lambda c: capture(c, opset),
        "lookup": lambda c: lookup(artifact, capture(c, opset).uses, excluded),
        "full": lambda c: check(c, artifact, excluded, search=False),
    }
    for case in cases.values():  # warm-up: the registry, first-call caches
        for fn in kinds.values():
            fn(case)
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for name, case in cases.items():
            order = list(kinds) if r % 2 == 0 else list(reversed(kinds))
            for kind in order:
                times.setdefault((name, kind), []).append(
                    timed(lambda kind=kind, case=case: kinds[kind](case)))
    print(f"{'model':<18}{'plain':>8}{'capture':>9}{'lookup':>8}{'join':>7}{'full':>8}"
          f"{'full/plain':>12}{'join<1s':>9}")
    for name in cases:
        m = {k: statistics.median(times[name, k]) for k in kinds}
        join = m["lookup"] - m["capture"]
        print(f"{name:<18}{m['plain']:>8.2f}{m['capture']:>9.2f}{m['lookup']:>8.2f}{join:>7.2f}"
              f"{m['full']:>8.2f}{m['full'] / m['plain']:>11.2f}x{'yes' if join < 1 else 'NO':>9}")


if __name__ == "__main__":
    main()

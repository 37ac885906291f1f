"""What the TorchScript exporter would cost as a third target (issue 33), measured side by
side in one run on the benchmark sample (not a timed test).

  main   the main command's work today on the sample: the engine, both targets (stock and
         the example table), each with the dynamic axis, --jobs workers;
  ts     the same drawn examples, one export per signature as the engine does, through the
         public ``torch.onnx.export(..., dynamo=False)`` at the same opset, checked, loaded
         in onnxruntime and run once; then re-exported with ``dynamic_axes`` on the leading
         dimension of the first tensor input (what the dynamo plan makes dynamic first).
         Inline in one process: its time over --jobs is what it would add with the same
         workers.

Prints both, the growth of the main command's wall time the third target would cost (the
issue's budget: at most 30 %), the TorchScript exporter's outcome counts per stage, and its
cost per export beside the engine's.

    python benchmarks/bench_torchscript.py [--jobs 2] [--specs N ...]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sweep import SAMPLE, sweep

from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.catalog.load import load_catalog
from opsweep.engine.runner import build_call, make_session, run_session

OPSET = 20


def torchscript(call, dynamic: bool) -> str:
    """Export one call with the TorchScript exporter, check, load and run it: its stage."""
    import onnx
    import torch
    inputs = tuple(t.clone() for t in call.inputs)
    names = [f"x{i}" for i in range(len(inputs))]
    lead = next((i for i, t in enumerate(inputs) if t.dim() >= 1), None)
    axes = {names[lead]: {0: "batch"}} if dynamic and lead is not None else None
    buffer = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(call, inputs, buffer, dynamo=False, opset_version=OPSET,
                              input_names=names, dynamic_axes=axes)
    except Exception as exc:  # noqa: BLE001  (a measurement: every refusal is an outcome)
        return f"export:{type(exc).__name__}"
    try:
        model = onnx.load_from_string(buffer.getvalue())
        onnx.checker.check_model(model, full_check=True)
    except Exception:  # noqa: BLE001
        return "checker"
    try:
        session = make_session(model)
        run_session(session, [t for t in inputs])
    except Exception:  # noqa: BLE001
        return "runtime"
    return "ok"


def measure_torchscript(specs, profile) -> tuple[int, float, Counter]:
    exports, stages, start = 0, Counter(), time.perf_counter()
    for spec in specs:
        for group in group_by_signature(draw_examples(spec, profile)):
            try:
                call = build_call(spec, group[0])
            except Exception as exc:  # noqa: BLE001  (eager PyTorch rejected it: no export either way)
                stages[f"invalid {type(exc).__name__}"] += 1
                continue
            for dynamic in (False, True):
                stage = torchscript(call, dynamic)
                stages[("dynamic " if dynamic else "") + stage.split(":")[0]] += 1
                exports += 1
    return exports, time.perf_counter() - start, stages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--specs", nargs="+", default=SAMPLE)
    args = parser.parse_args()
    catalog = load_catalog(check_draws=False)
    specs = [catalog.specs[n] for n in args.specs]
    profile = PROFILES["ci"]
    _, examples, main_s = sweep(specs, profile, args.jobs)
    exports, ts_s, stages = measure_torchscript(specs, profile)
    added = ts_s / max(args.jobs, 1)
    print(f"sample: {len(specs)} specs, profile ci, --jobs {args.jobs}")
    print(f"  main   {main_s:7.1f} s  ({examples} examples over both targets, dynamic axis)")
    print(f"  ts     {ts_s:7.1f} s inline  ({exports} exports, static + dynamic_axes; "
          f"{1000 * ts_s / max(exports, 1):.0f} ms each)")
    print(f"  growth of the main command with a torchscript target: +{100 * added / main_s:.0f}% "
          f"(budget 30%: {'within' if added <= 0.3 * main_s else 'over'})")
    print("  torchscript outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(stages.items())))


if __name__ == "__main__":
    main()

"""The public dynamo export with the exporter's repeated work spared, side by side in one
run (not a timed test).

``remembered`` is opsweep's way (`opsweep.catalog.registry.remember_exporter_work`: each
traced function answers its signature's domain, the opset's, without working the signature
out, and works it out once a process if more is asked; the CompositeImplicitAutograd
operators are looked up again only when that can find something new); ``afresh`` is
onnxscript's and torch's own, every signature worked out again at each ask (each public
call's registry asks ~1,000 times) and the operators looked up at every collection (about
64 times an export). Each round exports the same small models through the public
``torch.onnx.export(dynamo=True)`` (`opsweep.engine.adapter.Exporter`, as the sweep's public
targets and `opsweep check` call it) in a fresh process per way, in turns, after one
untimed export; checks both made the same models byte for byte; prints the median CPU
seconds of the exports and the ratio.

    python benchmarks/bench_exporter_work.py [--rounds 5] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import hashlib, json, sys, time, warnings
warnings.filterwarnings("ignore")
import torch
from onnxscript._internal import values
from torch._export import utils
from opsweep.catalog.registry import remember_exporter_work
from opsweep.engine.adapter import Exporter, quiet_exporter
how, repeat = sys.argv[1], int(sys.argv[2])
quiet_exporter()
remember_exporter_work()
if how == "afresh":
    values.TracedOnnxFunction.function_ir = property(values.TracedOnnxFunction.function_ir.fget.__wrapped__)
    utils._materialize_cpp_cia_ops = utils._materialize_cpp_cia_ops.__wrapped__
F = torch.nn.functional
x = torch.randn(2, 3, 8, 8)
MODELS = [
    (lambda x: F.gelu(torch.layer_norm(x, (8,))).softmax(-1), (x,)),
    (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), (x,)),
    (lambda x: torch.atan2(x, x + 1).cumsum(1), (x,)),
    (lambda x: F.max_pool2d(F.relu(x), 2).flatten(1), (x,)),
    (lambda x: F.group_norm(x, 3) * torch.sigmoid(x), (x,)),
    (lambda x: torch.topk(x.flatten(1), 5).values.sort(-1).values, (x,)),
    (lambda x: F.scaled_dot_product_attention(x, x, x), (x,)),
    (lambda x: torch.where(x > 0, x.exp(), x.log1p().abs()).amax((2, 3)), (x,)),
]
class M(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
    def forward(self, *args):
        return self.fn(*args)
exporter = Exporter()
exporter.export(M(MODELS[0][0]), MODELS[0][1])  # untimed: the exporter's first call
digest = hashlib.sha256()
start = time.process_time()
for _ in range(repeat):
    for fn, args in MODELS:
        digest.update(exporter.export(M(fn), args).SerializeToString())
print(json.dumps({"cpu": time.process_time() - start, "models": digest.hexdigest()}))
"""


def run(how: str, repeat: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, how, str(repeat)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2, help="exports of each model a process")
    args = parser.parse_args()
    cpu: dict[str, list[float]] = {"afresh": [], "remembered": []}
    for round_ in range(args.rounds):
        order = ["afresh", "remembered"] if round_ % 2 == 0 else ["remembered", "afresh"]
        got = {how: run(how, args.repeat) for how in order}
        if got["afresh"]["models"] != got["remembered"]["models"]:
            sys.exit("the two ways made different models")
        for how in order:
            cpu[how].append(got[how]["cpu"])
    ratios = [r / a for r, a in zip(cpu["remembered"], cpu["afresh"])]
    for how, seconds in cpu.items():
        print(f"{how:10s} {statistics.median(seconds):.2f} s of CPU for {8 * args.repeat} "
              f"public exports (median of {args.rounds})")
    print(f"remembered/afresh {statistics.median(ratios):.3f} (median of the rounds' ratios, "
          f"{min(ratios):.3f} to {max(ratios):.3f}); the same models byte for byte")


if __name__ == "__main__":
    main()

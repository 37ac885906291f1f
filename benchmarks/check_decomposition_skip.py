"""Catalog-wide check of the fast path's decomposition shortcut (not a test: it exports
every signature of the catalog once, statically and with the dynamic axis).

For every program :func:`opsweep.engine.fastpath.decomposes_to_itself` would hand on without its
re-trace, this runs the full decomposition anyway and compares what comes out with what
went in: the graph's code, the graph signature and every node's value (shape, dtype). Any
difference is printed and the exit status is 1.

    python benchmarks/check_decomposition_skip.py [--only NAME ...] [--shard I/N]
"""

from __future__ import annotations

import argparse
import sys

from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.catalog.load import load_catalog
from opsweep.engine import fastpath
from opsweep.engine.adapter import quiet_exporter
from opsweep.engine.fastpath import FastExporter
from opsweep.engine.runner import build_call, choose_plan, dynamic_shapes, target_of


def snapshot(program) -> tuple[str, str, tuple[str, ...]]:
    nodes = tuple(f"{n.name}: {n.meta.get('val')}" for n in program.graph.nodes)
    return program.graph_module.code, str(program.graph_signature), nodes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--shard", default="1/1")
    args = parser.parse_args()
    index, count = (int(x) for x in args.shard.split("/"))
    quiet_exporter()
    specs = load_catalog(check_draws=False).select(args.only)[index - 1::count]
    exporter = FastExporter()  # asks decomposes_to_itself, which answers False below
    pending: list = []
    original = fastpath.decomposes_to_itself

    def judged(program, keys):
        if original(program, keys):
            pending.append(snapshot(program))
        return False
    fastpath.decomposes_to_itself = judged
    from torch.onnx._internal.exporter import _fx_passes
    decompose = _fx_passes.decompose_with_registry
    checked, differ = [0], []

    def compared(program, registry):
        pending.clear()
        out = decompose(program, registry)
        if pending:
            checked[0] += 1
            if snapshot(out) != pending[0]:
                differ.append(current[0])
                print(f"DIFFERS: {current[0]}\n--- in\n{pending[0][0]}\n--- out\n{out.graph_module.code}")
        return out
    _fx_passes.decompose_with_registry = compared
    current = [""]
    exports = 0
    for spec in specs:
        for group in group_by_signature(draw_examples(spec, PROFILES["ci"])):
            call = build_call(spec, group[0])
            current[0] = f"{spec.name} {group[0]}"
            exports += 1
            try:
                exporter.export(call, tuple(t.clone() for t in call.inputs))
            except Exception:
                continue
            plan, traced, _ = choose_plan(spec, target_of(spec, call), group[0])
            if plan is None:
                continue
            current[0] = f"{spec.name} {group[0]} (dynamic)"
            exports += 1
            try:
                exporter.export(traced, tuple(t.clone() for t in traced.inputs),
                                dynamic_shapes=dynamic_shapes(plan, len(traced.inputs)))
            except Exception:
                pass
    print(f"{len(specs)} specs, {exports} exports, {checked[0]} would skip the decomposition, "
          f"{len(differ)} differ from the full decomposition")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

"""What every `opsweep check --jobs` worker's first export imports, imported once by the
workers' fork server (`opsweep.check.isolate`, `engine.forkserver.preloaded`) so that each
worker inherits it: torch.export's tracer (and through it dynamo and inductor), the dynamo
exporter's entry, torchlib's functions. A worker imported them itself, some 1.5 s of CPU
each (`benchmarks/bench_check_preload.py`). A module this torch or onnxscript does not
have, or one that fails to import, is left to the workers, which then import what they
need as before."""

from __future__ import annotations

import importlib

#: private module paths of the exporter stack: absent ones are skipped
MODULES = ("torch.export._trace", "torch.onnx._internal.exporter._compat",
           "onnxscript.function_libs.torch_lib.ops")

for _name in MODULES:
    try:
        importlib.import_module(_name)
    except Exception:  # noqa: BLE001, S112 -- the worker imports it itself, as before
        continue

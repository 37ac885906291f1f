"""Is the exporter stack usable at all? A canary checked before measuring.

The canary goes through exactly the path the sweep takes (the worker's set-up
and one signature group through the runner: export, checker, onnxruntime,
comparison) with a module no working exporter can fail: ``x + y`` on two
float32 tensors. A stack that cannot get it through (an onnxscript that does
not support the installed torch, an onnxruntime that cannot load) is reported
once, as a result of its own, instead of as hundreds of failing or "invalid"
examples.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

from opsweep.errors import ExporterBroken
from opsweep.model import Example, OpSpec, Stage, TensorArg
from opsweep.targets import behaviour

#: What the canary checks: the modules the workers import, then its export and run.
IMPORT_STAGE = "import"


def run_canary(exporters: Mapping[str, object]) -> dict[str, str]:
    """Raise ExporterBroken unless the canary passes through every required target's
    exporter; return the optional targets it could not pass, with why (their absence)."""
    import torch  # the measuring stack: imported only where its failure is the finding
    from hypothesis import strategies as st

    from opsweep.engine.group import run_group
    spec = OpSpec("canary", ("add",), st.nothing(), fn=torch.add)
    example = Example((TensorArg((2, 3), "float32"), TensorArg((2, 3), "float32")), seed=1)
    absent: dict[str, str] = {}
    for target, exporter in exporters.items():
        (outcome,) = run_group(spec, [example], exporter)  # type: ignore[arg-type]
        # a target a release may no longer have (targets.Behaviour.optional): recorded absent
        # for this pin set, with the reason, instead of breaking the sweep
        if outcome.stage is not Stage.OK and behaviour(target).optional:
            absent[target] = (f"the canary (x + y) stopped at {outcome.stage.value}: "
                              f"{outcome.error or 'no error line'}")
        elif outcome.stage is not Stage.OK:
            raise ExporterBroken(target, outcome.stage.value, outcome.error or "no error line")
    return absent


def import_error() -> str:
    """The first error line of importing what a worker imports, in a fresh
    interpreter: the diagnosis when workers die before they can say why."""
    done = subprocess.run(
        [sys.executable, "-c", "import opsweep.engine.worker, opsweep.engine.group, opsweep.engine.fastpath"],
        capture_output=True, text=True, timeout=300)
    if done.returncode == 0:
        return ""
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    if done.returncode < 0:
        return f"importing the worker's modules killed the interpreter (signal {-done.returncode})"
    return lines[-1].strip() if lines else f"importing the worker's modules exited {done.returncode}"


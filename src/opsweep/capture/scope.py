"""``[tool.opsweep] catalog = "used"``: the built-in catalog restricted to the operators the
project's models use -- the same capture and decomposition `opsweep check` makes
(capture.uses), so the sweep measures exactly the operators a check of those models looks
up. A model that cannot be captured contributes no operator and is named on stderr (its
check says why); the set depends on the installed torch and the models only, so every
shard, the assemble step and a later render compute the same one."""

from __future__ import annotations

import sys
from functools import cache

from opsweep.capture.cases import load_model
from opsweep.capture.uses import capture


@cache
def used_operators(models: tuple[str, ...]) -> frozenset[str]:
    """The aten operators (overload packets, as the catalog names them) `models` use."""
    ops: set[str] = set()
    for source in models:
        found = capture(load_model(source))
        if found.error:
            print(f"opsweep: catalog \"used\": {source}: {found.error}; its operators are "
                  "not measured", file=sys.stderr)
        ops.update(use.op for use in found.uses)
    return frozenset(ops)

"""opsweep: measure what PyTorch's dynamo ONNX exporter supports, operator by operator.

What a user may import from here (``__all__``):

* the artifact: ``load_artifact(path)`` gives an `Artifact`; ``artifact.grades("roll")``
  an operator's `Grades` (``export``, ``runtime``, ``numerics``, ``dynamic``, each a
  `Grade`), per target;
* reproducing an example: ``example_for(spec, signature)`` (module and inputs),
  ``dynamic_example_for`` (with ``dynamic_shapes``), ``load_translations("module:TABLE")``;
* a spec author's faces: the family constructors (``unary``, ``binary``, ``spec``, ...),
  the strategies (``examples``, ``shapes``, ``dims``, ...), the dtype groups and the
  vocabulary (`OpSpec`, `TensorArg`, `Example`, `Tolerance`, `KnownGap`, `Stage`).

Names are resolved on first use, so ``import opsweep`` imports neither torch nor
hypothesis; everything else is internal and may move.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> the module that defines it
_PUBLIC = {
    # the artifact
    "load_artifact": ("opsweep.artifact.data", "load"),
    "Artifact": ("opsweep.artifact.data", "Artifact"),
    "Grades": ("opsweep.artifact.grade", "Grades"),
    "Grade": ("opsweep.model", "Grade"),
    "Stage": ("opsweep.model", "Stage"),
    # reproducing an example with the public call
    "example_for": ("opsweep.engine.repro", "example_for"),
    "dynamic_example_for": ("opsweep.engine.repro", "dynamic_example_for"),
    "load_translations": ("opsweep.engine.translations", "load"),
    # a spec author's faces
    "OpSpec": ("opsweep.model", "OpSpec"),
    "TensorArg": ("opsweep.model", "TensorArg"),
    "Example": ("opsweep.model", "Example"),
    "Tolerance": ("opsweep.model", "Tolerance"),
    "KnownGap": ("opsweep.model", "KnownGap"),
    **{name: ("opsweep.catalog.families", name) for name in (
        "spec", "unary", "binary", "comparison", "reduction", "activation", "optional",
        "present", "no_translation", "gap", "draw_scalar", "ABSENT", "FLOAT", "INTEGRAL",
        "COMPLEX", "BOOL", "NUMERIC", "ALL", "EDGE_FLOATS", "SIGNED_ZEROS")},
    **{name: ("opsweep.catalog.strategies", name) for name in (
        "examples", "shapes", "tensors", "broadcast_shapes", "dims", "dim_subsets", "sides",
        "seeds")},
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'opsweep' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return __all__

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

#: the one version number (pyproject.toml reads it; CHANGELOG.md names each release; the
#: release is tagged vX.Y.Z and the moving major tag vX follows it, docs/adopting.md)
__version__ = "0.3.0"

#: module -> the public names it defines, each as (public name, its name there)
_MODULES = {
    "opsweep.artifact.data": (("load_artifact", "load"), ("Artifact", "Artifact")),
    "opsweep.artifact.grade": (("Grades", "Grades"),),
    "opsweep.engine.repro": (("example_for", "example_for"),
                             ("dynamic_example_for", "dynamic_example_for")),
    "opsweep.engine.translations": (("load_translations", "load"),),
    "opsweep.model": tuple((n, n) for n in (
        "Grade", "Stage", "OpSpec", "TensorArg", "Example", "Tolerance", "KnownGap")),
    "opsweep.catalog.families": tuple((n, n) for n in (
        "spec", "unary", "binary", "comparison", "reduction", "activation", "optional",
        "present", "no_translation", "gap", "draw_scalar", "ABSENT", "FLOAT", "INTEGRAL",
        "COMPLEX", "BOOL", "NUMERIC", "ALL", "EDGE_FLOATS", "SIGNED_ZEROS")),
    "opsweep.catalog.strategies": tuple((n, n) for n in (
        "examples", "shapes", "tensors", "broadcast_shapes", "dims", "dim_subsets", "sides",
        "seeds")),
}
#: public name -> (module, its name there)
_PUBLIC = {public: (module, there) for module, names in _MODULES.items()
           for public, there in names}

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

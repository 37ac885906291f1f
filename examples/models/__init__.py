"""The public model set: small real architectures, randomly initialised from a configuration
(nothing downloaded), each in float32, float16 and bfloat16, for `opsweep check` and its
tests (docs/check.md, "The public model set").

`MODELS` maps each model's name to its callable (``bert_f32`` -> the callable of
``encoders.py:bert_f32``); `spec(name)` is how `opsweep check` names it on the command
line; `ARCHS` are the architectures; `MISSING` the families left out because the package
they come from is not installed (torchvision, timm). Every variant runs in eager PyTorch on
the CPU, float16 and bfloat16 included (tests/integration/test_model_set.py).

    opsweep check examples/models/encoders.py:bert_f32 examples/models/vision_timm.py:timm_vit_bf16
    opsweep check $(python scripts/score_models.py --list)   # the whole set
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: family module -> the package it needs (transformers, torchvision and timm: the test extras)
FAMILIES = {"encoders": "transformers", "decoders": "transformers", "seq2seq": "transformers",
            "vision": "transformers", "vision_torchvision": "torchvision",
            "vision_dense": "torchvision", "vision_timm": "timm", "plain": "torch"}


def _families() -> tuple[dict, dict[str, str]]:
    loaded, missing = {}, {}
    for family, package in FAMILIES.items():
        if importlib.util.find_spec(package) is None:
            missing[family] = package
            continue
        loaded[family] = importlib.import_module(f".{family}", __name__)
    return loaded, missing


def _registry(loaded: dict) -> tuple[dict[str, Callable[[], dict]], dict[str, str], dict]:
    models: dict[str, Callable[[], dict]] = {}
    where: dict[str, str] = {}
    archs = {}
    for family, module in loaded.items():
        for arch in module.ARCHS:
            if arch.name in archs:
                raise ValueError(f"examples/models/{family}.py: architecture {arch.name!r} "
                                 "is defined twice")
            archs[arch.name] = arch
        for name in module.ALL:
            if name in models:
                raise ValueError(f"examples/models/{family}.py: model {name!r} is defined "
                                 f"twice (also in {where[name]}.py)")
            models[name], where[name] = getattr(module, name), family
    return models, where, archs


_LOADED, MISSING = _families()
MODELS, FAMILY_OF, ARCHS = _registry(_LOADED)


def path_of(name: str) -> Path:
    """The file that defines the model `name`."""
    return HERE / f"{FAMILY_OF[name]}.py"


def spec(name: str, root: Path | None = None) -> str:
    """``FILE.py:name``, as `opsweep check` takes it: the file relative to `root` (the
    current directory by default) when it lies under it, else absolute."""
    path, base = path_of(name), (root or Path.cwd()).resolve()
    return f"{path.relative_to(base) if path.is_relative_to(base) else path}:{name}"


__all__ = ["ARCHS", "MISSING", "MODELS", "path_of", "spec"]

"""An architecture of the public model set, and its dtype variants as `opsweep check` callables.

An `Arch` builds its model from a configuration (random weights, nothing downloaded) in
float32 and makes its example inputs at a given batch size; `define` turns each
architecture into one callable per dtype (``bert_f32``, ``bert_f16``, ``bert_bf16``), each
returning the contract of docs/check.md: the model cast to the dtype, its inputs (floating
tensors cast, integer ones as they are), a dynamic batch dimension where the model allows
it (with inputs at another batch size, run on the dynamic export), and a name.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

import torch

SEED = 0
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
BATCH, OTHER_BATCH = 2, 3  # the example batch, and the dynamic export's second one


@dataclass(frozen=True)
class Arch:
    """One architecture: `build` gives the float32 model, `inputs(batch)` its positional
    example inputs; `dynamic`: the batch dimension is exported dynamic (every architecture
    of the set allows it: torch.export captures each float32 one with a dynamic batch)."""

    name: str
    family: str  # encoder, decoder, encoder-decoder, vision, audio, plain
    source: str  # the package the architecture comes from: transformers, torchvision, ...
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[int], tuple]
    dynamic: bool = True


def configured(name: str, family: str, inputs: Callable[[int], tuple], model_class,
               config_class, **config) -> Arch:
    """A `transformers` architecture built from its configuration, random weights:
    ``model_class(config_class(**config))``."""
    return Arch(name, family, "transformers", lambda: model_class(config_class(**config)),
                inputs)


def _cast(value, dtype: torch.dtype):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(dtype)
    return value


def case(arch: Arch, tag: str) -> dict:
    """The callable's dict for `arch` at the dtype `tag` names."""
    dtype = DTYPES[tag]
    torch.manual_seed(SEED)
    model = arch.build().eval().to(dtype)
    inputs = tuple(_cast(t, dtype) for t in arch.inputs(BATCH))
    out = {"model": model, "inputs": inputs, "name": f"{arch.name} {dtype_name(tag)}"}
    if arch.dynamic:
        batch = torch.export.Dim("batch", min=2, max=16)
        out["dynamic_shapes"] = tuple({0: batch} if isinstance(t, torch.Tensor) else None
                                      for t in inputs)
        out["dynamic_inputs"] = tuple(_cast(t, dtype) for t in arch.inputs(OTHER_BATCH))
    return out


def dtype_name(tag: str) -> str:
    return str(DTYPES[tag]).removeprefix("torch.")


def _callable(arch: Arch, tag: str, module: str) -> Callable[[], dict]:
    def build() -> dict:
        return case(arch, tag)

    build.__name__ = build.__qualname__ = f"{arch.name}_{tag}"
    build.__module__ = module
    build.__doc__ = f"{arch.name} ({arch.source}, {arch.family}) in {dtype_name(tag)}."
    return build


def define(archs: tuple[Arch, ...], namespace: MutableMapping[str, object]) -> tuple[str, ...]:
    """Put a callable per architecture and dtype in `namespace` (a module's globals, so
    that ``FILE.py:bert_f16`` names it); the names defined, in order."""
    names = []
    for arch in archs:
        for tag in DTYPES:
            fn = _callable(arch, tag, str(namespace.get("__name__", "")))
            if fn.__name__ in namespace:
                raise ValueError(f"two models named {fn.__name__}")
            namespace[fn.__name__] = fn
            names.append(fn.__name__)
    return tuple(names)


def ids(vocab: int, length: int = 8) -> Callable[[int], tuple]:
    """Token ids of `length` at a batch size (a generator of their own: the same ids
    whatever was drawn before)."""
    def make(batch: int) -> tuple:
        g = torch.Generator().manual_seed(SEED + batch)
        return (torch.randint(0, vocab, (batch, length), generator=g),)
    return make


def floats(*shape: int) -> Callable[[int], tuple]:
    """A float32 tensor of `shape` after the batch dimension (cast to the variant's dtype)."""
    def make(batch: int) -> tuple:
        g = torch.Generator().manual_seed(SEED + batch)
        return (torch.randn(batch, *shape, generator=g),)
    return make


def image(side: int = 32, channels: int = 3) -> Callable[[int], tuple]:
    return floats(channels, side, side)

"""An architecture of the public model set, and its dtype variants as `opsweep check` callables.

An `Arch` builds its model from a configuration (random weights, nothing downloaded) in
float32 and makes its example inputs at a given batch size (and, for a model with a
sequence, a length added to each input's sequence dimension); `define` turns each
architecture into one callable per dtype (``bert_f32``, ``bert_f16``, ``bert_bf16``), each
returning the contract of docs/check.md: the model cast to the dtype, its inputs (floating
tensors cast, integer ones as they are), a dynamic batch dimension where the model allows
it and a dynamic sequence length (dimension 1) on the inputs that have one (with inputs at
another batch size and longer sequences, run on the dynamic export), and a name.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

import torch

SEED = 0
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
BATCH, OTHER_BATCH = 2, 3  # the example batch, and the dynamic export's second one
GROW = 4  # how much longer each dynamic sequence is in the dynamic export's second inputs
MAX_LENGTH = 16  # a dynamic sequence length's upper bound (the position tables hold 32)


@dataclass(frozen=True)
class Arch:
    """One architecture: `build` gives the float32 model, `inputs(batch, grow)` its
    positional example inputs (`grow` added to each sequence length); `dynamic`: the batch
    dimension is exported dynamic (False only where the batch is not a dimension the
    exporter can make dynamic, said where the architecture is defined); `sequence`: per
    positional input, whether its dimension 1 is a sequence length exported dynamic (()
    for none); `kind`: what the network is built of, where the family spans several
    (cnn, vit: the timm and torchvision classifiers)."""

    name: str
    # encoder, decoder, encoder-decoder, vision (transformers image backbones),
    # classification, detection, segmentation, audio, plain
    family: str
    source: str  # the package the architecture comes from: transformers, torchvision, ...
    build: Callable[[], torch.nn.Module]
    inputs: Callable[..., tuple]
    dynamic: bool = True
    sequence: tuple[bool, ...] = ()
    kind: str = ""
    #: the dtypes it is defined at (DTYPES' tags): all three, unless eager PyTorch itself
    #: fails at one (said where the architecture is defined, and tested)
    dtypes: tuple[str, ...] = tuple(DTYPES)


def configured(name: str, family: str, inputs: Callable[..., tuple], model_class,
               config_class, sequence: tuple[bool, ...] = (), **config) -> Arch:
    """A `transformers` architecture built from its configuration, random weights:
    ``model_class(config_class(**config))``."""
    return Arch(name, family, "transformers", lambda: model_class(config_class(**config)),
                inputs, sequence=sequence)


def _cast(value, dtype: torch.dtype):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(dtype)
    return value


def case(arch: Arch, tag: str) -> dict:
    """The callable's dict for `arch` at the dtype `tag` names."""
    dtype = DTYPES[tag]
    torch.manual_seed(SEED)
    model = arch.build().eval().to(dtype)
    inputs = tuple(_cast(t, dtype) for t in arch.inputs(BATCH, 0))
    out = {"model": model, "inputs": inputs, "name": f"{arch.name} {dtype_name(tag)}"}
    if arch.dynamic:
        out["dynamic_shapes"] = dynamic_shapes(inputs, arch.sequence)
        out["dynamic_inputs"] = tuple(_cast(t, dtype) for t in arch.inputs(OTHER_BATCH, GROW))
    return out


def dynamic_shapes(inputs: tuple, sequence: tuple[bool, ...]) -> tuple:
    """torch.export's dynamic_shapes: the batch (dimension 0) of every tensor input, and
    dimension 1 of those `sequence` marks (a length of its own each)."""
    batch = torch.export.Dim("batch", min=2, max=16)
    shapes: list[dict | None] = []
    for i, t in enumerate(inputs):
        if not isinstance(t, torch.Tensor):
            shapes.append(None)
            continue
        dims = {0: batch}
        if i < len(sequence) and sequence[i]:
            dims[1] = torch.export.Dim(f"length{i}", min=2, max=MAX_LENGTH)
        shapes.append(dims)
    return tuple(shapes)


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
        for tag in arch.dtypes:
            fn = _callable(arch, tag, str(namespace.get("__name__", "")))
            if fn.__name__ in namespace:
                raise ValueError(f"two models named {fn.__name__}")
            namespace[fn.__name__] = fn
            names.append(fn.__name__)
    return tuple(names)


def ids(vocab: int, length: int = 8) -> Callable[..., tuple]:
    """Token ids of `length` (+ `grow`) at a batch size (a generator of their own: the same
    ids whatever was drawn before); its sequence is dynamic (``sequence=SEQ``)."""
    def make(batch: int, grow: int = 0) -> tuple:
        g = torch.Generator().manual_seed(SEED + batch)
        return (torch.randint(0, vocab, (batch, length + grow), generator=g),)
    return make


#: `sequence` of an architecture whose one input is a sequence (token ids, a time series)
SEQ = (True,)


def floats(*shape: int, sequence: bool = False) -> Callable[..., tuple]:
    """A float32 tensor of `shape` after the batch dimension (cast to the variant's dtype);
    with `sequence`, the first of `shape` is a sequence length, `grow` longer."""
    def make(batch: int, grow: int = 0) -> tuple:
        g = torch.Generator().manual_seed(SEED + batch)
        first = shape[:1] if not sequence else (shape[0] + grow,)
        return (torch.randn(batch, *first, *shape[1:], generator=g),)
    return make


def image(side: int = 32, channels: int = 3) -> Callable[..., tuple]:
    return floats(channels, side, side)

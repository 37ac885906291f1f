"""Eager PyTorch on a drawn example: tensors from their recipes, and the one call a cell's
probe makes (opsweep.catalog.cells). The engine's runner builds its inputs with the same
functions, so a probed example and a measured one see the same values."""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING, Any

from opsweep.model import Example, OpSpec, TensorArg

if TYPE_CHECKING:
    import torch


# --- inputs -----------------------------------------------------------------

def make_tensor(arg: TensorArg, generator: torch.Generator) -> torch.Tensor:
    import torch  # the catalog's loading (and a quick `check --no-export`) needs no torch
    dtype = getattr(torch, arg.dtype)
    shape = arg.shape
    if arg.choices:
        pool = torch.tensor(arg.choices, dtype=torch.float64)
        picks = torch.randint(0, len(arg.choices), shape, generator=generator)
        return pool[picks].to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype.is_complex:
        return torch.randn(shape, generator=generator, dtype=dtype)
    if dtype.is_floating_point:
        if arg.low is None and arg.high is None:
            return torch.randn(shape, generator=generator).to(dtype)
        low = -4.0 if arg.low is None else arg.low
        high = low + 8.0 if arg.high is None else arg.high
        return (torch.rand(shape, generator=generator, dtype=torch.float64)
                * (high - low) + low).to(dtype)
    low = -8 if arg.low is None else int(arg.low)
    high = 8 if arg.high is None else int(arg.high)
    if dtype == torch.uint8:
        low = max(low, 0)
    return torch.randint(low, max(high, low + 1), shape, generator=generator, dtype=dtype)


def _materialize(value: Any, generator: torch.Generator) -> Any:
    if isinstance(value, TensorArg):
        return make_tensor(value, generator)
    if isinstance(value, list):
        return [_materialize(v, generator) for v in value]
    if isinstance(value, tuple):
        return tuple(_materialize(v, generator) for v in value)
    return value


def materialize(example: Example) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Concrete (args, kwargs) for an example, deterministic in its seed."""
    import torch  # the catalog's loading (and a quick `check --no-export`) needs no torch
    generator = torch.Generator().manual_seed(example.seed)
    args = tuple(_materialize(a, generator) for a in example.args)
    kwargs = {k: _materialize(v, generator) for k, v in example.kwargs}
    return args, kwargs


#: an eager error's line is cut to this many characters
MAX_ERROR = 200
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def eager_error(spec: OpSpec, example: Example) -> str | None:
    """None when eager PyTorch runs `example` through the spec's call, else its error as one
    line (``Type: first line``, addresses masked): the operator refusing the cell. Making
    the inputs is opsweep's part: an error there is raised, never taken for a refusal."""
    import torch  # the catalog's loading (and a quick `check --no-export`) needs no torch
    args, kwargs = materialize(example)
    try:
        with warnings.catch_warnings():  # a draw prints nothing: eager's warnings are its own
            warnings.simplefilter("ignore")
            if spec.module is not None:
                torch.manual_seed(example.seed)
                target = spec.module(**dict(example.init)).eval()
            else:
                target = spec.fn
            target(*args, **kwargs)  # as the sweep's reference runs it: grad mode as is
    except Exception as exc:  # the operator's refusal, whatever its type
        text = str(exc).strip()
        first = _ADDRESS.sub("0x…", text.splitlines()[0]) if text else ""
        line = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        return line if len(line) <= MAX_ERROR else line[:MAX_ERROR - 1] + "…"
    return None

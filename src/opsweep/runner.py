"""Running one signature group: tensors from recipes, the PyTorch reference,
one export, the checker, onnxruntime, and the numerics comparison.

An export depends on shapes, dtypes and non-tensor arguments only, so every
example of a group (same signature, different value seeds) shares one export
and one onnxruntime session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch.utils import _pytree as pytree

from .adapter import Exporter, classify_export_error, error_line
from .model import Example, OpSpec, Outcome, Stage, TensorArg

Phase = Callable[[str], None]
_DTYPES = {name: getattr(torch, name) for name in (
    "float64", "float32", "float16", "bfloat16", "complex64", "complex128",
    "int64", "int32", "int16", "int8", "uint8", "bool")}


# --- inputs -----------------------------------------------------------------

def make_tensor(arg: TensorArg, generator: torch.Generator) -> torch.Tensor:
    dtype = _DTYPES[arg.dtype]
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
    generator = torch.Generator().manual_seed(example.seed)
    args = tuple(_materialize(a, generator) for a in example.args)
    kwargs = {k: _materialize(v, generator) for k, v in example.kwargs}
    return args, kwargs


class Call(torch.nn.Module):
    """A module whose inputs are exactly the example's tensors, in order;
    non-tensor arguments are baked into the forward call."""

    def __init__(self, target: Callable, args: tuple, kwargs: dict) -> None:
        super().__init__()
        if isinstance(target, torch.nn.Module):
            self.target = target  # registered: its parameters are exported
        else:
            self._fn = target
        leaves, self._spec = pytree.tree_flatten((args, kwargs))
        self._slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        self._leaves = [None if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
        self.inputs = tuple(leaves[i] for i in self._slots)
        self.eval()  # as users export: inference mode for dropout and norm layers

    def forward(self, *inputs):
        leaves = list(self._leaves)
        for slot, tensor in zip(self._slots, inputs):
            leaves[slot] = tensor
        args, kwargs = pytree.tree_unflatten(leaves, self._spec)
        target = self.target if hasattr(self, "target") else self._fn
        return target(*args, **kwargs)


def build_call(spec: OpSpec, example: Example) -> Call:
    args, kwargs = materialize(example)
    if spec.module is not None:
        torch.manual_seed(example.seed)
        target = spec.module(**dict(example.init))
        target.eval()
    else:
        target = spec.fn
    return Call(target, args, kwargs)


def flat_outputs(result: Any) -> list[torch.Tensor]:
    return [leaf for leaf in pytree.tree_leaves(result) if isinstance(leaf, torch.Tensor)]


# --- onnxruntime ------------------------------------------------------------

def make_session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), sess_options=options,
                                providers=["CPUExecutionProvider"])


def _to_ort(tensor: torch.Tensor) -> ort.OrtValue:
    tensor = tensor.detach()
    if tensor.is_complex():  # the exporter's convention: complex as a trailing real/imag pair
        tensor = torch.view_as_real(tensor.resolve_conj())
    tensor = tensor.contiguous()
    if tensor.dtype == torch.bfloat16:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            tensor.view(torch.int16).numpy().view(np.uint16), onnx.TensorProto.BFLOAT16)
    return ort.OrtValue.ortvalue_from_numpy(tensor.numpy())


def _from_ort(value: ort.OrtValue) -> torch.Tensor:
    if value.data_type() == "tensor(bfloat16)":
        return torch.from_dlpack(value._get_c_value()).clone()
    return torch.from_numpy(np.array(value.numpy(), copy=True))


def run_session(session: ort.InferenceSession, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    names = [i.name for i in session.get_inputs()]
    by_position = {f"inputs_{i}": t for i, t in enumerate(inputs)}
    if all(n in by_position for n in names):
        feeds = {n: _to_ort(by_position[n]) for n in names}
    else:
        feeds = {n: _to_ort(t) for n, t in zip(names, inputs)}
    return [_from_ort(v) for v in session.run_with_ort_values(None, feeds)]


# --- numerics ---------------------------------------------------------------

def compare(expected: Sequence[torch.Tensor], actual: Sequence[torch.Tensor],
            spec: OpSpec) -> str:
    """Empty string when outputs agree; otherwise what differs (no values)."""
    if len(expected) != len(actual):
        return f"PyTorch gives {len(expected)} outputs, onnxruntime {len(actual)}"
    for i, (want, got) in enumerate(zip(expected, actual)):
        want = want.detach().resolve_conj().resolve_neg()
        if want.is_complex() and not got.is_complex() and got.dim() == want.dim() + 1 \
                and got.shape[-1] == 2 and got.dtype.is_floating_point:
            got = torch.view_as_complex(got.contiguous())  # back from the real/imag pair
        if tuple(want.shape) != tuple(got.shape):
            return f"output {i}: shape {tuple(got.shape)}, PyTorch gives {tuple(want.shape)}"
        if want.dtype != got.dtype:
            return f"output {i}: dtype {got.dtype}, PyTorch gives {want.dtype}"
        tol = spec.tolerance(str(want.dtype).removeprefix("torch."))
        if want.dtype.is_complex:
            want, got = torch.view_as_real(want), torch.view_as_real(got)
        if tol is None or not want.dtype.is_floating_point:
            if not torch.equal(want, got):
                bad = int((want != got).sum())
                return f"output {i}: {bad}/{want.numel()} elements differ (exact comparison)"
            continue
        w, g = want.double(), got.double()
        close = torch.isclose(g, w, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
        if not bool(close.all()):
            bad = int((~close).sum())
            finite = torch.isfinite(w) & torch.isfinite(g)
            err = float((w - g).abs()[finite].max()) if bool(finite.any()) else float("nan")
            return (f"output {i}: {bad}/{w.numel()} elements differ beyond rtol={tol.rtol:g} "
                    f"atol={tol.atol:g} (max abs error {err:.3g}; NaN/inf placement counts)")
    return ""


# --- one group --------------------------------------------------------------

def _outcome(example: Example, stage: Stage, error: str = "") -> Outcome:
    return Outcome(stage, example.signature, example.dtype, example.rank, example.size, error)


def run_group(spec: OpSpec, group: Sequence[Example], exporter: Exporter,
              phase: Phase = lambda _: None) -> list[Outcome]:
    """All examples of one signature: one export, one session, many runs."""
    outcomes: dict[int, Outcome] = {}
    references: dict[int, tuple[tuple, list[torch.Tensor]]] = {}
    call: Call | None = None  # the first valid example's module: the one exported
    for i, example in enumerate(group):
        phase("reference")
        try:
            if call is None:
                this = build_call(spec, example)
            else:  # a module's parameters are baked into the export: reuse them
                target = call.target if spec.module is not None else spec.fn
                this = Call(target, *materialize(example))
            expected = flat_outputs(this(*[t.clone() for t in this.inputs]))
        except Exception as exc:
            outcomes[i] = _outcome(example, Stage.INVALID, error_line(exc))
            continue
        references[i] = (this.inputs, expected)
        if call is None:
            call = this
    if call is None:
        return [outcomes[i] for i in range(len(group))]

    def fill(stage: Stage, error: str) -> list[Outcome]:
        for i in references:
            outcomes.setdefault(i, _outcome(group[i], stage, error))
        return [outcomes[i] for i in range(len(group))]

    phase("export")
    try:
        model = exporter.export(call, tuple(t.clone() for t in call.inputs))
    except Exception as exc:
        return fill(classify_export_error(exc), error_line(exc))
    phase("checker")
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:
        return fill(Stage.CHECKER, error_line(exc))
    phase("runtime")
    try:
        session = make_session(model)
    except Exception as exc:
        return fill(Stage.RUNTIME, error_line(exc))
    for i, (inputs, expected) in references.items():
        phase("runtime")
        try:
            actual = run_session(session, inputs)
        except Exception as exc:
            outcomes[i] = _outcome(group[i], Stage.RUNTIME, error_line(exc))
            continue
        phase("numerics")
        mismatch = "" if spec.nondeterministic else compare(expected, actual, spec)
        stage = Stage.NUMERICS if mismatch else Stage.OK
        outcomes[i] = _outcome(group[i], stage, mismatch)
    return [outcomes[i] for i in range(len(group))]

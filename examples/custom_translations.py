"""An example custom translation table for the dynamo ONNX exporter.

Each entry maps a torch operator that torch 2.13's exporter has no
translation for to an onnxscript function, exactly as a project would pass it:

    torch.onnx.export(model, args, dynamo=True, custom_translation_table=TABLE)

Measure the catalog with it as a second target:

    opsweep sweep --translations examples/custom_translations.py:TABLE

Functions are traced: the arguments are onnxscript values (inputs) or plain
Python values (attributes), so dtype-dependent choices are ordinary ``if``s.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch
from onnxscript import opset18 as op

_FLOATS = {ir.DataType.FLOAT, ir.DataType.FLOAT16, ir.DataType.BFLOAT16, ir.DataType.DOUBLE}


def _nan_aware(self, other, larger: bool):
    """fmax/fmin: where one side is NaN, the other side wins (IEEE maxNum/minNum)."""
    if self.dtype == ir.DataType.BOOL:  # Max/Min have no bool kernels: or/and instead
        return op.Or(self, other) if larger else op.And(self, other)
    picked = op.Max(self, other) if larger else op.Min(self, other)
    if self.dtype not in _FLOATS:
        return picked
    return op.Where(op.IsNaN(self), other, op.Where(op.IsNaN(other), self, picked))


def prims_fmax(self, other):
    return _nan_aware(self, other, larger=True)


def prims_fmin(self, other):
    return _nan_aware(self, other, larger=False)


def prims_hypot(self, other):
    """sqrt(a² + b²), in float32 for half-precision inputs as PyTorch computes it;
    an infinite side gives +inf even when the other side is NaN (C99 hypot)."""
    a, b = self, other
    half = self.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16)
    if half:
        a, b = op.Cast(self, to=ir.DataType.FLOAT), op.Cast(other, to=ir.DataType.FLOAT)
    result = op.Sqrt(op.Add(op.Mul(a, a), op.Mul(b, b)))
    infinite = op.Or(op.IsInf(a), op.IsInf(b))
    result = op.Where(infinite, op.CastLike(op.Constant(value_float=float("inf")), result), result)
    return op.Cast(result, to=self.dtype) if half else result


def aten_detach_copy(self):
    return op.Identity(self)


def _frequencies(n: int, d: float, dtype, half: bool) -> ir.Value:
    """The sample frequencies are known at export time: one constant."""
    if half:  # rfftfreq: only the non-negative half
        values = np.arange(n // 2 + 1, dtype=np.float64) / (n * d)
    else:
        values = np.arange(n, dtype=np.float64)
        values = np.where(values < (n + 1) // 2, values, values - n) / (n * d)
    target = ir.DataType(dtype) if isinstance(dtype, int) and dtype > 0 else ir.DataType.FLOAT
    return op.Cast(op.Constant(value=ir.tensor(values)), to=target)


def aten_fft_fftfreq(n: int, d: float = 1.0, dtype: int = -1, layout: str = "",
                     device: str = "", pin_memory: bool = False):
    return _frequencies(n, d, dtype, half=False)


def aten_fft_rfftfreq(n: int, d: float = 1.0, dtype: int = -1, layout: str = "",
                      device: str = "", pin_memory: bool = False):
    return _frequencies(n, d, dtype, half=True)


TABLE = {
    torch.ops.prims.fmax.default: prims_fmax,
    torch.ops.prims.fmin.default: prims_fmin,
    torch.ops.prims.hypot.default: prims_hypot,
    torch.ops.aten.detach_copy.default: aten_detach_copy,
    torch.ops.aten.fft_fftfreq.default: aten_fft_fftfreq,
    torch.ops.aten.fft_rfftfreq.default: aten_fft_rfftfreq,
}

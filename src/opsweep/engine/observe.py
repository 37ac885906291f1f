"""Comparing onnxruntime's outputs with PyTorch's: the verdict (`Difference`, or None when
they agree within tolerance) and what the comparison saw (`opsweep.model.Observed`: the
error the artifact records per cell, and a policy re-grades from).

The verdict is ``torch.isclose`` per element (``|got - want| <= atol + rtol * |want|``,
NaN where PyTorch has NaN, an infinity where it has the same one); dtypes without a
tolerance compare exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from opsweep.model import Mismatch, Observed, Tolerance

#: output dtypes whose error is also counted in units in the last place
ULP_DTYPES = (torch.float16, torch.bfloat16)

Tolerances = Callable[[str], "Tolerance | None"]


@dataclass(frozen=True)
class Difference:
    """Why outputs did not match: what kind of difference, and one line saying it."""

    kind: Mismatch
    message: str


@dataclass
class _Seen:
    """What the value comparisons of one example's outputs saw so far."""

    errors: list[torch.Tensor]
    max_rel: float = 0.0
    nonfinite: bool = False
    exact: bool = False
    ulp: int | None = None
    tolerances: set[Tolerance | None] | None = None
    excess: float = 0.0

    def observed(self) -> Observed:
        every = torch.cat(self.errors) if self.errors else torch.zeros(0, dtype=torch.float64)
        tolerances = self.tolerances or set()
        one = next(iter(tolerances)) if len(tolerances) == 1 else None
        return Observed(float(every.max()) if every.numel() else 0.0,
                        float(every.median()) if every.numel() else 0.0, self.max_rel,
                        self.nonfinite, self.exact, self.ulp, one, self.excess if one else 0.0)


def compare(expected: Sequence[torch.Tensor], actual: Sequence[torch.Tensor],
            tolerance: Tolerances) -> Difference | None:
    """None when outputs agree; otherwise what differs (never values)."""
    return measure(expected, actual, tolerance)[0]


def measure(expected: Sequence[torch.Tensor], actual: Sequence[torch.Tensor],
            tolerance: Tolerances) -> tuple[Difference | None, Observed | None]:
    """The verdict, and the error seen (None when the values were not all compared: a
    different output count, shape or dtype)."""
    if len(expected) != len(actual):
        return Difference(Mismatch.COUNT,
                          f"PyTorch gives {len(expected)} outputs, onnxruntime {len(actual)}"), None
    seen = _Seen([])
    first: Difference | None = None
    for i, (want, got) in enumerate(zip(expected, actual)):
        want = want.detach().resolve_conj().resolve_neg()
        if want.is_complex() and not got.is_complex() and got.dim() == want.dim() + 1 \
                and got.shape[-1] == 2 and got.dtype.is_floating_point:
            # back from the real/imag pair (a copy: onnxruntime's empty output has strides
            # of 0, which a view refuses)
            got = torch.complex(got[..., 0], got[..., 1])
        if tuple(want.shape) != tuple(got.shape):
            return first or Difference(Mismatch.SHAPE, f"output {i}: shape {tuple(got.shape)}, "
                                                       f"PyTorch gives {tuple(want.shape)}"), None
        if want.dtype != got.dtype:
            return first or Difference(
                Mismatch.DTYPE, f"output {i}: dtype {got.dtype}, PyTorch gives {want.dtype}"), None
        differs = _values(i, want, got, tolerance(str(want.dtype).removeprefix("torch.")), seen)
        first = first or differs
    return first, seen.observed()


def _pairs(t: torch.Tensor) -> torch.Tensor:
    """A complex tensor as a trailing real/imag pair, whatever its strides."""
    return torch.stack([t.real, t.imag], dim=-1)


def _values(i: int, want: torch.Tensor, got: torch.Tensor, tol: Tolerance | None,
            seen: _Seen) -> Difference | None:
    """One output's values: the verdict, its error added to `seen`."""
    if want.dtype.is_complex:  # as real/imag pairs (copies: a view needs strides to fit)
        want, got = _pairs(want), _pairs(got)
    if tol is None or not want.dtype.is_floating_point:
        _error(want, got, None, seen)
        if not torch.equal(want, got):
            seen.exact = True
            bad = int((want != got).sum())
            return Difference(Mismatch.VALUES, f"output {i}: {bad}/{want.numel()} elements "
                                               "differ (exact comparison)")
        return None
    _error(want, got, tol, seen)
    w, g = want.double(), got.double()
    close = torch.isclose(g, w, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
    if bool(close.all()):
        return None
    bad = int((~close).sum())
    finite = torch.isfinite(w) & torch.isfinite(g)
    err = float((w - g).abs()[finite].max()) if bool(finite.any()) else float("nan")
    return Difference(Mismatch.VALUES, (
        f"output {i}: {bad}/{w.numel()} elements differ beyond rtol={tol.rtol:g} "
        f"atol={tol.atol:g} (max abs error {err:.3g}; NaN/inf placement counts)"))


def _error(want: torch.Tensor, got: torch.Tensor, tol: Tolerance | None, seen: _Seen) -> None:
    """Add one output's error to `seen` (its elements finite on both sides)."""
    w, g = want.double(), got.double()
    finite = torch.isfinite(w) & torch.isfinite(g)
    placed = torch.isnan(w) & torch.isnan(g) | (w == g)
    seen.nonfinite = seen.nonfinite or bool((~finite & ~placed).any())
    err = (w - g).abs()[finite].flatten()
    size = w.abs()[finite].flatten()
    seen.errors.append(err)
    if err.numel():
        rel = torch.where(size > 0, err / size.clamp_min(torch.finfo(torch.float64).tiny),
                          torch.where(err > 0, float("inf"), 0.0))
        seen.max_rel = max(seen.max_rel, float(rel.max()))
    if want.dtype.is_floating_point:
        if seen.tolerances is None:
            seen.tolerances = set()
        seen.tolerances.add(tol)
        if tol is not None and err.numel():
            seen.excess = max(seen.excess, float((err - tol.rtol * size).max()))
    if want.dtype in ULP_DTYPES:
        apart = int((_ordered(got) - _ordered(want)).abs()[finite].max()) if err.numel() else 0
        seen.ulp = max(seen.ulp or 0, apart)


def _ordered(t: torch.Tensor) -> torch.Tensor:
    """A 16-bit float's bits as integers in the order of the values (-0 and +0 alike)."""
    bits = t.contiguous().view(torch.int16).to(torch.int32)
    magnitude = bits & 0x7FFF
    return torch.where(bits < 0, -magnitude, magnitude)


def worse(a: Observed | None, b: Observed | None) -> Observed | None:
    """The larger of two examples' errors, field by field (an example compared twice)."""
    if a is None or b is None:
        return a or b
    ulp = None if a.ulp is None and b.ulp is None else max(a.ulp or 0, b.ulp or 0)
    return Observed(max(a.max_abs, b.max_abs), max(a.median_abs, b.median_abs),
                    max(a.max_rel, b.max_rel), a.nonfinite or b.nonfinite, a.exact or b.exact,
                    ulp, a.tolerance if a.tolerance == b.tolerance else None,
                    max(a.excess, b.excess))

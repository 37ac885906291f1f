"""What a comparison observes of the error (opsweep.engine.observe.measure) and how a policy
re-grades it (opsweep.policy.judge), on real tensors."""

import math

import torch

from opsweep.engine.observe import measure, worse
from opsweep.model import Tolerance
from opsweep.policy import builtin, judge

TOL = builtin().for_spec(None)


def test_abs_median_rel_and_excess():
    want = torch.tensor([1.0, 2.0, 4.0, 0.0], dtype=torch.float64)
    got = want + torch.tensor([1e-8, -3e-8, 2e-8, 0.0], dtype=torch.float64)
    differs, seen = measure([want], [got], TOL)
    assert differs is None and not seen.nonfinite and seen.ulp is None
    assert math.isclose(seen.max_abs, 3e-8, rel_tol=1e-6)
    assert math.isclose(seen.median_abs, 1e-8, rel_tol=1e-6)
    assert math.isclose(seen.max_rel, 1.5e-8, rel_tol=1e-6)
    assert seen.tolerance == Tolerance(1e-7, 1e-7)
    assert math.isclose(seen.excess, 3e-8 - 1e-7 * 2.0) or seen.excess == 0.0


def test_excess_is_the_smallest_atol_that_passes_at_the_rtol():
    want = torch.tensor([1.0, 100.0])
    got = torch.tensor([1.001, 100.0])
    differs, seen = measure([want], [got], TOL)  # float32: rtol 1e-4, atol 1e-5
    assert differs is not None
    assert math.isclose(seen.excess, 0.001 - 1e-4, rel_tol=1e-3)
    passes = judge(seen.excess, seen.tolerance, Tolerance(1e-4, 1e-3), seen.max_abs, seen.max_rel)
    assert passes is True
    assert judge(seen.excess, seen.tolerance, Tolerance(1e-4, 1e-5), seen.max_abs,
                 seen.max_rel) is False


def test_half_precision_error_in_ulp():
    want = torch.tensor([1.0, -2.0, 0.0], dtype=torch.float16)
    up = torch.nextafter(want, torch.tensor(math.inf, dtype=torch.float16))
    got = torch.nextafter(up, torch.tensor(math.inf, dtype=torch.float16))  # two ULP up
    _, seen = measure([want], [got], TOL)
    assert seen.ulp == 2
    _, zero = measure([torch.tensor([0.0], dtype=torch.bfloat16)],
                      [torch.tensor([-0.0], dtype=torch.bfloat16)], TOL)
    assert zero.ulp == 0 and zero.max_abs == 0.0


def test_a_nan_where_pytorch_has_a_number_fails_at_any_tolerance():
    want = torch.tensor([1.0, math.nan, math.inf])
    _, same = measure([want], [want.clone()], TOL)
    assert not same.nonfinite and same.max_abs == 0.0
    differs, seen = measure([want], [torch.tensor([math.nan, math.nan, math.inf])], TOL)
    assert differs is not None and seen.nonfinite


def test_relative_error_where_pytorch_gives_zero_is_infinite():
    _, seen = measure([torch.tensor([0.0, 1.0])], [torch.tensor([1e-9, 1.0])], TOL)
    assert seen.max_rel == math.inf


def test_exact_outputs_and_no_observation_without_values():
    differs, seen = measure([torch.tensor([1, 2])], [torch.tensor([1, 3])], TOL)
    assert differs is not None and seen.exact and seen.tolerance is None
    _, none = measure([torch.zeros(2)], [torch.zeros(3)], TOL)
    assert none is None


def test_worse_takes_the_larger_of_two_draws():
    _, a = measure([torch.tensor([1.0])], [torch.tensor([1.0 + 1e-6])], TOL)
    _, b = measure([torch.tensor([1.0])], [torch.tensor([1.0 + 1e-3])], TOL)
    assert worse(a, b).max_abs == b.max_abs and worse(None, a) == a


def test_judge_cannot_say_below_the_measured_rtol_between_bounds():
    measured = Tolerance(1e-2, 1e-3)
    assert judge(0.0, measured, Tolerance(1e-3, 1e-4), 0.05, 0.02) is None
    assert judge(0.002, measured, Tolerance(1e-3, 1e-3), 0.05, 0.02) is False
    assert judge(0.002, measured, Tolerance(1e-3, 0.1), 0.05, 0.02) is True


def test_an_empty_complex_output_is_compared():
    """`complex`, `conj` and `polar` on the empty cell: onnxruntime's empty real/imag pair
    comes back with strides of 0, viewing it as complex raised in the worker, and the group
    was recorded as a lost worker, not measured."""
    import numpy as np
    want = torch.empty(0, dtype=torch.complex64)
    got = torch.from_numpy(np.zeros((0, 2), dtype=np.float32))
    assert got.stride() == (0, 0)
    difference, observed = measure([want], [got], TOL)
    assert difference is None and observed is not None
    want = torch.randn(3, 2, dtype=torch.complex64).t().conj()
    pair = torch.view_as_real(want.resolve_conj().contiguous())
    assert measure([want], [pair], TOL)[0] is None
    difference, _ = measure([want], [pair + 1], TOL)
    assert difference is not None and "elements differ" in difference.message

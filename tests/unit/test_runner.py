import math

import torch

from opsweep.catalog.families import unary
from opsweep.model import Example, Mismatch, TensorArg, Tolerance
from opsweep.engine.runner import Call, compare, make_tensor, materialize
from opsweep.policy import builtin

SPEC = builtin().for_spec(unary("sin"))
EXACT = builtin().for_spec(unary("sin", tolerances={"float32": Tolerance(0.0, 0.0)}))


def test_values_are_deterministic_in_the_seed_and_respect_ranges():
    ex = Example((TensorArg((50,), "float32", 1.0, 2.0), TensorArg((50,), "int64", 0, 3)), seed=7)
    (a, i), _ = materialize(ex)
    (b, j), _ = materialize(ex)
    assert torch.equal(a, b) and torch.equal(i, j)
    assert bool(((a >= 1) & (a <= 2)).all()) and set(i.tolist()) <= {0, 1, 2}
    (c, _), _ = materialize(Example(ex.args, seed=8))
    assert not torch.equal(a, c)


def test_choices_draw_edge_values():
    t = make_tensor(TensorArg((200,), "float64", choices=(0.0, -0.0, math.nan)),
                    torch.Generator().manual_seed(0))
    assert t.isnan().any() and (t == 0).any() and torch.signbit(t[t == 0]).any()


def test_every_dtype_materializes():
    for dtype in ("float64", "float32", "float16", "bfloat16", "complex64", "int64", "int32",
                  "bool", "uint8"):
        t = make_tensor(TensorArg((2, 3), dtype), torch.Generator().manual_seed(0))
        assert str(t.dtype) == f"torch.{dtype}" and t.shape == (2, 3)


def test_call_takes_exactly_the_tensors_and_bakes_the_rest():
    a, b = torch.ones(2), torch.zeros(2)
    call = Call(torch.cat, ([a, b],), {"dim": 0})
    assert len(call.inputs) == 2
    assert torch.equal(call(torch.full((2,), 3.0), b), torch.tensor([3.0, 3.0, 0.0, 0.0]))


def _says(diff, kind: Mismatch, text: str) -> bool:
    return diff is not None and diff.kind is kind and text in diff.message


def test_compare_agrees_within_tolerance_and_nan_aware():
    x = torch.tensor([1.0, math.nan, math.inf])
    assert compare([x], [x + 1e-7], SPEC) is None
    assert _says(compare([x], [torch.tensor([1.0, 0.0, math.inf])], SPEC), Mismatch.VALUES,
                 "1/3 elements differ")
    assert _says(compare([x], [torch.tensor([1.0, math.nan, -math.inf])], SPEC), Mismatch.VALUES,
                 "1/3")


def test_compare_signed_zero_matters_only_through_values():
    pi = torch.tensor([math.pi])
    assert _says(compare([pi], [-pi], SPEC), Mismatch.VALUES, "max abs error 6.28")


def test_compare_complex_through_real_view():
    z = torch.tensor([1 + 2j], dtype=torch.complex64)
    assert compare([z], [z.clone()], SPEC) is None
    assert _says(compare([z], [torch.tensor([1 - 2j], dtype=torch.complex64)], SPEC),
                 Mismatch.VALUES, "1/2 elements differ")


def test_compare_shape_dtype_count_and_exact_kinds():
    a = torch.zeros(2, 3)
    assert _says(compare([a], [torch.zeros(3, 2)], SPEC), Mismatch.SHAPE, "shape (3, 2)")
    assert _says(compare([a], [a.double()], SPEC), Mismatch.DTYPE, "dtype torch.float64")
    assert _says(compare([a, a], [a], SPEC), Mismatch.COUNT, "2 outputs")
    i = torch.tensor([1, 2])
    assert _says(compare([i], [torch.tensor([1, 3])], SPEC), Mismatch.VALUES, "exact comparison")
    assert compare([a], [a + 1e-9], EXACT).kind is Mismatch.VALUES


def test_complex_outputs_come_back_from_the_real_imag_pair():
    z = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    assert compare([z], [torch.view_as_real(z)], SPEC) is None
    assert _says(compare([z], [torch.view_as_real(z.conj().resolve_conj())], SPEC),
                 Mismatch.VALUES, "elements differ")


# --- which inputs carry the batch: evidence from eager PyTorch -----------------------

def _plan(fn, *args, batch=None):
    from dataclasses import replace

    from opsweep.engine.runner import choose_plan
    spec = replace(unary("sin"), fn=fn, batch=batch)
    example = Example(tuple(args))
    return choose_plan(spec, fn, example)


def test_a_coincident_contraction_side_is_not_tied_to_the_batch():
    plan, call, _ = _plan(torch.mm, TensorArg((2, 2), "float32"), TensorArg((2, 2), "float32"))
    assert plan.inputs == {0} and [tuple(t.shape) for t in call.inputs] == [(2, 2), (2, 2)]


def test_inputs_that_must_agree_are_tied():
    plan, _, _ = _plan(torch.bmm, TensorArg((2, 2, 2), "float32"), TensorArg((2, 2, 3), "float32"))
    assert plan.inputs == {0, 1}
    plan, _, _ = _plan(torch.add, TensorArg((3, 4), "float32"), TensorArg((3, 4), "float32"))
    assert plan.inputs == {0, 1} and (plan.export_size, plan.run_size) == (3, 4)


def test_no_plan_when_no_leading_dimension_runs_at_another_size():
    cross = torch.linalg.cross  # its vectors have exactly three elements
    plan, call, why = _plan(cross, TensorArg((3,), "float32"), TensorArg((3,), "float32"))
    assert plan is None and call is None
    assert why.startswith("RuntimeError") and "3" in why


def test_a_spec_that_names_its_batch_inputs_gets_exactly_those():
    plan, _, _ = _plan(torch.add, TensorArg((3, 4), "float32"), TensorArg((3, 4), "float32"),
                       batch=(0, 1))
    assert plan.inputs == {0, 1}
    plan, _, why = _plan(torch.add, TensorArg((3, 4), "float32"), TensorArg((3, 4), "float32"),
                         batch=(0,))
    assert plan is None and why  # eager refuses [4, 4] + [3, 4]: the declaration is wrong

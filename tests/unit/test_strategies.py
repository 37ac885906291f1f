import pytest
from hypothesis import given

from opsweep.catalog.families import binary, gap, reduction, unary
from opsweep.model import TensorArg
from opsweep.catalog.strategies import broadcast_shapes, shapes, tensors


@pytest.mark.parametrize("kwargs, name", [
    ({"min_rank": -1}, "min_rank"),
    ({"min_rank": 3, "max_rank": 2}, "max_rank"),
    ({"max_side": 0}, "max_side"),
])
def test_shapes_reject_bad_bounds_naming_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        shapes(**kwargs)


def test_tensors_reject_unknown_dtype_and_empty_ranges():
    with pytest.raises(ValueError, match="^dtypes: unknown dtype 'float8'"):
        tensors(dtypes=("float8",))
    with pytest.raises(ValueError, match="^dtypes:"):
        tensors(dtypes=())
    with pytest.raises(ValueError, match="^max_value:"):
        tensors(dtypes=("float32",), min_value=1.0, max_value=1.0)


def test_a_callable_torch_lacks_is_named_not_an_import_error():
    """A callable removed from torch leaves the spec loadable; the catalog records it absent."""
    missing = unary("not_an_op").fn
    assert missing.reason == "no callable named 'not_an_op' in torch"
    with pytest.raises(AttributeError, match="no callable named 'not_an_op' in torch"):
        missing()


def test_family_constructors_fail_at_construction_with_the_argument():
    with pytest.raises(ValueError, match="^fn: expected a callable"):
        unary("sin", fn=3)
    with pytest.raises(ValueError, match="^dim:"):
        reduction("sum", dim="several")
    with pytest.raises(ValueError, match="^gap: unknown stage"):
        gap("why", "somewhere")
    with pytest.raises(ValueError, match="^gap: reason"):
        gap(" ", "checker")
    with pytest.raises(ValueError, match="^dtypes:"):
        binary("add", dtypes=("float32", "int3"))


@given(shapes(min_rank=1, max_rank=3, max_side=4))
def test_shapes_respect_bounds(shape):
    assert 1 <= len(shape) <= 3 and all(1 <= s <= 4 for s in shape)


@given(shapes(max_rank=4).flatmap(lambda s: broadcast_shapes(s).map(lambda b: (s, b))))
def test_broadcast_shapes_broadcast(pair):
    import torch
    shape, other = pair
    assert torch.broadcast_shapes(shape, other) == torch.Size(shape)


@given(tensors(dtypes=("int64",), shape=(3,), min_value=0, max_value=5))
def test_tensors_carry_recipes_not_values(t):
    assert t == TensorArg((3,), "int64", 0, 5)

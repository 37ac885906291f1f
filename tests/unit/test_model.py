import pytest

from opsweep.model import Example, TensorArg


def test_signature_names_shapes_dtypes_and_arguments_never_seed():
    a = Example((TensorArg((2, 3), "float32"), 1.5), (("dim", -1),), (), seed=1)
    b = Example((TensorArg((2, 3), "float32"), 1.5), (("dim", -1),), (), seed=99)
    assert a.signature == b.signature == "f32[2,3], 1.5, dim=-1"
    assert (a.dtype, a.rank, a.size) == ("float32", 2, 6)


def test_signature_of_nested_lists_and_module_init():
    ex = Example(([TensorArg((1,), "int64"), TensorArg((), "bool")],), (), (("hidden", 4),))
    assert ex.signature == "[i64[1], b8[]] | hidden=4"
    assert ex.dtype == "int64" and ex.rank == 1


def test_example_without_tensors():
    ex = Example((3,))
    assert (ex.dtype, ex.rank, ex.size) == ("none", 0, 0)


def test_tensor_arg_is_hashable_and_frozen():
    t = TensorArg((2,), "float16")
    with pytest.raises(Exception):
        t.shape = (3,)  # type: ignore[misc]
    assert hash(t) == hash(TensorArg((2,), "float16"))

"""Factory operators: tensors made from sizes and scalars, not from inputs.

A factory takes no tensor, so each forward call gets a small dummy tensor
that only supplies the dtype (``lambda x, size: torch.zeros(size,
dtype=x.dtype)``); its values never reach the output. The ``*_like`` and
``new_*`` forms take a real input. ``empty*`` results are uninitialised
memory: those specs are nondeterministic (export and runtime measured,
numerics skipped)."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ABSENT, ALL, FLOAT, INTEGRAL, NUMERIC, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples, shapes

A = torch.ops.aten


def _dummy(draw, dtypes):
    """The dtype carrier: a 0-d tensor whose values are never read."""
    return TensorArg((), draw(st.sampled_from(dtypes)))


def _fill_value(draw, dtype):
    if dtype == "bool":
        return draw(st.booleans())
    if dtype in INTEGRAL:
        return draw(st.integers(-5, 5))
    return draw(st.sampled_from([-1.5, 0.0, 2.0, float("inf")]))


def _sized(dtypes, *, value=False):
    def build(draw):
        x = _dummy(draw, dtypes)
        args = (x, draw(shapes()))
        return (args + (_fill_value(draw, x.dtype),) if value else args), {}
    return examples(build)


def _like(dtypes, *, value=False):
    """An input, a fill value maybe, and sometimes a different output dtype."""
    def build(draw):
        x = TensorArg(draw(shapes()), draw(st.sampled_from(dtypes)))
        dtype = draw(optional(st.sampled_from(dtypes)))
        out = x.dtype if dtype is ABSENT else dtype
        args = (x, _fill_value(draw, out)) if value else (x,)
        return args, present(dtype=ABSENT if dtype is ABSENT else getattr(torch, dtype))
    return examples(build)


def _new(dtypes, *, value=False, max_rank=2):
    """An input, a size, a fill value maybe, and sometimes a dtype other than the input's."""
    def build(draw):
        x = TensorArg(draw(shapes(max_rank=max_rank)), draw(st.sampled_from(dtypes)))
        dtype = draw(_other_dtype(x.dtype, dtypes))
        args = (x, draw(shapes()))
        out = x.dtype if dtype is ABSENT else dtype
        return (args + (_fill_value(draw, out),) if value else args), _dtype_kwarg(dtype)
    return examples(build)


def _other_dtype(dtype, dtypes):
    """ABSENT (keep the input's dtype) or a different one."""
    return optional(st.sampled_from([d for d in dtypes if d != dtype]))


def _dtype_kwarg(dtype):
    return present(dtype=ABSENT if dtype is ABSENT else getattr(torch, dtype))


def _strides(draw, size):
    """Non-overlapping strides for `size`, in a random dimension order."""
    order = draw(st.permutations(range(len(size))))
    strides, step = [0] * len(size), 1
    for d in reversed(order):
        strides[d] = step
        step *= size[d]
    return tuple(strides)


def _empty_strided(draw):
    x = _dummy(draw, ALL)
    size = draw(shapes())
    return (x, size, _strides(draw, size)), {}


def _new_empty_strided(draw):
    x = TensorArg(draw(shapes(max_rank=2)), draw(st.sampled_from(ALL)))
    dtype = draw(_other_dtype(x.dtype, ALL))
    size = draw(shapes())
    return (x, size, _strides(draw, size)), _dtype_kwarg(dtype)


def _empty_permuted(draw):
    x = _dummy(draw, ALL)
    size = draw(shapes())
    return (x, size, tuple(draw(st.permutations(range(len(size)))))), {}


# --- ranges ---------------------------------------------------------------------

def _arange(draw):
    x = _dummy(draw, NUMERIC)
    whole = x.dtype in INTEGRAL or draw(st.booleans())
    return (x, draw(st.integers(1, 9)) if whole else draw(st.sampled_from([0.5, 2.5, 4.75]))), {}


def _arange_start_step(draw):
    x = _dummy(draw, NUMERIC)
    if x.dtype in INTEGRAL or draw(st.booleans()):
        start, end = draw(st.integers(-5, 5)), draw(st.integers(-5, 5))
        step = draw(st.integers(1, 3)) * (1 if end >= start else -1)
    else:
        start, end = draw(st.sampled_from([-1.5, 0.0, 0.25])), draw(st.sampled_from([2.0, 3.3]))
        step = draw(st.sampled_from([0.5, 0.7]))
    return (x, start, end, step), {}


def _range(draw):
    x = _dummy(draw, NUMERIC)
    start = draw(st.integers(-4, 4))
    return (x, start, start + draw(st.integers(0, 6)), draw(st.integers(1, 3))), {}


def _linspace(draw):
    x = _dummy(draw, NUMERIC)
    return (x, draw(st.integers(-4, 4)), draw(st.sampled_from([-2.5, 0.0, 1.0, 6.0])),
            draw(st.integers(0, 8))), {}


def _logspace(draw):
    x = _dummy(draw, NUMERIC)
    return (x, draw(st.integers(-2, 1)) if x.dtype in FLOAT else draw(st.integers(0, 2)),
            draw(st.sampled_from([-1.5, 0.0, 0.5, 2.0, 3.0])), draw(st.integers(0, 6))), present(
        base=draw(optional(st.sampled_from([2.0, 10.0, 0.5]))))


def _vander(draw):
    x = TensorArg((draw(st.integers(1, 6)),), draw(st.sampled_from(NUMERIC)))
    return (x,), present(N=draw(optional(st.integers(0, 5))),
                     increasing=draw(optional(st.booleans())))


def _eye(draw):
    x = _dummy(draw, ALL)
    n = draw(st.integers(0, 6))
    return ((x, n, draw(st.integers(0, 6))) if draw(st.booleans()) else (x, n)), {}


def _tri_indices(draw):
    x = _dummy(draw, INTEGRAL)
    return (x, draw(st.integers(0, 6)), draw(st.integers(0, 6)), draw(st.integers(-3, 3))), {}


def _scalar_tensor(draw):
    x = _dummy(draw, ALL)
    return (x, _fill_value(draw, x.dtype)), {}


def _fill_scalar(draw):
    x = TensorArg(draw(shapes()), draw(st.sampled_from(ALL)))
    return (x, _fill_value(draw, x.dtype)), {}


def _fill_tensor(draw):
    x = TensorArg(draw(shapes()), draw(st.sampled_from(ALL)))
    return (x, TensorArg((), draw(st.sampled_from(ALL)))), {}


def _window(draw, *, beta=False):
    x = _dummy(draw, FLOAT)
    kwargs = present(periodic=draw(optional(st.booleans())))
    if beta and "periodic" in kwargs:
        kwargs["beta"] = draw(st.sampled_from([0.0, 5.0, 12.0]))
    return (x, draw(st.integers(0, 8))), kwargs


def _window_spec(name, *, beta=False):
    factory = getattr(torch, name)
    return spec(f"window_{name.removesuffix('_window')}",
                examples(lambda draw: _window(draw, beta=beta)),
                fn=lambda x, n, **kw: factory(n, dtype=x.dtype, **kw), aten=(name,),
                dtypes=FLOAT, ranks=(0, 0))


def _f(factory):
    """Call a factory with the dummy tensor's dtype."""
    return lambda x, *args, **kw: factory(*args, dtype=x.dtype, **kw)


SPECS = [
    spec("zeros", _sized(ALL), fn=_f(torch.zeros), dtypes=ALL, ranks=(0, 0)),
    spec("ones", _sized(ALL), fn=_f(torch.ones), dtypes=ALL, ranks=(0, 0)),
    spec("full", _sized(ALL, value=True), fn=_f(torch.full), dtypes=ALL, ranks=(0, 0)),
    spec("empty", _sized(ALL), fn=_f(torch.empty), dtypes=ALL, ranks=(0, 0),
         nondeterministic=True),
    spec("empty_strided", examples(_empty_strided), fn=_f(torch.empty_strided), dtypes=ALL,
         ranks=(0, 0), nondeterministic=True),
    spec("empty_permuted", examples(_empty_permuted), fn=_f(torch.empty_permuted), dtypes=ALL,
         ranks=(0, 0), nondeterministic=True),
    spec("zeros_like", _like(ALL), fn=torch.zeros_like, dtypes=ALL),
    spec("ones_like", _like(ALL), fn=torch.ones_like, dtypes=ALL),
    spec("full_like", _like(ALL, value=True), fn=torch.full_like, dtypes=ALL),
    spec("empty_like", _like(ALL), fn=torch.empty_like, dtypes=ALL, nondeterministic=True),
    spec("new_zeros", _new(ALL), fn=lambda x, size, **kw: x.new_zeros(size, **kw), dtypes=ALL,
         ranks=(0, 2)),
    # top rank 4: models call it on a rank-4 tensor (an attention mask, a feature map)
    spec("new_ones", _new(ALL, max_rank=4), fn=lambda x, size, **kw: x.new_ones(size, **kw),
         dtypes=ALL, ranks=(0, 4)),
    spec("new_full", _new(ALL, value=True),
         fn=lambda x, size, value, **kw: x.new_full(size, value, **kw), dtypes=ALL,
         ranks=(0, 2)),
    spec("new_empty", _new(ALL), fn=lambda x, size, **kw: x.new_empty(size, **kw), dtypes=ALL,
         ranks=(0, 2), nondeterministic=True),
    spec("new_empty_strided", examples(_new_empty_strided),
         fn=lambda x, size, stride, **kw: x.new_empty_strided(size, stride, **kw), dtypes=ALL,
         ranks=(0, 2), nondeterministic=True),
    spec("scalar_tensor", examples(_scalar_tensor), fn=_f(torch.scalar_tensor), dtypes=ALL,
         ranks=(0, 0)),
    spec("fill", examples(_fill_scalar), fn=torch.fill, dtypes=ALL),
    spec("fill_tensor", examples(_fill_tensor), fn=torch.fill, aten=("fill",), dtypes=ALL),
    spec("zero", examples(lambda draw: ((TensorArg(draw(shapes()), draw(st.sampled_from(ALL))),),
                                        {})), fn=A.zero, dtypes=ALL),
    # ranges and grids
    spec("arange", examples(_arange), fn=_f(torch.arange), dtypes=NUMERIC, ranks=(0, 0)),
    spec("arange_start_step", examples(_arange_start_step), fn=_f(torch.arange),
         aten=("arange",), dtypes=NUMERIC, ranks=(0, 0)),
    spec("range", examples(_range), fn=_f(torch.range), dtypes=NUMERIC, ranks=(0, 0)),
    spec("linspace", examples(_linspace), fn=_f(torch.linspace), dtypes=NUMERIC, ranks=(0, 0)),
    spec("logspace", examples(_logspace), fn=_f(torch.logspace), dtypes=NUMERIC, ranks=(0, 0)),
    spec("eye", examples(_eye), fn=_f(torch.eye), dtypes=ALL, ranks=(0, 0)),
    spec("tril_indices", examples(_tri_indices), fn=_f(torch.tril_indices), dtypes=INTEGRAL,
         ranks=(0, 0)),
    spec("triu_indices", examples(_tri_indices), fn=_f(torch.triu_indices), dtypes=INTEGRAL,
         ranks=(0, 0)),
    spec("vander", examples(_vander), fn=torch.vander, dtypes=NUMERIC, ranks=(1, 1)),
    # signal windows
    _window_spec("hann_window"),
    _window_spec("hamming_window"),
    _window_spec("blackman_window"),
    _window_spec("bartlett_window"),
    _window_spec("kaiser_window", beta=True),
]

"""Random operators: factories, ``*_like`` forms, in-place samplers (measured
through their functional forms) and dropout in training mode.

Every spec here is nondeterministic: export and runtime are measured,
numerics are skipped. Factories take a 0-d dummy tensor that only supplies
the dtype (see creation.py)."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ABSENT, ALL, FLOAT, NUMERIC, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples, shapes

A = torch.ops.aten
F = torch.nn.functional
FLOAT_WIDE = ("float32", "float64")  # samplers without half-precision kernels


def _dummy(draw, dtypes):
    return TensorArg((), draw(st.sampled_from(dtypes)))


def _f(factory):
    """Call a factory with the dummy tensor's dtype."""
    return lambda x, *args, **kw: factory(*args, dtype=x.dtype, **kw)


def _input(draw, dtypes, *, low=None, high=None, min_rank=0):
    return TensorArg(draw(shapes(min_rank=min_rank)), draw(st.sampled_from(dtypes)), low, high)


def _sized(dtypes):
    return examples(lambda draw: ((_dummy(draw, dtypes), draw(shapes())), {}))


def _randint(draw):
    x = _dummy(draw, NUMERIC)
    return (x, draw(st.integers(1, 10)), draw(shapes())), {}


def _randint_low(draw):
    x = _dummy(draw, NUMERIC)
    low = draw(st.integers(-5, 5))
    return (x, low, low + draw(st.integers(1, 10)), draw(shapes())), {}


def _like(dtypes):
    def build(draw):
        x = _input(draw, dtypes)
        dtype = draw(optional(st.sampled_from(dtypes)))
        return (x,), present(dtype=ABSENT if dtype is ABSENT else getattr(torch, dtype))
    return examples(build)


def _randint_like(draw):
    """Bounds that every numeric dtype holds, and sometimes a dtype other than the input's."""
    x = _input(draw, NUMERIC)
    low = draw(st.integers(-5, 5))
    high = low + draw(st.integers(1, 10))
    dtype = draw(optional(st.sampled_from([d for d in NUMERIC if d != x.dtype])))
    return ((x, low, high) if draw(st.booleans()) else (x, max(high, 1))), present(
        dtype=ABSENT if dtype is ABSENT else getattr(torch, dtype))


def _randperm(draw):
    return (_dummy(draw, NUMERIC), draw(st.integers(0, 8))), {}


def _probabilities(draw, dtypes=FLOAT):
    return (_input(draw, dtypes, low=0.0, high=1.0),), {}


def _bernoulli_p(draw):
    return (_input(draw, FLOAT), draw(st.sampled_from([0.0, 0.3, 1.0]))), {}


def _multinomial(draw):
    categories = draw(st.integers(1, 6))
    shape = (categories,) if draw(st.booleans()) else (draw(st.integers(1, 4)), categories)
    probs = TensorArg(shape, draw(st.sampled_from(FLOAT)), 0.1, 1.0)  # no zero rows
    replacement = draw(st.booleans())
    samples = draw(st.integers(1, 8 if replacement else categories))
    return (probs, samples), {"replacement": replacement}


def _normal_tensors(draw):
    mean = _input(draw, FLOAT)
    std = TensorArg(mean.shape, mean.dtype, 0.0, 2.0)
    return (mean, std), {}


def _normal_tensor_float(draw):
    return (_input(draw, FLOAT), draw(st.sampled_from([0.0, 0.5, 2.0]))), {}


def _normal_float_tensor(draw):
    return (draw(st.sampled_from([-1.0, 0.0, 3.0])), _input(draw, FLOAT, low=0.0, high=2.0)), {}


def _normal_sized(draw):
    x = _dummy(draw, FLOAT)
    return (x, draw(st.sampled_from([-1.0, 0.0])), draw(st.sampled_from([0.0, 0.5, 1.0])),
            draw(shapes())), {}  # std 0: every sample is the mean


def _sampler(dtypes, **params):
    """A tensor to fill in place (through the functional form) and its parameters."""
    def build(draw):
        return (_input(draw, dtypes),), present(**{k: draw(optional(st.sampled_from(v)))
                                               for k, v in params.items()})
    return examples(build)


def _random_to(draw):
    x = _input(draw, ALL)
    return (x, 2 if x.dtype == "bool" else draw(st.integers(1, 100))), {}


def _random_from_to(draw):
    x = _input(draw, NUMERIC)
    low = draw(st.integers(0, 10))
    return (x, low, low + draw(st.integers(1, 20))), {}


def _dropout(min_rank=0, train=st.just(True)):
    """Input, p and the training flag (None: native_dropout's default, training)."""
    def build(draw):
        return (_input(draw, FLOAT, min_rank=min_rank), draw(st.sampled_from([0.0, 0.3, 0.5, 1.0])),
                draw(train)), {}
    return examples(build)


def _binomial(draw):
    count = TensorArg(draw(shapes()), draw(st.sampled_from(FLOAT_WIDE)),
                      choices=(0.0, 1.0, 2.0, 5.0, 10.0))
    return (count, TensorArg(count.shape, count.dtype, 0.0, 1.0)), {}


def _rand(name, examples_st, fn, dtypes, **fields):
    return spec(name, examples_st, fn=fn, dtypes=dtypes, nondeterministic=True, **fields)


SPECS = [
    # factories
    _rand("rand", _sized(FLOAT), _f(torch.rand), FLOAT, ranks=(0, 0)),
    _rand("randn", _sized(FLOAT), _f(torch.randn), FLOAT, ranks=(0, 0)),
    _rand("randint", examples(_randint), _f(torch.randint), NUMERIC, ranks=(0, 0)),
    _rand("randint_low", examples(_randint_low), _f(torch.randint), NUMERIC, ranks=(0, 0),
          aten=("randint",)),
    _rand("randperm", examples(_randperm), _f(torch.randperm), NUMERIC, ranks=(0, 0)),
    _rand("normal_float_float", examples(_normal_sized), _f(torch.normal), FLOAT, ranks=(0, 0),
          aten=("normal",)),
    # *_like
    _rand("rand_like", _like(FLOAT), torch.rand_like, FLOAT),
    _rand("randn_like", _like(FLOAT), torch.randn_like, FLOAT),
    _rand("randint_like", examples(_randint_like), torch.randint_like, NUMERIC),
    # sampling from tensors of parameters
    _rand("bernoulli", examples(_probabilities), torch.bernoulli, FLOAT),
    _rand("bernoulli_p", examples(_bernoulli_p), torch.bernoulli, FLOAT, aten=("bernoulli",)),
    _rand("multinomial", examples(_multinomial), torch.multinomial, FLOAT, ranks=(1, 2)),
    _rand("normal", examples(_normal_tensors), torch.normal, FLOAT),
    _rand("normal_tensor_float", examples(_normal_tensor_float), torch.normal, FLOAT,
          aten=("normal",)),
    _rand("normal_float_tensor", examples(_normal_float_tensor), torch.normal, FLOAT,
          aten=("normal",)),
    _rand("poisson", examples(_probabilities), torch.poisson, FLOAT),
    _rand("binomial", examples(_binomial), torch.binomial, FLOAT_WIDE),
    # in-place samplers, through their functional forms (x.uniform_() -> uniform)
    _rand("normal_functional", _sampler(FLOAT, mean=[0.0, 2.0], std=[0.5, 1.0]),
          A.normal_functional, FLOAT),
    _rand("uniform", _sampler(FLOAT, **{"from": [-1.0, 0.0], "to": [1.0, 5.0]}), A.uniform,
          FLOAT),
    _rand("exponential", _sampler(FLOAT, lambd=[0.5, 2.0]), A.exponential, FLOAT),
    _rand("cauchy", _sampler(FLOAT, median=[0.0, 1.0], sigma=[0.5, 2.0]), A.cauchy, FLOAT),
    _rand("geometric", examples(lambda draw: ((_input(draw, FLOAT),
                                               draw(st.sampled_from([0.2, 0.5, 0.9]))), {})),
          A.geometric, FLOAT,
          fixed={"p": "eager refuses every p outside (0, 1) (geometric_ expects p to be in "
                      "(0, 1)), so no class but positive exists; 0.2, 0.5 and 0.9 are drawn"}),
    _rand("log_normal", _sampler(FLOAT, mean=[0.0, 1.0], std=[0.5, 2.0]), A.log_normal, FLOAT),
    _rand("random", _sampler(ALL), A.random, ALL),
    _rand("random_to", examples(_random_to), A.random, ALL, aten=("random",)),
    _rand("random_from_to", examples(_random_from_to), A.random, NUMERIC, aten=("random",)),
    # dropout in training mode
    _rand("dropout", _dropout(), F.dropout, FLOAT, mode="training"),
    _rand("native_dropout", _dropout(train=st.sampled_from([True, False, None])),
          A.native_dropout, FLOAT),
    _rand("alpha_dropout", _dropout(), torch.alpha_dropout, FLOAT, mode="training"),
    _rand("feature_dropout", _dropout(min_rank=2), torch.feature_dropout, FLOAT, ranks=(2, 4),
          mode="training"),
    _rand("feature_alpha_dropout", _dropout(min_rank=2), torch.feature_alpha_dropout, FLOAT,
          ranks=(2, 4), mode="training"),
]

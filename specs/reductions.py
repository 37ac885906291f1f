"""Reductions over all, one or several dimensions, statistics and order
statistics. Scans (cum*) live in reductions_scan.py."""

from dataclasses import replace

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import (ALL, COMPLEX, FLOAT, INTEGRAL, NUMERIC, binary, optional,
                              present, reduction, spec, unary)
from opsweep.model import TensorArg
from opsweep.catalog.strategies import dims, examples, shapes

F32_64 = ("float32", "float64")
#: elements of a NaN-laced float input
NAN_MIX = (-2.0, -0.5, 0.0, 1.0, 3.0, float("nan"))
CORRECTION = {"correction": optional(st.sampled_from([0, 1]))}
KEEPDIM = {"keepdim": optional(st.booleans())}


def with_nans(item):
    """One float example in two draws its first tensor's elements from NAN_MIX."""
    def lace(example, flag):
        x = example.args[0]
        if not flag or x.dtype not in FLOAT:
            return example
        return replace(example, args=(replace(x, choices=NAN_MIX), *example.args[1:]))
    return replace(item, examples=st.tuples(item.examples, st.booleans()).map(lambda p: lace(*p)))


def _kthvalue(draw):
    x = TensorArg(draw(shapes()), draw(st.sampled_from(NUMERIC)))
    kwargs = {}
    dim = -1
    if draw(st.booleans()):
        dim = kwargs["dim"] = draw(dims(x.rank))
    k = draw(st.integers(1, x.shape[dim] if x.rank else 1))
    if draw(st.booleans()):
        kwargs["keepdim"] = draw(st.booleans())
    return (x, k), kwargs


def _quantile(draw):
    dtype = draw(st.sampled_from(F32_64))
    x = TensorArg(draw(shapes()), dtype)
    q = (draw(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0])) if draw(st.booleans())
         else TensorArg((draw(st.integers(1, 3)),), dtype, 0.0, 1.0))
    kwargs = {}
    if draw(st.booleans()):
        kwargs["dim"] = draw(dims(x.rank))
    if draw(st.booleans()):
        kwargs["keepdim"] = draw(st.booleans())
    if draw(st.booleans()):
        kwargs["interpolation"] = draw(st.sampled_from(
            ["linear", "lower", "higher", "midpoint", "nearest"]))
    return (x, q), kwargs


def _trapezoid_x(draw):
    """trapezoid(y, x): sample points either of y's shape or 1-D along `dim`."""
    dtype = draw(st.sampled_from(FLOAT))
    y = TensorArg(draw(shapes(min_rank=1)), dtype)
    dim = draw(dims(y.rank))
    x_shape = y.shape if draw(st.booleans()) else (y.shape[dim],)
    return (y, TensorArg(x_shape, dtype)), {"dim": dim}


def _bincount(draw):
    x = TensorArg((draw(st.integers(1, 12)),), draw(st.sampled_from(INTEGRAL)), 0, 8)
    kwargs = {}
    if draw(st.booleans()):
        kwargs["weights"] = TensorArg(x.shape, draw(st.sampled_from(FLOAT)))
    if draw(st.booleans()):
        kwargs["minlength"] = draw(st.sampled_from([0, 4, 10]))
    return (x,), kwargs


def _histogram(draw):
    """histogram(x, bins): optional range and per-element weight."""
    dtype = draw(st.sampled_from(F32_64))
    x = TensorArg(draw(shapes()), dtype)
    kwargs = {"bins": draw(st.sampled_from([1, 3, 5]))}
    if draw(st.booleans()):
        kwargs["density"] = draw(st.booleans())
    if draw(st.booleans()):
        kwargs["range"] = (-1.5, 1.5)
    if draw(st.booleans()):
        kwargs["weight"] = TensorArg(x.shape, dtype, 0.0, 2.0)
    return (x,), kwargs


def _histogramdd(draw):
    """histogramdd of N points in D dimensions: bins per dimension, optional range."""
    d = draw(st.integers(1, 3))
    x = TensorArg((draw(st.integers(1, 12)), d), draw(st.sampled_from(F32_64)))
    bins = draw(st.integers(1, 4)) if draw(st.booleans()) else [draw(st.integers(1, 4))
                                                                 for _ in range(d)]
    kwargs = {"bins": bins}
    if draw(st.booleans()):
        kwargs["range"] = [v for _ in range(d) for v in (-1.5, 1.5)]
    if draw(st.booleans()):
        kwargs["density"] = draw(st.booleans())
    return (x,), kwargs


def _legacy_norm(x, p=2, dim=None, keepdim=False):
    """aten::norm, which torch.norm no longer reaches (it calls linalg_vector_norm)."""
    if dim is None:
        return torch.ops.aten.norm.Scalar(x, p)
    return torch.ops.aten.norm.ScalarOpt_dim(x, p, list(dim), keepdim)



def _sum_to_size(draw):
    x = TensorArg(draw(shapes(min_rank=1, max_rank=4)), draw(st.sampled_from(NUMERIC)))
    size = tuple(side if draw(st.booleans()) else 1 for side in x.shape)
    return (x, size), {}


def _segment_reduce(draw):
    """Segments along `axis` of `data`, given as lengths or as offsets (the same for every
    index of the leading dims); `unsafe` skips eager's checks of them."""
    n = draw(st.integers(1, 3))
    lengths = [draw(st.integers(0, 3)) for _ in range(n)]
    if not sum(lengths):
        lengths[0] = 1
    rest = draw(shapes(min_rank=0, max_rank=2))
    axis = draw(st.integers(0, len(rest)))
    lead = rest[:axis]
    data = TensorArg((*lead, sum(lengths), *rest[axis:]),
                     draw(st.sampled_from(("float32", "float64"))))
    offsets = [sum(lengths[:i]) for i in range(n + 1)]
    by_offsets = draw(st.booleans())
    segments = tuple(offsets if by_offsets else lengths)
    for side in reversed(lead):
        segments = (segments,) * side
    return (data, draw(st.sampled_from(["sum", "mean", "max", "min", "prod"]))), present(
        **{"offsets" if by_offsets else "lengths": segments}, axis=axis,
        unsafe=draw(st.booleans()), initial=draw(optional(st.sampled_from([0.0, -1.5, 2.0]))))


def _segment_reduce_call(data, reduce, **kw):
    """The lengths or offsets as a constant int64 tensor."""
    for name in ("lengths", "offsets"):
        if name in kw:
            kw[name] = torch.tensor(kw[name], dtype=torch.int64)
    return torch.segment_reduce(data, reduce, **kw)


SPECS = [
    reduction("sum", dtypes=ALL + COMPLEX, widen=True),
    reduction("sum_dtype", fn=torch.sum, aten=("sum",), dtypes=ALL,
              params={"dtype": st.sampled_from([torch.float64, torch.float32, torch.int64])}),
    with_nans(reduction("nansum", dtypes=ALL,
                        params={"dtype": optional(st.just(torch.float64))})),
    reduction("mean", dtypes=FLOAT + COMPLEX, widen=True),
    reduction("mean_dtype", fn=torch.mean, aten=("mean",), dtypes=ALL,
              params={"dtype": st.sampled_from([torch.float64, torch.float32])}),
    with_nans(reduction("nanmean")),
    reduction("prod", dim="one", dtypes=ALL + COMPLEX, widen=True),
    reduction("prod_full", fn=torch.prod, aten=("prod",), dim="none", dtypes=ALL + COMPLEX,
              params={"dtype": optional(st.just(torch.float64))}),
    reduction("amax", dim="many", dtypes=ALL),
    reduction("amin", dim="many", dtypes=ALL),
    with_nans(reduction("max_full", fn=torch.max, dim="none", aten=("max",), dtypes=ALL)),
    with_nans(reduction("min_full", fn=torch.min, dim="none", aten=("min",), dtypes=ALL)),
    reduction("max_dim", fn=torch.max, dim="one", aten=("max",), dtypes=ALL),
    reduction("min_dim", fn=torch.min, dim="one", aten=("min",), dtypes=ALL),
    reduction("aminmax", dim="none", dtypes=ALL, params=KEEPDIM,
              fixed={"dim": "a second spec measures dim given (see aminmax_dim)"}),
    reduction("aminmax_dim", fn=torch.aminmax, dim="one", aten=("aminmax",), dtypes=ALL),
    reduction("argmax", dim="one", dtypes=NUMERIC),
    reduction("argmin", dim="one", dtypes=NUMERIC),
    reduction("argmax_full", fn=torch.argmax, dim="none", aten=("argmax",), dtypes=NUMERIC,
              params=KEEPDIM, fixed={"dim": "a second spec measures dim given (see argmax)"}),
    reduction("argmin_full", fn=torch.argmin, dim="none", aten=("argmin",), dtypes=NUMERIC,
              params=KEEPDIM, fixed={"dim": "a second spec measures dim given (see argmin)"}),
    reduction("all", dtypes=ALL + COMPLEX),
    reduction("any", dtypes=ALL + COMPLEX),
    reduction("count_nonzero", keepdim=False, dtypes=ALL + COMPLEX),
    reduction("var", dtypes=FLOAT + COMPLEX, params=CORRECTION),
    reduction("std", dtypes=FLOAT + COMPLEX, params=CORRECTION),
    reduction("var_mean", dtypes=FLOAT + COMPLEX, params=CORRECTION),
    reduction("std_mean", dtypes=FLOAT + COMPLEX, params=CORRECTION),
    reduction("logsumexp", dim="many", dtypes=ALL),
    reduction("norm", dim="many", dtypes=FLOAT + COMPLEX, widen=True,
              params={"ord": st.sampled_from([1, 2, 3, float("inf"), 0])},
              fn=torch.linalg.vector_norm, aten=("linalg_vector_norm",)),
    reduction("norm_legacy", fn=_legacy_norm, dim="many", aten=("norm",),
              dtypes=FLOAT + COMPLEX, params={"p": optional(st.sampled_from([1, 2, 3]))}),
    with_nans(reduction("median", dim="none", dtypes=NUMERIC)),
    reduction("median_dim", fn=torch.median, dim="one", aten=("median",), dtypes=NUMERIC),
    with_nans(reduction("nanmedian", dim="none", dtypes=NUMERIC)),
    with_nans(reduction("nanmedian_dim", fn=torch.nanmedian, dim="one", aten=("nanmedian",),
                        dtypes=NUMERIC)),
    reduction("mode", dim="one", dtypes=ALL),
    spec("kthvalue", examples(_kthvalue), fn=torch.kthvalue, dtypes=NUMERIC),
    spec("quantile", examples(_quantile), fn=torch.quantile, dtypes=F32_64),
    with_nans(spec("nanquantile", examples(_quantile), fn=torch.nanquantile, dtypes=F32_64)),
    unary("histc", params={
        "bins": st.sampled_from([1, 4, 10]), "min": optional(st.sampled_from([-2.0, -1.0])),
        "max": optional(st.sampled_from([1.0, 2.0]))}),
    spec("histogram", examples(_histogram), fn=torch.histogram, dtypes=F32_64),
    spec("histogramdd", examples(_histogramdd), fn=torch.histogramdd, dtypes=F32_64,
         ranks=(2, 2)),
    spec("bincount", examples(_bincount), fn=torch.bincount, dtypes=INTEGRAL, ranks=(1, 1)),
    unary("renorm", dtypes=FLOAT + COMPLEX, min_rank=2, params={
        "p": st.sampled_from([1, 2, 3]), "dim": st.sampled_from([0, 1, -1]),
        "maxnorm": st.sampled_from([0.0, 0.5, 1.0])}),
    binary("dist", dtypes=FLOAT + COMPLEX, scalar_other=False,
           params={"p": optional(st.sampled_from([0, 1, 2, 3, float("inf")]))}),
    unary("trace", dtypes=NUMERIC + COMPLEX, min_rank=2, max_rank=2),
    unary("trapezoid", dtypes=NUMERIC + COMPLEX, min_rank=1, params={
        "dx": optional(st.sampled_from([0.5, 2.0])), "dim": st.sampled_from([0, -1])}),
    spec("trapezoid_x", examples(_trapezoid_x), fn=torch.trapezoid, aten=("trapezoid",),
         ranks=(1, 4)),
    unary("trapz", dtypes=NUMERIC, min_rank=1, params={
        "dx": optional(st.sampled_from([0.5, 2.0])), "dim": st.sampled_from([0, -1])}),
    unary("cov", dtypes=NUMERIC + COMPLEX, max_rank=2,
          params={"correction": optional(st.sampled_from([0, 1]))},
          traces={"cov": ("mm",)}),
    unary("corrcoef", dtypes=NUMERIC + COMPLEX, max_rank=2,
          traces={"corrcoef": ("mm",)}),
    spec("sum_to_size", examples(_sum_to_size), fn=lambda x, size: x.sum_to_size(size),
         dtypes=NUMERIC, ranks=(1, 4)),
    spec("segment_reduce", examples(_segment_reduce), fn=_segment_reduce_call,
         dtypes=("float32", "float64"), ranks=(1, 3),
         fixed={"indices": "eager rejects any tensor (segment_reduce(): indices based "
                           "reduction is not supported yet)"}),
    reduction("hash_tensor", dtypes=("float32", "float64", "int32", "int64"),
              fixed={"mode": "the only mode torch implements (0, xor_sum): eager rejects any "
                             "other value (Unknown hash_tensor mode)"}),
]

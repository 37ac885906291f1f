"""Sorting and searching: sort, argsort, topk, searchsorted, bucketize and
the unique family (data-dependent output shapes).

searchsorted and bucketize need sorted boundaries, which a value recipe
cannot express: their forward call sorts the drawn boundaries first
(``torch.sort``, itself measured by the ``sort`` spec) and declares only the
searching operator; searchsorted's call sometimes hands the drawn boundaries
over unsorted with ``sorter=torch.argsort(...)`` instead."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ABSENT, ALL, NUMERIC, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import dims, examples, shapes

A = torch.ops.aten
#: integer inputs drawn wide so that ties (ambiguous sort indices) stay rare
WIDE = (-1000, 1000)


def _values(draw, dtypes, *, min_rank=0, shape=None):
    dtype = draw(st.sampled_from(dtypes))
    low, high = WIDE if dtype in ("int32", "int64") else (None, None)
    return TensorArg(shape if shape is not None else draw(shapes(min_rank=min_rank)), dtype,
                     low, high)


def _sort(draw):
    x = _values(draw, ALL)
    return (x,), present(dim=draw(optional(dims(x.rank))), descending=draw(optional(st.booleans())))


def _sort_stable(draw):
    x = _values(draw, ALL)
    return (x,), present(stable=draw(st.booleans()), dim=draw(optional(dims(x.rank))),
                     descending=draw(optional(st.booleans())))


def _topk(draw, *, unsorted=False):
    x = _values(draw, NUMERIC)
    dim = draw(optional(dims(x.rank)))
    side = x.shape[-1 if dim is ABSENT else dim] if x.rank else 1
    return (x, draw(st.integers(0 if unsorted else 1, side))), present(
        dim=dim, largest=draw(optional(st.booleans())),
        sorted=False if unsorted else draw(optional(st.just(True))))


def _boundaries(draw, dtype, length=None):
    n = length or draw(st.integers(1, 6))
    low, high = WIDE if dtype in ("int32", "int64") else (None, None)
    return TensorArg((n,), dtype, low, high)


def _side(draw):
    side = draw(st.sampled_from(["absent", "right", "side"]))
    if side == "right":
        return {"right": draw(st.booleans())}
    if side == "side":
        return {"side": draw(st.sampled_from(["left", "right"]))}
    return {}


def _searchsorted(draw):
    values = _values(draw, NUMERIC, min_rank=1)
    if draw(st.booleans()):  # one 1-D sequence for every value
        seq = _boundaries(draw, values.dtype)
    else:  # one sequence per row: leading dims agree with the values'
        seq = TensorArg(values.shape[:-1] + (draw(st.integers(1, 6)),), values.dtype,
                        *(WIDE if values.dtype in ("int32", "int64") else (None, None)))
    return (seq, values, draw(st.booleans())), {
        **_side(draw), **present(out_int32=draw(optional(st.booleans())))}


def _searchsorted_scalar(draw):
    seq = _values(draw, NUMERIC, min_rank=1, shape=(draw(st.integers(1, 6)),))
    scalar = draw(st.integers(-3, 3)) if seq.dtype in ("int32", "int64") else draw(
        st.sampled_from([-0.5, 0.0, 1.25]))
    return (seq, scalar, draw(st.booleans())), {
        **_side(draw), **present(out_int32=draw(optional(st.booleans())))}


def _bucketize(draw):
    values = _values(draw, NUMERIC)
    return (values, _boundaries(draw, values.dtype)), present(
        right=draw(optional(st.booleans())), out_int32=draw(optional(st.booleans())))


def _bucketize_scalar(draw):
    (seq, scalar, _), _ = _searchsorted_scalar(draw)
    return (scalar, seq), present(right=draw(optional(st.booleans())),
                              out_int32=draw(optional(st.booleans())))


def _repetitive(draw, *, min_rank=0):
    """Few distinct values, so duplicates (and runs of them) are common."""
    dtype = draw(st.sampled_from(ALL))
    picks = (0, 1) if dtype == "bool" else (-1, 0, 2)
    return TensorArg(draw(shapes(min_rank=min_rank, max_rank=3)), dtype, choices=picks)


def _unique_dim(draw):
    x = _repetitive(draw, min_rank=1)
    return (x,), present(dim=draw(dims(x.rank)), sorted=draw(optional(st.booleans())),
                     return_inverse=draw(optional(st.booleans())),
                     return_counts=draw(optional(st.booleans())))


def _unique_consecutive(draw):
    x = _repetitive(draw)
    dim = draw(optional(dims(x.rank))) if x.rank else ABSENT
    return (x,), present(dim=dim, return_inverse=draw(optional(st.booleans())),
                     return_counts=draw(optional(st.booleans())))


def _unique_dim_consecutive(draw):
    x = _repetitive(draw, min_rank=1)
    return (x, draw(dims(x.rank)), draw(st.booleans()), draw(st.booleans())), {}


def _searchsorted_sorted(seq, values, by_sorter, **kw):
    if by_sorter:  # the boundaries as drawn, with the permutation that sorts them
        return torch.searchsorted(seq, values, sorter=torch.argsort(seq), **kw)
    return torch.searchsorted(torch.sort(seq).values, values, **kw)


def _bucketize_sorted(values, boundaries, **kw):
    return torch.bucketize(values, torch.sort(boundaries).values, **kw)


SPECS = [
    spec("sort", examples(_sort), fn=torch.sort, dtypes=ALL),
    spec("sort_stable", examples(_sort_stable), fn=torch.sort, aten=("sort",), dtypes=ALL),
    spec("argsort", examples(_sort), fn=torch.argsort, dtypes=ALL),
    spec("argsort_stable", examples(_sort_stable), fn=torch.argsort, aten=("argsort",),
         dtypes=ALL),
    spec("msort", examples(lambda draw: ((_values(draw, ALL),), {})), fn=torch.msort,
         dtypes=ALL),
    spec("topk", examples(_topk), fn=torch.topk, dtypes=NUMERIC),
    # sorted=False leaves the order of the k results to the implementation
    spec("topk_unsorted", examples(lambda draw: _topk(draw, unsorted=True)), fn=torch.topk,
         aten=("topk",), dtypes=NUMERIC, nondeterministic=True,
         fixed={"sorted": "the spec measures sorted=False, whose order of the k results "
                          "is left to the implementation; a second spec measures sorted=True "
                          "(see topk)"}),
    spec("searchsorted", examples(_searchsorted), fn=_searchsorted_sorted, dtypes=NUMERIC,
         ranks=(1, 4)),
    spec("searchsorted_scalar", examples(_searchsorted_scalar), fn=_searchsorted_sorted,
         aten=("searchsorted",), dtypes=NUMERIC, ranks=(1, 1)),
    spec("bucketize", examples(_bucketize), fn=_bucketize_sorted, dtypes=NUMERIC),
    spec("bucketize_scalar", examples(_bucketize_scalar), fn=_bucketize_sorted,
         aten=("bucketize",), dtypes=NUMERIC, ranks=(1, 1)),
    spec("unique_dim", examples(_unique_dim), fn=torch.unique, dtypes=ALL, ranks=(1, 3)),
    spec("unique_consecutive", examples(_unique_consecutive), fn=torch.unique_consecutive,
         dtypes=ALL, ranks=(0, 3)),
    spec("unique_dim_consecutive", examples(_unique_dim_consecutive),
         fn=A.unique_dim_consecutive, dtypes=ALL, ranks=(1, 3)),
]

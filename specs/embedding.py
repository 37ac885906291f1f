"""Embedding lookups, bags and one-hot encoding."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples, shapes

EMB_DTYPES = ("float32", "float64", "float16", "bfloat16")
INDEX = ("int64", "int32")
MODES = ("sum", "mean", "max")


def _table(draw, dtypes=EMB_DTYPES):
    v, d = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    return TensorArg((v, d), draw(st.sampled_from(dtypes))), v


def _embedding(*, max_norm=False):
    def build(draw):
        weight, v = _table(draw, ("float32", "float64") if max_norm else EMB_DTYPES)
        idx = TensorArg(draw(shapes(min_rank=0, max_rank=3)), draw(st.sampled_from(INDEX)), 0, v)
        kwargs = {}
        if draw(st.booleans()):
            kwargs["padding_idx"] = draw(st.integers(-v, v - 1))
        if not max_norm:  # gradient-only flags: the forward call must not change
            kwargs["scale_grad_by_freq"] = draw(st.booleans())
            kwargs["sparse"] = draw(st.booleans())
        if max_norm:
            # max_norm 0 renormalises every looked-up row to zero; norm_type inf: max |w|
            kwargs["max_norm"] = draw(st.sampled_from([1.0, 0.5, 0.0]))
            kwargs["norm_type"] = draw(st.sampled_from([2.0, 1.0, float("inf")]))
        return (weight, idx), kwargs
    return build


def _bag_kwargs(draw, weight, v, idx_shape):
    mode = draw(st.sampled_from(MODES))
    kwargs = {"mode": mode}
    if mode == "sum" and draw(st.booleans()):
        kwargs["per_sample_weights"] = TensorArg(idx_shape, weight.dtype)
    if draw(st.booleans()):
        kwargs["padding_idx"] = draw(st.integers(0, v - 1))
    return kwargs


def _bag_2d(draw):
    """(B, L) indices: every row is one bag, no offsets."""
    weight, v = _table(draw, ("float32", "float64"))
    shape = (draw(st.integers(1, 3)), draw(st.integers(1, 4)))
    idx = TensorArg(shape, draw(st.sampled_from(INDEX)), 0, v)
    return (weight, idx), _bag_kwargs(draw, weight, v, shape)


def _bag_offsets(draw):
    """1-d indices cut into bags by sorted offsets (empty bags allowed)."""
    weight, v = _table(draw, ("float32", "float64"))
    n = draw(st.integers(1, 6))
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=1, max_size=3)))
    cuts[0] = 0
    include_last = draw(st.booleans())
    if include_last:
        cuts.append(n)
    idx = TensorArg((n,), "int64", 0, v)
    kwargs = _bag_kwargs(draw, weight, v, (n,))
    kwargs["include_last_offset"] = include_last
    return (weight, idx, tuple(cuts)), kwargs


def _weight_first(fn):
    """Examples are filed under their first tensor's dtype: the table's, not the indices'."""
    return lambda weight, idx, **kwargs: fn(idx, weight, **kwargs)


def _bag_offsets_fn(weight, idx, cuts, **kwargs):
    return F.embedding_bag(idx, weight, torch.tensor(cuts, dtype=idx.dtype), **kwargs)


def _bag_packet(draw):
    """_embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
    per_sample_weights, include_last_offset, padding_idx), bags of equal size."""
    (weight, idx), kwargs = _bag_2d(draw)
    idx = TensorArg((idx.numel,), idx.dtype, 0, weight.shape[0])
    mode = MODES.index(kwargs["mode"])
    psw = kwargs.get("per_sample_weights")
    psw = TensorArg(idx.shape, psw.dtype) if psw is not None else None
    return (weight, idx, idx.shape[0], draw(st.integers(1, 3)), mode, psw,
            kwargs.get("padding_idx", -1), draw(st.booleans()), draw(st.booleans()),
            draw(st.booleans())), {}


def _bag_packet_fn(weight, idx, n, size, mode, psw, padding_idx, scale_grad, sparse,
                   include_last):
    """scale_grad_by_freq and sparse are gradient-only flags, drawn both ways; with
    include_last_offset the offsets end with the index count (the last bag's end)."""
    offsets = torch.arange(0, n, size, dtype=idx.dtype)
    if include_last:
        offsets = torch.cat([offsets, torch.full((1,), n, dtype=idx.dtype)])
    return torch.ops.aten._embedding_bag(weight, idx, offsets, scale_grad, mode, sparse, psw,
                                         include_last, padding_idx)


def _one_hot(draw):
    c = draw(st.integers(1, 6))
    idx = TensorArg(draw(shapes(min_rank=0, max_rank=3)), "int64", 0, c)
    return (idx,), {"num_classes": c}


SPECS = [
    spec("embedding", examples(_embedding()), fn=_weight_first(F.embedding),
         dtypes=EMB_DTYPES, ranks=(2, 2)),
    spec("embedding_renorm", examples(_embedding(max_norm=True)), fn=_weight_first(F.embedding), dtypes=("float32", "float64"), ranks=(2, 2)),
    spec("embedding_bag", examples(_bag_2d), fn=_weight_first(F.embedding_bag), dtypes=("float32", "float64"), ranks=(2, 2)),
    spec("embedding_bag_offsets", examples(_bag_offsets), fn=_bag_offsets_fn,
         aten=("embedding_bag",), dtypes=("float32", "float64"),
         ranks=(2, 2)),
    # the core packet embedding_bag decomposes into, called directly
    spec("embedding_bag_packet", examples(_bag_packet), fn=_bag_packet_fn,
         aten=("embedding_bag",), dtypes=("float32", "float64"),
         ranks=(2, 2)),
    spec("one_hot", examples(_one_hot), fn=F.one_hot, dtypes=("int64",),
         ranks=(0, 3)),
]

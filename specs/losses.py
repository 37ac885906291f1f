"""Loss functions and distances (torch.nn.functional)."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import draw_kwargs, optional, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples, shapes

LOSS_DTYPES = ("float32", "float64", "float16", "bfloat16")
F64 = ("float32", "float64")
REDUCTIONS = optional(st.sampled_from(["mean", "sum", "none"]))
SIGNS = (-1.0, 1.0)


def _pointwise(dtypes=LOSS_DTYPES, *, x=(None, None), y=(None, None), y_choices=None,
               weight=False, **params):
    """Input and target of one shape; `x`/`y` bound their values."""
    params.setdefault("reduction", REDUCTIONS)

    def build(draw):
        dtype = draw(st.sampled_from(dtypes))
        shape = draw(shapes(min_rank=0, max_rank=4))
        args = [TensorArg(shape, dtype, *x), TensorArg(shape, dtype, *y, y_choices)]
        kwargs = draw_kwargs(draw, params)
        if weight and draw(st.booleans()):
            kwargs["weight"] = TensorArg(shape, dtype, 0.0, 2.0)
        return tuple(args), kwargs
    return build


def _bce_logits(draw):
    args, kwargs = _pointwise(F64, y=(0.0, 1.0), weight=True)(draw)
    if args[0].rank and draw(st.booleans()):
        kwargs["pos_weight"] = TensorArg(args[0].shape[-1:], args[0].dtype, 0.5, 2.0)
    return args, kwargs


def _kl_div(draw):
    log_target = draw(st.booleans())
    args, kwargs = _pointwise(F64, y=(None, None) if log_target else (0.0, 1.0),
                              reduction=optional(st.sampled_from(["mean", "sum", "none",
                                                                  "batchmean"])))(draw)
    if args[0].rank == 0 and kwargs.get("reduction") == "batchmean":
        kwargs["reduction"] = "sum"
    return args, {**kwargs, "log_target": log_target}


def _poisson_nll(draw):
    log_input = draw(st.booleans())
    args, kwargs = _pointwise(F64, x=(None, None) if log_input else (0.1, 3.0), y=(0.0, 4.0),
                              full=st.booleans())(draw)
    return args, {**kwargs, "log_input": log_input}


def _rows(draw, dtypes=F64, *, batch=True):
    """(shape prefix, features): a batch of vectors, or one vector."""
    lead = (draw(st.integers(1, 3)),) if batch and draw(st.booleans()) else ()
    return lead, draw(st.integers(1, 5)), draw(st.sampled_from(dtypes))


def _margin_ranking(draw):
    dtype = draw(st.sampled_from(F64))
    shape = draw(shapes(min_rank=0, max_rank=2))
    sign = TensorArg(shape, dtype, choices=SIGNS)
    return ((TensorArg(shape, dtype), TensorArg(shape, dtype), sign),
            draw_kwargs(draw, {"margin": optional(st.sampled_from([0.0, 0.5])), "reduction": REDUCTIONS}))


def _cosine_embedding(draw):
    lead, d, dtype = _rows(draw)
    return ((TensorArg(lead + (d,), dtype), TensorArg(lead + (d,), dtype),
             TensorArg(lead, dtype, choices=SIGNS)),
            draw_kwargs(draw, {"margin": optional(st.sampled_from([0.0, 0.5])), "reduction": REDUCTIONS}))


def _triplet(draw):
    lead, d, dtype = _rows(draw)
    return (tuple(TensorArg(lead + (d,), dtype) for _ in range(3)),
            draw_kwargs(draw, {"margin": optional(st.sampled_from([1.0, 0.5])),
                       "p": optional(st.sampled_from([2.0, 1.0])), "swap": optional(st.booleans()),
                       "reduction": REDUCTIONS}))


def _classes(draw, *, spatial=0, dtypes=F64, weight=True, ignore=True):
    """(input, target, kwargs) for class-index losses: input (N, C, *d) with `spatial`
    sides d (or, without spatial dims, sometimes an unbatched (C,))."""
    dtype = draw(st.sampled_from(dtypes))
    c = draw(st.integers(1, 5))
    lead = () if not spatial and draw(st.booleans()) else (draw(st.integers(1, 3)),)
    spatial = tuple(draw(st.integers(1, 4)) for _ in range(spatial))
    x = TensorArg((*lead, c, *spatial), dtype)
    target = TensorArg((*lead, *spatial), "int64", 0, c)
    kwargs = draw_kwargs(draw, {"reduction": REDUCTIONS})
    if weight and draw(st.booleans()):
        kwargs["weight"] = TensorArg((c,), dtype, 0.1, 2.0)
    if ignore and draw(st.booleans()):
        kwargs["ignore_index"] = draw(st.sampled_from([0, -100]))
    return x, target, kwargs


def _nll(*, spatial):
    """`spatial`: (N, C, d1[, d2]) inputs, else (N, C) or (C,)."""
    def build(draw):
        x, t, kwargs = _classes(draw, spatial=draw(st.integers(1, 2)) if spatial else 0)
        return (x, t), kwargs
    return build


def _nll_aten(*, spatial):
    """Positional packet calls: (input, target, weight, reduction enum, ignore_index);
    the nll_loss2d packet takes exactly (N, C, H, W)."""
    def build(draw):
        x, t, kwargs = _classes(draw, spatial=2 if spatial else 0)
        reduction = draw(st.integers(0, 2))  # none, mean, sum
        return (x, t, kwargs.get("weight"), reduction, kwargs.get("ignore_index", -100)), {}
    return build


def _cross_entropy(*, spatial=False, probs=False):
    def build(draw):
        (x, t), kwargs = _nll(spatial=spatial)(draw)
        if probs:
            t = TensorArg(x.shape, x.dtype, 0.0, 1.0)
            kwargs.pop("ignore_index", None)
        if draw(st.booleans()):
            kwargs["label_smoothing"] = draw(st.sampled_from([0.1, 0.0]))
        return (x, t), kwargs
    return build


def _multi_margin(draw):
    x, t, kwargs = _classes(draw, ignore=False)
    kwargs.update(draw_kwargs(draw, {"p": optional(st.sampled_from([1, 2])),
                             "margin": optional(st.sampled_from([1.0, 0.5]))}))
    return (x, t), kwargs


def _multilabel_margin(draw):
    lead, c, dtype = _rows(draw)
    # class indices, -1 ends a sample's list of targets
    return ((TensorArg(lead + (c,), dtype), TensorArg(lead + (c,), "int64", -1, c)),
            draw_kwargs(draw, {"reduction": REDUCTIONS}))


def _ctc(draw):
    dtype = draw(st.sampled_from(F64))
    n, c, s = draw(st.integers(1, 2)), draw(st.integers(2, 4)), draw(st.integers(1, 2))
    t = draw(st.integers(2 * s + 1, 6))  # room for every target with blanks between repeats
    log_probs = TensorArg((t, n, c), dtype)
    blank = draw(st.sampled_from([0, c - 1]))  # the first or the last class
    low = 1 if blank == 0 else 0
    targets = TensorArg((n, s), "int64", low, low + c - 1)  # every class but the blank
    target_lengths = [draw(st.integers(1, s)) for _ in range(n)]
    # room for a target of length l with blanks between repeats: 2l - 1 frames (1 for l=1)
    input_lengths = [draw(st.integers(2 * length - 1, t)) for length in target_lengths]
    return ((log_probs, targets, input_lengths, target_lengths),
            draw_kwargs(draw, {"blank": st.just(blank) if blank else optional(st.just(0)),
                               "reduction": REDUCTIONS, "zero_infinity": optional(st.booleans())}))


def _ctc_fn(log_probs, targets, input_lengths, target_lengths, **kwargs):
    return F.ctc_loss(log_probs.log_softmax(-1), targets, input_lengths, target_lengths, **kwargs)


def _cosine_similarity(draw):
    dtype = draw(st.sampled_from(LOSS_DTYPES))
    shape = draw(shapes(min_rank=1, max_rank=4))
    return ((TensorArg(shape, dtype), TensorArg(shape, dtype)),
            {"dim": draw(st.integers(-len(shape), len(shape) - 1)),
             **draw_kwargs(draw, {"eps": optional(st.just(1e-6))})})


def _pairwise_distance(draw):
    lead, d, dtype = _rows(draw)
    return ((TensorArg(lead + (d,), dtype), TensorArg(lead + (d,), dtype)),
            draw_kwargs(draw, {"p": optional(st.sampled_from([2.0, 1.0, 3.0])),
                       "keepdim": optional(st.booleans())}))


def _pdist(draw):
    dtype = draw(st.sampled_from(F64))
    x = TensorArg((draw(st.integers(2, 5)), draw(st.integers(1, 4))), dtype)
    return (x,), draw_kwargs(draw, {"p": optional(st.sampled_from([2.0, 1.0, 0.0, 3.0]))})


def loss(name, build, *, fn=None, dtypes=F64, ranks=(0, 4), **fields):
    return spec(name, examples(build), fn=fn or getattr(F, name),
                dtypes=dtypes, ranks=ranks, **fields)


SPECS = [
    loss("mse_loss", _pointwise(), dtypes=LOSS_DTYPES),
    loss("l1_loss", _pointwise(), dtypes=LOSS_DTYPES),
    loss("smooth_l1_loss", _pointwise(beta=optional(st.sampled_from([1.0, 0.5]))),
         dtypes=LOSS_DTYPES),
    loss("huber_loss", _pointwise(delta=optional(st.sampled_from([1.0, 0.5]))),
         dtypes=LOSS_DTYPES),
    loss("soft_margin_loss", _pointwise(F64, y_choices=SIGNS)),
    loss("binary_cross_entropy", _pointwise(F64, x=(0.02, 0.98), y=(0.0, 1.0), weight=True)),
    loss("binary_cross_entropy_with_logits", _bce_logits),
    loss("kl_div", _kl_div),
    loss("poisson_nll_loss", _poisson_nll),
    loss("hinge_embedding_loss", _pointwise(F64, y_choices=SIGNS,
                                            margin=optional(st.sampled_from([1.0, 0.5])))),
    loss("margin_ranking_loss", _margin_ranking, ranks=(0, 2)),
    loss("cosine_embedding_loss", _cosine_embedding, ranks=(1, 2)),
    loss("triplet_margin_loss", _triplet, ranks=(1, 2)),
    loss("multi_margin_loss", _multi_margin, ranks=(1, 2)),
    loss("multilabel_margin_loss", _multilabel_margin, ranks=(1, 2),
         aten=("multilabel_margin_loss", "multilabel_margin_loss_forward")),
    loss("nll_loss", _nll(spatial=False), ranks=(1, 2), aten=("nll_loss_nd", "nll_loss_forward")),
    loss("nll_loss2d", _nll(spatial=True), fn=F.nll_loss, ranks=(3, 4),
         aten=("nll_loss_nd", "nll_loss2d_forward")),
    loss("nll_loss_aten", _nll_aten(spatial=False), fn=torch.ops.aten.nll_loss, ranks=(1, 2),
         aten=("nll_loss",)),
    loss("nll_loss2d_aten", _nll_aten(spatial=True), fn=torch.ops.aten.nll_loss2d, ranks=(4, 4),
         aten=("nll_loss2d",)),
    # log_softmax, which it also traces, has a spec of its own
    loss("cross_entropy", _cross_entropy(), ranks=(1, 2),
         aten=("cross_entropy_loss", "nll_loss_forward")),
    loss("cross_entropy_2d", _cross_entropy(spatial=True), fn=F.cross_entropy, ranks=(3, 4),
         aten=("cross_entropy_loss", "nll_loss2d_forward")),
    loss("cross_entropy_probs", _cross_entropy(probs=True), fn=F.cross_entropy, ranks=(1, 2),
         aten=("cross_entropy_loss",)),
    loss("ctc_loss", _ctc, fn=_ctc_fn, ranks=(3, 3)),
    loss("cosine_similarity", _cosine_similarity, dtypes=LOSS_DTYPES, ranks=(1, 4)),
    loss("pairwise_distance", _pairwise_distance, ranks=(1, 2)),
    loss("pdist", _pdist, ranks=(2, 2)),
]

"""Normalization layers, as functional calls with drawn affine parameters."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples, shapes

NORM_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _layer_norm(draw):
    dtype = draw(st.sampled_from(NORM_DTYPES))
    shape = draw(shapes(min_rank=1, max_rank=4))
    k = draw(st.integers(1, len(shape)))
    normalized = shape[len(shape) - k:]
    affine = draw(st.booleans())
    weight = TensorArg(normalized, dtype) if affine else None
    bias = TensorArg(normalized, dtype) if affine else None
    kwargs = {"eps": _eps(draw, TensorArg(normalized, dtype).numel)} if draw(st.booleans()) else {}
    return (TensorArg(shape, dtype), normalized, weight, bias), kwargs


def _eps(draw, per_group):
    """eps, with the edge 0 only where each normalized group has more than one
    value (a single value has variance 0, and 0/0 is nan)."""
    return draw(st.sampled_from([1e-5, 1e-3, 0.0] if per_group > 1 else [1e-5, 1e-3]))


def _batch_norm(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    c = draw(st.integers(1, 4))
    shape = (draw(st.integers(1, 3)), c, *draw(shapes(min_rank=0, max_rank=2)))
    stats = TensorArg((c,), dtype), TensorArg((c,), dtype, 0.5, 2.0)
    affine = (TensorArg((c,), dtype), TensorArg((c,), dtype)) if draw(st.booleans()) else (None, None)
    return (TensorArg(shape, dtype), *stats, *affine), {"training": False}


def _group_norm(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    groups = draw(st.integers(1, 3))
    c = groups * draw(st.integers(1, 2))
    spatial = draw(shapes(min_rank=1, max_rank=2, min_side=2))
    edge = draw(st.integers(0, 2))
    if edge == 0:  # C = 1: one channel, one group
        groups, c = 1, 1
    elif edge == 1:  # HxW = 1: one value per channel (F.group_norm wants more than
        spatial = (1,) * len(spatial)  # one value per group: two channels per group)
        c = 2 * groups
    shape = (draw(st.integers(1, 2)), c, *spatial)
    weight = TensorArg((c,), dtype) if draw(st.booleans()) else None
    bias = TensorArg((c,), dtype) if draw(st.booleans()) else None
    x = TensorArg(shape, dtype)
    return (x, groups, weight, bias), {"eps": _eps(draw, x.numel // (shape[0] * groups))}


def _instance_norm(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *draw(shapes(min_rank=1, max_rank=2, min_side=2)))
    return (TensorArg(shape, dtype),), {}


def _normalize(draw):
    dtype = draw(st.sampled_from(NORM_DTYPES))
    shape = draw(shapes(min_rank=1, max_rank=4))
    p = draw(optional(st.sampled_from([1.0, 3.0, float("inf"), 0.0])))  # 0: nonzero count
    return (TensorArg(shape, dtype),), present(
        p=p, dim=draw(st.integers(-len(shape), len(shape) - 1)))


def _bn_input(draw, dtypes=("float32", "float64"), *, training=False):
    """(x, c): training needs more than one value per channel."""
    dtype = draw(st.sampled_from(dtypes))
    c = draw(st.integers(1, 4))
    spatial = draw(shapes(min_rank=0, max_rank=2))
    n = draw(st.integers(1, 3))
    if training and n * TensorArg(spatial, dtype).numel == 1:
        n = 2
    return TensorArg((n, c, *spatial), dtype), c


def _stats(c, dtype):
    return TensorArg((c,), dtype), TensorArg((c,), dtype, 0.5, 2.0)


def _affine(draw, c, dtype):
    return (TensorArg((c,), dtype), TensorArg((c,), dtype)) if draw(st.booleans()) else (None, None)


def _native_batch_norm(*, stats="drawn", optional_stats=False, dtypes=("float32", "float64")):
    """Positional native batch-norm calls; `stats` is 'drawn' (running stats, training
    drawn), 'none' (the no_stats overload: training only) or 'eval' (no training flag)."""
    def build(draw):
        training = stats == "none" or (stats == "drawn" and draw(st.booleans()))
        x, c = _bn_input(draw, dtypes, training=training)
        args = [x, *_affine(draw, c, x.dtype)]
        if stats != "none":
            # training may leave the running stats out (None) where the schema allows it
            none = optional_stats and training and draw(st.booleans())
            args += (None, None) if none else _stats(c, x.dtype)
        if stats != "eval":
            args.append(training)
        momentum = draw(st.sampled_from([0.1, 0.5, 0.0]))
        eps = draw(st.sampled_from([1e-5, 1e-3, 0.0]))
        return (*args, momentum, eps), {}
    return build


def _batch_norm_training(draw):
    x, c = _bn_input(draw, NORM_DTYPES, training=True)
    running = _stats(c, x.dtype)
    if draw(st.booleans()):
        running = (None, None)
    return (x, *running, *_affine(draw, c, x.dtype)), {"training": True}


def _batch_norm_update_stats(draw):
    x, c = _bn_input(draw, training=True)
    running = (None, None) if draw(st.booleans()) else _stats(c, x.dtype)
    return (x, *running, draw(st.sampled_from([0.1, 0.5, 0.0]))), {}


def _native_layer_norm(draw):
    (x, normalized, weight, bias), _ = _layer_norm(draw)
    return (x, normalized, weight, bias, _eps(draw, TensorArg(normalized, x.dtype).numel)), {}


def _native_group_norm(draw):
    (x, groups, weight, bias), _ = _group_norm(draw)
    if draw(st.booleans()):
        weight, bias = None, None
    n, c = x.shape[:2]
    hxw = x.numel // (n * c)
    return (x, weight, bias, n, c, hxw, groups, _eps(draw, x.numel // (n * groups))), {}


def _rms_norm(draw):
    (x, normalized, weight, _), _ = _layer_norm(draw)
    kwargs = {"eps": draw(st.sampled_from([1e-6, 1e-3]))} if draw(st.booleans()) else {}
    return (x, normalized, weight), kwargs


def _instance_norm_stats(draw):
    (x,), _ = _instance_norm(draw)
    c = x.shape[1]
    return ((x, *_stats(c, x.dtype), *_affine(draw, c, x.dtype)),
            {"use_input_stats": draw(st.booleans())})


def _norm_except_dim(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    shape = draw(shapes(min_rank=1, max_rank=4))
    dim = draw(st.sampled_from([0, len(shape) - 1, -1]))
    return (TensorArg(shape, dtype), draw(st.sampled_from([2, 1])), dim), {}


SPECS = [
    spec("layer_norm", examples(_layer_norm), fn=F.layer_norm, dtypes=NORM_DTYPES, ranks=(1, 4),
         traces={"layer_norm": ("native_layer_norm",)}),
    spec("batch_norm", examples(_batch_norm), fn=F.batch_norm, dtypes=("float32", "float64"),
         ranks=(2, 4), traces={"batch_norm": ("_native_batch_norm_legit_no_training",)},
         mode="inference",
         fixed={"training": "a second spec measures True (see batch_norm_training); this one "
                            "measures the eval path, which traces a different aten packet"}),
    spec("group_norm", examples(_group_norm), fn=F.group_norm, dtypes=("float32", "float64"),
         ranks=(3, 4), traces={"group_norm": ("native_group_norm",)}),
    spec("instance_norm", examples(_instance_norm), fn=F.instance_norm,
         dtypes=("float32", "float64"), ranks=(3, 4)),
    spec("normalize", examples(_normalize), fn=F.normalize, aten=("linalg_vector_norm",),
         dtypes=NORM_DTYPES, ranks=(1, 4),
         fixed={"keepdim": "F.normalize always takes the norm with keepdim=True (the "
                           "denominator broadcasts back over the input); its call has no "
                           "keepdim argument",
                "dtype": "F.normalize never passes a dtype to the norm; its call has no "
                         "dtype argument"}),
]

_BN = ("float32", "float64")
_LEGIT = {"native_batch_norm": ("_native_batch_norm_legit",)}
SPECS += [
    spec("native_layer_norm", examples(_native_layer_norm), fn=torch.native_layer_norm,
         dtypes=NORM_DTYPES, ranks=(1, 4)),
    spec("native_group_norm", examples(_native_group_norm), fn=torch.native_group_norm,
         dtypes=_BN, ranks=(3, 4)),
    spec("native_batch_norm", examples(_native_batch_norm(optional_stats=True)),
         fn=torch.native_batch_norm,
         dtypes=_BN, ranks=(2, 4)),
    # the core packets batch_norm decomposes into, called directly
    spec("native_batch_norm_legit", examples(_native_batch_norm()),
         fn=torch.ops.aten._native_batch_norm_legit.default, aten=("native_batch_norm",),
         dtypes=_BN, ranks=(2, 4), traces=_LEGIT),
    spec("native_batch_norm_legit_no_stats", examples(_native_batch_norm(stats="none")),
         fn=torch.ops.aten._native_batch_norm_legit.no_stats, aten=("native_batch_norm",),
         dtypes=_BN, ranks=(2, 4), traces=_LEGIT, mode="training",
         fixed={"training": "eager CPU rejects False on the no_stats overload (ValueError: "
                            "running_mean must be defined in evaluation mode); the default "
                            "overload's spec native_batch_norm_legit measures False"}),
    # the packet a model's BatchNorm in eval mode decomposes to, at the models' half dtypes
    # too, and as a model uses it: its normalized output alone. (Its other two outputs, the
    # saved mean and invstd, are empty in inference; returned as graph outputs, the exporter
    # types them [C] and onnx.checker refuses the model: a case no model reaches, which made
    # every example of this spec fail at the checker before.)
    spec("native_batch_norm_legit_no_training",
         examples(_native_batch_norm(stats="eval", dtypes=NORM_DTYPES)),
         fn=lambda *args: torch.ops.aten._native_batch_norm_legit_no_training(*args)[0],
         aten=("native_batch_norm",),
         dtypes=NORM_DTYPES, ranks=(2, 4), mode="inference",
         traces={"native_batch_norm": ("_native_batch_norm_legit_no_training",)}),
    spec("native_batch_norm_legit_functional", examples(_native_batch_norm()),
         fn=torch.ops.aten._native_batch_norm_legit_functional, aten=("native_batch_norm",),
         dtypes=_BN, ranks=(2, 4),
         traces={"native_batch_norm": ("_native_batch_norm_legit_functional",)}),
    spec("batch_norm_training", examples(_batch_norm_training), fn=F.batch_norm,
         aten=("batch_norm",), dtypes=NORM_DTYPES, ranks=(2, 4), mode="training",
         fixed={"training": "a second spec measures False (see batch_norm); this one "
                            "measures the training path with optional running stats"}),
    spec("batch_norm_update_stats", examples(_batch_norm_update_stats),
         fn=torch.batch_norm_update_stats, dtypes=_BN, ranks=(2, 4)),
    spec("instance_norm_stats", examples(_instance_norm_stats), fn=F.instance_norm,
         aten=("instance_norm",), dtypes=_BN, ranks=(3, 4)),
    spec("rms_norm", examples(_rms_norm), fn=F.rms_norm, dtypes=NORM_DTYPES, ranks=(1, 4)),
    spec("norm_except_dim", examples(_norm_except_dim), fn=torch.norm_except_dim, dtypes=_BN,
         ranks=(1, 4)),
]

"""Shape operators: reshaping, splitting, joining, broadcasting, tiling.

Views and their ``_copy`` forms, transpositions and diagonals live in
``views.py``."""

import math

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ABSENT, ALL, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import dims, examples, shapes


def _tensor(draw, *, min_rank=0, max_rank=4, dtypes=ALL, min_side=1, uniform=False):
    """`uniform`: every rank alike (a list of sides favours short ones, so a top rank of 6
    is rarely drawn otherwise)."""
    if uniform:
        min_rank = max_rank = draw(st.integers(min_rank, max_rank))
    return TensorArg(draw(shapes(min_rank=min_rank, max_rank=max_rank, min_side=min_side)),
                     draw(st.sampled_from(dtypes)))


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def _factor(draw, n, *, max_rank=4, wildcard=True):
    """A shape of `n` elements, rank 0..max_rank, one side maybe -1."""
    rank = draw(st.integers(0 if n == 1 else 1, max_rank))
    sides, rest = [], n
    for _ in range(rank - 1):
        side = draw(st.sampled_from(_divisors(rest)))
        sides.append(side)
        rest //= side
    if rank:
        sides.append(rest)
    if wildcard and sides and draw(st.booleans()):
        sides[draw(st.integers(0, len(sides) - 1))] = -1
    return tuple(sides)


def _compositions(draw, total, *, max_parts=4):
    """Positive sizes summing to `total` (an explicit split)."""
    cuts = sorted(draw(st.lists(st.integers(1, total - 1), max_size=max_parts - 1, unique=True))
                  if total > 1 else [])
    bounds = [0, *cuts, total]
    return [b - a for a, b in zip(bounds, bounds[1:])]


#: the top rank of the views a model's attention makes: multi-head and windowed attention
#: (swin's windows, relative position buckets) view, permute and copy rank-5 and rank-6
#: tensors; the model set's transformers reach rank 6 there
WIDE = 6


def _ones_heavy_shapes(draw, *, min_rank=0, max_rank=4):
    return tuple(draw(st.lists(st.sampled_from([1, 1, 2, 3, 4]), min_size=min_rank,
                               max_size=max_rank)))


# --- reshaping ----------------------------------------------------------------

def _reshape(draw, *, max_rank=4):
    x = _tensor(draw, max_rank=max_rank, uniform=max_rank > 4)
    return (x, _factor(draw, math.prod(x.shape), max_rank=max_rank)), {}


def _reshape_wide(draw):
    return _reshape(draw, max_rank=WIDE)


def _view_as(draw):
    x = _tensor(draw)
    other = TensorArg(_factor(draw, math.prod(x.shape), wildcard=False),
                      draw(st.sampled_from(ALL)))
    return (x, other), {}


_SAME_SIZE = {"float32": ("int32",), "int32": ("float32",), "float64": ("int64",),
              "int64": ("float64",), "float16": ("bfloat16",), "bfloat16": ("float16",)}


def _view_dtype(draw):
    dtype = draw(st.sampled_from(sorted(_SAME_SIZE)))
    x = TensorArg(draw(shapes()), dtype)
    return (x, getattr(torch, draw(st.sampled_from(_SAME_SIZE[dtype])))), {}


def _unflatten(draw):
    x = _tensor(draw, min_rank=1, max_rank=3)
    dim = draw(dims(x.rank))
    sizes = _factor(draw, x.shape[dim], max_rank=3)
    return (x, dim, sizes or (1,)), {}


def _permute(draw):
    x = _tensor(draw, max_rank=WIDE, uniform=True)
    return (x, tuple(draw(st.permutations(range(x.rank))))), {}


def _transpose(draw):
    x = _tensor(draw, min_rank=1, max_rank=5)
    return (x, draw(dims(x.rank)), draw(dims(x.rank))), {}


def _squeeze(draw):
    x = _tensor(draw, min_rank=1, max_rank=5)
    return (x, draw(dims(x.rank))), {}


def _squeeze_dims(draw):
    x = TensorArg(_ones_heavy_shapes(draw, min_rank=1), draw(st.sampled_from(ALL)))
    chosen = draw(st.lists(st.integers(0, x.rank - 1), min_size=1, max_size=x.rank, unique=True))
    return (x, tuple(d - x.rank if draw(st.booleans()) else d for d in chosen)), {}


def _squeeze_all(draw):
    return (TensorArg(_ones_heavy_shapes(draw), draw(st.sampled_from(ALL))),), {}


def _unsqueeze(draw):
    x = _tensor(draw)
    return (x, draw(st.integers(-(x.rank + 1), x.rank))), {}


def _flatten(draw):
    x = _tensor(draw, min_rank=1)
    a, b = sorted((draw(st.integers(0, x.rank - 1)), draw(st.integers(0, x.rank - 1))))
    return (x,), {"start_dim": a, "end_dim": b}


def _one(draw):
    return (_tensor(draw),), {}


# --- splitting ----------------------------------------------------------------

def _split(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    return (x, draw(st.integers(1, max(1, x.shape[dim]))), dim), {}


def _split_sizes(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    return (x, _compositions(draw, x.shape[dim]), dim), {}


def _chunk(draw):
    x = _tensor(draw, min_rank=1)
    return (x, draw(st.integers(1, 7)), draw(dims(x.rank))), {}


def _unbind(draw):
    x = _tensor(draw, min_rank=1, max_rank=5)
    return (x,), {"dim": draw(dims(x.rank))}


def _tensor_split_sections(draw):
    x = _tensor(draw, min_rank=1)
    return (x, draw(st.integers(1, 7))), {"dim": draw(dims(x.rank))}


def _split_points(draw, side):
    return sorted(draw(st.lists(st.integers(0, side), min_size=1, max_size=3)))


def _tensor_split_indices(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    return (x, _split_points(draw, x.shape[dim])), {"dim": dim}


def _axis_split(axis, min_rank):
    """hsplit/vsplit/dsplit: an even section count or a list of split points."""
    def build(draw):
        x = _tensor(draw, min_rank=min_rank)
        side = x.shape[axis(x.rank)]
        if draw(st.booleans()):
            return (x, draw(st.sampled_from(_divisors(side)))), {}
        return (x, _split_points(draw, side)), {}
    return build


# --- broadcasting and tiling ----------------------------------------------------

def _expand_target(draw, shape, *, lead=True):
    target = tuple(draw(st.integers(1, 4)) if side == 1 else side for side in shape)
    extra = tuple(draw(st.lists(st.integers(1, 3), max_size=1 if lead else 0)))
    return extra + target


def _expand(draw, *, implicit=False, max_rank=3):
    x = _tensor(draw, max_rank=max_rank)
    kwargs = present(implicit=draw(optional(st.booleans()))) if implicit else {}
    return (x, _expand_target(draw, x.shape)), kwargs


def _expand_as(draw):
    x = _tensor(draw, max_rank=3)
    return (x, TensorArg(_expand_target(draw, x.shape), draw(st.sampled_from(ALL)))), {}


def _broadcast_tensors(draw):
    dtype = draw(st.sampled_from(ALL))
    full = draw(shapes(max_rank=3))
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        rank = draw(st.integers(0, len(full)))
        tail = full[len(full) - rank:]
        parts.append(TensorArg(tuple(s if draw(st.booleans()) else 1 for s in tail), dtype))
    return tuple(parts), {}


def _repeat(draw):
    x = _tensor(draw, max_rank=3)
    reps = tuple(draw(st.integers(1, 3)) for _ in range(max(x.rank, 1) + draw(st.integers(0, 1))))
    return (x, reps), {}


def _tile(draw):
    x = _tensor(draw, max_rank=3)
    return (x, tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=4)))), {}


def _roll(draw):
    x = _tensor(draw)
    if x.rank == 0 or draw(st.booleans()):  # rolled as if flattened
        return (x, draw(st.integers(-7, 7))), {}
    chosen = draw(st.lists(st.integers(0, x.rank - 1), min_size=1, max_size=x.rank, unique=True))
    shifts = tuple(draw(st.integers(-7, 7)) for _ in chosen)
    return (x, shifts, tuple(d - x.rank if draw(st.booleans()) else d for d in chosen)), {}


def _rot90(draw):
    x = _tensor(draw, min_rank=2)
    a, b = draw(st.lists(st.integers(0, x.rank - 1), min_size=2, max_size=2, unique=True))
    if draw(st.booleans()):
        a -= x.rank
    return (x, draw(st.integers(-4, 4)), (a, b)), {}


def _flip(draw):
    x = _tensor(draw, min_rank=1)
    return (x, (draw(dims(x.rank)),)), {}


def _repeat_interleave(draw):
    x = _tensor(draw)
    dim = draw(optional(dims(x.rank))) if x.rank else ABSENT  # a 0-d input rejects dim=0
    return (x, draw(st.integers(0, 3))), present(dim=dim)


def _repeat_interleave_tensor(draw):
    x = _tensor(draw, min_rank=1)
    dim = draw(dims(x.rank))
    n = 1 if draw(st.integers(0, 3)) == 0 else x.shape[dim]  # one count for all, or one each
    repeats, c = _counts(draw, n, "int64")
    kwargs = {"dim": dim}
    if c is not None:  # the output's length along dim, known when every count is c
        kwargs["output_size"] = c * x.shape[dim]
    return (x, repeats), kwargs


def _counts(draw, n, dtype):
    """n counts in [0, 4], and None; or, half the time, n times one count c (so that
    output_size, which must be their sum, can be given), and c."""
    if draw(st.booleans()):
        c = draw(st.integers(0, 4))
        return TensorArg((n,), dtype, choices=(c,)), c
    return TensorArg((n,), dtype, 0, 4), None


def _repeat_counts(draw):
    n, dtype = draw(st.integers(1, 6)), draw(st.sampled_from(("int64", "int32")))
    repeats, c = _counts(draw, n, dtype)
    return (repeats,), ({} if c is None else {"output_size": n * c})


# --- joining ------------------------------------------------------------------

def _along(draw, base, dim, dtype, n):
    parts = []
    for _ in range(n):
        shape = list(base)
        shape[dim] = draw(st.integers(1, 4))
        parts.append(TensorArg(tuple(shape), dtype))
    return parts


def _cat(draw):
    dtype = draw(st.sampled_from(ALL))
    base = draw(shapes(min_rank=1, max_rank=4))
    dim = draw(dims(len(base)))
    return (_along(draw, base, dim, dtype, draw(st.integers(1, 3))), dim), {}


def _concat(draw):
    args, _ = _cat(draw)
    return (args[0],), {"dim": args[1]}


def _stack(draw):
    dtype = draw(st.sampled_from(ALL))
    base = draw(shapes(min_rank=0, max_rank=4))
    n = draw(st.integers(1, 3))
    return ([TensorArg(base, dtype) for _ in range(n)], draw(dims(len(base) + 1))), {}


def _hstack(draw):
    dtype = draw(st.sampled_from(ALL))
    base = draw(shapes(min_rank=1, max_rank=4))
    dim = 0 if len(base) == 1 else 1
    return (_along(draw, base, dim, dtype, draw(st.integers(1, 3))),), {}


def _vstack(draw):
    dtype = draw(st.sampled_from(ALL))
    base = draw(shapes(min_rank=1, max_rank=4))
    n = draw(st.integers(1, 3))
    if len(base) == 1:  # 1-D inputs become rows and must agree in length
        return ([TensorArg(base, dtype) for _ in range(n)],), {}
    return (_along(draw, base, 0, dtype, n),), {}


def _dstack(draw):
    dtype = draw(st.sampled_from(ALL))
    base = draw(shapes(min_rank=0, max_rank=4))
    n = draw(st.integers(1, 3))
    if len(base) < 3:  # promoted by atleast_3d: all must agree
        return ([TensorArg(base, dtype) for _ in range(n)],), {}
    return (_along(draw, base, 2, dtype, n),), {}


def _column_stack(draw):
    dtype = draw(st.sampled_from(ALL))
    rows = draw(st.integers(1, 5))
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["column", "matrix"] + (["scalar"] if rows == 1 else [])))
        shape = {"scalar": (), "column": (rows,), "matrix": (rows, draw(st.integers(1, 4)))}[kind]
        parts.append(TensorArg(shape, dtype))
    return (parts,), {}


def _meshgrid(draw):
    dtype = draw(st.sampled_from(ALL))
    parts = [TensorArg(draw(shapes(min_rank=0, max_rank=1)), dtype)
             for _ in range(draw(st.integers(1, 3)))]
    return tuple(parts), {"indexing": draw(st.sampled_from(["ij", "xy"]))}


def _cartesian_prod(draw):
    dtype = draw(st.sampled_from(ALL))
    return tuple(TensorArg((draw(st.integers(1, 4)),), dtype)
                 for _ in range(draw(st.integers(2, 3)))), {}


def _combinations(draw):
    x = TensorArg((draw(st.integers(1, 5)),), draw(st.sampled_from(ALL)))
    return (x,), {"r": draw(st.integers(1, 3)), "with_replacement": draw(st.booleans())}


def _block_diag(draw):
    dtype = draw(st.sampled_from(ALL))
    return tuple(TensorArg(draw(shapes(max_rank=2, max_side=4)), dtype)
                 for _ in range(draw(st.integers(1, 3)))), {}


def _pad_sequence(draw):
    dtype = draw(st.sampled_from(ALL))
    trailing = draw(shapes(max_rank=2, max_side=4))
    seqs = [TensorArg((draw(st.integers(1, 5)),) + trailing, dtype)
            for _ in range(draw(st.integers(1, 3)))]
    value = draw(optional(st.sampled_from([False, True] if dtype == "bool" else [0, -1])))
    return (seqs,), present(batch_first=draw(optional(st.booleans())), padding_value=value,
                            padding_side=draw(optional(st.sampled_from(["left", "right"]))))


def _dense_tensors(draw):
    dtype = draw(st.sampled_from(ALL))
    return ([TensorArg(draw(shapes(max_rank=3, max_side=4)), dtype)
             for _ in range(draw(st.integers(1, 3)))],), {}


def _unflatten_dense(draw):
    (parts,), _ = _dense_tensors(draw)
    flat = TensorArg((sum(math.prod(p.shape) for p in parts),), parts[0].dtype)
    return (flat, parts), {}


def _atleast(draw):
    return (_tensor(draw),), {}


SPECS = [
    # reshaping
    spec("reshape", examples(_reshape), fn=torch.reshape, dtypes=ALL),
    spec("view", examples(_reshape_wide), fn=lambda x, size: x.view(size), dtypes=ALL,
         ranks=(0, WIDE)),
    # the view a decomposed reshape or matmul makes of a fresh copy (no spec of its own in
    # the listing: filed under view, whose packet it is a variant of)
    spec("unsafe_view", examples(_reshape_wide),
         fn=lambda x, size: torch.ops.aten._unsafe_view(x, size), aten=("view",),
         traces={"view": ("_unsafe_view",)}, dtypes=ALL, ranks=(0, WIDE)),
    spec("view_dtype", examples(_view_dtype), fn=lambda x, dtype: x.view(dtype), aten=("view",),
         dtypes=("float32", "int32", "float64", "int64", "float16", "bfloat16")),
    spec("view_as", examples(_view_as), fn=lambda x, other: x.view_as(other), dtypes=ALL),
    spec("reshape_as", examples(_view_as), fn=lambda x, other: x.reshape_as(other), dtypes=ALL),
    spec("ravel", examples(_one), fn=torch.ravel, dtypes=ALL),
    spec("flatten", examples(_flatten), fn=torch.flatten, dtypes=ALL, ranks=(1, 4)),
    spec("unflatten", examples(_unflatten), fn=torch.unflatten, dtypes=ALL, ranks=(1, 3)),
    spec("permute", examples(_permute), fn=torch.permute, dtypes=ALL, ranks=(0, WIDE)),
    # top rank 5: a rank-5 attention tensor's axes swapped or squeezed (swin, deberta)
    spec("transpose", examples(_transpose), fn=torch.transpose, dtypes=ALL, ranks=(1, 5)),
    spec("squeeze", examples(_squeeze), fn=torch.squeeze, dtypes=ALL, ranks=(1, 5)),
    spec("squeeze_dims", examples(_squeeze_dims), fn=torch.squeeze, aten=("squeeze",),
         dtypes=ALL, ranks=(1, 4)),
    spec("squeeze_all", examples(_squeeze_all), fn=torch.squeeze, aten=("squeeze",), dtypes=ALL),
    spec("unsqueeze", examples(_unsqueeze), fn=torch.unsqueeze, dtypes=ALL),
    spec("atleast_1d", examples(_atleast), fn=torch.atleast_1d, dtypes=ALL),
    spec("atleast_2d", examples(_atleast), fn=torch.atleast_2d, dtypes=ALL),
    spec("atleast_3d", examples(_atleast), fn=torch.atleast_3d, dtypes=ALL),
    # splitting
    spec("split", examples(_split), fn=torch.split, dtypes=ALL, ranks=(1, 4)),
    spec("split_with_sizes", examples(_split_sizes), fn=torch.split, dtypes=ALL, ranks=(1, 4)),
    spec("unsafe_split", examples(_split), fn=torch.unsafe_split, dtypes=ALL, ranks=(1, 4)),
    spec("unsafe_split_with_sizes", examples(_split_sizes), fn=torch.unsafe_split_with_sizes,
         dtypes=ALL, ranks=(1, 4)),
    spec("chunk", examples(_chunk), fn=torch.chunk, dtypes=ALL, ranks=(1, 4)),
    spec("unsafe_chunk", examples(_chunk), fn=torch.unsafe_chunk, dtypes=ALL, ranks=(1, 4)),
    # top rank 5: a fused qkv projection [3, B, H, N, D] unbound into q, k and v
    spec("unbind", examples(_unbind), fn=torch.unbind, dtypes=ALL, ranks=(1, 5)),
    spec("tensor_split_sections", examples(_tensor_split_sections), fn=torch.tensor_split,
         aten=("tensor_split",), dtypes=ALL, ranks=(1, 4)),
    spec("tensor_split_indices", examples(_tensor_split_indices), fn=torch.tensor_split,
         aten=("tensor_split",), dtypes=ALL, ranks=(1, 4)),
    spec("hsplit", examples(_axis_split(lambda r: 0 if r == 1 else 1, 1)), fn=torch.hsplit,
         dtypes=ALL, ranks=(1, 4)),
    spec("vsplit", examples(_axis_split(lambda r: 0, 2)), fn=torch.vsplit, dtypes=ALL,
         ranks=(2, 4)),
    spec("dsplit", examples(_axis_split(lambda r: 2, 3)), fn=torch.dsplit, dtypes=ALL,
         ranks=(3, 4)),
    # broadcasting, tiling, reordering
    # top rank 5: a model's attention mask is expanded at rank 4 ([B, 1, 1, S] to
    # [B, 1, S, S]), grouped-query keys at rank 5 ([B, G, 1, N, D] to [B, G, R, N, D])
    spec("expand", examples(lambda draw: _expand(draw, implicit=True, max_rank=5)),
         fn=lambda x, size, **kw: x.expand(size, **kw), dtypes=ALL,
         ranks=(0, 5)),
    spec("expand_as", examples(_expand_as), fn=lambda x, other: x.expand_as(other), dtypes=ALL,
         ranks=(0, 3)),
    spec("broadcast_to", examples(_expand), fn=torch.broadcast_to, dtypes=ALL, ranks=(0, 3)),
    spec("broadcast_tensors", examples(_broadcast_tensors), fn=torch.broadcast_tensors,
         dtypes=ALL, ranks=(0, 3)),
    spec("repeat", examples(_repeat), fn=lambda x, reps: x.repeat(reps), dtypes=ALL,
         ranks=(0, 3)),
    spec("tile", examples(_tile), fn=torch.tile, dtypes=ALL, ranks=(0, 3)),
    spec("repeat_interleave", examples(_repeat_interleave), fn=torch.repeat_interleave,
         dtypes=ALL),
    spec("repeat_interleave_tensor", examples(_repeat_interleave_tensor),
         fn=torch.repeat_interleave, aten=("repeat_interleave",), dtypes=ALL, ranks=(1, 4)),
    spec("repeat_interleave_counts", examples(_repeat_counts), fn=torch.repeat_interleave,
         aten=("repeat_interleave",), dtypes=("int64", "int32"), ranks=(1, 1)),
    spec("roll", examples(_roll), fn=torch.roll, dtypes=ALL),
    spec("rot90", examples(_rot90), fn=torch.rot90, dtypes=ALL, ranks=(2, 4)),
    spec("flip", examples(_flip), fn=torch.flip, dtypes=ALL, ranks=(1, 4)),
    spec("fliplr", examples(lambda draw: ((_tensor(draw, min_rank=2),), {})), fn=torch.fliplr,
         dtypes=ALL, ranks=(2, 4)),
    spec("flipud", examples(lambda draw: ((_tensor(draw, min_rank=1),), {})), fn=torch.flipud,
         dtypes=ALL, ranks=(1, 4)),
    # joining
    spec("cat", examples(_cat), fn=torch.cat, dtypes=ALL, ranks=(1, 4)),
    spec("concat", examples(_concat), fn=torch.concat, dtypes=ALL, ranks=(1, 4)),
    spec("concatenate", examples(_concat), fn=torch.concatenate, dtypes=ALL, ranks=(1, 4)),
    spec("stack", examples(_stack), fn=torch.stack, dtypes=ALL, ranks=(0, 4)),
    spec("hstack", examples(_hstack), fn=torch.hstack, dtypes=ALL, ranks=(1, 4)),
    spec("vstack", examples(_vstack), fn=torch.vstack, dtypes=ALL, ranks=(1, 4)),
    spec("row_stack", examples(_vstack), fn=torch.row_stack, dtypes=ALL, ranks=(1, 4)),
    spec("dstack", examples(_dstack), fn=torch.dstack, dtypes=ALL),
    spec("column_stack", examples(_column_stack), fn=torch.column_stack, dtypes=ALL,
         ranks=(0, 2)),
    spec("meshgrid", examples(_meshgrid), fn=torch.meshgrid, dtypes=ALL, ranks=(0, 1)),
    spec("cartesian_prod", examples(_cartesian_prod), fn=torch.cartesian_prod, dtypes=ALL,
         ranks=(1, 1)),
    spec("combinations", examples(_combinations), fn=torch.combinations, dtypes=ALL,
         ranks=(1, 1)),
    spec("block_diag", examples(_block_diag), fn=torch.block_diag, dtypes=ALL, ranks=(0, 2)),
    spec("pad_sequence", examples(_pad_sequence), fn=torch.nn.utils.rnn.pad_sequence, dtypes=ALL,
         ranks=(1, 3)),
    spec("flatten_dense_tensors", examples(_dense_tensors),
         fn=torch._C._nn.flatten_dense_tensors, dtypes=ALL, ranks=(0, 3)),
    spec("unflatten_dense_tensors", examples(_unflatten_dense),
         fn=torch._C._nn.unflatten_dense_tensors, dtypes=ALL, ranks=(1, 1)),
]

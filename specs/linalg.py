"""Matrix products and linear algebra."""

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import draw_kwargs, gap, optional, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import dims, examples, shapes

MM_DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64")


def _side(draw):
    return draw(st.integers(1, 5))


def _mm(draw):
    dtype = draw(st.sampled_from(MM_DTYPES))
    n, k, m = _side(draw), _side(draw), _side(draw)
    return (TensorArg((n, k), dtype), TensorArg((k, m), dtype)), {}


def _bmm(draw):
    dtype = draw(st.sampled_from(MM_DTYPES))
    b, n, k, m = _side(draw), _side(draw), _side(draw), _side(draw)
    return (TensorArg((b, n, k), dtype), TensorArg((b, k, m), dtype)), {}


def _matmul(draw):
    dtype = draw(st.sampled_from(MATMUL_DTYPES))
    k = _side(draw)
    left = tuple(_side(draw) for _ in range(draw(st.integers(0, 3)))) + (k,)
    right = (k,) + tuple(_side(draw) for _ in range(draw(st.integers(0, 1))))
    if len(left) >= 3 and draw(st.booleans()):  # attention's scores: q @ k^T, batched alike
        right = left[:-2] + (k, _side(draw))
    return (TensorArg(left, dtype), TensorArg(right, dtype)), {}


def _linear(draw):
    dtype = draw(st.sampled_from(("float32", "float64", "float16", "bfloat16")))
    fin, fout = _side(draw), _side(draw)
    lead = tuple(_side(draw) for _ in range(draw(st.integers(0, 3))))
    bias = TensorArg((fout,), dtype) if draw(st.booleans()) else None
    return (TensorArg(lead + (fin,), dtype), TensorArg((fout, fin), dtype), bias), {}


def _addmm(draw):
    dtype = draw(st.sampled_from(MATMUL_DTYPES))
    n, k, m = _side(draw), _side(draw), _side(draw)
    # a bias row broadcast over the rows, as a decomposed nn.Linear (GPT-2's Conv1D) adds it
    bias = (m,) if draw(st.booleans()) else (n, m)
    return ((TensorArg(bias, dtype), TensorArg((n, k), dtype), TensorArg((k, m), dtype)),
            {"beta": draw(st.sampled_from([1, 0.5])), "alpha": draw(st.sampled_from([1, 2]))})


def _cdist(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    d = _side(draw)
    return (TensorArg((_side(draw), d), dtype), TensorArg((_side(draw), d), dtype)), {}


def _square(draw):
    dtype = draw(st.sampled_from(("float32", "float64")))
    n = draw(st.integers(1, 4))
    lead = tuple(_side(draw) for _ in range(draw(st.integers(0, 1))))
    return (TensorArg(lead + (n, n), dtype),), {}


def _dot(draw):
    dtype = draw(st.sampled_from(("float32", "float64", "int64")))
    n = _side(draw)
    return (TensorArg((n,), dtype), TensorArg((n,), dtype)), {}


# --- products ------------------------------------------------------------------

F64 = ("float32", "float64")
#: the matrix products a model's layers call at every float dtype it runs in
MATMUL_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _float(draw, dtypes=F64):
    return draw(st.sampled_from(dtypes))


def _addmv(draw):
    dtype = _float(draw)
    n, m = _side(draw), _side(draw)
    bias = (n,) if draw(st.booleans()) else (1,)  # input broadcasts
    return ((TensorArg(bias, dtype), TensorArg((n, m), dtype), TensorArg((m,), dtype)),
            {"beta": draw(st.sampled_from([1, 0.5])), "alpha": draw(st.sampled_from([1, 2]))})


#: (beta, alpha) of addr, drawn together to keep the signature count; beta=0 ignores the
#: input. Integral tensors take integral scalars only (eager rejects a float beta)
_ADDR_SCALES = {"int64": ((1, 1), (2, 3), (0, -1)), "float": ((1, 1), (0.5, 2), (0, -1.5))}


def _addr(draw):
    dtype = _float(draw, ("float32", "float64", "int64"))
    n, m = _side(draw), _side(draw)
    beta, alpha = draw(st.sampled_from(_ADDR_SCALES["int64" if dtype == "int64" else "float"]))
    return ((TensorArg((n, m), dtype), TensorArg((n,), dtype), TensorArg((m,), dtype)),
            {"beta": beta, "alpha": alpha})


def _batched_add(*, reduce, dtypes=F64):
    """addbmm sums the batch away, baddbmm keeps it."""
    def build(draw):
        dtype = _float(draw, dtypes)
        b, n, k, m = _side(draw), _side(draw), _side(draw), _side(draw)
        bias = (n, m) if reduce or draw(st.booleans()) else (b, n, m)
        return ((TensorArg(bias, dtype), TensorArg((b, n, k), dtype), TensorArg((b, k, m), dtype)),
                {"beta": draw(st.sampled_from([1, 0.5])), "alpha": draw(st.sampled_from([1, 2]))})
    return build


def _mv(draw):
    dtype = _float(draw, ("float32", "float64", "int64"))
    n, m = _side(draw), _side(draw)
    return (TensorArg((n, m), dtype), TensorArg((m,), dtype)), {}


def _vectors(draw, dtypes=("float32", "float64", "int64"), *, same=False):
    dtype = _float(draw, dtypes)
    n = _side(draw)
    return (TensorArg((n,), dtype), TensorArg((n if same else _side(draw),), dtype)), {}


def _inner(draw):
    dtype = _float(draw, ("float32", "float64", "int64"))
    k = _side(draw)
    a = tuple(_side(draw) for _ in range(draw(st.integers(0, 2))))
    b = tuple(_side(draw) for _ in range(draw(st.integers(0, 2))))
    return (TensorArg(a + (k,), dtype), TensorArg(b + (k,), dtype)), {}


def _kron(draw):
    dtype = _float(draw, ("float32", "float64", "int64"))
    a = draw(shapes(min_rank=1, max_rank=3, max_side=3))
    b = draw(shapes(min_rank=1, max_rank=3, max_side=3))
    return (TensorArg(a, dtype), TensorArg(b, dtype)), {}


def _tensordot(draw):
    dtype = _float(draw)
    n = draw(st.integers(0, 2))  # contracted dims
    shared = tuple(_side(draw) for _ in range(n))
    a = tuple(_side(draw) for _ in range(draw(st.integers(0, 2)))) + shared
    b = shared + tuple(_side(draw) for _ in range(draw(st.integers(0, 2))))
    if draw(st.booleans()):
        return (TensorArg(a, dtype), TensorArg(b, dtype)), {"dims": n}
    dims_a = list(range(len(a) - n, len(a)))
    return (TensorArg(a, dtype), TensorArg(b, dtype)), {"dims": (dims_a, list(range(n)))}


#: einsum equations: matmul, batched, trace, diagonal, transpose, outer, attention, ellipsis
EQUATIONS = ("ij,jk->ik", "bij,bjk->bik", "ii->", "ii->i", "ij->ji", "i,j->ij", "ij,ij->",
             "bhqd,bhkd->bhqk", "...ij->...ji", "ij,j->i", "ijk->k")


def _einsum(draw):
    dtype = _float(draw)
    equation = draw(st.sampled_from(EQUATIONS))
    sizes = {c: draw(st.integers(1, 4)) for c in "ijkbhqd"}
    lhs = equation.split("->")[0]
    operands = []
    for term in lhs.split(","):
        shape = tuple(sizes[c] for c in term.replace("...", ""))
        if term.startswith("..."):
            shape = tuple(_side(draw) for _ in range(draw(st.integers(0, 2)))) + shape
        operands.append(TensorArg(shape, dtype))
    return (equation, *operands), {}


def _chain(draw):
    dtype = _float(draw)
    sides = [_side(draw) for _ in range(draw(st.integers(3, 5)))]
    return [TensorArg((a, b), dtype) for a, b in zip(sides, sides[1:])]


def _multi_dot(draw):
    mats = _chain(draw)
    if draw(st.booleans()):  # the first and last operands may be vectors
        mats[0] = TensorArg(mats[0].shape[1:], mats[0].dtype)
    return (mats,), {}


def _vecdot(draw):
    dtype = _float(draw)
    shape = draw(shapes(min_rank=1, max_rank=3))
    return (TensorArg(shape, dtype), TensorArg(shape, dtype)), {"dim": draw(dims(len(shape)))}


def _cross(*, dim_required):
    def build(draw):
        dtype = _float(draw, ("float32", "float64", "int64"))
        shape = list(draw(shapes(min_rank=1, max_rank=3)))
        dim = draw(dims(len(shape))) if dim_required or draw(st.booleans()) else -1
        shape[dim] = 3
        return (TensorArg(tuple(shape), dtype), TensorArg(tuple(shape), dtype)), {"dim": dim}
    return build


def _bilinear(draw):
    dtype = _float(draw)
    lead = tuple(_side(draw) for _ in range(draw(st.integers(1, 2))))
    in1, in2, out = _side(draw), _side(draw), _side(draw)
    bias = TensorArg((out,), dtype) if draw(st.booleans()) else None
    return (TensorArg(lead + (in1,), dtype), TensorArg(lead + (in2,), dtype),
            TensorArg((out, in1, in2), dtype), bias), {}


# --- norms and matrix functions --------------------------------------------------

def _matrix(draw, *, square=False, min_batch=0, max_batch=1, low=None, high=None):
    dtype = _float(draw)
    n = draw(st.integers(1, 4))
    m = n if square else draw(st.integers(1, 4))
    lead = tuple(_side(draw) for _ in range(draw(st.integers(min_batch, max_batch))))
    return TensorArg(lead + (n, m), dtype, low, high)


def _linalg_norm(draw):
    x = _matrix(draw)
    kind = draw(st.sampled_from(["none", "vector", "matrix"]))
    if kind == "none":
        return (x,), {}
    if kind == "vector":
        return (x,), {"ord": draw(st.sampled_from([1, 2, float("inf"), 3])),
                      "dim": draw(dims(x.rank)), "keepdim": draw(st.booleans())}
    return (x,), {"ord": draw(st.sampled_from(["fro", "nuc", 1, -1, 2, float("inf")])),
                  "dim": (-2, -1), "keepdim": draw(st.booleans())}


def _matrix_norm(draw):
    x = _matrix(draw)
    return (x,), {"ord": draw(st.sampled_from(["fro", "nuc", 1, -1, 2, -2, float("inf")])),
                  "keepdim": draw(st.booleans())}


def _frobenius(draw):
    x = _matrix(draw)
    return (x, draw(st.sampled_from([(-2, -1), (0,), (-1,)]))), {"keepdim": draw(st.booleans())}


def _powsum(draw):
    x = _matrix(draw)
    other = "float64" if x.dtype == "float32" else "float32"  # dtype=: a real cast either way
    return (x,), {"ord": draw(st.sampled_from([2, 1, 3])), "dim": [draw(dims(x.rank))],
                  "keepdim": draw(st.booleans()),
                  **draw_kwargs(draw, {"dtype": optional(st.just(getattr(torch, other)))})}


def _square_well(draw):
    """Square matrices in [-1, 1]: `_well` makes them diagonally dominant."""
    return (_matrix(draw, square=True, low=-1.0, high=1.0),), {}


def _well(a):
    """a + n*I: with entries in [-1, 1], strictly diagonally dominant with a positive
    diagonal, hence invertible with a positive determinant."""
    n = a.shape[-1]
    return a + n * torch.eye(n, dtype=a.dtype)


def _matrix_power(draw):
    (a,), _ = _square_well(draw)
    return (a, draw(st.sampled_from([2, 0, 1, 3, -1, -2]))), {}


def _tensorinv(draw):
    dtype = _float(draw)
    shape = draw(st.sampled_from([(4, 2, 2), (2, 3, 6), (2, 2, 2, 2), (3, 3)]))
    ind = {(4, 2, 2): 1, (2, 3, 6): 2, (2, 2, 2, 2): 2, (3, 3): 1}[shape]
    return (TensorArg(shape, dtype, -1.0, 1.0), ind), {}


def _tensorinv_fn(a, ind):
    n = 1
    for side in a.shape[:ind]:
        n *= side
    return torch.linalg.tensorinv(_well(a.reshape(n, n)).reshape(a.shape), ind)


def _tensorsolve(draw):
    dtype = _float(draw)
    b_shape = draw(st.sampled_from([(2, 3), (4,), (2, 2)]))
    n = 1
    for side in b_shape:
        n *= side
    return (TensorArg((n, n), dtype, -1.0, 1.0), TensorArg(b_shape, dtype)), {}


def _tensorsolve_fn(a, b):
    return torch.linalg.tensorsolve(_well(a).reshape(*b.shape, *a.shape[1:]), b)


def _vander(draw):
    dtype = _float(draw, ("float32", "float64", "int64"))
    x = TensorArg(draw(shapes(min_rank=1, max_rank=2, min_side=2)), dtype, -2, 2)  # N > 1
    return (x,), ({"N": draw(st.integers(2, 4))} if draw(st.booleans()) else {})


def _linalg_diagonal(draw):
    x = TensorArg(draw(shapes(min_rank=2, max_rank=4)), _float(draw))
    d1, d2 = draw(st.lists(st.integers(-x.rank, x.rank - 1), min_size=2, max_size=2,
                           unique_by=lambda d: d % x.rank))
    return (x,), {"offset": draw(st.integers(-2, 2)), "dim1": d1, "dim2": d2}


SPECS = [
    spec("mm", examples(_mm), fn=torch.mm, dtypes=MM_DTYPES, ranks=(2, 2)),
    spec("bmm", examples(_bmm), fn=torch.bmm, dtypes=MM_DTYPES, ranks=(3, 3)),
    # top rank 4: attention's batched heads ([B, H, N, D] @ [B, H, D, N]), a projection of
    # [B, H, N, D]
    spec("matmul", examples(_matmul), fn=torch.matmul, ranks=(1, 4), dtypes=MATMUL_DTYPES),
    spec("linear", examples(_linear), fn=F.linear, ranks=(1, 4)),
    spec("addmm", examples(_addmm), fn=torch.addmm, dtypes=MATMUL_DTYPES, ranks=(1, 2)),
    spec("dot", examples(_dot), fn=torch.dot, dtypes=("float32", "float64", "int64"),
         ranks=(1, 1)),
    spec("cdist", examples(_cdist), fn=torch.cdist, dtypes=("float32", "float64"), ranks=(2, 2),
         gap=gap("no translation registered for aten::_cdist_forward", "no-translation")),
    spec("det", examples(_square), fn=torch.linalg.det, aten=("linalg_det",),
         dtypes=("float32", "float64"), ranks=(2, 3)),
    spec("inverse", examples(_square), fn=torch.linalg.inv, aten=("linalg_inv",),
         dtypes=("float32", "float64"), ranks=(2, 3)),
]

SQUARE = dict(dtypes=F64, ranks=(2, 3))
SPECS += [
    spec("addmv", examples(_addmv), fn=torch.addmv, dtypes=F64, ranks=(1, 1)),
    spec("addr", examples(_addr), fn=torch.addr, dtypes=("float32", "float64", "int64"),
         ranks=(2, 2)),
    spec("addbmm", examples(_batched_add(reduce=True)), fn=torch.addbmm, dtypes=F64,
         ranks=(2, 2)),
    spec("baddbmm", examples(_batched_add(reduce=False, dtypes=MATMUL_DTYPES)),
         fn=torch.baddbmm, dtypes=MATMUL_DTYPES, ranks=(2, 3)),
    spec("mv", examples(_mv), fn=torch.mv, dtypes=("float32", "float64", "int64"), ranks=(2, 2)),
    spec("outer", examples(_vectors), fn=torch.outer, dtypes=("float32", "float64", "int64"),
         ranks=(1, 1)),
    spec("ger", examples(_vectors), fn=torch.ger, dtypes=("float32", "float64", "int64"),
         ranks=(1, 1)),
    spec("vdot", examples(lambda d: _vectors(d, same=True)), fn=torch.vdot,
         dtypes=("float32", "float64", "int64"), ranks=(1, 1)),
    spec("inner", examples(_inner), fn=torch.inner, dtypes=("float32", "float64", "int64"),
         ranks=(1, 3)),
    spec("kron", examples(_kron), fn=torch.kron, dtypes=("float32", "float64", "int64"),
         ranks=(1, 3)),
    spec("tensordot", examples(_tensordot), fn=torch.tensordot, dtypes=F64, ranks=(0, 4)),
    spec("einsum", examples(_einsum), fn=torch.einsum, dtypes=F64, ranks=(1, 4)),
    spec("chain_matmul", examples(lambda d: (tuple(_chain(d)), {})), fn=torch.chain_matmul,
         dtypes=F64, ranks=(2, 2)),
    spec("linalg_multi_dot", examples(_multi_dot), fn=torch.linalg.multi_dot, dtypes=F64,
         ranks=(1, 2)),
    spec("linalg_matmul", examples(_mm), fn=torch.linalg.matmul, dtypes=MM_DTYPES, ranks=(2, 2)),
    spec("linalg_vecdot", examples(_vecdot), fn=torch.linalg.vecdot, dtypes=F64, ranks=(1, 3)),
    spec("cross", examples(_cross(dim_required=True)), fn=torch.cross,
         dtypes=("float32", "float64", "int64"), ranks=(1, 3)),
    spec("linalg_cross", examples(_cross(dim_required=False)), fn=torch.linalg.cross,
         dtypes=("float32", "float64", "int64"), ranks=(1, 3)),
    spec("bilinear", examples(_bilinear), fn=F.bilinear, dtypes=F64, ranks=(2, 3)),
    spec("linalg_norm", examples(_linalg_norm), fn=torch.linalg.norm, dtypes=F64, ranks=(2, 3)),
    spec("linalg_matrix_norm", examples(_matrix_norm), fn=torch.linalg.matrix_norm, dtypes=F64,
         ranks=(2, 3)),
    spec("frobenius_norm", examples(_frobenius), fn=torch.frobenius_norm, dtypes=F64,
         ranks=(2, 3)),
    spec("nuclear_norm", examples(lambda d: ((_matrix(d, max_batch=0),),
                                             {"keepdim": d(st.booleans())})),
         fn=torch.nuclear_norm, dtypes=F64, ranks=(2, 2)),
    spec("linalg_powsum", examples(_powsum), fn=torch.ops.aten.linalg__powsum,
         aten=("linalg__powsum",), dtypes=F64, ranks=(2, 3)),
    spec("det_tensor", examples(_square), fn=torch.det, aten=("det",), **SQUARE),
    spec("inverse_tensor", examples(_square_well), fn=lambda a: torch.inverse(_well(a)),
         aten=("inverse",), **SQUARE),
    # `_well` makes every drawn matrix invertible: check_errors=True never raises
    spec("linalg_inv_ex", examples(lambda d: (_square_well(d)[0],
                                              {"check_errors": d(st.booleans())})),
         fn=lambda a, **kw: torch.linalg.inv_ex(_well(a), **kw), **SQUARE),
    spec("logdet", examples(_square_well), fn=lambda a: torch.logdet(_well(a)), **SQUARE),
    spec("slogdet", examples(_square), fn=torch.slogdet, **SQUARE),
    spec("linalg_slogdet", examples(_square), fn=torch.linalg.slogdet, **SQUARE),
    spec("matrix_power", examples(_matrix_power),
         fn=lambda a, n: torch.matrix_power(_well(a), n), **SQUARE),
    spec("linalg_matrix_power", examples(_matrix_power),
         fn=lambda a, n: torch.linalg.matrix_power(_well(a), n), **SQUARE),
    spec("matrix_exp", examples(_square_well), fn=torch.matrix_exp, **SQUARE),
    spec("linalg_matrix_exp", examples(_square_well), fn=torch.linalg.matrix_exp, **SQUARE),
    spec("linalg_tensorinv", examples(_tensorinv), fn=_tensorinv_fn, dtypes=F64, ranks=(2, 4)),
    spec("linalg_tensorsolve", examples(_tensorsolve), fn=_tensorsolve_fn, dtypes=F64,
         ranks=(2, 2)),
    spec("linalg_vander", examples(_vander), fn=torch.linalg.vander,
         dtypes=("float32", "float64", "int64"), ranks=(1, 2)),
    spec("linalg_diagonal", examples(_linalg_diagonal), fn=torch.linalg.diagonal, dtypes=F64,
         ranks=(2, 4)),
]

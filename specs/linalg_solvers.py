"""Linear-algebra factorizations and solvers (split from linalg.py).

Inputs are drawn in [-1, 1] and conditioned inside `fn` (diagonally dominant,
symmetric or positive definite) so every draw is valid; the extra add/eye/matmul
nodes do not hide the declared row. Factors defined only up to sign (Q, U, V,
eigenvectors) are compared by absolute value.
"""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import no_translation, spec
from opsweep.model import TensorArg, Tolerance
from opsweep.catalog.strategies import examples

F64 = ("float32", "float64")
#: LAPACK and whatever the exporter emits take different paths to the same factors
TOL = {"float32": Tolerance(1e-3, 1e-4), "float64": Tolerance(1e-6, 1e-7)}


def _shape(draw, *, square=True, max_batch=1):
    n = draw(st.integers(1, 4))
    m = n if square else draw(st.integers(1, 4))
    lead = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, max_batch))))
    return lead + (n, m)


def _mat(draw, dtype, *, square=True, max_batch=1):
    return TensorArg(_shape(draw, square=square, max_batch=max_batch), dtype, -1.0, 1.0)


def _square(**kwargs):
    """One square matrix and drawn keyword arguments."""
    def build(draw):
        dtype = draw(st.sampled_from(F64))
        return (_mat(draw, dtype),), {k: draw(v) for k, v in kwargs.items()}
    return build


def _rect(draw):
    return (_mat(draw, draw(st.sampled_from(F64)), square=False),), {}


def _rhs(*, left_flag=False, **kwargs):
    """(A, B) for solvers: A square, B with k right-hand sides (or a vector)."""
    def build(draw):
        dtype = draw(st.sampled_from(F64))
        a = _mat(draw, dtype)
        n = a.shape[-1]
        kw = {k: draw(v) for k, v in kwargs.items()}
        left = draw(st.booleans()) if left_flag else True
        if left_flag:
            kw["left"] = left
        k = draw(st.integers(1, 3))
        b = TensorArg(a.shape[:-2] + ((n, k) if left else (k, n)), dtype)
        return (a, b), kw
    return build


def _pivots(lu_shape):
    """Random LAPACK-style pivots of an (m, n) LU factor: min(m, n) 1-based row
    numbers in [1, m], the shape and range every torch validates (2.14 checks both)."""
    m, n = lu_shape[-2:]
    return TensorArg(lu_shape[:-2] + (min(m, n),), "int32", 1, m + 1)


def _lu_inputs(draw, *, with_rhs=False, square=True):
    dtype = draw(st.sampled_from(F64))
    lu = _mat(draw, dtype, square=square)
    piv = _pivots(lu.shape)
    if not with_rhs:
        return lu, piv
    return lu, piv, TensorArg(lu.shape[:-1] + (draw(st.integers(1, 3)),), dtype)


def _well(a):
    n = a.shape[-1]
    return a + n * torch.eye(n, dtype=a.dtype)


def _spd(a):
    n = a.shape[-1]
    return a @ a.mT + n * torch.eye(n, dtype=a.dtype)


def _sym(a):
    return a + a.mT


def _abs_all(result):
    return tuple(t.abs() for t in result)


def _qr(draw, *, legacy):
    dtype = draw(st.sampled_from(F64))
    a = _mat(draw, dtype, square=False)
    m, n = a.shape[-2:]
    if legacy:  # `some`: a complete Q of a tall matrix has arbitrary extra columns
        return (a,), {"some": True if m > n else draw(st.booleans())}
    modes = ["reduced", "r"] + (["complete"] if m <= n else [])
    return (a,), {"mode": draw(st.sampled_from(modes))}


def _svd(draw, *, legacy):
    dtype = draw(st.sampled_from(F64))
    a = _mat(draw, dtype, square=False)
    full = a.shape[-1] == a.shape[-2] and draw(st.booleans())
    return (a,), ({"some": not full} if legacy else {"full_matrices": full})


def _householder(draw, *, ormqr=False):
    """(A, tau[, C]): Householder reflectors are defined for any values."""
    dtype = draw(st.sampled_from(F64))
    n = draw(st.integers(1, 4))
    m = draw(st.integers(n, 4))
    k = n if ormqr else draw(st.integers(1, n))  # ormqr wants every reflector
    lead = tuple(draw(st.integers(1, 2)) for _ in range(draw(st.integers(0, 1))))
    a, tau = TensorArg(lead + (m, n), dtype), TensorArg(lead + (k,), dtype, -1.0, 1.0)
    if not ormqr:
        return (a, tau), {}
    left = draw(st.booleans())
    c = TensorArg(lead + ((m, draw(st.integers(1, 3))) if left else (draw(st.integers(1, 3)), m)),
                  dtype)
    return (a, tau, c), {"left": left, "transpose": draw(st.booleans())}


def _lstsq(draw):
    dtype = draw(st.sampled_from(F64))
    a = _mat(draw, dtype, square=False, max_batch=0)
    return (a, TensorArg((a.shape[0], draw(st.integers(1, 3))), dtype)), {}


_UPPER = {"upper": st.booleans()}
_UPLO = {"UPLO": st.sampled_from(["L", "U"])}
S = dict(dtypes=F64, ranks=(2, 3), tolerances=TOL)

SPECS = [
    # Cholesky
    spec("cholesky", examples(_square(**_UPPER)), fn=lambda a, **kw: torch.cholesky(_spd(a), **kw),
         **S),
    spec("linalg_cholesky", examples(_square(**_UPPER)),
         fn=lambda a, **kw: torch.linalg.cholesky(_spd(a), **kw), **S),
    spec("linalg_cholesky_ex", examples(_square(**_UPPER)),
         fn=lambda a, **kw: torch.linalg.cholesky_ex(_spd(a), **kw), **S),
    spec("cholesky_solve", examples(_rhs(**_UPPER)),
         fn=lambda a, b, **kw: torch.cholesky_solve(b, _well(a), **kw), **S,
         gap=no_translation("cholesky_solve")),
    spec("cholesky_inverse", examples(_square(**_UPPER)),
         fn=lambda a, **kw: torch.cholesky_inverse(_well(a), **kw), **S,
         gap=no_translation("cholesky_inverse")),
    # QR and Householder
    spec("linalg_qr", examples(lambda d: _qr(d, legacy=False)),
         fn=lambda a, **kw: _abs_all(torch.linalg.qr(a, **kw)), **S),
    spec("qr", examples(lambda d: _qr(d, legacy=True)),
         fn=lambda a, **kw: _abs_all(torch.qr(a, **kw)), **S),
    spec("geqrf", examples(_rect), fn=torch.geqrf, **S, gap=no_translation("geqrf")),
    spec("linalg_householder_product", examples(_householder),
         fn=torch.linalg.householder_product, **S, gap=no_translation("linalg_householder_product")),
    spec("orgqr", examples(_householder), fn=torch.orgqr, **S),
    spec("ormqr", examples(lambda d: _householder(d, ormqr=True)), fn=torch.ormqr, **S,
         gap=no_translation("ormqr")),
    # SVD and eigendecompositions
    spec("linalg_svd", examples(lambda d: _svd(d, legacy=False)),
         fn=lambda a, **kw: _abs_all(torch.linalg.svd(a, **kw)), **S),
    spec("svd", examples(lambda d: _svd(d, legacy=True)),
         fn=lambda a, **kw: _abs_all(torch.svd(a, **kw)), **S),
    spec("linalg_svdvals", examples(_rect), fn=torch.linalg.svdvals, **S),
    spec("linalg_eigh", examples(_square(**_UPLO)),
         fn=lambda a, **kw: _abs_all(torch.linalg.eigh(_sym(a), **kw)), **S),
    spec("linalg_eigvalsh", examples(_square(**_UPLO)),
         fn=lambda a, **kw: torch.linalg.eigvalsh(_sym(a), **kw), **S),
    # eigenvalue order and eigenvector phase of a general matrix are implementation-defined
    spec("linalg_eig", examples(_square()), fn=torch.linalg.eig, nondeterministic=True, **S,
         gap=no_translation("linalg_eig")),
    spec("linalg_eigvals", examples(_square()), fn=torch.linalg.eigvals, nondeterministic=True,
         **S),
    # solvers
    spec("linalg_solve", examples(_rhs(left_flag=True)),
         fn=lambda a, b, **kw: torch.linalg.solve(_well(a), b, **kw), **S),
    spec("linalg_solve_ex", examples(_rhs(left_flag=True)),
         fn=lambda a, b, **kw: torch.linalg.solve_ex(_well(a), b, **kw), **S),
    spec("linalg_solve_triangular", examples(_rhs(left_flag=True, unitriangular=st.booleans(),
                                                  **_UPPER)),
         fn=lambda a, b, **kw: torch.linalg.solve_triangular(_well(a), b, **kw), **S,
         gap=no_translation("linalg_solve_triangular")),
    spec("triangular_solve", examples(_rhs(transpose=st.booleans(), unitriangular=st.booleans(),
                                           **_UPPER)),
         fn=lambda a, b, **kw: torch.triangular_solve(b, _well(a), **kw), **S,
         gap=no_translation("triangular_solve")),
    spec("linalg_lstsq", examples(_lstsq), fn=torch.linalg.lstsq, dtypes=F64, ranks=(2, 2),
         tolerances=TOL),
    spec("linalg_pinv", examples(_rect), fn=torch.linalg.pinv, **S),
    spec("pinverse", examples(_rect), fn=torch.pinverse, **S),
    spec("linalg_matrix_rank", examples(_rect), fn=torch.linalg.matrix_rank, **S),
    spec("linalg_cond", examples(_square(p=st.sampled_from([None, "fro", "nuc", 1, -1, 2, -2,
                                                            float("inf")]))),
         fn=lambda a, **kw: torch.linalg.cond(_well(a), **kw), **S),
    # LU
    spec("linalg_lu", examples(lambda d: (_rect(d)[0], {"pivot": True})), fn=torch.linalg.lu,
         **S, gap=no_translation("linalg_lu")),
    spec("linalg_lu_factor", examples(_rect), fn=torch.linalg.lu_factor, **S),
    spec("linalg_lu_factor_ex", examples(_rect), fn=torch.linalg.lu_factor_ex, **S),
    spec("linalg_lu_solve", examples(lambda d: (_lu_inputs(d, with_rhs=True),
                                                {"adjoint": d(st.booleans())})),
         fn=lambda lu, piv, b, **kw: torch.linalg.lu_solve(_well(lu), piv, b, **kw), **S,
         gap=no_translation("linalg_lu_solve")),
    spec("lu_solve", examples(lambda d: (_lu_inputs(d, with_rhs=True), {})),
         fn=lambda lu, piv, b: torch.lu_solve(b, _well(lu), piv), **S),
    spec("lu_unpack", examples(lambda d: (_lu_inputs(d, square=False), {})), fn=torch.lu_unpack,
         **S, gap=no_translation("lu_unpack")),
    # LDL
    spec("linalg_ldl_factor", examples(_square()),
         fn=lambda a: torch.linalg.ldl_factor(_sym(a)), **S),
    spec("linalg_ldl_factor_ex", examples(_square()),
         fn=lambda a: torch.linalg.ldl_factor_ex(_sym(a)), **S),
    spec("linalg_ldl_solve", examples(lambda d: (_lu_inputs(d, with_rhs=True), {})),
         fn=lambda ld, piv, b: torch.linalg.ldl_solve(_well(ld), piv, b), **S,
         gap=no_translation("linalg_ldl_solve")),
]

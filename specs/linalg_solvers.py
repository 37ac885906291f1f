"""Linear-algebra factorizations and solvers (split from linalg.py).

Inputs are drawn in [-1, 1] and conditioned inside `fn` (diagonally dominant,
symmetric or positive definite) so every draw is valid; the extra add/eye/matmul
nodes do not hide the declared row. Factors defined only up to sign (Q, U, V,
eigenvectors) are compared by absolute value.
"""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import draw_kwargs, no_translation, spec
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
    """One square matrix and drawn keyword arguments (ABSENT ones left out)."""
    def build(draw):
        dtype = draw(st.sampled_from(F64))
        return (_mat(draw, dtype),), draw_kwargs(draw, kwargs)
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


def _lu_inputs(draw, *, with_rhs=False, square=True, left=True):
    """(LU, pivots[, B]); B is (n, k) for a left solve A X = B, (k, n) for X A = B."""
    dtype = draw(st.sampled_from(F64))
    lu = _mat(draw, dtype, square=square)
    piv = _pivots(lu.shape)
    if not with_rhs:
        return lu, piv
    n, k = lu.shape[-1], draw(st.integers(1, 3))
    return lu, piv, TensorArg(lu.shape[:-2] + ((n, k) if left else (k, n)), dtype)


def _lu_solve(draw):
    left = draw(st.booleans())
    return _lu_inputs(draw, with_rhs=True, left=left), {"adjoint": draw(st.booleans()),
                                                        "left": left}


def _lu_unpack(draw):
    return _lu_inputs(draw, square=False), {"unpack_data": draw(st.booleans()),
                                            "unpack_pivots": draw(st.booleans())}


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
    if legacy:  # complete U, V of a non-square matrix have arbitrary extra columns
        some = draw(st.booleans())
        return (_mat(draw, dtype, square=not some),), {"some": some}
    a = _mat(draw, dtype, square=False)
    full = a.shape[-1] == a.shape[-2] and draw(st.booleans())
    return (a,), {"full_matrices": full}


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


#: (driver, rcond) pairs, drawn together to keep the signature count: every CPU driver
#: (gels assumes a full-rank A, which a drawn matrix is almost surely), the default (None:
#: gelsy), and rcond None, 0 and a positive cut-off where the driver reads it
_LSTSQ = ((None, None), ("gelsy", 1e-3), ("gelsd", 0.0), ("gelss", 1e-3), ("gels", None),
          (None, 0.0))


def _lstsq(draw):
    dtype = draw(st.sampled_from(F64))
    a = _mat(draw, dtype, square=False, max_batch=0)
    driver, rcond = draw(st.sampled_from(_LSTSQ))
    kw = {k: v for k, v in (("driver", driver), ("rcond", rcond)) if v is not None}
    return (a, TensorArg((a.shape[0], draw(st.integers(1, 3))), dtype)), kw


#: atol / rtol of pinv, drawn together: none (the default cut-off), either alone, both 0
_PINV_TOL = ({}, {"atol": 1e-3}, {"rtol": 1e-2}, {"atol": 0.0, "rtol": 0.0})


def _pinv(draw):
    """hermitian=True reads one triangle only, so `_pinv_fn` symmetrizes the (then square)
    matrix: a real symmetric matrix is hermitian."""
    dtype = draw(st.sampled_from(F64))
    hermitian = draw(st.booleans())
    a = _mat(draw, dtype, square=hermitian)
    return (a,), {"hermitian": hermitian, **draw(st.sampled_from(_PINV_TOL))}


def _pinv_fn(a, *, hermitian, **kw):
    return torch.linalg.pinv(_sym(a) if hermitian else a, hermitian=hermitian, **kw)


_UPPER = {"upper": st.booleans()}
_CHECK = {"check_errors": st.booleans()}  # every drawn input is valid: True never raises
_UPLO = {"UPLO": st.sampled_from(["L", "U"])}
S = dict(dtypes=F64, ranks=(2, 3), tolerances=TOL)
_NO_PIVOT = "eager CPU rejects pivot=False ('LU without pivoting is not implemented on the CPU')"

SPECS = [
    # Cholesky
    spec("cholesky", examples(_square(**_UPPER)), fn=lambda a, **kw: torch.cholesky(_spd(a), **kw),
         **S),
    spec("linalg_cholesky", examples(_square(**_UPPER)),
         fn=lambda a, **kw: torch.linalg.cholesky(_spd(a), **kw), **S),
    spec("linalg_cholesky_ex", examples(_square(**_UPPER, **_CHECK)),
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
         fn=lambda a, **kw: _abs_all(torch.linalg.svd(a, **kw)), **S,
         fixed={"compute_uv": "torch.linalg.svd always passes True; only torch.linalg.svdvals "
                              "(spec linalg_svdvals) passes False, in plain eager: traced by "
                              "torch.export (or under any dispatch mode) it passes True too, "
                              "so no exported graph holds False",
                "driver": "eager CPU rejects any driver= (only supported on CUDA inputs with "
                          "cuSOLVER), so None is the only value a CPU sweep can run"}),
    spec("svd", examples(lambda d: _svd(d, legacy=True)),
         fn=lambda a, **kw: _abs_all(torch.svd(a, **kw)), **S),
    spec("linalg_svdvals", examples(_rect), fn=torch.linalg.svdvals, **S),
    spec("linalg_eigh", examples(_square(**_UPLO)),
         fn=lambda a, **kw: _abs_all(torch.linalg.eigh(_sym(a), **kw)), **S,
         fixed={"compute_v": "torch.linalg.eigh always passes True; only torch.linalg.eigvalsh "
                             "(spec linalg_eigvalsh) passes False, in plain eager: traced by "
                             "torch.export (or under any dispatch mode) it passes True too, "
                             "so no exported graph holds False"}),
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
    spec("linalg_solve_ex", examples(_rhs(left_flag=True, **_CHECK)),
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
    spec("linalg_pinv", examples(_pinv), fn=_pinv_fn, **S),
    spec("pinverse", examples(_rect), fn=torch.pinverse, **S),
    spec("linalg_matrix_rank", examples(_rect), fn=torch.linalg.matrix_rank, **S),
    spec("linalg_cond", examples(_square(p=st.sampled_from([None, "fro", "nuc", 1, -1, 2, -2,
                                                            float("inf")]))),
         fn=lambda a, **kw: torch.linalg.cond(_well(a), **kw), **S),
    # LU
    spec("linalg_lu", examples(lambda d: (_rect(d)[0], {"pivot": True})), fn=torch.linalg.lu,
         **S, gap=no_translation("linalg_lu"), fixed={"pivot": _NO_PIVOT}),
    spec("linalg_lu_factor", examples(_rect), fn=torch.linalg.lu_factor, **S),
    spec("linalg_lu_factor_ex", examples(lambda d: (_rect(d)[0], draw_kwargs(d, _CHECK))),
         fn=torch.linalg.lu_factor_ex, **S, fixed={"pivot": _NO_PIVOT}),
    spec("linalg_lu_solve", examples(_lu_solve),
         fn=lambda lu, piv, b, **kw: torch.linalg.lu_solve(_well(lu), piv, b, **kw), **S,
         gap=no_translation("linalg_lu_solve")),
    spec("lu_solve", examples(lambda d: (_lu_inputs(d, with_rhs=True), {})),
         fn=lambda lu, piv, b: torch.lu_solve(b, _well(lu), piv), **S),
    spec("lu_unpack", examples(_lu_unpack), fn=torch.lu_unpack,
         **S, gap=no_translation("lu_unpack")),
    # LDL
    spec("linalg_ldl_factor", examples(_square()),
         fn=lambda a: torch.linalg.ldl_factor(_sym(a)), **S),
    # the factored matrix is real symmetric, hence hermitian: both hermitian= values hold
    spec("linalg_ldl_factor_ex", examples(_square(hermitian=st.booleans(), **_CHECK)),
         fn=lambda a, **kw: torch.linalg.ldl_factor_ex(_sym(a), **kw), **S),
    # real factors: hermitian= (conjugate or not) reads the same values either way
    spec("linalg_ldl_solve", examples(lambda d: (_lu_inputs(d, with_rhs=True),
                                                 {"hermitian": d(st.booleans())})),
         fn=lambda ld, piv, b, **kw: torch.linalg.ldl_solve(_well(ld), piv, b, **kw), **S,
         gap=no_translation("linalg_ldl_solve")),
]

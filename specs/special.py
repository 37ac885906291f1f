"""torch.special functions. Many have only float32/float64 CPU kernels;
integer inputs promote to the default float dtype."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import (EDGE_FLOATS, FLOAT, INTEGRAL, NUMERIC, binary, optional, reduction,
                              spec, unary)
from opsweep.model import TensorArg
from opsweep.catalog.strategies import broadcast_shapes, examples, shapes

#: dtypes of the kernels without float16/bfloat16 CPU support, plus promoting ints
WIDE = ("float32", "float64") + INTEGRAL
SP = torch.special


def special(name, **kw):
    """A unary torch.special function: row `special_<name>`."""
    return unary(f"special_{name}", fn=getattr(SP, name), **kw)


def special2(name, **kw):
    """A binary torch.special function (Tensor-Tensor and Tensor-Scalar overloads)."""
    return binary(f"special_{name}", fn=getattr(SP, name), **kw)


def _polynomial(low, high):
    """P_n(x): x a tensor or Python scalar, n a tensor (small integral values)
    or Python int; the three overloads are drawn."""
    def build(draw):
        dtype = draw(st.sampled_from(WIDE))
        shape = draw(shapes())
        x = TensorArg(shape, dtype, low, high)
        n_choices = tuple(float(v) for v in range(6))
        n = TensorArg(draw(broadcast_shapes(shape)), dtype, 0, 6,
                      n_choices if dtype not in INTEGRAL else None)
        # the form and its scalar in one draw: the few examples of a scalar form then reach
        # more than one class (the first, simplest example is n_scalar with n=0)
        form, scalar = draw(st.sampled_from(
            [("n_scalar", 0), ("x_scalar", low), ("tensors", None), ("n_scalar", 3),
             ("x_scalar", high), ("n_scalar", 1), ("x_scalar", (low + high) / 2)]))
        if form == "n_scalar":
            return (x, scalar), {}
        if form == "x_scalar":
            return (scalar, n), {}
        return (x, n), {}
    return examples(build)


def polynomial(name, low=-1.0, high=1.0):
    return spec(f"special_{name}", _polynomial(low, high), fn=getattr(SP, name), dtypes=WIDE)


SPECS = [
    special("airy_ai", dtypes=WIDE, min_value=-4.0, max_value=4.0),
    special("bessel_j0", dtypes=WIDE),
    special("bessel_j1", dtypes=WIDE),
    special("bessel_y0", dtypes=WIDE, min_value=0.1, max_value=6.0),
    special("bessel_y1", dtypes=WIDE, min_value=0.1, max_value=6.0),
    special("modified_bessel_i0", dtypes=WIDE, min_value=-4.0, max_value=4.0),
    special("modified_bessel_i1", dtypes=WIDE, min_value=-4.0, max_value=4.0),
    special("modified_bessel_k0", dtypes=WIDE, min_value=0.1, max_value=6.0),
    special("modified_bessel_k1", dtypes=WIDE, min_value=0.1, max_value=6.0),
    special("scaled_modified_bessel_k0", dtypes=WIDE, min_value=0.1, max_value=6.0),
    special("scaled_modified_bessel_k1", dtypes=WIDE, min_value=0.1, max_value=6.0),
    special("spherical_bessel_j0", dtypes=WIDE, min_value=-6.0, max_value=6.0),
    special("i0", dtypes=NUMERIC, min_value=-4.0, max_value=4.0),
    special("i0e", dtypes=NUMERIC, min_value=-4.0, max_value=4.0),
    special("i1", dtypes=NUMERIC, min_value=-4.0, max_value=4.0),
    special("i1e", dtypes=NUMERIC, min_value=-4.0, max_value=4.0),
    special("erf", dtypes=NUMERIC),
    special("erfc", dtypes=NUMERIC),
    special("erfcx", dtypes=WIDE, min_value=-2.0, max_value=6.0),
    special("erfinv", dtypes=NUMERIC, min_value=-0.99, max_value=0.99, edges=(-1.0, 1.0, 0.0)),
    special("ndtr", dtypes=NUMERIC),
    special("ndtri", dtypes=WIDE, min_value=0.01, max_value=0.99, edges=(0.0, 1.0, 0.5)),
    special("log_ndtr", dtypes=WIDE, min_value=-6.0, max_value=4.0),
    special("exp2", dtypes=NUMERIC, min_value=-4.0, max_value=4.0),
    special("expm1", dtypes=NUMERIC, min_value=-4.0, max_value=4.0),
    special("expit", dtypes=NUMERIC),
    special("log1p", dtypes=NUMERIC, min_value=-0.9, max_value=8.0),
    special("logit", min_value=0.01, max_value=0.99, edges=EDGE_FLOATS,
            params={"eps": optional(st.sampled_from([1e-6, 0.1]))}),
    special("entr", dtypes=NUMERIC, edges=EDGE_FLOATS),
    special("sinc", dtypes=NUMERIC),
    special("round", params={"decimals": optional(st.sampled_from([0, 1, -1]))}),
    special("gammaln", dtypes=NUMERIC, min_value=0.1, max_value=6.0),
    special("digamma", dtypes=NUMERIC, min_value=0.1, max_value=6.0),
    special("psi", dtypes=NUMERIC, min_value=0.1, max_value=6.0),
    unary("special_polygamma", fn=lambda x, n: SP.polygamma(n, x), dtypes=NUMERIC,
          min_value=0.5, max_value=5.0, params={"n": st.integers(0, 3)}),
    special("multigammaln", dtypes=NUMERIC, min_value=2.0, max_value=6.0,
            params={"p": st.integers(1, 3)}),
    special2("xlogy", dtypes=NUMERIC, other_min_value=0.0, other_max_value=4.0,
             edges=EDGE_FLOATS),
    special2("xlog1py", dtypes=NUMERIC, other_min_value=-0.9, other_max_value=4.0,
             edges=EDGE_FLOATS),
    special2("zeta", dtypes=WIDE, min_value=2.0, max_value=5.0, other_min_value=0.5,
             other_max_value=4.0),
    special2("gammainc", dtypes=FLOAT, scalar_other=False, min_value=0.1, max_value=5.0),
    special2("gammaincc", dtypes=FLOAT, scalar_other=False, min_value=0.1, max_value=5.0),
    polynomial("chebyshev_polynomial_t"),
    polynomial("chebyshev_polynomial_u"),
    polynomial("chebyshev_polynomial_v"),
    polynomial("chebyshev_polynomial_w"),
    polynomial("shifted_chebyshev_polynomial_t", 0.0, 1.0),
    polynomial("shifted_chebyshev_polynomial_u", 0.0, 1.0),
    polynomial("shifted_chebyshev_polynomial_v", 0.0, 1.0),
    polynomial("shifted_chebyshev_polynomial_w", 0.0, 1.0),
    polynomial("hermite_polynomial_h", -2.0, 2.0),
    polynomial("hermite_polynomial_he", -2.0, 2.0),
    polynomial("laguerre_polynomial_l", 0.0, 4.0),
    polynomial("legendre_polynomial_p"),
    reduction("special_logsumexp", fn=SP.logsumexp, dim="many", dtypes=NUMERIC),
]

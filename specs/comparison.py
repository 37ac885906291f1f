"""Elementwise comparisons: every dtype, bool output, NaN/inf/-0.0 edges."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import ALL, COMPLEX, EDGE_FLOATS, NUMERIC, comparison, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples, shapes

CLOSE = {"rtol": optional(st.sampled_from([1e-5, 0.1])),
         "atol": optional(st.sampled_from([1e-8, 0.5])),
         "equal_nan": optional(st.booleans())}


def _isin(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    elements = TensorArg(draw(shapes(min_rank=0, max_rank=3)), dtype, -3, 3)
    test = TensorArg(draw(shapes(min_rank=0, max_rank=1)), dtype, -3, 3)
    return (elements, test), present(invert=draw(optional(st.booleans())))


SPECS = [
    comparison("eq", dtypes=ALL + COMPLEX, edges=EDGE_FLOATS),
    comparison("ne", dtypes=ALL + COMPLEX, edges=EDGE_FLOATS),
    comparison("lt", edges=EDGE_FLOATS),
    comparison("le", edges=EDGE_FLOATS),
    comparison("gt", edges=EDGE_FLOATS),
    comparison("ge", edges=EDGE_FLOATS),
    # aliases: rows of their own on the support page
    comparison("not_equal", edges=EDGE_FLOATS),
    comparison("less", edges=EDGE_FLOATS),
    comparison("less_equal", edges=EDGE_FLOATS),
    comparison("greater", edges=EDGE_FLOATS),
    comparison("greater_equal", edges=EDGE_FLOATS),
    comparison("isclose", dtypes=ALL + COMPLEX, scalar_other=False, edges=EDGE_FLOATS,
               params=CLOSE),
    comparison("allclose", fn=lambda a, b, **kw: torch.tensor(torch.allclose(a, b, **kw)),
               scalar_other=False, edges=EDGE_FLOATS, params=CLOSE),
    comparison("equal", fn=lambda a, b: torch.tensor(torch.equal(a, b)), scalar_other=False),
    spec("isin", examples(_isin), fn=torch.isin, dtypes=NUMERIC, ranks=(0, 3),
         fixed={"assume_unique": "True promises inputs without repeats, which drawn values "
                                 "cannot keep (both come from [-3, 3] so that they match), "
                                 "and with repeats the result is unspecified; at the drawn "
                                 "sizes (at most 6 test elements) eager and the decomposition "
                                 "take the brute-force path, which never reads it"}),
]

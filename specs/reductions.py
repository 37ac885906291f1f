"""Reductions over all, one or several dimensions."""

import torch
from hypothesis import strategies as st

from opsweep.families import ALL, FLOAT, NUMERIC, reduction

SPECS = [
    reduction("sum", dtypes=NUMERIC),
    reduction("mean"),
    reduction("prod", dim="one", dtypes=NUMERIC),
    reduction("amax", dim="many", dtypes=NUMERIC),
    reduction("amin", dim="many", dtypes=NUMERIC),
    reduction("max_dim", fn=torch.max, dim="one", aten=("max",), dtypes=NUMERIC),
    reduction("min_dim", fn=torch.min, dim="one", aten=("min",), dtypes=NUMERIC),
    reduction("argmax", dim="one", dtypes=NUMERIC),
    reduction("argmin", dim="one", dtypes=NUMERIC),
    reduction("var", dim="many", params={"correction": st.sampled_from([0, 1])},
              tolerances={}),
    reduction("std", dim="many", params={"correction": st.sampled_from([0, 1])}),
    reduction("logsumexp", dim="many"),
    reduction("all", dim="one", dtypes=ALL),
    reduction("any", dim="one", dtypes=ALL),
    reduction("norm", dim="many", dtypes=FLOAT, params={"ord": st.sampled_from([1, 2])},
              fn=torch.linalg.vector_norm, aten=("linalg_vector_norm",),
              keepdim=True),
    reduction("cumsum", dim="one", keepdim=False, dtypes=NUMERIC),
    reduction("cumprod", dim="one", keepdim=False, dtypes=FLOAT),
]

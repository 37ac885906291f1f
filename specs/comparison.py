"""Elementwise comparisons: every dtype, bool output."""

import torch

from opsweep.families import FLOAT, NUMERIC, comparison

SPECS = [
    comparison("eq"),
    comparison("ne"),
    comparison("lt", dtypes=NUMERIC),
    comparison("le", dtypes=NUMERIC),
    comparison("gt", dtypes=NUMERIC),
    comparison("ge", dtypes=NUMERIC),
    comparison("isclose", dtypes=FLOAT, scalar_other=False),
    comparison("equal", fn=lambda a, b: torch.tensor(torch.equal(a, b)), scalar_other=False),
]

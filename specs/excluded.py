"""Aten rows with no attributable graph: kept outside both denominators of
the support page, each with the reason it cannot be measured directly."""

from opsweep.catalog import Exclusion

EXCLUDED = [
    Exclusion("sym_size", "symbolic-shape query: produces no tensor graph to export"),
    Exclusion("sym_numel", "symbolic-shape query: produces no tensor graph to export"),
    Exclusion("sym_stride", "symbolic-shape query: produces no tensor graph to export"),
    Exclusion("sym_storage_offset", "symbolic-shape query: produces no tensor graph to export"),
]

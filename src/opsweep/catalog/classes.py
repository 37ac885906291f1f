"""Value classes of plain Python argument values: what changes an operator's behaviour,
not the value itself (``0``, ``1``, ``negative``, ``>1`` for an integer; both booleans;
``None``; a string as itself). Torch-free: the catalog's covering step uses it on drawn
examples, and opsweep.engine.arguments on the values an operator's schema receives."""

from __future__ import annotations

import math
from typing import Any


def int_class(value: int) -> str:
    if value == 0:
        return "0"
    if value == 1:
        return "1"
    return "negative" if value < 0 else ">1"


def number_class(value: float) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return int_class(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf"
    if value == 0:
        return "0"
    return "negative" if value < 0 else "positive"


def plain_classes(value: Any) -> set[str] | None:
    """The classes of a plain value (a list: the union of its elements'), or None when
    `value` is not plain (a tensor, a tensor recipe, a dtype)."""
    if value is None:
        return {"None"}
    if isinstance(value, bool):
        return {str(value)}
    if isinstance(value, int):
        return {int_class(value)}
    if isinstance(value, float):
        return {number_class(value)}
    if isinstance(value, str):
        return {value}
    if isinstance(value, (list, tuple)):
        if not value:
            return {"empty"}
        out: set[str] = set()
        for v in value:
            inner = plain_classes(v)
            if inner is None:
                return None
            out |= inner
        return out
    return None


#: dtype name -> the dtype class a covering design crosses argument classes with
def dtype_class(dtype: str) -> str:
    if dtype == "bool":
        return "bool"
    if dtype.startswith("complex"):
        return "complex"
    if dtype.startswith(("float", "bfloat")):
        return "float"
    return "none" if dtype == "none" else "integer"

"""Reading older artifacts: each step lifts the plain data of one schema version
to the next; the artifact module validates the result as the current version."""

from __future__ import annotations

import copy
from typing import Any


def _v2_to_v3(data: dict[str, Any]) -> None:
    """Version 2 kept one run's bookkeeping in the artifact: the sweep's time and each
    spec's reuse decision. Both are dropped; the measurements are unchanged."""
    data.pop("generated_at", None)
    tables = [data.get("specs")] + [t.get("specs") for t in (data.get("targets") or {}).values()
                                    if isinstance(t, dict)]
    for table in tables:
        for spec in (table or {}).values() if isinstance(table, dict) else ():
            if isinstance(spec, dict):
                spec.pop("reuse", None)


def _v3_to_v4(data: dict[str, Any]) -> None:
    """Version 3 wrote each custom target in full; version 4 writes what differs from
    the stock target. The complete results are the same; only the spelling changes."""
    stock: dict = data["specs"] if isinstance(data.get("specs"), dict) else {}
    stock_ops: dict = data["operators"] if isinstance(data.get("operators"), dict) else {}
    for target in (data.get("targets") or {}).values() if isinstance(data.get("targets"), dict) else ():
        if not isinstance(target, dict):
            continue
        specs, operators = target.get("specs"), target.get("operators")
        if isinstance(specs, dict):
            absent = sorted(set(stock) - set(specs))
            target["specs"] = {n: d for n, d in specs.items() if stock.get(n) != d}
            if absent:
                target["absent"] = absent
        if isinstance(operators, dict):
            target["operators"] = {op: d for op, d in operators.items() if stock_ops.get(op) != d}


def _v4_to_v5(data: dict[str, Any]) -> None:
    """Version 5 names the hypothesis release in the fingerprint and keeps per-spec
    outcome counts. Neither can be recovered: hypothesis is "unknown" and the specs
    have no `outcomes` (readers fall back to the failure groups)."""
    if isinstance(data.get("fingerprint"), dict):
        data["fingerprint"].setdefault("hypothesis", "unknown")


def _v5_to_v6(data: dict[str, Any]) -> None:
    """Version 6 keeps each spec's observed error per cell (`errors`) and names the
    tolerance policy that graded it (`policy`). Neither can be recovered: the specs have no
    `errors` and the artifact no `policy` (pages show neither); the grades are unchanged."""


def _v6_to_v7(data: dict[str, Any]) -> None:
    """Version 7 keeps, for a spec drawn with the cell covering, the cells no example stands
    for (`cells`). It cannot be recovered: the specs have none (pages show their cells
    without an example as not drawn); the grades are unchanged."""


#: schema version -> the step that lifts an artifact of that version to the next
MIGRATIONS = {2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5, 5: _v5_to_v6, 6: _v6_to_v7}


def migrate(data: Any) -> Any:
    """An artifact of an older, still readable schema, as data of the current one (a copy)."""
    if not isinstance(data, dict) or data.get("schema_version") not in MIGRATIONS:
        return data
    data = copy.deepcopy(data)
    while data.get("schema_version") in MIGRATIONS:
        MIGRATIONS[data["schema_version"]](data)
        data["schema_version"] += 1
    return data

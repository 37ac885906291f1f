"""Arguments measured: value classes, the coverage table and the catalog's bar. Torch-free
(the artifact, the page and the bot read it; opsweep.engine.arguments measures).

A *value class* is what changes an operator's behaviour, not the value itself (``0``,
``1``, ``negative``, ``>1`` for an integer; both booleans; ``None``; a string as itself; a
tensor's rank and ``empty``). One *feature* is ``(overload, argument, type, class)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from opsweep.model import OpSpec

#: one measured feature: (overload, argument, schema type, value class)
Feature = tuple[str, str, str, str]

#: The pseudo-overload of the Python call's keyword arguments, as the spec draws them (a
#: keyword that picks an overload, interpolate's `mode`, is seen here and nowhere else)
CALL = "call"

#: Marks an overload the spec reaches only through a decomposition or an alias (none of its
#: declared rows is called eagerly): recorded, not held to the bar (its arguments are the
#: decomposition's, not the spec's).
INDIRECT = "~"

#: Arguments whose value places or lays out a result without changing what an exporter
#: must translate: recorded, never asked to vary.
PLACEMENT = frozenset({"device", "layout", "pin_memory", "memory_format", "generator",
                       "non_blocking", "copy"})


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


# --- what a spec's draws reach, and whether each argument is varied ---------------------

#: What an argument needs to count as varied: two value classes at least.
VARIED = 2


def coverage(groups: Iterable[Iterable[Feature]]) -> dict[str, dict[str, dict[str, Any]]]:
    """overload -> argument -> {"type": schema type, "classes": sorted classes}, over the
    features of every signature group. A keyword of the Python call (CALL) that some
    groups leave out has the class ``absent``."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    seen: list[set[str]] = []
    for features in groups:
        named: set[str] = set()
        for overload, arg, typ, cls in features:
            entry = table.setdefault(overload, {}).setdefault(arg, {"type": typ,
                                                                    "classes": set()})
            entry["classes"].add(cls)
            if overload == CALL:
                named.add(arg)
        seen.append(named)
    for arg, entry in table.get(CALL, {}).items():
        if any(arg not in named for named in seen):
            entry["classes"].add("absent")
    return {o: {a: {"type": e["type"], "classes": sorted(e["classes"])}
                for a, e in sorted(args.items())} for o, args in sorted(table.items())}


def is_tensor_type(typ: str) -> bool:
    return typ.startswith("Tensor")


def needs_varying(arg: str, typ: str) -> bool:
    """Arguments the catalog must vary (or say why not): every non-tensor argument but the
    placement ones, and optional tensors (None against a tensor). A tensor argument's ranks
    and emptiness are recorded, not asked for: a schema fixes many of them."""
    if arg.startswith("_"):  # a private keyword: fixed values that make an op deterministic
        return False
    if arg in PLACEMENT or typ in ("Generator?", "Device?", "Layout?", "MemoryFormat?"):
        return False
    if is_tensor_type(typ):
        return typ.endswith("?")
    return True


def unvaried(table: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, list[str]]:
    """argument -> the classes it reached, for each argument that needs varying and reached
    fewer than VARIED classes (over every overload the spec traces)."""
    reached: dict[str, set[str]] = {}
    for overload, args in table.items():
        if overload.startswith(INDIRECT):
            continue
        for arg, entry in args.items():
            if needs_varying(arg, entry["type"]):
                reached.setdefault(arg, set()).update(entry["classes"])
    return {a: sorted(c) for a, c in sorted(reached.items()) if len(c) < VARIED}


def bar(spec: OpSpec, table: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """What keeps `spec` from the catalog's bar, one line each (empty: it meets it): every
    argument its calls reach is varied over two value classes at least, or the spec's
    `fixed` says why not; a reason must name an argument that is reached and not varied."""
    problems = []
    left = unvaried(table)
    for arg, classes in left.items():
        if arg not in spec.fixed:
            problems.append(f"{spec.name}: argument {arg!r} is never varied (only "
                            f"{', '.join(classes) or 'nothing'}); vary it in the strategy, "
                            f"or say why in fixed={{{arg!r}: ...}}")
    reached = {a for o, args in table.items() if not o.startswith(INDIRECT) for a in args}
    for arg in spec.fixed:
        if arg not in reached:
            problems.append(f"{spec.name}: fixed names {arg!r}, which no call of the spec "
                            f"reaches (reached: {', '.join(sorted(reached)) or 'none'})")
        elif arg not in left:
            problems.append(f"{spec.name}: fixed names {arg!r}, which the draws do vary: "
                            "drop the reason")
    return problems


def describe(spec: OpSpec, table: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """The coverage table as text: an overload a line, then an argument a line."""
    left = unvaried(table)
    lines = []
    for overload, args in table.items():
        via = " (reached through a decomposition: not held to the bar)" \
            if overload.startswith(INDIRECT) else ""
        lines.append(f"  {overload.removeprefix(INDIRECT)}{via}")
        for arg, entry in args.items():
            note = ""
            if not overload.startswith(INDIRECT) and arg in left:
                note = f"   fixed: {spec.fixed[arg]}" if arg in spec.fixed else "   NEVER VARIED"
            elif not needs_varying(arg, entry["type"]):
                note = "   (recorded)"
            lines.append(f"    {arg:<22} {entry['type']:<14} {', '.join(entry['classes'])}{note}")
    return "\n".join(lines)




# --- what sets a failure apart ------------------------------------------------------------

def choice_features(features: Iterable[Feature]) -> set[str]:
    """``argument=class`` of the features that name a behaviour (those the bar asks to be
    varied), the Python call's and the schema's alike."""
    return {f"{arg}={cls}" for overload, arg, typ, cls in features
            if not overload.startswith(INDIRECT) and needs_varying(arg, typ)}


def set_apart(failing: Iterable[Iterable[Feature]],
              passing: Iterable[Iterable[Feature]]) -> tuple[str, ...]:
    """The ``argument=class`` values every failing example has and no passing one: a
    failure that happens only with them. Empty when nothing passed to compare with, or when
    no value separates the two (then the dtype, rank or shape is what they differ in)."""
    passing = [choice_features(p) for p in passing]
    if not passing:
        return ()
    failing = [choice_features(f) for f in failing]
    if not failing:
        return ()
    shared = set.intersection(*failing)
    return tuple(sorted(shared - set().union(*passing)))

"""Which arguments a spec's draws really set: measured from the operator's own schema.

A drawn example runs eagerly under a dispatch mode that sees every aten call. For each
call of an overload the spec declares (its aten rows, their ``_``-prefixed and in-place
forms, and the names its ``traces`` maps them to), every argument of torch's own schema
(``func._schema``) is read back, matched to the schema by name and position, and put in
a *value class*: what changes an operator's behaviour, not the value itself.

- a tensor: its rank (``rank 0`` .. ``rank 4``) and ``empty`` when it has no element;
- an optional argument: ``None``, or the class of its value;
- a bool: ``True`` / ``False``; a string: the string (reduction modes, rounding modes);
- an integer: ``0``, ``1``, ``negative`` or ``>1``; a list of integers: ``empty`` or the
  classes of its elements; a float or Scalar: ``0``, ``negative``, ``positive``, ``inf``,
  ``nan``; anything else (a dtype, a layout): its name.

One *feature* is ``(overload, argument, type, class)``; an example's features are the set
its calls reach. Examples of one signature group share every argument but tensor values,
so a group is recorded once (its first example that runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from opsweep.catalog.classes import int_class, number_class, plain_classes
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


def accepted_packets(spec: OpSpec) -> set[str]:
    """The aten packet names (no namespace) whose calls count for `spec`."""
    names: set[str] = set()
    for row in spec.aten_ops:
        names |= {row, f"{row}_", f"_{row}", *spec.traces.get(row, ())}
    return names


def value_classes(value: Any) -> set[str]:
    """The classes one argument value falls in (a list: the union of its elements')."""
    plain = plain_classes(value)
    if plain is not None:
        return plain
    if isinstance(value, torch.Tensor):
        classes = {f"rank {value.dim()}"}
        if value.numel() == 0:
            classes.add("empty")
        return classes
    if isinstance(value, torch.SymInt):
        return {int_class(int(value))}
    if isinstance(value, torch.SymFloat):
        return {number_class(float(value))}
    if isinstance(value, (list, tuple)):
        if not value:
            return {"empty"}
        if all(isinstance(v, torch.Tensor) or v is None for v in value):
            return {f"{len(value)} tensors"}
        out: set[str] = set()
        for v in value:
            out |= value_classes(v)
        return out
    if isinstance(value, torch.dtype):
        return {str(value).removeprefix("torch.")}
    return {str(value)}


def _bound(schema, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Iterable[tuple[Any, Any]]:
    """(schema argument, value) for every argument of the schema, defaults filled in;
    output-only (``out=``) arguments are left out."""
    for i, arg in enumerate(schema.arguments):
        if arg.is_out:
            continue
        if i < len(args) and not arg.kwarg_only:
            yield arg, args[i]
        elif arg.name in kwargs:
            yield arg, kwargs[arg.name]
        elif arg.has_default_value():
            yield arg, arg.default_value
        # an argument neither given nor defaulted cannot happen in a call that ran


def call_features(func, args: Sequence[Any], kwargs: Mapping[str, Any]) -> set[Feature]:
    schema = func._schema
    overload = f"{schema.name.split('::', 1)[1]}.{schema.overload_name or 'default'}"
    features: set[Feature] = set()
    for arg, value in _bound(schema, args, kwargs):
        for cls in value_classes(value):
            features.add((overload, arg.name, str(arg.type), cls))
    return features


class Recorder(TorchDispatchMode):
    """Records the features of the aten calls made while active: those of `packets`, and
    apart from them every other call's (what the spec traces when its declared row is an
    alias or decomposes before dispatch: ``absolute`` runs as ``abs``)."""

    def __init__(self, packets: set[str]) -> None:
        super().__init__()
        self.packets = packets
        self.declared: set[Feature] = set()
        self.other: set[Feature] = set()

    @property
    def features(self) -> set[Feature]:
        """The declared packets' features, or every call's when none was called (their
        overloads marked with INDIRECT)."""
        if self.declared:
            return self.declared
        return {(INDIRECT + o, a, t, c) for o, a, t, c in self.other}

    def clear(self) -> None:
        self.declared.clear()
        self.other.clear()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        schema = getattr(func, "_schema", None)
        if schema is not None and schema.name.startswith("aten::"):
            into = self.declared if schema.name.split("::", 1)[1] in self.packets else self.other
            try:
                into |= call_features(func, args, kwargs)
            except Exception:  # a schema this reader does not know: the call still runs
                pass
        return func(*args, **kwargs)


def features_sorted(features: Iterable[Feature]) -> tuple[Feature, ...]:
    return tuple(sorted(set(features)))


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


def group_features(spec: OpSpec, group: Sequence, call=None) -> tuple[Feature, ...]:
    """The features of one signature group: its first example that runs eagerly (all of a
    group's examples share their arguments). `call`, when given, is that example's built
    call (the sweep's reference run); otherwise the examples are built here."""
    from opsweep.engine.runner import build_call  # onnxruntime and torch: the measuring side

    recorder = Recorder(accepted_packets(spec))
    for example in group:
        try:
            this = call if call is not None else build_call(spec, example)
            with recorder:
                this(*[t.clone() for t in this.inputs])
            break
        except Exception:
            recorder.clear()  # an example eager PyTorch rejects says nothing
            call = None
    return features_sorted(recorder.features | call_keywords(group[0]))


def call_keywords(example) -> set[Feature]:
    """The Python call's keywords of one example, as CALL features (a tensor recipe: its
    rank and emptiness)."""
    from opsweep.model import TensorArg

    features: set[Feature] = set()
    for name, value in example.kwargs:
        if isinstance(value, TensorArg):
            classes = {f"rank {value.rank}"} | ({"empty"} if value.numel == 0 else set())
            typ = "Tensor"
        else:
            classes, typ = value_classes(value), type(value).__name__
        features |= {(CALL, name, typ, cls) for cls in classes}
    return features


def live_features(spec: OpSpec, profile) -> list[tuple[str, tuple[Feature, ...]]]:
    """(dtype, features) of each signature group the spec draws under `profile`, measured
    here without exporting anything (what ``opsweep coverage`` prints)."""
    from opsweep.catalog.draw import draw_examples, group_by_signature

    return [(group[0].dtype, group_features(spec, group))
            for group in group_by_signature(draw_examples(spec, profile))]

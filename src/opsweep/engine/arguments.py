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

from opsweep.coverage import (
    CALL,
    INDIRECT,
    Feature,
    int_class,
    number_class,
    plain_classes,
)
from opsweep.model import OpSpec, TensorArg


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
    from opsweep.catalog.draw import draw_examples, group_by_signature  # hypothesis

    return [(group[0].dtype, group_features(spec, group))
            for group in group_by_signature(draw_examples(spec, profile))]

"""Attribution: does a spec's graph really contain the operators it declares?

One drawn example per spec is run eagerly under a dispatch mode (which sees
the aten ops after CompositeImplicit decomposition: conv2d -> convolution)
and captured with ``torch.export`` (whose graph keeps the higher-level ops:
conv2d stays conv2d). A declared row passes when its packet, an in-place
or ``_``-prefixed form of it, or a name the spec's ``traces`` maps it to,
appears in either trace.

Run ``python -m opsweep.engine.attribution [SPEC ...]`` to see what specs trace.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from opsweep.catalog.draw import PROFILES, Profile, draw_examples
from opsweep.catalog.load import check_draw
from opsweep.catalog.registry import default_opset, exporter_registry
from opsweep.engine.adapter import error_line, quiet_exporter
from opsweep.engine.fastpath import FastExporter
from opsweep.engine.runner import build_call
from opsweep.errors import SpecError
from opsweep.model import OpSpec, Stage


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        packet = getattr(func, "_schema", None)
        if packet is not None and packet.name.startswith("aten::"):
            self.seen.add(packet.name.split("::", 1)[1])
        return func(*args, **(kwargs or {}))


@dataclass(frozen=True)
class Attribution:
    spec: str
    traced: frozenset[str]
    missing: tuple[str, ...]  # declared rows that appear in neither trace


def trace(spec: OpSpec, example=None, *, enough=None) -> frozenset[str]:
    """Aten packets one example reaches: eagerly under a dispatch mode, and in
    the torch.export graph when capture succeeds (skipped when `enough`, given the
    eager packets, says they suffice)."""
    quiet_exporter()
    call = build_call(spec, example if example is not None else check_draw(spec))
    recorder = _Recorder()
    inputs = [t.clone() for t in call.inputs]
    with recorder:
        call(*inputs)
    seen = set(recorder.seen)
    if enough is not None and enough(seen):
        return frozenset(seen)
    try:
        program = torch.export.export(call, tuple(t.clone() for t in call.inputs))
    except Exception:  # capture failures are measured by the sweep, not here
        program = None
    if program is not None:
        for node in program.graph.nodes:
            name = getattr(getattr(node.target, "_schema", None), "name", "")
            if name.startswith("aten::"):
                seen.add(name.split("::", 1)[1])
    return frozenset(seen)


def accepted_names(row: str, spec: OpSpec) -> set[str]:
    names = {row, f"{row}_", f"_{row}", *spec.traces.get(row, ())}
    return names


#: Further ci examples traced when the first leaves a declared row unseen (a
#: trivial first example can decompose differently: adaptive pooling to 1 is a mean).
MORE_EXAMPLES = 4


def attribute(spec: OpSpec, *, complete: bool = True) -> Attribution:
    """Raises SpecError when the spec's first example does not even run eagerly. Without
    `complete`, the torch.export capture is skipped wherever the eager trace alone already
    holds every declared row: the verdict (`missing`) is the same, `traced` may hold fewer
    packets (about two specs in three need no capture)."""
    def missing_from(traced) -> tuple[str, ...]:
        return tuple(op for op in spec.aten_ops if not accepted_names(op, spec) & traced)
    enough = None if complete else (lambda seen: not missing_from(seen))
    try:
        traced = set(trace(spec, enough=enough))
    except Exception as exc:
        raise SpecError(spec.name, f"its first example fails in eager PyTorch: "
                        f"{error_line(exc)}", source=spec.source) from exc

    def missing() -> tuple[str, ...]:
        return missing_from(traced)

    if missing():
        for example in draw_examples(spec, PROFILES["ci"])[1:1 + MORE_EXAMPLES]:
            try:
                traced |= trace(spec, example, enough=enough)
            except Exception:
                continue  # invalid examples are reported by invalid_examples()
            if not missing():
                break
    return Attribution(spec.name, frozenset(traced), missing())


def invalid_examples(spec: OpSpec, profile: Profile = PROFILES["ci"]) -> list[tuple[str, str]]:
    """(signature, error) of every drawn example PyTorch itself rejects eagerly.
    The sweep files these as `invalid`: a spec should draw none."""
    bad = []
    for example in draw_examples(spec, profile):
        try:
            call = build_call(spec, example)
            call(*call.inputs)
        except Exception as exc:
            bad.append((example.signature, error_line(exc)))
    return bad


@dataclass(frozen=True)
class GraphCheck:
    captured: bool
    untranslated: tuple[str, ...]  # ops of the decomposed graph the registry lacks


def untranslated_ops(spec: OpSpec, example) -> GraphCheck:
    """Capture one example, decompose it the way the exporter does, and list
    the call targets the registry has no translation for."""
    # private torch internals: absent ones mean fallback
    from torch.onnx._internal.exporter import _fx_passes

    call = build_call(spec, example)
    try:
        program = torch.export.export(call, tuple(t.clone() for t in call.inputs))
    except Exception:
        return GraphCheck(False, ())
    registry = exporter_registry(default_opset())
    program = _fx_passes.decompose_with_registry(program, registry)
    missing = set()
    for node in program.graph.nodes:
        target = node.target
        if node.op == "call_function" and isinstance(target, torch._ops.OpOverload):
            if not registry.is_registered(target):
                missing.add(target.name())
    return GraphCheck(True, tuple(sorted(missing)))


def stale_gap_notes(specs: Iterable[OpSpec]) -> dict[str, str]:
    """The `no-translation` known-gap notes among `specs` that no longer hold against the
    exporter's live registry, each with what to do: a note on an operator that has gained a
    translation, or whose module torch.export cannot capture, has gone stale."""
    FastExporter()  # installs the per-process decomposition caches the public call builds
    stale = {}
    for spec in specs:
        if spec.gap is None or spec.gap.stage is not Stage.NO_TRANSLATION:
            continue
        check = untranslated_ops(spec, check_draw(spec))
        if not check.captured:
            stale[spec.name] = "torch.export cannot capture it: the note's stage should be capture"
        elif not check.untranslated:
            stale[spec.name] = ("every op of its decomposed graph now has a translation: "
                                "delete the gap note")
    return stale

"""Running one signature group: tensors from recipes, the PyTorch reference,
one export, the checker, onnxruntime, and the numerics comparison.

An export depends on shapes, dtypes and non-tensor arguments only, so every
example of a group (same signature, different value seeds) shares one export
and one onnxruntime session.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch.utils import _pytree as pytree

from opsweep.catalog.eager import make_tensor, materialize  # noqa: F401  (re-exported)
from opsweep.engine.adapter import BaseExporter, error_line
from opsweep.engine.cache import Entry, restore_trace, trace_data
from opsweep.engine.observe import Difference, compare, measure, worse  # noqa: F401  (re-exported)
from opsweep.engine.phase import Phase, Reached, Step
from opsweep.model import Example, Mismatch, Observed, OpSpec, Outcome, Stage, TensorArg
from opsweep.policy import Policy, builtin

class Call(torch.nn.Module):
    """A module whose inputs are exactly the example's tensors, in order;
    non-tensor arguments are baked into the forward call."""

    def __init__(self, target: Callable, args: tuple, kwargs: dict) -> None:
        super().__init__()
        if isinstance(target, torch.nn.Module):
            self.target = target  # registered: its parameters are exported
        else:
            self._fn = target
        leaves, self._spec = pytree.tree_flatten((args, kwargs))
        self._slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        self._leaves = [None if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
        self.inputs = tuple(leaves[i] for i in self._slots)
        self.eval()  # as users export: inference mode for dropout and norm layers

    @property
    def callee(self) -> Callable:
        """What the call invokes: the module or the function it was made with."""
        return self.target if hasattr(self, "target") else self._fn

    def forward(self, *inputs):
        leaves = list(self._leaves)
        for slot, tensor in zip(self._slots, inputs):
            leaves[slot] = tensor
        args, kwargs = pytree.tree_unflatten(leaves, self._spec)
        return self.callee(*args, **kwargs)


def build_call(spec: OpSpec, example: Example) -> Call:
    args, kwargs = materialize(example)
    if spec.module is not None:
        torch.manual_seed(example.seed)
        target = spec.module(**dict(example.init))
        target.eval()
    else:
        target = spec.fn
    return Call(target, args, kwargs)


def flat_outputs(result: Any) -> list[torch.Tensor]:
    return [leaf for leaf in pytree.tree_leaves(result) if isinstance(leaf, torch.Tensor)]


# --- onnxruntime ------------------------------------------------------------

#: onnxruntime log severities: 3 lets its errors through, 4 (fatal) silences them. A failed
#: run's `[E:onnxruntime:, sequential_executor.cc ...]` line comes from the run's logger,
#: whose severity is the session's (`log_severity_level`) unless RunOptions set one; the
#: process-wide default logger does not reach it. The exception carries the same message,
#: which is what the artifact records.
ORT_ERRORS, ORT_SILENT = 3, 4
_ORT_LOGGING = {"severity": ORT_SILENT}


def quiet_runtime(verbose: bool = False) -> None:
    """Keep onnxruntime's own log lines off this process's terminal (errors with `verbose`)."""
    severity = ORT_ERRORS if verbose else ORT_SILENT
    _ORT_LOGGING["severity"] = severity
    ort.set_default_logger_severity(severity)


def make_session(model: onnx.ModelProto | bytes) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = _ORT_LOGGING["severity"]
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])


def _to_ort(tensor: torch.Tensor) -> ort.OrtValue:
    tensor = tensor.detach()
    if tensor.is_complex():  # the exporter's convention: complex as a trailing real/imag pair
        tensor = torch.view_as_real(tensor.resolve_conj())
    tensor = tensor.contiguous()
    if tensor.dtype == torch.bfloat16:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            tensor.view(torch.int16).numpy().view(np.uint16), onnx.TensorProto.BFLOAT16)
    return ort.OrtValue.ortvalue_from_numpy(tensor.numpy())


def _from_ort(value: ort.OrtValue) -> torch.Tensor:
    if value.data_type() == "tensor(bfloat16)":
        return torch.from_dlpack(value._get_c_value()).clone()
    return torch.from_numpy(np.array(value.numpy(), copy=True))


def run_session(session: ort.InferenceSession, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    names = [i.name for i in session.get_inputs()]
    by_position = {f"inputs_{i}": t for i, t in enumerate(inputs)}
    if all(n in by_position for n in names):
        feeds = {n: _to_ort(by_position[n]) for n in names}
    else:
        feeds = {n: _to_ort(t) for n, t in zip(names, inputs)}
    return [_from_ort(v) for v in session.run_with_ort_values(None, feeds)]


# --- one group --------------------------------------------------------------

def _outcome(example: Example, stage: Stage, error: str = "",
             mismatch: Mismatch | None = None, observed: Observed | None = None) -> Outcome:
    return Outcome(stage, example.signature, example.dtype, example.rank, example.size, error,
                   mismatch=mismatch, observed=observed)


#: One comparison: the inputs onnxruntime is given and PyTorch's outputs at them.
Pair = tuple[tuple, list[torch.Tensor]]
#: By example index: its pair, and for the exported example the pair of a further draw of
#: its signature (None for the others, or when eager PyTorch refuses the further draw).
References = dict[int, tuple[tuple, list[torch.Tensor], "Pair | None"]]


def further_seed(seed: int) -> int:
    """The seed of the further draw the exported example is also compared at: another
    value of the same signature, fixed by the example's own seed."""
    return (seed * 2654435761 + 0x5EED) % 2**31


def references_of(spec: OpSpec, group: Sequence[Example], phase: Phase
                  ) -> tuple[dict[int, Outcome], References, Call | None]:
    """PyTorch's outputs for each example (computed once, whatever the target):
    (invalid outcomes, references by index, the first valid example's call). The first
    valid example, the one exported, is also run at a further draw of its signature: a
    model traced into a constant of the exported values matches them and nothing else."""
    outcomes: dict[int, Outcome] = {}
    references: References = {}
    call: Call | None = None  # the first valid example's module: the one exported
    for i, example in enumerate(group):
        phase(Reached(Step.REFERENCE))
        try:
            if call is None:
                this = build_call(spec, example)
            else:  # a module's parameters are baked into the export: reuse them
                this = Call(target_of(spec, call), *materialize(example))
            expected = flat_outputs(this(*[t.clone() for t in this.inputs]))
        except Exception as exc:
            outcomes[i] = _outcome(example, Stage.INVALID, error_line(exc))
            continue
        further = None if call is not None else _further(spec, this, example)
        references[i] = (this.inputs, expected, further)
        if call is None:
            call = this
    return outcomes, references, call


def _further(spec: OpSpec, call: Call, example: Example) -> Pair | None:
    """The exported example's further draw: (inputs, PyTorch's outputs), or None when
    eager PyTorch refuses it (a value the signature allows but the operator does not)."""
    try:
        this = Call(target_of(spec, call),
                    *materialize(replace(example, seed=further_seed(example.seed))))
        return this.inputs, flat_outputs(this(*[t.clone() for t in this.inputs]))
    except Exception:  # noqa: BLE001 - eager refused these values: compare at the drawn ones
        return None


@dataclass(frozen=True)
class CacheSlot:
    """Where one export's outcome up to the checker is kept (:mod:`opsweep.engine.cache`):
    the cache, the entry's key, and the target it is counted under."""

    cache: Any
    key: str
    target: str


#: The slot of one export of a group, from the example exported and the dynamic shapes
#: (as text; "" for the static export), or None: no cache.
Slots = Callable[[Example, str], "CacheSlot | None"]


def no_slot(_example: Example, _dynamic: str) -> None:
    return None


def static_outcomes(spec: OpSpec, group: Sequence[Example], exporter: BaseExporter, call: Call,
                    invalid: dict[int, Outcome], references: References,
                    phase: Phase, slots: Slots = no_slot, policy: Policy | None = None
                    ) -> list[Outcome]:
    """One export of `call` (the first valid example's), then every valid example run
    against its reference, compared at `policy`'s tolerances (the built-in policy's)."""
    outcomes = dict(invalid)
    slot = slots(group[min(references)], "") if references else None
    stage, error, session = _export_and_load(exporter, call, tuple(call.inputs), phase, False,
                                             slot=slot)
    for i, (inputs, expected, further) in references.items():
        outcomes[i] = _outcome(group[i], *_run_one(spec, session, inputs, expected, phase, False,
                                                   further, policy)
                               ) if session is not None else _outcome(group[i], stage, error)
    return [outcomes[i] for i in range(len(group))]


def target_of(spec: OpSpec, call: Call) -> Callable:
    """What a call invokes: the spec's module instance (with its parameters) or its function."""
    return call.target if spec.module is not None else spec.fn  # type: ignore[return-value]


def _export_and_load(exporter: BaseExporter, call: Call, inputs: tuple, phase: Phase, dynamic: bool,
                     dynamic_shapes=None, slot: CacheSlot | None = None
                     ) -> tuple[Stage, str, ort.InferenceSession | None]:
    """Export, check and load: (stage, error, session); the session only when it loaded.
    With a cache `slot`, the export and the checker's verdict come from its entry when it
    has one (only the session is made here), and go into it when it has none."""
    entry = slot.cache.get(slot.key, slot.target) if slot is not None else None
    if entry is not None:
        restore_trace(exporter, entry.trace)
        if entry.stage != Stage.OK.value:
            return Stage(entry.stage), entry.error, None
        phase(Reached(Step.RUNTIME, dynamic))
        return _load(entry.model)
    stage, error, model = _export_and_check(exporter, call, inputs, phase, dynamic,
                                            dynamic_shapes)
    data = model.SerializeToString() if model is not None else b""
    if slot is not None:
        slot.cache.put(slot.key, slot.target,
                       Entry(stage.value, error, trace_data(exporter), data))
    if model is None:
        return stage, error, None
    phase(Reached(Step.RUNTIME, dynamic))
    return _load(data)


def _load(model: bytes) -> tuple[Stage, str, ort.InferenceSession | None]:
    try:
        return Stage.OK, "", make_session(model)
    except Exception as exc:
        return Stage.RUNTIME, error_line(exc), None


def _export_and_check(exporter: BaseExporter, call: Call, inputs: tuple, phase: Phase,
                      dynamic: bool, dynamic_shapes=None
                      ) -> tuple[Stage, str, onnx.ModelProto | None]:
    """Export and check: (stage, error, the model when it passed the checker)."""
    phase(Reached(Step.EXPORT, dynamic))
    try:
        if dynamic_shapes is None:
            model = exporter.export(call, tuple(t.clone() for t in inputs))
        else:
            model = exporter.export(call, tuple(t.clone() for t in inputs),
                                    dynamic_shapes=dynamic_shapes)
    except Exception as exc:  # each exporter names its own error types' stages
        return exporter.classify(exc), error_line(exc), None
    phase(Reached(Step.CHECKER, dynamic))
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:
        return Stage.CHECKER, error_line(exc), None
    return Stage.OK, "", model


def _run_one(spec: OpSpec, session: ort.InferenceSession, inputs, expected, phase: Phase,
             dynamic: bool, further: Pair | None = None, policy: Policy | None = None
             ) -> tuple[Stage, str, Mismatch | None, Observed | None]:
    """The example at its own values, then (the exported one) at its further draw: the
    first that fails is the outcome, the further draw's error saying it was there; the
    error observed is the larger of the two (a nondeterministic spec's: none)."""
    tolerance = (policy or builtin()).for_spec(spec)
    seen: Observed | None = None
    for pair, where in [((inputs, expected), "")] + (
            [(further, "on a further draw of the same signature: ")] if further else []):
        phase(Reached(Step.RUNTIME, dynamic))
        try:
            actual = run_session(session, pair[0])
        except Exception as exc:
            return Stage.RUNTIME, where + error_line(exc), None, None
        phase(Reached(Step.NUMERICS, dynamic))
        if spec.nondeterministic:
            continue
        differs, observed = measure(pair[1], actual, tolerance)
        seen = worse(seen, observed)
        if differs:
            return Stage.NUMERICS, where + differs.message, differs.kind, seen
    return Stage.OK, "", None, seen


# --- the dynamic axis -----------------------------------------------------------

#: torch.export specialises sizes 0 and 1, so a dynamic dimension is traced at 2 or more.
MIN_DYNAMIC_SIZE = 2


#: At most this many candidate sets of batch inputs are tried per group (subsets in
#: increasing size; a spec with more coincident inputs names its batch inputs).
MAX_PLANS = 16


@dataclass(frozen=True)
class DynamicPlan:
    """Which tensor inputs share the leading (batch) dimension, the size the
    dynamic export is traced at, and the second size it is run at."""

    inputs: frozenset[int]
    export_size: int
    run_size: int


def plan_candidates(example: Example, batch: tuple[int, ...] | None = None) -> list[DynamicPlan]:
    """The plans worth trying, most likely first. The leading dimension of the
    first tensor input of rank >= 1 is the batch dimension. A spec that names its
    batch inputs (`batch`, from `OpSpec.batch`) gets exactly those; otherwise the candidates are
    that input alone, then with every combination of the other inputs whose
    leading size happens to be the same, smallest first: a weight whose first side
    equals the batch size is tied to the batch only when eager PyTorch cannot run
    the example without it (see :func:`choose_plan`). Empty: no such input."""
    tensors = example.tensors
    lead = next((k for k, t in enumerate(tensors) if t.rank >= 1), None)
    if lead is None:
        return []
    size = tensors[lead].shape[0]
    export_size = max(size, MIN_DYNAMIC_SIZE)
    if batch is not None:
        sets = [frozenset(batch)]
    else:
        others = [k for k, t in enumerate(tensors)
                  if k != lead and t.rank >= 1 and t.shape[0] == size]
        sets = [frozenset({lead, *extra}) for r in range(len(others) + 1)
                for extra in itertools.combinations(others, r)][:MAX_PLANS]
    return [DynamicPlan(inputs, export_size, export_size + 1) for inputs in sets]


def choose_plan(spec: OpSpec, target: Callable, example: Example
                ) -> tuple[DynamicPlan | None, Call | None, str]:
    """The first candidate plan whose resized inputs eager PyTorch accepts at both
    sizes: (plan, the call traced at the export size, ""), or (None, None, why).
    Evidence, not coincidence, decides which inputs carry the batch."""
    why = ""
    for plan in plan_candidates(example, spec.batch):
        try:
            calls = [Call(target, *materialize(resize(example, plan.inputs, n)))
                     for n in (plan.export_size, plan.run_size)]
            for call in calls:
                call(*[t.clone() for t in call.inputs])
        except Exception as exc:
            why = why or error_line(exc)
            continue
        return plan, calls[0], ""
    return None, None, why


def resize(example: Example, inputs: frozenset[int], size: int) -> Example:
    """The example with the leading dimension of the chosen tensor inputs set to `size`."""
    count = 0

    def walk(value: Any) -> Any:
        nonlocal count
        if isinstance(value, TensorArg):
            k, count = count, count + 1
            return replace(value, shape=(size, *value.shape[1:])) if k in inputs else value
        if isinstance(value, (list, tuple)):
            return type(value)(walk(v) for v in value)
        return value

    args = tuple(walk(a) for a in example.args)
    kwargs = tuple((k, walk(v)) for k, v in example.kwargs)
    return replace(example, args=args, kwargs=kwargs)


def dynamic_shapes(plan: DynamicPlan, count: int) -> tuple:
    """`dynamic_shapes` for ``Call.forward(*inputs)``: one entry, the varargs tuple."""
    batch = torch.export.Dim("batch", min=MIN_DYNAMIC_SIZE)
    return (tuple({0: batch} if k in plan.inputs else None for k in range(count)),)


def run_dynamic(spec: OpSpec, group: Sequence[Example], outcomes: list[Outcome], call: Call,
                exporter: BaseExporter, phase: Phase, shared: dict | None = None,
                slots: Slots = no_slot, policy: Policy | None = None) -> list[Outcome]:
    """Re-export the group with its batch dimension dynamic (traced at the plan's
    export size) and run every statically exported example at the second size
    against PyTorch at that size. Fills `Outcome.dynamic`. `shared` keeps the plans
    and references between targets measuring the same group (they depend only on
    the examples)."""
    eligible = [i for i, o in enumerate(outcomes) if o.stage.exported]
    target = target_of(spec, call)
    shared = {} if shared is None else shared
    phase(Reached(Step.REFERENCE, dynamic=True))
    if ("plan", eligible[0]) not in shared:
        shared["plan", eligible[0]] = choose_plan(spec, target, group[eligible[0]])
    plan, traced, why = shared["plan", eligible[0]]
    result = list(outcomes)

    def mark(indices, stage: Stage, error: str, mismatch: Mismatch | None = None) -> list[Outcome]:
        for i in indices:
            result[i] = replace(result[i], dynamic=stage, dynamic_error=error,
                                dynamic_mismatch=mismatch)
        return result

    if plan is None or traced is None:
        # no leading dimension eager PyTorch runs at another size: the axis does not apply,
        # unless the spec named its batch inputs, which is then a spec bug
        return mark(eligible, Stage.INVALID, why) if spec.batch is not None and why else result
    shapes = dynamic_shapes(plan, len(traced.inputs))
    stage, error, session = _export_and_load(exporter, traced, tuple(traced.inputs), phase,
                                             True, shapes, slots(group[eligible[0]], repr(plan)))
    if session is None:
        return mark(eligible, stage, error)
    for i in eligible:
        phase(Reached(Step.REFERENCE, dynamic=True))
        if ("ref", i, plan) not in shared:
            shared["ref", i, plan] = _dynamic_reference(target, group[i], plan)
        inputs, expected, invalid = shared["ref", i, plan]
        if invalid:
            mark([i], Stage.INVALID, invalid)
            continue
        mark([i], *_run_one(spec, session, inputs, expected, phase, True, policy=policy)[:3])
    return result


def _dynamic_reference(target: Callable, example: Example, plan: DynamicPlan
                       ) -> tuple[tuple, list[torch.Tensor], str]:
    """(inputs, PyTorch's outputs, "") at the plan's run size, or ((), [], why not)."""
    try:
        this = Call(target, *materialize(resize(example, plan.inputs, plan.run_size)))
        return this.inputs, flat_outputs(this(*[t.clone() for t in this.inputs])), ""
    except Exception as exc:
        return (), [], error_line(exc)

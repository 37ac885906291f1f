"""What really happens: the model exported with the public ``torch.onnx.export(...,
dynamo=True)`` (again with its ``dynamic_shapes`` when it has them), ``onnx.checker``,
onnxruntime, and its outputs against PyTorch's with the sweep's per-dtype tolerances.

When the export fails, the node and operator the exporter failed on are read from its
error. When outputs differ, the first diverging node is found: every value of the
decomposed graph that the ONNX model also names is computed in onnxruntime (the exporter's
``compute_values``: those values exposed as graph outputs) and in PyTorch (the same graph
run node by node), and compared in graph order; the first beyond tolerance is named.

Each comparison keeps what it saw (`Agreement`: the largest absolute and relative error, the
tolerance of each output dtype under the tolerance policy, and why they differ when they
do), for the model's numerics verdict and for its first diverging node alike.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import onnx
import torch
from torch.utils import _pytree as pytree

from opsweep.capture.cases import ModelCase
from opsweep.catalog.registry import remember_exporter_work
from opsweep.engine.adapter import classify_export_error, error_line
from opsweep.engine.observe import measure
from opsweep.engine.runner import flat_outputs, make_session, run_session
from opsweep.model import Stage
from opsweep.policy import Policy, builtin

PASS, FAIL, NOT_REACHED = "pass", "fail", "not reached"
_NODE = re.compile(r"translating node %(\w+) : .*?target=torch\.ops\.(\w+)\.(\w+)")
_DISPATCH = re.compile(r"OpOverload\(op='(\w+)\.(\w+)'")
_ONNX_NODE = re.compile(r"op_type:(\w+), node name: (\w+)")


@dataclass(frozen=True)
class Agreement:
    """What one comparison of onnxruntime's values with PyTorch's saw: the largest absolute
    and relative error over the elements finite on both sides, the tolerance of each
    floating output dtype, and why they do not agree ("" when they do)."""

    max_abs: float | None  # None: no value was compared (a different output count, shape
    max_rel: float | None  # or dtype)
    tolerances: tuple[tuple[str, float, float], ...]  # (dtype, rtol, atol)
    differs: str = ""
    nonfinite: bool = False  # a NaN or an infinity where PyTorch has none, or back

    @property
    def within(self) -> bool:
        return not self.differs


def agreement(expected: Sequence[torch.Tensor], actual: Sequence[torch.Tensor],
              policy: Policy) -> Agreement:
    tolerance = policy.for_spec(None)
    differs, seen = measure(expected, actual, tolerance)
    dtypes = sorted({str(t.dtype).removeprefix("torch.") for t in expected
                     if t.dtype.is_floating_point or t.dtype.is_complex})
    tolerances = tuple((d, t.rtol, t.atol) for d in dtypes if (t := tolerance(d)) is not None)
    if seen is None:  # a different output count, shape or dtype: no value was compared
        return Agreement(None, None, tolerances, differs.message if differs else "")
    return Agreement(seen.max_abs, seen.max_rel, tolerances,
                     differs.message if differs else "", seen.nonfinite)


def _worse(a: Agreement | None, b: Agreement) -> Agreement:
    """Two comparisons of one export (at the example inputs, at the dynamic ones) as one."""
    if a is None:
        return b
    if a.max_abs is None or b.max_abs is None or a.max_rel is None or b.max_rel is None:
        return b if a.within else a
    return Agreement(max(a.max_abs, b.max_abs), max(a.max_rel, b.max_rel),
                     tuple(sorted(set(a.tolerances) | set(b.tolerances))), a.differs or b.differs,
                     a.nonfinite or b.nonfinite)


class _Run(NamedTuple):
    stage: str  # where the pipeline ended: ok, or the failing stage
    error: str
    program: object  # the ONNXProgram when it exported
    failure: BaseException | None  # the exception that names the failed node
    agreement: Agreement | None = None  # the last comparison (None: none was made)


@dataclass(frozen=True)
class Reality:
    """The public export of one model, axis by axis (pass, fail, not reached; dynamic
    None when the model gives no dynamic_shapes)."""

    export: str
    runtime: str
    numerics: str
    dynamic: str | None
    stage: str  # where the static export's pipeline ended: ok, or the failing stage
    error: str
    node: str = ""  # the node the export failed on, or the first diverging node
    op: str = ""  # that node's aten operator
    dynamic_stage: str = ""
    dynamic_error: str = ""
    seconds: float = 0.0  # the static export, checker and onnxruntime run
    search_seconds: float = 0.0  # the first-divergence search (only on a numerics failure)
    #: what the model's outputs' comparison saw (None: it did not run)
    agreement: Agreement | None = None
    #: what the first diverging node's comparison saw (None: none was found)
    divergence: Agreement | None = None
    policy: str = ""  # the tolerance policy compared against (its label)
    opset: int = 0  # the opset the model was exported at

    @property
    def ok(self) -> bool:
        return self.stage == Stage.OK.value and self.dynamic in (None, PASS)


def _failed_node(exc: BaseException) -> tuple[str, str]:
    """(node, operator) an export or checker error names: the FX node and aten operator
    for a translation, the ONNX node and op type for the checker."""
    onnx_node = _ONNX_NODE.search(str(exc))
    if onnx_node:
        return onnx_node.group(2), f"onnx::{onnx_node.group(1)}"
    chain: list[BaseException] = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 20:
        chain.append(chain[-1].__cause__)
    node = op = ""
    for e in chain:
        text = str(e)
        found = _NODE.search(text)
        if found and not node:
            node, op = found.group(1), found.group(3)
        dispatch = _DISPATCH.search(text)
        if dispatch and not op:
            op = dispatch.group(2)
    return node, op


def _flat(case: ModelCase, inputs: tuple) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves((inputs, dict(case.kwargs))) if isinstance(t, torch.Tensor)]


def _expected(case: ModelCase, inputs: tuple) -> list[torch.Tensor]:
    with torch.no_grad():
        return flat_outputs(case.module()(*[_clone(t) for t in inputs], **case.kwargs))


def _clone(value):
    return value.clone() if isinstance(value, torch.Tensor) else value


def export(case: ModelCase, opset: int, dynamic: bool = False):
    """The public call: the ONNXProgram, or what it raised."""
    remember_exporter_work()  # the same export, without work it repeats for nothing
    return torch.onnx.export(case.model, tuple(_clone(t) for t in case.inputs),
                             kwargs=dict(case.kwargs) or None, dynamo=True, opset_version=opset,
                             dynamic_shapes=case.dynamic_shapes if dynamic else None,
                             verbose=False)


@dataclass(frozen=True)
class RealExporter:
    """How one target exports a model for real: `call(case, dynamic)` gives the
    ONNXProgram (a dynamo export) or the ModelProto (the TorchScript exporter's), or
    raises what the exporter raised; `classify` files that into a failure stage."""

    opset: int
    call: Callable[[ModelCase, bool], Any]
    classify: Callable[[BaseException], Stage] = classify_export_error
    #: what onnxruntime is fed for the model's inputs (these positional ones, its kwargs):
    #: its tensors, in order (None); the TorchScript exporter makes numbers inputs too
    feeds: Callable[[ModelCase, tuple], list[torch.Tensor]] | None = None


def dynamo(opset: int) -> RealExporter:
    """The stock target's real export: the public dynamo call at `opset`."""
    return RealExporter(opset, lambda case, dynamic: export(case, opset, dynamic))


def proto_of(program: Any) -> onnx.ModelProto:
    """The ONNX model of an export: an ONNXProgram's, or the ModelProto itself."""
    return program if isinstance(program, onnx.ModelProto) else program.model_proto


def run(case: ModelCase, opset: int, dynamic: bool = False, inputs: tuple | None = None,
        policy: Policy | None = None, exporter: RealExporter | None = None) -> _Run:
    """One export (`exporter`'s, the public dynamo call at `opset` when None), run at the
    example inputs (and at `inputs`) and compared at `policy`'s tolerances (the built-in
    policy's when None)."""
    policy = policy or builtin()
    exporter = exporter or dynamo(opset)
    try:
        program = exporter.call(case, dynamic)
    except Exception as exc:
        return _Run(exporter.classify(exc).value, error_line(exc), None, exc)
    try:
        onnx.checker.check_model(proto_of(program), full_check=True)
    except Exception as exc:
        return _Run(Stage.CHECKER.value, error_line(exc), program, exc)
    try:
        session = make_session(proto_of(program))
    except Exception as exc:
        return _Run(Stage.RUNTIME.value, error_line(exc), program, exc)
    seen = None
    for these in (case.inputs,) if inputs is None else (case.inputs, inputs):
        try:
            actual = run_session(session, (exporter.feeds or _flat)(case, these))
        except Exception as exc:
            return _Run(Stage.RUNTIME.value, error_line(exc), program, exc, seen)
        seen = _worse(seen, agreement(_expected(case, these), actual, policy))
        if not seen.within:
            return _Run(Stage.NUMERICS.value, seen.differs, program, None, seen)
    return _Run(Stage.OK.value, "", program, None, seen)


def _axes(stage: str) -> tuple[str, str, str]:
    """(export, runtime, numerics) of a pipeline that ended at `stage`."""
    at = Stage(stage)
    runtime = NOT_REACHED if not at.exported else PASS if at.ran else FAIL
    numerics = NOT_REACHED if not at.ran else PASS if at is Stage.OK else FAIL
    return (PASS if at.exported else FAIL), runtime, numerics


def reality(case: ModelCase, opset: int, search: bool = True, policy: Policy | None = None,
            exporter: RealExporter | None = None) -> tuple[Reality, object]:
    """What really happens with `exporter` (the public dynamo call at `opset` when None),
    and the static export's ONNXProgram (None when it failed; a TorchScript export's
    ModelProto).

    A model with dynamic_shapes is exported as its user exports it, with them, and run at
    its example inputs and its dynamic_inputs; only when that does not go all the way is
    it exported a second time without them, which tells a dynamic-only failure apart. The
    first diverging node is searched for in a dynamo export only (it needs the exported
    program the ONNX model was translated from)."""
    policy = policy or builtin()
    exporter = exporter or dynamo(opset)
    started = time.perf_counter()
    dynamic = dynamic_run = None
    if case.dynamic_shapes is not None:
        dynamic_run = done = run(case, opset, True, case.dynamic_inputs, policy, exporter)
    if dynamic_run is None or dynamic_run.stage != Stage.OK.value:
        done = run(case, opset, policy=policy, exporter=exporter)
    seconds = time.perf_counter() - started
    if dynamic_run is not None:
        # the dynamic axis passes when the dynamic export gets as far as the static one
        dynamic = PASS if Stage(dynamic_run.stage).depth >= Stage(done.stage).depth else FAIL
    node, op = _failed_node(done.failure) if done.failure is not None else ("", "")
    search_seconds, divergence = 0.0, None
    if done.stage == Stage.NUMERICS.value and search and hasattr(done.program,
                                                                 "exported_program"):
        begun = time.perf_counter()
        node, op, divergence = first_divergence(case, done.program, policy)
        search_seconds = time.perf_counter() - begun
    return Reality(*_axes(done.stage), dynamic, done.stage, done.error, node, op,
                   dynamic_run.stage if dynamic_run else "",
                   dynamic_run.error if dynamic_run else "", seconds, search_seconds,
                   done.agreement, divergence, policy.label, exporter.opset), done.program


class _Recorder(torch.fx.Interpreter):
    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__(module)
        self.values: dict[str, torch.Tensor] = {}

    def run_node(self, n: torch.fx.Node):
        value = super().run_node(n)
        if n.op == "call_function" and isinstance(value, torch.Tensor):
            self.values[n.name] = value
        return value


def first_divergence(case: ModelCase, program,
                     policy: Policy | None = None) -> tuple[str, str, Agreement | None]:
    """(node, aten operator, what its comparison saw) of the first value of the decomposed
    graph whose onnxruntime value differs from PyTorch's beyond tolerance; ("", "", None)
    when none is found."""
    policy = policy or builtin()
    ep = program.exported_program
    module = ep.module()
    recorder = _Recorder(module)
    with torch.no_grad():
        recorder.run(*_flat(case, case.inputs))
    known = {o for n in program.model_proto.graph.node for o in n.output}
    names = [n for n in recorder.values if n in known]
    if not names:
        return "", "", None
    try:
        computed = program.compute_values(names, tuple(_clone(t) for t in case.inputs),
                                          dict(case.kwargs) or None)
    except Exception:
        return "", "", None
    targets = {n.name: n.target for n in module.graph.nodes}
    for name, got in zip(names, computed):
        want = recorder.values[name]
        if tuple(want.shape) != tuple(got.shape):
            continue  # a value the exporter laid out differently is not evidence
        got = got.to(want.dtype) if got.dtype != want.dtype else got
        seen = agreement([want], [got], policy)
        if not seen.within:
            target = targets.get(name)
            op = getattr(getattr(target, "overloadpacket", None), "__name__", str(target))
            return name, op, seen
    return "", "", None

"""What `opsweep check` tells a model's owner, in their words: which operator, at which
dtype and rank, is untested or failing and how (never an axis mixed with a stage: "does
not run: the exported model fails onnx.checker", not "runtime fails at checker"), and a
repro they can paste. What a spec author would change to measure more ("widen add's
ranks") is the `hint` of a verdict, shown with ``--verbose`` only.
"""

from __future__ import annotations

import re

from opsweep.check.real import Agreement, Reality
from opsweep.check.table import FAILING, FINE, NOT_MEASURED, UNATTRIBUTABLE, Failure, Verdict
from opsweep.model import Stage
from opsweep.page.snippets import snippet

#: What each failure stage means to someone exporting a model: the axis first (does not
#: export, does not run, outputs differ), then where.
STAGE_WORDS = {
    Stage.CAPTURE.value: "does not export: torch.export cannot capture it",
    Stage.NO_TRANSLATION.value: "does not export: the ONNX exporter has no translation for it",
    Stage.TRANSLATION_ERROR.value: "does not export: the exporter's translation of it raised",
    Stage.RAW_ERROR.value: "does not export: the exporter crashed with an unexpected error "
                           "(worth reporting to PyTorch)",
    Stage.CHECKER.value: "does not run: the exported model fails onnx.checker",
    Stage.RUNTIME.value: "does not run: onnxruntime cannot load or run the exported model",
    Stage.NUMERICS.value: "runs, but its outputs differ from PyTorch's beyond the tolerance",
    Stage.OK.value: "exports, runs and matches PyTorch",
}

#: The status column in the model owner's words.
STATUS_WORDS = {FINE: "tested, passes", FAILING: "tested, fails", NOT_MEASURED: "untested",
                UNATTRIBUTABLE: "untestable"}


def stage_words(stage: str) -> str:
    return STAGE_WORDS.get(stage, f"fails at {stage}")


def use_name(v: Verdict) -> str:
    """``conv2d at bfloat16 rank 4``."""
    return f"{v.use.op} at {v.use.dtype} rank {v.use.rank}"


def failure_line(v: Verdict, f: Failure) -> str:
    """One way a use fails in the table, as a sentence: what, how, the error, the smallest
    failing example."""
    dynamic = "with dynamic shapes, " if f.dynamic else ""
    return (f"{use_name(v)} {dynamic}{stage_words(f.stage)}: {f.error} (smallest failing "
            f"example: {f.example}; spec {f.spec})")


def advice(v: Verdict, verbose: bool = False) -> str:
    """The table's word on one use, for its owner; the spec author's hint after it with
    `verbose`."""
    text = v.why
    if v.status == FAILING and v.failures:
        text = f"{v.why}; {stage_words(v.failures[0].stage)}"
    if v.errors:
        worst = max((c for _, c in v.errors), key=lambda c: c.max_abs)
        tolerance = f" (rtol {worst.tolerance.rtol:g}, atol {worst.tolerance.atol:g})" \
            if worst.tolerance else ""
        text += f"; recorded error up to {_g(worst.max_abs)} absolute{tolerance}"
    if verbose and v.hint:
        text += f" [catalog: {v.hint}]"
    return text


#: What a repro runs after the export, by the stage the table saw the example fail at: the
#: step that fails, so the snippet stops where the model would.
_STEPS = {
    Stage.CHECKER.value: ["import onnx", "",
                          "onnx.checker.check_model(program.model_proto, full_check=True)"
                          "  # fails here: onnx.checker"],
    Stage.RUNTIME.value: ["outputs = program(*inputs)  # fails here: onnxruntime"],
    Stage.NUMERICS.value: ["expected = module(*inputs)",
                           "expected = expected if isinstance(expected, (tuple, list)) "
                           "else [expected]",
                           "outputs = program(*inputs)  # onnxruntime",
                           "for got, want in zip(outputs, expected):  # beyond the tolerance",
                           "    print((got.double() - want.double()).abs().max())"],
}


def repro(f: Failure, opset: int) -> str:
    """Copy-pasteable Python for one failing example of the table: its export at the
    table's opset with the public call, then the step it fails at (onnx.checker, an
    onnxruntime run, the comparison)."""
    code = snippet(f.spec, f.example, dynamic=f.dynamic).replace(
        "dynamo=True", f"dynamo=True, opset_version={opset}", 1)
    return code.rstrip("\n") + "\n" + "".join(line + "\n" for line in _STEPS.get(f.stage, ()))


def _g(x: float) -> str:
    return f"{x:.3g}"


def agreement_words(a: Agreement, policy: str) -> str:
    """The observed error against the tolerance: 'largest error 2.4e-07 absolute, 1.1e-05
    relative; within float32's tolerance (rtol 0.0001, atol 1e-05; policy opsweep v1)'."""
    tolerance = "; ".join(f"{d}: rtol {r:g}, atol {t:g}" for d, r, t in a.tolerances) \
        or "compared exactly"
    seen = f"largest error {_g(a.max_abs)} absolute, {_g(a.max_rel)} relative" \
        if a.max_abs is not None and a.max_rel is not None else "no value compared"
    if a.within:
        return f"{seen}; within the tolerance ({tolerance}; policy {policy})"
    counted = _COUNTED.search(a.differs)
    return (f"{seen}; beyond the tolerance ({tolerance}; policy {policy}): "
            f"{counted.group(1) if counted else a.differs}")


_COUNTED = re.compile(r"^output \d+: (\d+/\d+ elements differ) beyond")


def outcome(r: Reality) -> list[str]:
    """The real export in sentences: how far the model got, where it failed, and for its
    numerics the error against the tolerance (and at the first diverging node)."""
    where = f" at node {r.node} ({_op(r.op)})" if r.node else f" ({_op(r.op)})" if r.op else ""
    if r.stage == Stage.OK.value:
        lines = ["Your model exports, runs and matches PyTorch"
                 + (f": {agreement_words(r.agreement, r.policy)}" if r.agreement else "")]
    elif r.stage == Stage.NUMERICS.value:
        lines = ["Your model exports and runs, but its outputs differ from PyTorch's"
                 + (f": {agreement_words(r.agreement, r.policy)}" if r.agreement else
                    f": {r.error}")]
        if r.node and r.divergence is not None:
            lines.append(f"First diverging node: {r.node} ({_op(r.op)}): "
                         f"{agreement_words(r.divergence, r.policy)}")
        else:
            lines.append("No single node of the graph was found to diverge first (the "
                         "difference builds up, or sits in a value the ONNX graph does not "
                         "name)")
    else:
        lines = [f"Your model {stage_words(r.stage)}{where}: {r.error}"]
    if r.dynamic == "fail":
        lines.append(f"With its dynamic_shapes it {stage_words(r.dynamic_stage)}: "
                     f"{r.dynamic_error}")
    return lines


def _op(op: str) -> str:
    return op if op.startswith("onnx::") else f"aten::{op}"

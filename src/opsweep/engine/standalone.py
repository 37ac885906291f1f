"""Self-contained reproduction scripts: a failing example written out as Python that needs only
torch, onnx, onnxruntime and numpy (and onnxscript, which the exporter itself needs).

The artifact keeps signatures, not values; the spec and the signature give back the drawn
examples (`repro._find`), and each is written out inline: the spec's callable as source (a
torch function by its dotted name, a lambda or a function by its own source), the inputs by
the runner's recipes under the example's seed (`runner.make_tensor`, the same
``torch.Generator`` calls), then the public export, ``onnx.checker``, an onnxruntime
session and run, and the comparison with the sweep's tolerance. Each step is one statement
whose line ends in ``# <stage>``, so a traceback names the stage it failed at.

A callable that cannot be written out (a function whose globals are not torch's) gives
None: the page then marks the snippet as one that needs the catalog.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

import torch

from opsweep.catalog.draw import PROFILES, Profile, draw_examples
from opsweep.engine.runner import MIN_DYNAMIC_SIZE, build_call, choose_plan, resize, target_of
from opsweep.engine.torchscript import opset_for
from opsweep.model import Example, OpSpec, TensorArg
from opsweep.policy import builtin
from opsweep.targets import Target, of_name, reached_check

_NAMESPACES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft",
               "torch.Tensor", "torch.nn", "torch.nn.init")
_SAFE_GLOBALS = {"torch", "math", "F"}


def _dotted(fn: Callable) -> str | None:
    """`torch.abs`-style name that evaluates back to `fn` itself."""
    if isinstance(fn, torch._ops.OpOverload | torch._ops.OpOverloadPacket):
        return f"torch.ops.{fn}".replace("::", ".")
    name = getattr(fn, "__name__", "")
    for space in (*_NAMESPACES, getattr(fn, "__module__", "") or ""):
        head, *rest = space.split(".")
        found: Any = torch if head == "torch" else None
        for part in (*rest, name):
            found = getattr(found, part, None)
        if found is fn and name.isidentifier():
            return f"{space}.{name}"
    return None


def _lambda_source(fn: Callable) -> str | None:
    try:
        lines = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(textwrap.dedent(lines).strip().rstrip(",").rstrip("\\"))
    except SyntaxError:
        try:
            tree = ast.parse("(" + textwrap.dedent(lines).strip().rstrip(",") + ")")
        except SyntaxError:
            return None
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    code = fn.__code__
    found = [n for n in found if len(n.args.args) == code.co_argcount
             and [a.arg for a in n.args.args] == list(code.co_varnames[:code.co_argcount])]
    return ast.unparse(found[0]) if len(found) == 1 else None


def _callee(fn: Callable) -> tuple[str, str] | None:
    """(definition lines, the expression to call) for `fn`, or None."""
    dotted = _dotted(fn)
    if dotted:
        return "", dotted
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__closure__", None):
        return None
    if not set(code.co_names) & set(fn.__globals__) <= _SAFE_GLOBALS:
        return None
    if fn.__name__ == "<lambda>":
        source = _lambda_source(fn)
        return (f"fn = {source}\n", "fn") if source else None
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    return source + "\n", fn.__name__


def _literal(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(_literal(v) + ", " for v in value) + ")"
    text = repr(value)
    if eval(text, {"torch": torch, "inf": math.inf}) != value:
        raise ValueError(f"no literal for {text}")
    return text


def _tensor(arg: TensorArg) -> str:
    """`runner.make_tensor` for this recipe, as one expression over the generator `g`."""
    shape, dtype = repr(tuple(arg.shape)), f"torch.{arg.dtype}"
    if arg.choices:
        pool = "[" + ", ".join(_literal(float(c)) for c in arg.choices) + "]"
        return (f"torch.tensor({pool}, dtype=torch.float64)"
                f"[torch.randint(0, {len(arg.choices)}, {shape}, generator=g)].to({dtype})")
    if arg.dtype == "bool":
        return f"torch.randint(0, 2, {shape}, generator=g).bool()"
    if arg.dtype.startswith("complex"):
        return f"torch.randn({shape}, generator=g, dtype={dtype})"
    if arg.dtype.startswith(("float", "bfloat")):
        if arg.low is None and arg.high is None:
            return f"torch.randn({shape}, generator=g).to({dtype})"
        low = -4.0 if arg.low is None else arg.low
        high = low + 8.0 if arg.high is None else arg.high
        return (f"(torch.rand({shape}, generator=g, dtype=torch.float64) * {_literal(high - low)}"
                f" + {_literal(low)}).to({dtype})")
    low = -8 if arg.low is None else int(arg.low)
    high = 8 if arg.high is None else int(arg.high)
    if arg.dtype == "uint8":
        low = max(low, 0)
    return f"torch.randint({low}, {max(high, low + 1)}, {shape}, generator=g, dtype={dtype})"


def _call_expr(example: Example) -> tuple[str, str]:
    """(the lines making the inputs from `g`, the argument list naming them x0, x1, ...)."""
    made: list[str] = []

    def walk(value: Any) -> str:
        if isinstance(value, TensorArg):
            made.append(f"x{len(made)} = {_tensor(value)}")
            return f"x{len(made) - 1}"
        if isinstance(value, list):
            return "[" + ", ".join(walk(v) for v in value) + "]"
        if isinstance(value, tuple):
            return "(" + "".join(walk(v) + ", " for v in value) + ")"
        return _literal(value)

    parts = [walk(a) for a in example.args] + [f"{k}={walk(v)}" for k, v in example.kwargs]
    return "\n".join(made), ", ".join(parts)


_HELPERS = '''

def feed(t):
    """A tensor as onnxruntime takes it (complex as a real/imag pair, bfloat16 by its bits)."""
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t.resolve_conj())
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            t.view(torch.int16).numpy().view(np.uint16), onnx.TensorProto.BFLOAT16)
    return ort.OrtValue.ortvalue_from_numpy(t.numpy())


def back(v):
    if v.data_type() == "tensor(bfloat16)":
        return torch.from_dlpack(v._get_c_value()).clone()
    return torch.from_numpy(np.array(v.numpy(), copy=True))


def compare(want, got):
    """PyTorch's outputs against onnxruntime's, as the sweep compares them."""
    assert len(want) == len(got), f"PyTorch gives {len(want)} outputs, onnxruntime {len(got)}"
    for i, (w, o) in enumerate(zip(want, got)):
        w = w.detach().resolve_conj().resolve_neg()
        if w.is_complex() and not o.is_complex() and o.dim() == w.dim() + 1 and o.shape[-1] == 2:
            o = torch.complex(o[..., 0], o[..., 1])  # a copy: an empty output's strides are 0
        assert tuple(w.shape) == tuple(o.shape), f"output {i}: shape {tuple(o.shape)}, PyTorch {tuple(w.shape)}"
        assert w.dtype == o.dtype, f"output {i}: dtype {o.dtype}, PyTorch gives {w.dtype}"
        tol = TOLERANCE.get(str(w.dtype).removeprefix("torch."))
        if w.is_complex():
            w, o = (torch.stack([t.real, t.imag], dim=-1) for t in (w, o))
        if tol is None or not w.dtype.is_floating_point:
            assert torch.equal(w, o), f"output {i}: {int((w != o).sum())}/{w.numel()} differ (exact)"
        else:
            close = torch.isclose(o.double(), w.double(), rtol=tol[0], atol=tol[1], equal_nan=True)
            assert bool(close.all()), f"output {i}: {int((~close).sum())}/{w.numel()} differ beyond {tol}"
'''


def _inputs_fn(example: Example) -> tuple[str, str]:
    """(def inputs(seed) -> the example's tensors, the forward's argument list)."""
    made, call = _call_expr(example)
    names = ", ".join(f"x{i}" for i in range(len(example.tensors)))
    body = textwrap.indent(made, "    ") + "\n" if made else ""
    return (f"def inputs(seed):\n    g = torch.Generator().manual_seed(seed)\n{body}"
            f"    return ({names}{',' if names else ''})\n"), call


def _module(spec: OpSpec, example: Example, call: str) -> str | None:
    params = ", ".join(f"x{i}" for i in range(len(example.tensors)))
    if spec.module is not None:
        dotted = _dotted(spec.module)
        if dotted is None:
            return None
        init = ", ".join(f"{k}={_literal(v)}" for k, v in example.init)
        return (f"torch.manual_seed({example.seed})  # parameters as the sweep drew them\n"
                f"class Repro(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                f"        self.target = {dotted}({init})\n\n"
                f"    def forward(self, {params}):\n        return self.target({call})\n")
    callee = _callee(spec.fn) if spec.fn is not None else None
    if callee is None:
        return None
    define, name = callee
    return (f"{define}\nclass Repro(torch.nn.Module):\n"
            f"    def forward(self, {params}):\n        return {name}({call})\n")


def _table(target: str) -> str:
    path, _, table = target.rpartition(":")
    return ("import importlib.util  # the custom translation table, from the project's checkout\n"
            f"_where = importlib.util.spec_from_file_location('translations', {path!r})\n"
            "_tables = importlib.util.module_from_spec(_where)\n_where.loader.exec_module(_tables)\n"
            f"TABLE = _tables.{table}\n")


def _opset_option(target: Target) -> str:
    """The export's ``opset_version`` argument for a target at its own opset ("" otherwise)."""
    return "" if target.opset is None else f", opset_version={target.opset}"


def _opset_check(target: Target) -> str:
    """For a target at its own opset, the check it makes of the model's opset (the exporter
    keeps its own where it cannot convert: engine.opsets.reached)."""
    if target.opset is None:
        return ""
    found, check = reached_check(target.opset, "model")
    return f"{found}\n{check}  # export\n"


def _inputs_named(example: Example, name: str) -> str:
    return _inputs_fn(example)[0].replace("def inputs(", f"def {name}(", 1)


def _torchscript_export(example: Example, dynamic_inputs, export_with: str) -> str:
    """The TorchScript exporter's call, as the `torchscript` target makes it: the opset the
    sweep measured at (``engine.torchscript.opset_for``), the inputs named as the script feeds
    them, the dynamic axis through ``dynamic_axes`` on the inputs the dynamo plan makes
    dynamic."""
    names = [f"x{i}" for i in range(len(example.tensors))]
    axes = {names[k]: {0: "batch"} for k in dynamic_inputs}
    dynamic = f", dynamic_axes={axes!r}" if axes else ""
    return ("import io\n_buffer = io.BytesIO()\n"
            f"torch.onnx.export(module, {export_with}, _buffer, dynamo=False, "
            f"opset_version={opset_for()}, input_names={names!r}{dynamic})  # export\n"
            "model = onnx.load_from_string(_buffer.getvalue())\n")


def script(spec: OpSpec, examples: list[Example], *, dynamic: bool = False, target: str = "",
           title: str = "") -> str | None:
    """A script that runs `examples` (one signature, several seeds) through the public export,
    the checker, onnxruntime and the comparison; None when the callable cannot be inlined."""
    first = examples[0]
    try:
        inputs_def, call = _inputs_fn(first)
        module = _module(spec, first, call)
    except ValueError:
        return None
    if module is None:
        return None
    seeds = tuple(e.seed for e in examples)
    export_with = "tuple(t.clone() for t in inputs(SEEDS[0]))"
    shapes = ""
    if dynamic:
        plan, traced, _ = choose_plan(spec, target_of(spec, build_call(spec, first)), first)
        if plan is None or traced is None:
            return None
        inputs_def = (_inputs_named(resize(first, plan.inputs, plan.export_size), "inputs") + "\n\n"
                      + _inputs_named(resize(first, plan.inputs, plan.run_size), "run_inputs"))
        dims = ", ".join("{0: batch}" if k in plan.inputs else "None"
                         for k in range(len(first.tensors)))
        shapes = (f"batch = torch.export.Dim('batch', min={MIN_DYNAMIC_SIZE})\n"
                  f"dynamic_shapes = ({dims},)\n")
    tolerance = {d: (t.rtol, t.atol) for d in ("float64", "float32", "float16", "bfloat16",
                                               "complex64", "complex128")
                 if (t := builtin().tolerance(spec, d)) is not None}
    measured_with = of_name(target)
    if not measured_with.behaviour.dynamo:
        export = _torchscript_export(first, plan.inputs if dynamic and plan is not None
                                     else (), export_with)
        shapes = ""
        table = ""
    else:
        options = ", dynamic_shapes=dynamic_shapes" if dynamic else ""
        table = _table(measured_with.table) if measured_with.table else ""
        options += ", custom_translation_table=TABLE" if measured_with.table else ""
        options += _opset_option(measured_with)
        export = (f"program = torch.onnx.export(module, {export_with}, dynamo=True{options})"
                  "  # export\nmodel = program.model_proto\n" + _opset_check(measured_with))
    run = "run_inputs" if dynamic else "inputs"
    check = "" if spec.nondeterministic else \
        "    compare(want, got)  # numerics\n"
    want = "" if spec.nondeterministic else \
        "    want = [t for t in tree_leaves(module(*[t.clone() for t in x])) if isinstance(t, torch.Tensor)]\n"
    return (
        f'"""{title}\n\nNeeds torch, onnx, onnxruntime and numpy only (onnxscript comes with the exporter).\n'
        'A failing step raises on the line whose comment names its stage."""\n'
        "import numpy as np\nimport onnx\nimport onnxruntime as ort\nimport torch\n"
        "from torch.utils._pytree import tree_leaves\n\n"
        f"SEEDS = {seeds!r}  # the sweep's examples of this signature\n"
        f"TOLERANCE = {tolerance!r}  # (rtol, atol) per dtype; other dtypes compare exactly\n"
        f"{_HELPERS}\n\n{inputs_def}\n\n{module}\n\n{table}"
        f"module = Repro().eval()\n{shapes}"
        f"{export}"
        "onnx.checker.check_model(model, full_check=True)  # checker\n"
        "session = ort.InferenceSession(model.SerializeToString(), "
        "providers=['CPUExecutionProvider'])  # runtime\n"
        "for seed in SEEDS:\n"
        f"    x = {run}(seed)\n"
        "    named = {f'x{i}': t for i, t in enumerate(x)}\n"
        "    feeds = {i.name: feed(named[i.name]) for i in session.get_inputs()}\n"
        "    got = [back(v) for v in session.run_with_ort_values(None, feeds)]  # runtime\n"
        f"{want}{check}"
        "print('no failure: every step passed')\n")


def _same_signature(examples: list[Example]) -> list[Example]:
    base = [e for e in examples if e == examples[0].__class__(
        examples[0].args, examples[0].kwargs, examples[0].init, e.seed)]
    return base


class Scripts:
    """`for_example(spec, signature, dynamic, target, title)`: the script of the drawn examples
    with this signature (drawn once per spec, under `profile`), or None."""

    def __init__(self, catalog, profile: str = "ci",
                 draw: Callable[[OpSpec, Profile], list[Example]] | None = None) -> None:
        """`draw`: a spec's examples under a profile (default: drawn anew; the command line
        hands the sweep's cached draws, opsweep.sweep.driver.cached_draws)."""
        self.catalog = catalog
        self.profile = PROFILES[profile]
        self._draw = draw or (lambda spec, profile: list(draw_examples(spec, profile)))
        self._draws: dict[str, list[Example]] = {}

    def for_example(self, spec_name: str, signature: str, dynamic: bool = False,
                    target: str = "", title: str = "") -> str | None:
        spec = self.catalog.specs.get(spec_name)
        if spec is None:
            return None
        if spec_name not in self._draws:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._draws[spec_name] = self._draw(spec, self.profile)
        found = [e for e in self._draws[spec_name] if e.signature == signature]
        if not found:
            return None
        try:
            with warnings.catch_warnings():  # eager PyTorch's own advice, at render time
                warnings.simplefilter("ignore")
                return script(spec, _same_signature(found), dynamic=dynamic, target=target,
                              title=title)
        except Exception:  # noqa: BLE001 - a plan eager PyTorch refuses: no inline script
            return None

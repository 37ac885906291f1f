"""The data that flows between stages: specs, drawn examples, outcomes.

Everything here is a frozen dataclass or an enum. Examples carry *recipes*
for tensors (shape, dtype, value range, seed), never tensor values, so they
are cheap to draw, pickle to workers and summarise in an artifact.
"""

from __future__ import annotations

import enum
import functools
import importlib.util
import itertools
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # kept out of the import path of the light bot commands
    from hypothesis.strategies import SearchStrategy


STOCK = "stock"  # the target measured without a custom translation table
#: the TorchScript exporter's target (``--torchscript``: ``torch.onnx.export(..., dynamo=False)``)
TORCHSCRIPT = "torchscript"


class Stage(str, enum.Enum):
    """Where one example's pipeline ended. `ok` means it went all the way."""

    INVALID = "invalid"  # PyTorch itself rejected the drawn example: a spec bug
    #: the worker died or timed out before the example reached the exporter (eager PyTorch
    #: crashed, or the worker was killed): no verdict on the exporter, and not a spec bug
    LOST = "lost"
    CAPTURE = "capture"
    NO_TRANSLATION = "no-translation"
    TRANSLATION_ERROR = "translation-error"
    RAW_ERROR = "raw-error"
    CHECKER = "checker"
    RUNTIME = "runtime"
    NUMERICS = "numerics"
    OK = "ok"

    @property
    def exported(self) -> bool:
        return self in _EXPORTED

    @property
    def ran(self) -> bool:
        return self in (Stage.NUMERICS, Stage.OK)

    @property
    def depth(self) -> int:
        """How far along the pipeline the example got (invalid, lost: -1)."""
        return _PIPELINE.index(self) if self in _PIPELINE else -1


class Mismatch(str, enum.Enum):
    """What differed when onnxruntime's outputs did not match PyTorch's."""

    COUNT = "count"  # a different number of outputs
    SHAPE = "shape"
    DTYPE = "dtype"
    VALUES = "values"  # same outputs, shapes and dtypes; some elements differ


_EXPORTED = frozenset({Stage.CHECKER, Stage.RUNTIME, Stage.NUMERICS, Stage.OK})
_PIPELINE = (Stage.CAPTURE, Stage.NO_TRANSLATION, Stage.TRANSLATION_ERROR, Stage.RAW_ERROR,
             Stage.CHECKER, Stage.RUNTIME, Stage.NUMERICS, Stage.OK)
#: Stages that are no verdict on the exporter: never graded for or against it.
UNGRADED = frozenset({Stage.INVALID, Stage.LOST})
#: Stages at which a known-gap note may say an operator fails.
GAP_STAGES = frozenset(Stage) - {Stage.OK} - UNGRADED


class Grade(str, enum.Enum):
    FULL = "full"
    PARTIAL = "partial"
    NONE = "none"
    BLOCKED = "blocked"
    SKIPPED = "skipped"  # numerics of a nondeterministic operator


#: dtype name -> short tag used in signatures.
DTYPE_TAGS: Mapping[str, str] = MappingProxyType({
    "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
    "complex64": "c64", "complex128": "c128",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
    "bool": "b8",
})
#: an OpSpec's `mode`: none ("", every mode the draws reach), or the one it is held to
MODES = ("", "training", "inference")
FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")
INT_DTYPES = ("int32", "int64")
COMPLEX_DTYPES = ("complex64",)


@dataclass(frozen=True)
class TensorArg:
    """A recipe for one tensor input: values are generated in the worker."""

    shape: tuple[int, ...]
    dtype: str
    low: float | None = None
    high: float | None = None
    #: when set, every element is drawn from these values (edge cases: -0.0, inf, nan)
    choices: tuple[float, ...] | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        n = 1
        for side in self.shape:
            n *= side
        return n

    def describe(self) -> str:
        return f"{DTYPE_TAGS[self.dtype]}[{','.join(map(str, self.shape))}]"


@dataclass(frozen=True)
class Example:
    """One drawn example: positional and keyword arguments of the forward call
    (TensorArg or plain Python values), constructor parameters when the spec
    builds a module, and the seed that fixes tensor (and parameter) values."""

    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
    init: tuple[tuple[str, Any], ...] = ()
    seed: int = 0

    @property
    def tensors(self) -> tuple[TensorArg, ...]:
        values = (*self.args, *(v for _, v in self.kwargs))
        return tuple(_iter_tensors(values))

    @property
    def signature(self) -> str:
        """Everything an export depends on; never tensor values or the seed."""
        parts = [_describe(a) for a in self.args]
        parts += [f"{k}={_describe(v)}" for k, v in self.kwargs]
        head = ", ".join(parts)
        if self.init:
            return f"{head} | " + ", ".join(f"{k}={_describe(v)}" for k, v in self.init)
        return head

    @property
    def dtype(self) -> str:
        """The dtype the example is filed under: its first tensor's."""
        tensors = self.tensors
        return tensors[0].dtype if tensors else "none"

    @property
    def rank(self) -> int:
        tensors = self.tensors
        return tensors[0].rank if tensors else 0

    @property
    def size(self) -> int:
        """Total elements over all tensor inputs: orders examples by smallness."""
        return sum(t.numel for t in self.tensors)


def _iter_tensors(values):
    for v in values:
        if isinstance(v, TensorArg):
            yield v
        elif isinstance(v, (tuple, list)):
            yield from _iter_tensors(v)


def _describe(value: Any) -> str:
    if isinstance(value, TensorArg):
        return value.describe()
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


@dataclass(frozen=True)
class KnownGap:
    """A note that the stock exporter is known not to handle this spec.

    `stage` is where the failure is expected to land; the sweep flags a note
    whose measured stage differs and a fast test checks `no-translation`
    notes against the exporter's live registry."""

    reason: str
    stage: Stage
    #: translation targets (``module:TABLE`` as given to ``--translations``) that close the gap
    closed_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Origin:
    """Where a spec was built: the file, and the span (1-based lines, 0-based columns) of
    the call that built it; the columns are -1 when the interpreter does not tell them."""

    path: str
    line: int
    end_line: int = -1
    col: int = -1
    end_col: int = -1


@dataclass(frozen=True, eq=False)
class OpSpec:
    """One measurable unit of the catalog.

    `fn` is the body of the forward call. When `module` is set, the forward
    call is `module(**example.init)(*args, **kwargs)` instead and `fn` is not
    used; parameters are initialised under the example's seed."""

    name: str
    aten_ops: tuple[str, ...]
    examples: SearchStrategy[Example]
    fn: Callable[..., Any] | None = None
    module: Callable[..., Any] | None = None
    family: str = ""  # the module the spec lives in, filled in by the catalog
    dtypes: tuple[str, ...] = FLOAT_DTYPES
    ranks: tuple[int, int] = (0, 4)
    nondeterministic: bool = False
    tolerances: Mapping[str, Tolerance] = field(default_factory=dict)
    gap: KnownGap | None = None
    #: declared aten name -> traced aten names, where they differ (conv2d -> _convolution)
    traces: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: positions (in `Example.tensors` order) of the tensor inputs whose leading dimension is
    #: the batch, for the dynamic axis; None: decided per example from eager PyTorch's evidence
    batch: tuple[int, ...] | None = None
    #: argument name -> why the spec never varies it (the catalog's bar: every argument of the
    #: traced schema varied, or a reason here; opsweep.engine.arguments)
    fixed: Mapping[str, str] = field(default_factory=dict)
    #: the one mode the spec calls an operator that has modes in (``"training"``: dropout's
    #: ``train=True``; ``"inference"``), or "" when its examples are not held to one mode. A
    #: claim about the operator in another mode is not checked by this spec (the migration
    #: view says which mode was measured instead of calling the claim contradicted)
    mode: str = ""
    source: str = ""  # module that defined the spec, filled in by the catalog
    #: the statement that built the spec (file, line, span), recorded at construction
    origin: Origin | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.origin is None:
            object.__setattr__(self, "origin", caller())
        if self.mode not in MODES:
            raise ValueError(f"mode: spec {self.name!r}: {self.mode!r} is not one of "
                             f"{', '.join(repr(m) for m in MODES)}")


@dataclass(frozen=True)
class Translations:
    """A translation target's fingerprint entry: which table, from which source."""

    module: str  # as given: a dotted module or a path to a .py file
    table: str
    digest: str  # sha256[:16] of the module's source
    overrides: tuple[str, ...]  # the operators the table translates, e.g. prims::fmax

    @property
    def name(self) -> str:
        return f"{self.module}:{self.table}"


@dataclass(frozen=True)
class Observed:
    """The error one example's outputs showed against PyTorch's where their values were
    compared (same count, shapes and dtypes), over all its outputs' elements: what the
    artifact keeps per cell (opsweep.artifact.numerics) and a policy re-grades from
    (opsweep.policy.judge). Errors are absolute, ``|onnxruntime - PyTorch|``, over the
    elements finite on both sides; a relative error is the absolute one over
    ``|PyTorch|`` (infinite for a nonzero error where PyTorch gives 0)."""

    max_abs: float
    median_abs: float
    max_rel: float
    #: whether a NaN or an infinity sits where PyTorch has none (or the other way round):
    #: a failure at any tolerance
    nonfinite: bool = False
    #: whether an output compared exactly (integers, bool) differs: a failure at any tolerance
    exact: bool = False
    #: the largest error in units in the last place of the output dtype (float16, bfloat16
    #: outputs only)
    ulp: int | None = None
    #: the tolerance the floating outputs were compared with (None: none was, or outputs
    #: of different tolerances were) and, under it, the largest
    #: ``|error| - rtol * |PyTorch|`` (at least 0): the smallest atol that passes
    tolerance: Tolerance | None = None
    excess: float = 0.0


@dataclass(frozen=True)
class Outcome:
    """What happened to one example."""

    stage: Stage
    signature: str
    dtype: str
    rank: int
    size: int = 0
    error: str = ""
    #: the dynamic axis: the stage the example reached when re-exported with its
    #: leading dimension dynamic and run at a second size (None: not re-exported)
    dynamic: Stage | None = None
    dynamic_error: str = ""
    #: what differed, for the `numerics` stage of the static and of the dynamic run
    mismatch: Mismatch | None = None
    dynamic_mismatch: Mismatch | None = None
    #: the schema arguments the example's calls reached, as (overload, argument, type, value
    #: class): opsweep.engine.arguments
    arguments: tuple[tuple[str, str, str, str], ...] = ()
    #: the error its values showed (None: values never compared; opsweep.model.Observed)
    observed: Observed | None = None


# --- where a spec is defined, recorded when it is built ---------------------------------
# `caller` runs when an OpSpec is constructed: it records the call that built the spec in
# the first stack frame outside opsweep's engine (the spec module, a ``--specs``
# directory's module, a test), climbing to the outermost frame of the same file so a helper
# defined in the spec module points at the entry that called it. The spec sources page
# reads the call back (opsweep.page.sources).

_ENGINE = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=1)
def specs_dir() -> str:
    """The built-in catalog's directory (``specs/`` in a checkout, inside the package
    directory in a wheel)."""
    found = importlib.util.find_spec("opsweep.specs")
    return os.path.abspath(next(iter(found.submodule_search_locations)))


def inside(path: str, directory: str) -> bool:
    """Whether `path` is `directory` or below it (both absolute)."""
    return path == directory or path.startswith(directory + os.sep)


@functools.lru_cache(maxsize=4096)
def _in_engine(filename: str) -> bool:
    path = os.path.abspath(filename)
    return inside(path, _ENGINE) and not inside(path, specs_dir())


def caller() -> Origin | None:
    """The call that is building a spec right now (None: built by code without a file)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith("<"):
            if code.co_name != "__init__":  # exec'd or interactive code: nothing to point at
                return None
        elif not _in_engine(code.co_filename):
            break
        frame = frame.f_back
    if frame is None:
        return None
    while frame.f_back is not None and frame.f_back.f_code.co_filename == frame.f_code.co_filename:
        frame = frame.f_back  # a helper of the same file: the statement that called it
    return _origin(frame)


def _origin(frame) -> Origin:
    code, path = frame.f_code, os.path.abspath(frame.f_code.co_filename)
    positions = getattr(code, "co_positions", None)  # Python 3.11+
    if positions is not None:
        spot = next(itertools.islice(positions(), frame.f_lasti // 2, None), None)
        if spot is not None and None not in spot:
            line, end_line, col, end_col = spot
            return Origin(path, line, end_line, col, end_col)
    return Origin(path, frame.f_lineno)

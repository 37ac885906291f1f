"""The exporter adapter: one call into ``torch.onnx.export(dynamo=True)`` and
the classification of whatever it raises into a failure stage."""

from __future__ import annotations

import inspect
import logging
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch

from opsweep.catalog.registry import default_opset, remember_exporter_work
from opsweep.errors import ExporterUnavailable
from opsweep.model import Stage

if TYPE_CHECKING:
    import onnx

PUBLIC_PATH = "dynamo"

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_SPACE = re.compile(r"\s+")
#: where an installed package lives on this machine: an error quoting a source file names it
#: from its package on (``torch/onnx/…``), so that the artifact says the same on every machine
_INSTALLED = re.compile(r"(?:[A-Za-z]:)?(?:[/\\][^\s/\\'\"():]+)+[/\\](?:site|dist)-packages[/\\]")
MAX_ERROR_CHARS = 300


def check_dynamo_available() -> None:
    params = inspect.signature(torch.onnx.export).parameters
    if "dynamo" not in params:
        raise ExporterUnavailable(
            f"torch {torch.__version__}: torch.onnx.export has no 'dynamo' parameter, so the "
            "dynamo exporter cannot be selected explicitly. opsweep measures only that exporter "
            "and will not fall back to another; install torch>=2.6.")


def _exporter_error_types() -> tuple[type, type, type]:
    # private torch internals: absent ones mean fallback
    from torch.onnx._internal.exporter import _errors
    return torch.onnx.errors.OnnxExporterError, _errors.TorchExportError, _errors.DispatchError


def error_line(exc: BaseException) -> str:
    """`Type: first line` of the innermost cause: the message that names the
    real problem, free of colour codes, memory addresses and this machine's paths to its
    installed packages."""
    chain = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 20:
        chain.append(chain[-1].__cause__)
    for candidate in reversed(chain):
        text = str(candidate).strip()
        if text:
            break
    else:
        candidate, text = exc, ""
    first = _ANSI.sub("", text.splitlines()[0] if text else "")
    first = _SPACE.sub(" ", _INSTALLED.sub("", _ADDRESS.sub("0x…", first))).strip()
    line = f"{type(candidate).__name__}: {first}" if first else type(candidate).__name__
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


def classify_export_error(exc: BaseException) -> Stage:
    """Map an exception raised by the export call to a failure stage."""
    exporter_error, capture_error, dispatch_error = _exporter_error_types()
    if isinstance(exc, capture_error):
        return Stage.CAPTURE
    if not isinstance(exc, exporter_error):
        return Stage.RAW_ERROR
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, dispatch_error):
            return Stage.NO_TRANSLATION
        cause = cause.__cause__
    return Stage.TRANSLATION_ERROR


def quiet_exporter() -> None:
    """Silence the exporter's per-call logging and warnings in this process."""
    # torch._guards: torch 2.11 and 2.12 log a traceback at ERROR for a guard a failing
    # capture could not build (the capture's own error is what the outcome records)
    for name in ("torch.onnx", "torch.export", "torch._export", "torch.fx", "onnxscript",
                 "onnx_ir", "onnx", "torch._dynamo", "torch._subclasses", "torch._guards"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore")


class BaseExporter:
    """The exporter protocol every target's exporter implements: `export` a module,
    `classify` what the export raised into a failure stage, its `identity` (what the export
    cache keys its exports by), `last_trace` (what its last export's decomposition saw, when
    it can tell) and `watch` (trace later exports). Made by
    :func:`opsweep.engine.exporters.exporter_for` from a target."""

    path = ""  # how the fingerprint names the exporter's route
    #: which exporter's packages key its exports in the export cache (targets.Behaviour.exporter)
    family = "dynamo"
    #: What the last export's decomposition saw (fastpath.Trace), when this exporter can
    #: tell; None: a second target is then measured in full.
    last_trace: Any = None
    #: the translation table an export passes through (None: the exporter's own)
    custom_translation_table: dict[Callable, Any] | None = None
    opset: int = 0
    #: the operators the stock exporter's trace must watch for this exporter to take the
    #: stock export's capture and decomposition (engine.opsets)
    shares: frozenset[str] = frozenset()

    def __init__(self, digest: str = "none", options: Any = None) -> None:
        self.digest = digest  # of the translation table's source ("none": no table)
        self.options = options  # the engine's shortcuts (engine.sweepconfig.Tuning)

    @property
    def identity(self) -> str:
        """What the export cache keys this exporter's exports by: its class, route, opset,
        table and shortcuts."""
        return (f"{type(self).__name__}:{self.path}:opset {self.opset}:table {self.digest}:"
                f"{self.options!r}")

    def export(self, module: torch.nn.Module, args: Sequence[Any], dynamic_shapes=None
               ) -> onnx.ModelProto:
        """Return the ONNX ModelProto, or raise what the exporter raised."""
        raise NotImplementedError

    def classify(self, exc: BaseException) -> Stage:
        """The failure stage of `exc`, raised by `export`."""
        return classify_export_error(exc)

    def watch(self, ops: Iterable[str]) -> None:
        """Trace every later export for the operators `ops` (only the fast path can; the
        others keep `last_trace` None)."""


class Exporter(BaseExporter):
    """The public call, made explicit: ``dynamo=True``, a fixed opset, and an
    optional ``custom_translation_table`` passed through untouched."""

    path = PUBLIC_PATH

    def __init__(self, custom_translation_table: Mapping[Callable, Any] | None = None,
                 opset: int | None = None, digest: str = "none", options: Any = None) -> None:
        check_dynamo_available()
        super().__init__(digest, options)
        self.custom_translation_table = (dict(custom_translation_table)
                                         if custom_translation_table else None)
        self.opset = opset if opset is not None else default_opset()

    def export(self, module: torch.nn.Module, args: Sequence[Any], dynamic_shapes=None
               ) -> onnx.ModelProto:
        """Return the ONNX ModelProto, or raise what the exporter raised."""
        remember_exporter_work()  # the same export, without work it repeats for nothing
        program = torch.onnx.export(
            module, tuple(args), dynamo=True, opset_version=self.opset, verbose=False,
            dynamic_shapes=dynamic_shapes, custom_translation_table=self.custom_translation_table)
        if program is None:  # dynamo=True returns a program or raises
            raise RuntimeError("torch.onnx.export(..., dynamo=True) returned no program")
        return program.model_proto

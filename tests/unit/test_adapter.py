import pytest
import torch
from torch.onnx._internal.exporter import _errors

from opsweep.engine import adapter
from opsweep.errors import ExporterUnavailable
from opsweep.model import Stage


def chain(*excs):
    for outer, inner in zip(excs, excs[1:]):
        outer.__cause__ = inner
    return excs[0]


def test_capture_failure_is_capture():
    exc = chain(_errors.TorchExportError("Failed to export"), RuntimeError("data dependent"))
    assert adapter.classify_export_error(exc) is Stage.CAPTURE


def test_dispatch_error_anywhere_in_the_chain_is_no_translation():
    exc = chain(_errors.ConversionError("Failed to convert"), _errors.ConversionError("node"),
                _errors.DispatchError("No ONNX function found for aten.x"))
    assert adapter.classify_export_error(exc) is Stage.NO_TRANSLATION


def test_other_conversion_errors_are_translation_errors():
    exc = chain(_errors.ConversionError("Failed"), ValueError("bad attribute"))
    assert adapter.classify_export_error(exc) is Stage.TRANSLATION_ERROR


def test_foreign_exceptions_are_raw_errors():
    assert adapter.classify_export_error(TypeError("boom")) is Stage.RAW_ERROR


def test_error_line_takes_the_innermost_message_without_colours_or_addresses():
    exc = chain(_errors.ConversionError("\x1b[96mwrapper\x1b[0m\nmore"),
                ValueError("object at 0x7f12ab34cd56 has no\nsecond line"))
    assert adapter.error_line(exc) == "ValueError: object at 0x… has no"


def test_error_line_names_no_path_of_this_machine():
    """An exporter's error quoting a source file says the same on every machine."""
    exc = RuntimeError("scope: Call:: # /home/u/env/lib/python3.11/site-packages/torch/nn/"
                       "functional.py:2545:0 and /usr/lib/python3/dist-packages/onnx/x.py")
    assert adapter.error_line(exc) == \
        "RuntimeError: scope: Call:: # torch/nn/functional.py:2545:0 and onnx/x.py"
    assert adapter.error_line(ValueError("no path here: a/b")) == "ValueError: no path here: a/b"


def test_error_line_is_bounded():
    assert len(adapter.error_line(ValueError("x" * 5000))) == adapter.MAX_ERROR_CHARS


def test_missing_dynamo_parameter_is_refused_clearly(monkeypatch):
    def old_export(model, args, f=None, opset_version=None):
        pass
    monkeypatch.setattr(torch.onnx, "export", old_export)
    with pytest.raises(ExporterUnavailable, match="no 'dynamo' parameter.*will not fall back"):
        adapter.Exporter()

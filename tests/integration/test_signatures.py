"""A traced function's signature worked out once a process (`remember_signatures`): every
torchlib function keeps the very signature it works out afresh, and the public
`torch.onnx.export(dynamo=True)` gives the same model byte for byte, with or without a
custom translation table of traced functions, whether signatures are remembered or not."""

import importlib.util
from pathlib import Path

import pytest
import torch

from opsweep.catalog.registry import remember_signatures
from opsweep.engine.adapter import Exporter

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _traced():
    """onnxscript's traced-function class and torchlib's traced functions."""
    from onnxscript._internal import values
    from onnxscript.function_libs.torch_lib import ops, registration  # noqa: F401 (registers)
    functions = [f for entry in registration.default_registry.values()
                 for f in (*entry.overloads, *entry.complex)
                 if isinstance(f, values.TracedOnnxFunction)]
    assert len(functions) > 300, len(functions)
    return values.TracedOnnxFunction, functions


def _afresh(traced) -> property:
    """The class's own property, as onnxscript defines it (worked out at every ask)."""
    remember_signatures()
    return property(traced.function_ir.fget.__wrapped__)


def test_each_torchlib_function_remembers_the_signature_it_works_out_afresh(monkeypatch):
    traced, functions = _traced()
    remember_signatures()
    remembered = {id(f): f.function_ir for f in functions}
    assert all(f.function_ir is remembered[id(f)] for f in functions)  # kept, not redone
    monkeypatch.setattr(traced, "function_ir", _afresh(traced))
    assert functions[0].function_ir is not functions[0].function_ir  # afresh at every ask
    different = [f.name for f in functions if repr(f.function_ir) != repr(remembered[id(f)])]
    assert not different, different[:10]


class _Model(torch.nn.Module):
    """Traced torchlib functions (layer_norm, gelu, softmax, atan2, the upsampling) and,
    with `own`, traced functions of a user's own through the example table (fmax, hypot:
    the stock exporter has no translation of theirs)."""

    def __init__(self, own: bool) -> None:
        super().__init__()
        self.own = own

    def forward(self, x, y):
        z = torch.nn.functional.gelu(torch.layer_norm(x, (4,))).softmax(-1) + torch.atan2(x, y)
        up = torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear")
        if self.own:
            z = z + torch.fmax(x, y) * torch.hypot(x, y)
        return z, up.mean((2, 3))


def _table():
    spec = importlib.util.spec_from_file_location(
        "example_table", ROOT / "examples" / "custom_translations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TABLE


@pytest.mark.parametrize("with_table", [False, True], ids=["stock", "example-table"])
def test_the_public_export_is_the_same_model_byte_for_byte(monkeypatch, with_table):
    traced, _ = _traced()
    args = (torch.randn(2, 3, 4, 4), torch.randn(2, 3, 4, 4))
    exporter = Exporter(custom_translation_table=_table() if with_table else None)
    remembered = exporter.export(_Model(with_table), args).SerializeToString()
    with monkeypatch.context() as patch:
        patch.setattr(traced, "function_ir", _afresh(traced))
        afresh = exporter.export(_Model(with_table), args).SerializeToString()
    assert remembered == afresh
    if with_table:  # the table's traced functions translated what the stock one cannot
        with pytest.raises(Exception, match="prims.fmax"):
            Exporter().export(_Model(True), args)

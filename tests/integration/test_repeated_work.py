"""The exporter's repeated work spared (`catalog.registry.remember_exporter_work`): a traced
function's signature worked out once a process, and the CompositeImplicitAutograd operators
looked up again only when that can find something new. Every torchlib function keeps the
very signature it works out afresh; the CIA operators collected are the same, a new
operator is found at once, and one whose library is gone, then defined again, too; the
public `torch.onnx.export(dynamo=True)` gives the same model byte for byte, with or without
a custom translation table of traced functions, with the work spared or done again."""

import copy
import importlib.util
from pathlib import Path

import pytest
import torch

from opsweep.catalog import registry
from opsweep.catalog.registry import remember_exporter_work
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
    remember_exporter_work()
    return property(traced.function_ir.fget.__wrapped__)


def _redo_everything(patch) -> None:
    """onnxscript's and torch's own ways back, for the `patch` context."""
    from torch._export import utils
    traced, _ = _traced()
    patch.setattr(traced, "function_ir", _afresh(traced))
    patch.setattr(utils, "_materialize_cpp_cia_ops", utils._materialize_cpp_cia_ops.__wrapped__)


def test_each_torchlib_function_remembers_the_signature_it_works_out_afresh(monkeypatch):
    traced, functions = _traced()
    remember_exporter_work()
    for f in functions:  # forgotten, whatever this process asked of them before
        vars(f).pop(registry._REMEMBERED, None)
    # the registry's build, then a public export, read each signature's domain alone: no
    # function's signature is worked out
    registry._torchlib_functions.__wrapped__()
    Exporter().export(_Model(False), (torch.randn(2, 3, 4, 4), torch.randn(2, 3, 4, 4)))
    remembered = {id(f): f.function_ir for f in functions}
    assert all(f.function_ir is remembered[id(f)] for f in functions)  # kept, not redone
    worked = [f.name for f in functions if remembered[id(f)]._worked is not None]
    assert not worked, worked[:10]
    # Python's protocols are the signature's own: a copy is made without working it out
    copied = copy.copy(remembered[id(functions[0])])
    assert copied.domain == remembered[id(functions[0])].domain and copied._worked is None
    monkeypatch.setattr(traced, "function_ir", _afresh(traced))
    assert functions[0].function_ir is not functions[0].function_ir  # afresh at every ask
    afresh = {id(f): f.function_ir for f in functions}
    # the domain known without working the signature out is the one worked out, and the
    # signature, once asked for more, is the one worked out afresh
    different = [f.name for f in functions if remembered[id(f)].domain != afresh[id(f)].domain]
    assert not different, different[:10]
    different = [f.name for f in functions if repr(afresh[id(f)]) != repr(remembered[id(f)])]
    assert not different, different[:10]
    assert remembered[id(functions[0])].name == afresh[id(functions[0])].name


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
    args = (torch.randn(2, 3, 4, 4), torch.randn(2, 3, 4, 4))
    exporter = Exporter(custom_translation_table=_table() if with_table else None)
    remembered = exporter.export(_Model(with_table), args).SerializeToString()
    with monkeypatch.context() as patch:
        _redo_everything(patch)
        afresh = exporter.export(_Model(with_table), args).SerializeToString()
    assert remembered == afresh
    if with_table:  # the table's traced functions translated what the stock one cannot
        with pytest.raises(Exception, match="prims.fmax"):
            Exporter().export(_Model(True), args)


def _cia():
    from torch._export.utils import _collect_all_valid_cia_ops
    return _collect_all_valid_cia_ops()


def test_the_cia_operators_are_looked_up_again_only_when_something_can_be_new(monkeypatch):
    """The same operators as torch's own lookup gives; no lookup while nothing changed; a
    new operator's definition, its library's removal and its definition again each seen
    at the next collection."""
    remember_exporter_work()
    before = _cia()
    with monkeypatch.context() as patch:
        from torch._export import utils
        patch.setattr(utils, "_materialize_cpp_cia_ops", utils._materialize_cpp_cia_ops.__wrapped__)
        assert _cia() == before  # torch's own lookup, every time
    asked = []  # torch's lookup asks the dispatcher first: count its lookups
    real = torch._C._dispatch_get_registrations_for_dispatch_key
    monkeypatch.setattr(torch._C, "_dispatch_get_registrations_for_dispatch_key",
                        lambda key: asked.append(key) or real(key))
    assert _cia() == before and asked == []  # nothing new: not looked up again

    def define():
        library = torch.library.Library("opsweep_spared", "FRAGMENT")
        library.define("twice(Tensor x) -> Tensor")
        library.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
        return library
    twice = "opsweep_spared.twice.default"
    assert twice not in _names(before)
    library = define()
    assert twice in _names(_cia()) and asked  # looked up again
    library._destroy()  # its packet leaves the namespace, then the same definition comes
    library = define()  # back: the registrations are those of the last lookup again
    try:
        assert twice in _names(_cia())  # (collected before anything else asks for it)
    finally:
        library._destroy()
    assert twice not in _names(_cia())


def _names(ops) -> set[str]:
    return {str(op) for op in ops}

"""Copy-pasteable Python that reproduces one example's export with the public call, from
the artifact's signature alone (an export depends only on the signature); it imports
opsweep's public names only (`opsweep.example_for`, `opsweep.dynamic_example_for`,
`opsweep.load_translations`)."""

from __future__ import annotations

from collections.abc import Callable

from opsweep.targets import of_name, reached_check

#: (spec, signature, dynamic, translation target or "", title) -> a self-contained script
#: (torch, onnx, onnxruntime and numpy only), or None where the spec's callable cannot be
#: written out; `engine.standalone.Scripts.for_example`, handed in by the command line
Scripts = Callable[[str, str, bool, str, str], "str | None"]


#: the first line of a page snippet that could not be written out without the catalog
NEEDS_CATALOG = "# needs opsweep's catalog: this spec's callable cannot be written out inline\n"


def snippet(spec_name: str, signature: str, *, translations: str = "", dynamic: bool = False) -> str:
    """Copy-pasteable Python that reproduces the export of one example (with a
    custom translation table, or its dynamic re-export, when given; `translations`
    ``torchscript``: with the TorchScript exporter, ``dynamo=False``; ``opsetN``: at opset N,
    ``opset_version=N``)."""
    target = of_name(translations)
    if not target.behaviour.dynamo:
        return _torchscript(spec_name, signature, dynamic)
    translations = target.table
    lines = ["import torch", f"from opsweep import {'dynamic_example_for' if dynamic else 'example_for'}"]
    if translations:
        lines.append("from opsweep import load_translations")
    lines.append("")
    extra = ""
    if dynamic:
        lines.append(f"module, inputs, shapes = dynamic_example_for({spec_name!r}, {signature!r})")
        extra += ", dynamic_shapes=shapes"
    else:
        lines.append(f"module, inputs = example_for({spec_name!r}, {signature!r})")
    if translations:
        lines.append(f"_, table = load_translations({translations!r})")
        extra += ", custom_translation_table=table"
    if target.opset is not None:
        extra += f", opset_version={target.opset}"
    lines.append(f"program = torch.onnx.export(module, inputs, dynamo=True{extra})")
    if target.opset is not None:  # the exporter keeps its own opset where it cannot convert
        lines += reached_check(target.opset, "program.model_proto")
    return "\n".join(lines) + "\n"


def _torchscript(spec_name: str, signature: str, dynamic: bool) -> str:
    """The same example through ``torch.onnx.export(..., dynamo=False)``: the dynamic axis
    as ``dynamic_axes`` on the inputs the dynamo plan makes dynamic, as the sweep does."""
    lines = ["import io", "", "import torch",
             f"from opsweep import {'dynamic_example_for' if dynamic else 'example_for'}", ""]
    extra = ""
    if dynamic:
        lines += [f"module, inputs, shapes = dynamic_example_for({spec_name!r}, {signature!r})",
                  "names = [f'inputs_{k}' for k in range(len(inputs))]",
                  "axes = {n: {0: 'batch'} for n, s in zip(names, shapes[0]) if s}"]
        extra = ", input_names=names, dynamic_axes=axes"
    else:
        lines.append(f"module, inputs = example_for({spec_name!r}, {signature!r})")
    lines.append(f"torch.onnx.export(module, inputs, io.BytesIO(), dynamo=False, opset_version=20{extra})")
    return "\n".join(lines) + "\n"

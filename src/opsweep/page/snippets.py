"""Copy-pasteable Python that reproduces one example's export with the public call, from
the artifact's signature alone (an export depends only on the signature); it imports
opsweep's public names only (`opsweep.example_for`, `opsweep.dynamic_example_for`,
`opsweep.load_translations`)."""

from __future__ import annotations

from collections.abc import Callable

#: (spec, signature, dynamic, translation target or "", title) -> a self-contained script
#: (torch, onnx, onnxruntime and numpy only), or None where the spec's callable cannot be
#: written out; `engine.standalone.Scripts.for_example`, handed in by the command line
Scripts = Callable[[str, str, bool, str, str], "str | None"]


#: the first line of a page snippet that could not be written out without the catalog
NEEDS_CATALOG = "# needs opsweep's catalog: this spec's callable cannot be written out inline\n"


def snippet(spec_name: str, signature: str, *, translations: str = "", dynamic: bool = False) -> str:
    """Copy-pasteable Python that reproduces the export of one example (with a
    custom translation table, or its dynamic re-export, when given)."""
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
    lines.append(f"program = torch.onnx.export(module, inputs, dynamo=True{extra})")
    return "\n".join(lines) + "\n"

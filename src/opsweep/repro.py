"""Reproducing one failing example from the artifact with the public call.

The artifact keeps signatures, never tensor values; the spec and the
signature are enough to rebuild the module and inputs, because an export
depends only on the signature:

    from opsweep.repro import example_for
    module, inputs = example_for("cos", "bf16[2,3]")
    torch.onnx.export(module, inputs, dynamo=True)
"""

from __future__ import annotations

from .errors import SpecError


def example_for(spec_name: str, signature: str, profile: str = "nightly"):
    """The module and inputs of a drawn example with this signature."""
    from .catalog import load_catalog
    from .draw import PROFILES, draw_examples
    from .runner import build_call
    catalog = load_catalog(check_draws=False)
    if spec_name not in catalog.specs:
        raise SpecError(spec_name, "no such spec in the catalog")
    spec = catalog.specs[spec_name]
    for name in ("ci", profile):
        for example in draw_examples(spec, PROFILES[name]):
            if example.signature == signature:
                call = build_call(spec, example)
                return call, tuple(t.clone() for t in call.inputs)
    raise SpecError(spec_name, f"no drawn example has the signature {signature!r}")


def snippet(spec_name: str, signature: str) -> str:
    """Copy-pasteable Python that reproduces the export of one example."""
    return (
        "import torch\n"
        "from opsweep.repro import example_for\n\n"
        f"module, inputs = example_for({spec_name!r}, {signature!r})\n"
        "program = torch.onnx.export(module, inputs, dynamo=True)\n")

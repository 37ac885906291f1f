"""Reproducing one failing example from the artifact with the public call.

The artifact keeps signatures, never tensor values; the spec and the
signature are enough to rebuild the module and inputs, because an export
depends only on the signature:

    from opsweep import example_for
    module, inputs = example_for("cos", "c64[6]")
    torch.onnx.export(module, inputs, dynamo=True)
"""

from __future__ import annotations

from opsweep.catalog.draw import PROFILES, draw_examples
from opsweep.catalog.load import load_catalog
from opsweep.engine.runner import build_call, choose_plan, dynamic_shapes, target_of
from opsweep.errors import SpecError


def _find(spec_name: str, signature: str, profile: str):
    """The spec and the drawn example (ci draws first, then `profile`'s) with this signature."""
    catalog = load_catalog(check_draws=False)
    if spec_name not in catalog.specs:
        raise SpecError(spec_name, "no such spec in the catalog")
    spec = catalog.specs[spec_name]
    for name in ("ci", profile):
        for example in draw_examples(spec, PROFILES[name]):
            if example.signature == signature:
                return spec, example
    raise SpecError(spec_name, f"no drawn example has the signature {signature!r}")


def example_for(spec_name: str, signature: str, profile: str = "nightly"):
    """The module and inputs of a drawn example with this signature."""
    call = build_call(*_find(spec_name, signature, profile))
    return call, tuple(t.clone() for t in call.inputs)


def dynamic_example_for(spec_name: str, signature: str, profile: str = "nightly"):
    """The module, inputs and ``dynamic_shapes`` of the dynamic re-export of the
    example with this signature: its leading dimension dynamic, traced at the
    size the sweep traced it at."""
    spec, example = _find(spec_name, signature, profile)
    target = target_of(spec, build_call(spec, example))  # a module's parameters, as swept
    plan, traced, why = choose_plan(spec, target, example)  # the plan the sweep chose
    if plan is None or traced is None:
        raise SpecError(spec_name, f"{signature!r} has no tensor input whose leading dimension "
                        "eager PyTorch runs at another size" + (f" ({why})" if why else ""))
    return traced, tuple(t.clone() for t in traced.inputs), dynamic_shapes(plan, len(traced.inputs))

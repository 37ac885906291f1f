"""The snippet a regression comment carries reproduces the failure with the public call."""

import pytest
import torch

from opsweep.engine.adapter import quiet_exporter
from opsweep.catalog.draw import PROFILES, draw_examples
from opsweep.errors import SpecError
from opsweep.engine.repro import example_for
from opsweep.page.snippets import snippet

pytestmark = pytest.mark.integration


def test_snippet_rebuilds_the_example_and_the_public_call_fails_the_same_way():
    quiet_exporter()
    from opsweep.catalog.load import load_catalog
    spec = load_catalog(check_draws=False).specs["cdist"]
    signature = draw_examples(spec, PROFILES["ci"])[3].signature
    module, inputs = example_for("cdist", signature)
    assert [tuple(t.shape) for t in inputs] == [tuple(t.shape) for t in module.inputs]
    code = snippet("cdist", signature)
    with pytest.raises(torch.onnx.errors.OnnxExporterError) as info:
        exec(compile(code, "<snippet>", "exec"), {})
    assert "_cdist_forward" in repr(info.value.__cause__.__cause__)


def test_unknown_signature_is_a_clear_error():
    with pytest.raises(SpecError, match="no drawn example has the signature 'f64\\[9,9,9\\]'"):
        example_for("sin", "f64[9,9,9]")

import json
from pathlib import Path

import pytest
import torch

from opsweep import documented, links
from opsweep.errors import DataFileError

ROOT = Path(__file__).resolve().parents[2]


def test_static_parse_of_symbolic_sources_equals_the_live_registry():
    """What the wheel path reads without importing is what the registry holds."""
    package = Path(torch.__file__).parent / "onnx" / "_internal" / "torchscript_exporter"
    files = {str(p): p.read_text("utf-8") for p in package.glob("symbolic_opset*.py")}
    assert documented.from_sources(files) == documented.from_installed()


def test_committed_claims_load_and_name_their_source():
    source, claims = documented.load(ROOT / "docs" / "data" / "documented.json")
    assert "torch-2.8.0" in source
    assert claims["add"] == 9 and claims["argmax"] == 9 and len(claims) > 300


def test_bad_claims_file(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"source": "x", "since_opset": {"a": "nine"}}))
    with pytest.raises(DataFileError, match=r"d\.json at since_opset\.a: 'nine' is not of type"):
        documented.load(tmp_path / "d.json")


def test_links_and_aliases_from_the_installed_torch():
    got = links.compute(["sin", "arccos", "linalg_det", "special_erfcx", "relu", "not_an_op"], "2.13.0+cpu")
    assert got["sin"].url.endswith("/2.13/generated/torch.sin.html")
    assert got["arccos"].alias_of == "acos"
    assert got["linalg_det"].qualname == "torch.linalg.det"
    assert got["special_erfcx"].url.endswith("/2.13/special.html#torch.special.erfcx")
    assert "not_an_op" not in got


def test_link_cache_is_per_version_and_built_when_missing(tmp_path):
    first = links.cached(["sin"], "2.13.0+cpu", tmp_path)
    assert (tmp_path / "doc-links-torch-2.13.0.json").exists()
    assert links.cached(["sin", "cos"], "2.13.0", tmp_path) == first  # read back, not recomputed
    links.cached(["sin"], "2.14.1", tmp_path)
    assert (tmp_path / "doc-links-torch-2.14.1.json").exists()

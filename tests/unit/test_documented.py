import json
from pathlib import Path

import pytest
import torch

from opsweep.page import documented
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


def test_a_project_without_its_own_copy_gets_opsweeps_claims(tmp_path):
    """Installed, the claims ship as opsweep/data; from a source checkout (the Action's steps
    import src/), the checkout's docs/data: either way the same file, never 'no such file'."""
    from pathlib import Path

    from opsweep.page import documented
    found = documented.find(tmp_path / "docs" / "data" / "documented.json")
    repo = Path(__file__).resolve().parents[2] / "docs" / "data" / "documented.json"
    assert found.is_file() and found.read_bytes() == repo.read_bytes()
    own = tmp_path / "mine.json"
    own.write_bytes(repo.read_bytes())
    assert documented.find(own) == own  # a project's own copy comes first

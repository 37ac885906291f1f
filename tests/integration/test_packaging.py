"""The catalog ships inside the wheel, so a non-editable install finds it."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_wheel_contains_the_catalog_schema_and_templates(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("opsweep-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"opsweep/specs/unary.py", "opsweep/specs/excluded.py", "opsweep/schema/artifact.schema.json",
            "opsweep/templates/supported_operators.md.j2", "opsweep/templates/diff.md.j2",
            "opsweep/templates/specs.md.j2", "opsweep/check/report.py",
            "opsweep/cli/check.py"} <= names
    assert sum(n.startswith("opsweep/specs/") for n in names) >= 25

import os

import pytest
from hypothesis import settings

os.environ.setdefault("OPSWEEP_HYP_PROFILE", "ci")
# The suite's own property tests: reproducible, no deadline (torch imports are slow), no database.
settings.register_profile("opsweep-tests", deadline=None, database=None, derandomize=True,
                          max_examples=50)
settings.load_profile("opsweep-tests")


@pytest.fixture
def spec_dir(tmp_path):
    """A directory to write user spec modules into (for --specs)."""
    d = tmp_path / "user_specs"
    d.mkdir()
    return d

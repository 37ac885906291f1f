import os

import pytest
from hypothesis import settings

os.environ.setdefault("OPSWEEP_HYP_PROFILE", "ci")
# Every sweep a test runs measures afresh: an export cache shared between tests would serve
# one test's exports to another that means to measure them (a crash, a hang, a broken
# stack). The export cache's own tests name their caches (tests/*/test_export_cache*.py).
os.environ["OPSWEEP_CACHE"] = "off"
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


def require(available: bool, what: str) -> None:
    """Tests that need a system tool beyond Python and pip: on a developer machine
    without it they are skipped with the reason; under CI (CI=true, where .ci/run
    installs everything) a missing tool is a failure, never a silent skip."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing, and CI must run this test (.ci/run installs it)")
    pytest.skip(f"{what} is not installed here (.ci/run installs it)")

import pytest

from opsweep.engine.adapter import quiet_exporter
from opsweep.catalog.load import load_catalog


@pytest.fixture(scope="session")
def specs():
    """The built-in catalog's specs, loaded once for the integration tests."""
    quiet_exporter()
    return load_catalog(check_draws=False).specs

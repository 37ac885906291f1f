import pytest

from opsweep.engine.adapter import quiet_exporter
from opsweep.catalog.load import load_catalog


@pytest.fixture(scope="session")
def specs():
    """The built-in catalog's specs, loaded once for the integration tests."""
    quiet_exporter()
    return load_catalog(check_draws=False).specs


@pytest.fixture(scope="module")
def outside_project(tmp_path_factory):
    """The module's tests run in an empty directory: a sweep there reads no project
    configuration, so it measures the targets its command line names, not the ones this
    repository's [tool.opsweep] adds (torchscript = true); tests of the engine's reuse,
    crash and resume rules need no third exporter measuring every spec again."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("outside"))
        yield

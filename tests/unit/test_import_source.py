"""A file named on the command line (`opsweep check FILE.py:fn`, `--translations FILE.py:T`)
that lies in a package directory is imported as a member of that package, so it can import
its siblings the usual way (`from . import helpers`), without running the package's
``__init__``."""

from __future__ import annotations

import pytest

from opsweep.engine.translations import SourceImportError, import_source


def _package(where, init: str = "raise RuntimeError('the package __init__ ran')\n"):
    where.mkdir(parents=True)
    (where / "__init__.py").write_text(init)
    (where / "helpers.py").write_text("WIDTH = 7\n")
    (where / "model.py").write_text("from . import helpers\n\nWIDTH = helpers.WIDTH * 2\n")
    return where


def test_a_file_in_a_package_imports_its_siblings(tmp_path):
    where = _package(tmp_path / "models")
    loaded = import_source(str(where / "model.py"), "opsweep_test_pkg_")
    assert loaded.WIDTH == 14
    assert import_source(str(where / "model.py"), "opsweep_test_pkg_") is loaded  # once


def test_two_directories_of_the_same_name_stay_apart(tmp_path):
    first = _package(tmp_path / "a" / "models")
    second = _package(tmp_path / "b" / "models")
    (second / "helpers.py").write_text("WIDTH = 1\n")
    assert import_source(str(first / "model.py"), "opsweep_test_two_").WIDTH == 14
    assert import_source(str(second / "model.py"), "opsweep_test_two_").WIDTH == 2


def test_a_lone_file_has_no_package_and_its_relative_import_fails_named(tmp_path):
    (tmp_path / "model.py").write_text("from . import helpers\n")
    with pytest.raises(SourceImportError, match=r"importing .*model\.py failed: ImportError"):
        import_source(str(tmp_path / "model.py"), "opsweep_test_lone_")

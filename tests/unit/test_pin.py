import shutil
import subprocess

import pytest

from opsweep.cli import main
from opsweep.errors import UsageError
from opsweep.pin import pin_change, read_pin

PYPROJECT = """
[project]
name = "x"
version = "{version}"

[tool.tox.env.proptest_onnx]
deps = ["torch=={torch}", "numpy"]
"""



@pytest.fixture(autouse=True)
def _needs_git():
    from ..conftest import require
    require(shutil.which("git") is not None, "git")


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def commit(repo, torch="2.13.0", version="1"):
    (repo / "pyproject.toml").write_text(PYPROJECT.format(torch=torch, version=version))
    git(repo, "add", "pyproject.toml")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "c")


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path)
    return tmp_path


def test_read_pin():
    assert read_pin(PYPROJECT.format(torch="2.14.1", version="1")) == "2.14.1"
    assert read_pin("[project]\nname='x'\n") is None
    with pytest.raises(UsageError, match="not valid TOML"):
        read_pin("[tool\n")
    with pytest.raises(UsageError, match="pins torch 2 times"):
        read_pin('[tool.tox.env.proptest_onnx]\ndeps=["torch==1", "torch==2"]\n')


def test_only_the_pin_counts(repo):
    commit(repo, version="2")  # an unrelated edit of the same file
    assert not pin_change("HEAD~1", repo=repo).changed
    commit(repo, torch="2.14.1")
    change = pin_change("HEAD~1", repo=repo)
    assert (change.old, change.new, change.changed) == ("2.13.0", "2.14.1", True)


def test_cli_writes_github_output(repo, tmp_path, capsys):
    commit(repo, torch="2.14.1")
    out = tmp_path / "gh_output"
    assert main(["pin-changed", "--base", "HEAD~1", "--repo", str(repo),
                 "--github-output", str(out)]) == 0
    assert out.read_text() == "changed=true\nold=2.13.0\nnew=2.14.1\n"
    assert "2.13.0 -> 2.14.1 (changed)" in capsys.readouterr().out


def test_bad_revision_is_a_clear_error(repo):
    with pytest.raises(UsageError, match="git show nope:pyproject.toml failed"):
        pin_change("nope", repo=repo)

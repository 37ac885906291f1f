import shutil
import subprocess

import pytest

from opsweep.cli.main import main
from opsweep.errors import UsageError
from opsweep.bot.pins import pin_change, read_pins

from ..github.fake_github import read_outputs

PYPROJECT = """
[project]
name = "x"
version = "{version}"

[tool.tox.env.proptest_onnx]
deps = ["torch=={torch}", "hypothesis=={hyp}", "numpy"]
"""



@pytest.fixture(autouse=True)
def _needs_git():
    from ..conftest import require
    require(shutil.which("git") is not None, "git")


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def commit(repo, torch="2.13.0", version="1", hyp="6.170.17"):
    (repo / "pyproject.toml").write_text(PYPROJECT.format(torch=torch, version=version, hyp=hyp))
    git(repo, "add", "pyproject.toml")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "c")


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path)
    return tmp_path


def test_read_pins_torch():
    assert read_pins(PYPROJECT.format(torch="2.14.1", version="1", hyp="1"))["torch"] == "2.14.1"
    assert "torch" not in read_pins("[project]\nname='x'\n")
    with pytest.raises(UsageError, match="not valid TOML"):
        read_pins("[tool\n")
    with pytest.raises(UsageError, match="pins torch more than once"):
        read_pins('[tool.tox.env.proptest_onnx]\ndeps=["torch==1", "torch==2"]\n')


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
    assert read_outputs(out.read_text()) == {"changed": "true", "old": "2.13.0", "new": "2.14.1",
                                             "moved": "torch:2.13.0:2.14.1"}
    assert "2.13.0 -> 2.14.1 (changed; against " in capsys.readouterr().out


def test_bad_revision_is_a_clear_error(repo):
    with pytest.raises(UsageError, match="unknown revision 'nope'"):
        pin_change("nope", repo=repo)


def test_an_unknown_sha_is_an_error_not_an_absent_file(repo):
    with pytest.raises(UsageError, match="unknown revision 'deadbeef"):
        pin_change("deadbeef" * 5, repo=repo, against_merge_base=False)


def test_every_watched_pin_is_read_and_every_move_reported(repo):
    text = '[tool.tox.env.proptest_onnx]\ndeps = ["torch==2.13.0", "Hypothesis==6.1", "onnx>=1", ' \
        '"ONNX_Script == 0.7.1", "numpy"]\n'
    assert read_pins(text) == {"torch": "2.13.0", "hypothesis": "6.1", "onnx-script": "0.7.1"}
    commit(repo, torch="2.14.1", hyp="6.171.0")
    moves = pin_change("HEAD~1", repo=repo).moves
    assert [(m.name, m.old, m.new) for m in moves] == [("hypothesis", "6.170.17", "6.171.0"),
                                                       ("torch", "2.13.0", "2.14.1")]
    commit(repo, torch="2.14.1", hyp="6.172.0")  # only hypothesis moves: still a pin change
    change = pin_change("HEAD~1", repo=repo)
    assert change.changed and [m.name for m in change.moves] == ["hypothesis"]


def test_a_branch_behind_a_bump_on_main_did_not_move_the_pin(repo):
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, version="2")  # the pull request edits something else
    git(repo, "checkout", "-q", "main")
    commit(repo, torch="2.14.1")  # main bumps torch meanwhile
    change = pin_change("main", "feature", repo=repo)
    assert not change.changed, change.moves  # against the merge base, nothing moved
    assert pin_change("main", "feature", repo=repo, against_merge_base=False).changed


def test_the_sweep_env_pins_the_whole_stack_at_the_committed_fingerprint():
    """torch, onnx, onnxruntime, onnxscript and hypothesis are pinned exactly, at the
    versions the committed artifact measured: the README's command reproduces it."""
    from pathlib import Path

    from opsweep.artifact import data as art
    from opsweep.artifact.data import PINS
    from opsweep.bot.pins import fingerprint_mismatches
    root = Path(__file__).parents[2]
    pins = read_pins((root / "pyproject.toml").read_text("utf-8"))
    assert set(PINS) <= set(pins) and "hypothesis" in PINS, pins
    measured = art.load(root / "docs" / "onnx_support_measured.json").fingerprint
    assert fingerprint_mismatches(measured, pins) == []


def test_an_exporter_pin_moving_alone_is_reported_by_name(repo, tmp_path, capsys):
    (repo / "pyproject.toml").write_text(PYPROJECT.format(torch="2.13.0", version="1", hyp="1")
                                         .replace('"numpy"', '"onnxscript==0.7.1", "onnx==1.23.2"'))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "a")
    (repo / "pyproject.toml").write_text(PYPROJECT.format(torch="2.13.0", version="1", hyp="1")
                                         .replace('"numpy"', '"onnxscript==0.7.2", "onnx==1.23.2"'))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "b")
    out = tmp_path / "gh_output"
    assert main(["pin-changed", "--base", "HEAD~1", "--repo", str(repo),
                 "--github-output", str(out)]) == 0
    outputs = read_outputs(out.read_text())
    assert outputs["moved"] == "onnxscript:0.7.1:0.7.2" and outputs["changed"] == "true"
    printed = capsys.readouterr().out
    assert "(unchanged; against" in printed and "other watched pins moved: onnxscript" in printed
    assert "moved: onnxscript 0.7.1 -> 0.7.2" in printed

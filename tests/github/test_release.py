"""Releases that tag themselves (opsweep.bot.release, `opsweep bot release-plan | dist |
release`): the tags, the GitHub Release and its files, made through PyGithub against the
fake GitHub's git references and releases (fake_releases.py), and the sdist and the wheel
built by the checkout's own backend."""

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from opsweep.bot import release as rel
from opsweep.cli.main import main

from ..factories import project_copy

#: the bot's own client, without PyGithub's politeness delays (conftest.py says why)
pytestmark = pytest.mark.usefixtures("no_politeness_delays")

ROOT = Path(__file__).resolve().parents[2]
REPO = "octo/opsweep"
SHA, OTHER = "a" * 40, "b" * 40
NOTES = "## Unreleased\n\n- next\n\n## 1.4.0\n\n- **New:** a thing.\n\n## 1.3.9\n\n- old\n"


@pytest.fixture
def checkout(tmp_path):
    """A checkout at version 1.4.0 with its changelog and two built files."""
    (tmp_path / "src" / "opsweep").mkdir(parents=True)
    (tmp_path / rel.VERSION_FILE).write_text('"""x"""\n__version__ = "1.4.0"\n')
    (tmp_path / rel.CHANGELOG).write_text(NOTES)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "opsweep"\n')
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "opsweep-1.4.0.tar.gz").write_bytes(b"sdist bytes")
    (dist / "opsweep-1.4.0-py3-none-any.whl").write_bytes(b"wheel bytes")
    return tmp_path


def release(checkout, monkeypatch, github, sha=SHA):
    """`opsweep bot release` as the workflow's step runs it: its outputs."""
    out = checkout / f"out-{sha[:4]}"
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    assert main(["bot", "release", "--repo-dir", str(checkout), "--sha", sha,
                 "--dist", str(checkout / "dist")]) == 0
    return out.read_text()


def test_a_new_version_is_tagged_released_with_its_files_and_a_second_run_makes_nothing(
        checkout, monkeypatch, github):
    github.repo(REPO)
    github.set_ref(REPO, "refs/tags/v1.3.9", OTHER)
    github.set_ref(REPO, "refs/tags/v1", OTHER)
    assert "publish<<" in release(checkout, monkeypatch, github)
    assert github.tags(REPO) == {"v1.3.9": OTHER, "v1.4.0": SHA, "v1": SHA}
    (made,) = github.releases[REPO].values()
    assert (made.tag, made.name, made.target) == ("v1.4.0", "v1.4.0", SHA)
    assert made.body == "- **New:** a thing.\n"  # the changelog's section, nothing else
    assert made.assets == {"opsweep-1.4.0.tar.gz": b"sdist bytes",
                           "opsweep-1.4.0-py3-none-any.whl": b"wheel bytes"}
    writes = list(github.writes)
    out = release(checkout, monkeypatch, github)  # the same push again: nothing to do
    assert github.writes == writes and "\nfalse\n" in out
    github.writes.clear()
    release(checkout, monkeypatch, github, sha=OTHER)  # a later push, same version
    assert github.writes == [] and github.tags(REPO)["v1.4.0"] == SHA


def test_a_run_that_stopped_half_way_is_finished_and_a_race_is_no_error(
        checkout, monkeypatch, github):
    """The tag made, the release not (the job died): the next run at that commit makes
    the rest; a tag another run made meanwhile (GitHub's 422) is taken as made."""
    github.repo(REPO)
    github.set_ref(REPO, "refs/tags/v1.4.0", SHA)
    release(checkout, monkeypatch, github)
    assert github.tags(REPO) == {"v1.4.0": SHA, "v1": SHA}
    assert set(github.releases[REPO]["v1.4.0"].assets) == {
        "opsweep-1.4.0.tar.gz", "opsweep-1.4.0-py3-none-any.whl"}
    del github.releases[REPO]["v1.4.0"].assets["opsweep-1.4.0.tar.gz"]
    github.writes.clear()
    assert "\ntrue\n" in release(checkout, monkeypatch, github)
    assert [w[1].rsplit("/", 1)[1] for w in github.writes] == ["assets"]  # the missing file


def test_the_major_tag_never_moves_back_to_an_older_release(checkout, monkeypatch, github):
    github.repo(REPO)
    github.set_ref(REPO, "refs/tags/v1.10.0", OTHER)  # later, though "1.10" < "1.4" as text
    github.set_ref(REPO, "refs/tags/v1", OTHER)
    release(checkout, monkeypatch, github)
    assert github.tags(REPO) == {"v1.10.0": OTHER, "v1": OTHER, "v1.4.0": SHA}


def test_the_fake_answers_as_github_does_for_refs_and_releases(gh, github):
    """What the release relies on of GitHub's answers, through PyGithub."""
    from github import GithubException
    github.repo(REPO)
    repo = gh.get_repo(REPO)
    repo.create_git_ref("refs/tags/v9", SHA)
    with pytest.raises(GithubException) as made:
        repo.create_git_ref("refs/tags/v9", OTHER)
    assert (made.value.status, made.value.data["message"]) == (422, "Reference already exists")
    with pytest.raises(GithubException) as forward:
        repo.get_git_ref("tags/v9").edit(OTHER)
    assert forward.value.data["message"] == "Update is not a fast forward"
    repo.get_git_ref("tags/v9").edit(OTHER, force=True)
    assert [r.ref for r in repo.get_git_matching_refs("tags/v9")] == ["refs/tags/v9"]
    created = repo.create_git_release("v9.0.0", name="v9.0.0", message="m",
                                      target_commitish=SHA)
    assert github.tags(REPO)["v9.0.0"] == SHA  # GitHub makes a missing tag
    with pytest.raises(GithubException) as again:
        repo.create_git_release("v9.0.0", name="x", message="y")
    assert again.value.data["errors"][0]["code"] == "already_exists"
    assert repo.get_release("v9.0.0").id == created.id


@pytest.mark.parametrize("version, changelog, why", [
    ('__version__ = "1.4"', NOTES, "expected one line"),
    ('__version__ = "1.4.0rc1"', NOTES, "expected one line"),
    ('__version__ = "1.4.0"', NOTES.replace("## 1.4.0", "## 1.4.1"), "no section '## 1.4.0'"),
])
def test_no_version_or_no_notes_refuses_before_anything_is_made(
        checkout, monkeypatch, github, capsys, version, changelog, why):
    github.repo(REPO)
    (checkout / rel.VERSION_FILE).write_text(version + "\n")
    (checkout / rel.CHANGELOG).write_text(changelog)
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    assert main(["bot", "release", "--repo", REPO, "--repo-dir", str(checkout), "--sha", SHA,
                 "--dist", str(checkout / "dist")]) != 0
    assert why in capsys.readouterr().err
    assert github.writes == [] and github.tags(REPO) == {}


def test_files_other_than_the_version_s_sdist_and_wheel_are_refused(checkout):
    (checkout / "dist" / "evil.sh").write_text("x")
    with pytest.raises(rel.ReleaseRefused, match="evil.sh"):
        rel.distributions(checkout / "dist", "opsweep", "1.4.0")
    with pytest.raises(rel.ReleaseRefused):
        rel.distributions(checkout / "dist", "opsweep", "1.4.1")


def test_dist_builds_this_checkout_s_sdist_and_wheel(tmp_path):
    """The real build, by the checkout's own backend, of a copy of this project."""
    tree = project_copy(tmp_path / "tree", untracked=True)
    version = rel.read_version(tree)
    sha = "c0ffee" * 6 + "c0ff"
    done = subprocess.run([sys.executable, "-m", "opsweep", "bot", "dist", "--repo-dir",
                           str(tree), "--sha", sha, "--out", str(tmp_path / "dist")],
                          capture_output=True, text=True, check=True)
    assert f"opsweep-{version}.tar.gz" in done.stdout
    sdist, wheel = rel.distributions(tmp_path / "dist", "opsweep", version)
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        assert "opsweep/cli/bot.py" in names and "opsweep/specs/unary.py" in names
        meta = whl.read(f"opsweep-{version}.dist-info/METADATA").decode()
        assert f"Version: {version}" in meta
        record = whl.read("opsweep/_release.py").decode()  # what opsweep init pins callers to
        assert f'COMMIT = "{sha}"' in record and f'VERSION = "{version}"' in record
    with tarfile.open(sdist) as tar:
        assert f"opsweep-{version}/src/opsweep/bot/publish.py" in tar.getnames()

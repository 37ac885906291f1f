"""Pin bumps come from somewhere: `opsweep bot bump` against a local fake of a package
index's JSON API (pytest-httpserver on 127.0.0.1), real git against a local bare
repository and the GitHub fake; and the Renovate rule's patterns against the real
pyproject.toml."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from opsweep.bot import bump
from opsweep.cli.main import main
from opsweep.errors import UsageError
from opsweep.bot.pins import PinMove, read_pins

ROOT = Path(__file__).resolve().parents[2]
REPO = "octo/opsweep-demo"
IDENT = ["-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]

from .fake_github import read_outputs

#: the bot's own client, without PyGithub's politeness delays (conftest.py says why)
pytestmark = pytest.mark.usefixtures("no_politeness_delays")


def releases(*versions, yanked=()):
    return {"info": {"version": versions[-1]},
            "releases": {v: [{"filename": f"x-{v}.whl", "yanked": v in yanked}] for v in versions}}


class FakeIndex:
    def __init__(self, server):
        self.server, self.packages = server, {}
        server.expect_request(re.compile(r"/pypi/[^/]+/json")).respond_with_handler(self.handle)
        self.url = server.url_for("/simple/")  # as pip's index setting reads

    def handle(self, request):
        from werkzeug import Response
        name = request.path.split("/")[2]
        if name not in self.packages:
            return Response(json.dumps({"message": "Not Found"}), status=404)
        return Response(json.dumps(self.packages[name]), content_type="application/json")


@pytest.fixture
def index():
    server = HTTPServer(host="127.0.0.1")
    server.start()
    fake = FakeIndex(server)
    fake.packages.update({
        "torch": releases("2.12.0", "2.13.0", "2.14.1", "2.15.0", "2.15.1", "2.16.0rc1",
                          yanked=("2.15.1",)),
        "hypothesis": releases("6.170.17", "6.171.0"),
        # the rest of the watched stack, current on the index: nothing to move
        "onnx": releases("1.23.2"), "onnxruntime": releases("1.32.0"),
        "onnxscript": releases("0.7.2"),
    })
    yield fake
    server.clear()
    server.stop()


def test_the_newest_final_release_of_every_watched_pin(index):
    base = bump.index_url(index.url)
    assert not base.endswith("/simple")
    moves = bump.behind({"torch": "2.13.0", "hypothesis": "6.170.17"}, base)
    assert moves == [PinMove("hypothesis", "6.170.17", "6.171.0"), PinMove("torch", "2.13.0", "2.15.0")]
    assert bump.behind({"torch": "2.15.0"}, base) == []
    with pytest.raises(UsageError, match="answered 404"):
        bump.behind({"nosuch": "1.0"}, base)


def test_the_index_address_comes_from_configuration_only(monkeypatch, tmp_path):
    for var in ("OPSWEEP_INDEX_URL", "PIP_INDEX_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "none.conf"))
    with pytest.raises(UsageError, match="no package index configured"):
        bump.index_url()
    # pip's own configuration (a config file, as pip reads it)
    (tmp_path / "pip.conf").write_text("[global]\nindex_url = http://127.0.0.1:8/simple/\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "pip.conf"))
    assert bump.index_url() == "http://127.0.0.1:8"
    # the environment, as the CLI reads it once ($OPSWEEP_INDEX_URL first, then $PIP_INDEX_URL)
    from opsweep.cli.settings import Settings
    settings = Settings.read({"PIP_INDEX_URL": "http://127.0.0.1:9/simple"})
    assert bump.index_url(settings.index_url) == "http://127.0.0.1:9"
    settings = Settings.read({"PIP_INDEX_URL": "http://127.0.0.1:9/simple",
                              "OPSWEEP_INDEX_URL": "http://127.0.0.1:7"})
    assert bump.index_url(settings.index_url) == "http://127.0.0.1:7"
    with pytest.raises(UsageError, match="expected http"):
        bump.index_url("file:///etc")


def test_apply_moves_exactly_the_sweep_pins_of_the_real_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    pins = read_pins(text)
    moves = [PinMove("torch", pins["torch"], "9.9.9"), PinMove("hypothesis", pins["hypothesis"], "7.0.0")]
    new = bump.apply(text, moves)
    assert read_pins(new) == {**pins, "torch": "9.9.9", "hypothesis": "7.0.0"}
    changed = [(a, b) for a, b in zip(text.splitlines(), new.splitlines()) if a != b]
    deps = text[text.index("deps = [", text.index("[tool.tox.env.proptest_onnx]")):]
    deps = deps[:deps.index("]") + 1].splitlines()  # the sweep env's deps list, its lines
    assert changed and all(a in deps for a, _ in changed)  # only lines of that one list
    assert '"torch>=2.6"' in new  # [project] dependencies untouched


def test_the_renovate_rule_finds_exactly_the_pins_opsweep_watches():
    text = (ROOT / ".github" / "renovate.json5").read_text()
    strings = [json.loads(s) for s in re.findall(r'^\s*("(?:[^"\\]|\\.)*"),?\s*$', text, re.MULTILINE)
               if "proptest_onnx" in s or "depName" in s]
    table, pin = (re.compile(s.replace("(?<", "(?P<")) for s in strings)  # JS -> Python groups
    pyproject = (ROOT / "pyproject.toml").read_text()
    (block,) = table.findall(pyproject)  # the recursive strategy: the table, then each pin
    found = {m.group("depName").lower(): m.group("currentValue") for m in pin.finditer(block)}
    assert found == read_pins(pyproject) and {"torch", "hypothesis"} <= set(found)
    assert "managerFilePatterns" in text and 'datasourceTemplate: "pypi"' in text


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path):
    from ..conftest import require
    require(shutil.which("git") is not None, "git")
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    # the real pyproject, with its torch pin set back to 2.13.0: a repository that is behind
    text = (ROOT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(
        text.replace(f'"torch=={read_pins(text)["torch"]}"', '"torch==2.13.0"'))
    git(work, "add", ".")
    git(work, *IDENT, "commit", "-qm", "start")
    git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
    return bare, work


def run_bump(github, index, monkeypatch, tmp_path, work):
    out = tmp_path / "gh_output"
    out.write_text("")
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    assert main(["bot", "bump", "--repo", REPO, "--repo-dir", str(work),
                 "--index", index.url]) == 0
    return read_outputs(out.read_text())


def test_bump_opens_one_pull_request_then_updates_it(github, index, monkeypatch, tmp_path, checkout):
    bare, work = checkout
    github.repo(REPO)
    first = run_bump(github, index, monkeypatch, tmp_path, work)
    assert first["changed"] == "true" and first["created"] == "true"
    assert first["moved"] == "hypothesis:6.170.17:6.171.0,torch:2.13.0:2.15.0"
    pushed = read_pins(git(bare, "show", f"{bump.BRANCH}:pyproject.toml"))
    assert pushed["torch"] == "2.15.0" and pushed["hypothesis"] == "6.171.0"
    assert git(bare, "rev-parse", f"{bump.BRANCH}~1") == git(bare, "rev-parse", "main")
    index.packages["torch"] = releases("2.13.0", "2.15.0", "2.15.2")  # a newer release meanwhile
    second = run_bump(github, index, monkeypatch, tmp_path, work)
    assert second["created"] == "false" and second["pr"] == first["pr"]
    (pull,) = github.repo(REPO).pulls.values()
    assert pull["title"] == "Bump hypothesis to 6.171.0, torch to 2.15.2"
    assert "`torch` 2.13.0 → 2.15.2" in pull["body"]
    assert read_pins(git(bare, "show", f"{bump.BRANCH}:pyproject.toml"))["torch"] == "2.15.2"


def test_nothing_behind_opens_nothing(github, index, monkeypatch, tmp_path, checkout):
    _, work = checkout
    github.repo(REPO)
    index.packages.update({"torch": releases("2.13.0"), "hypothesis": releases("6.170.17")})
    assert run_bump(github, index, monkeypatch, tmp_path, work)["changed"] == "false"
    assert github.repo(REPO).pulls == {} and github.writes == []


def run_bump_raw(github, index, monkeypatch, tmp_path, work, *extra):
    out = tmp_path / "gh_output"
    out.write_text("")
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    code = main(["bot", "bump", "--repo", REPO, "--repo-dir", str(work), "--index", index.url,
                 *extra])
    return code, read_outputs(out.read_text())


def test_a_scheduled_bump_targets_the_default_branch_the_api_names(github, index, monkeypatch,
                                                                   tmp_path, checkout):
    """A `schedule` payload has no `repository` object: the workflow's BASE is empty, and
    the bump asks the API for the default branch (here `trunk`, not `main`)."""
    bare, work = checkout
    git(work, "push", "-q", "origin", "HEAD:refs/heads/trunk")
    repo = github.repo(REPO)
    repo.default_branch, repo.branches = "trunk", {"trunk"}
    code, out = run_bump_raw(github, index, monkeypatch, tmp_path, work, "--base", "")
    assert code == 0 and out["created"] == "true" and out["base"] == "trunk"
    (pull,) = repo.pulls.values()
    assert pull["base"] == "trunk"
    assert git(bare, "rev-parse", f"{bump.BRANCH}~1") == git(bare, "rev-parse", "trunk")


def _push_on_bump_branch(bare, tmp_path, name):
    """What lands on the bump branch after the bot opened it: its regenerated commit, a fix."""
    clone = tmp_path / f"clone-{name}"
    git(tmp_path, "clone", "-q", "-b", bump.BRANCH, str(bare), str(clone))
    (clone / f"{name}.txt").write_text(name)
    git(clone, "add", ".")
    git(clone, *IDENT, "commit", "-qm", name)
    git(clone, "push", "-q", "origin", bump.BRANCH)
    return git(clone, "rev-parse", "HEAD")


def _regenerated_on_bump_branch(bare, tmp_path):
    """What publish commits on the bump pull request: the regenerated artifact, made by the
    bot's own commit path (its identity, its trailer, the result files only)."""
    from opsweep.bot.git import commit_files
    clone = tmp_path / "clone-regenerated"
    git(tmp_path, "clone", "-q", "-b", bump.BRANCH, str(bare), str(clone))
    artifact = tmp_path / "measured.json"
    artifact.write_text('{"measured": "anew"}\n')
    return commit_files(clone, {"docs/onnx_support_measured.json": artifact}, bump.BRANCH,
                        git(clone, "rev-parse", "HEAD"), "Regenerate measured ONNX support").sha


def test_an_unchanged_set_of_moves_leaves_the_bump_branch_alone(github, index, monkeypatch,
                                                                tmp_path, checkout):
    """Two daily runs, same releases on the index: the second one leaves the branch (the
    bot's regenerated commit on it) and the pull request as they are; a new release moves
    it again."""
    bare, work = checkout
    github.repo(REPO)
    first = run_bump(github, index, monkeypatch, tmp_path, work)
    assert first["created"] == "true"
    regenerated = _regenerated_on_bump_branch(bare, tmp_path)
    writes = len(github.writes)
    second = run_bump(github, index, monkeypatch, tmp_path, work)
    assert git(bare, "rev-parse", bump.BRANCH) == regenerated  # nothing thrown away
    assert github.writes[writes:] == []  # the pull request not even edited
    assert second["pushed"] == "false" and second["pr"] == first["pr"]
    index.packages["torch"] = releases("2.13.0", "2.15.0", "2.16.0")  # a new release
    third = run_bump(github, index, monkeypatch, tmp_path, work)
    assert third["pushed"] == "true" and third["moved"].endswith("torch:2.13.0:2.16.0")
    assert git(bare, "rev-parse", f"{bump.BRANCH}~1") == git(bare, "rev-parse", "main")


def test_a_repository_that_forbids_actions_to_open_pull_requests_is_told_the_setting(
        github, index, monkeypatch, tmp_path, checkout, capsys):
    bare, work = checkout
    github.repo(REPO).actions_may_create_pulls = False
    code, _ = run_bump_raw(github, index, monkeypatch, tmp_path, work)
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1, err
    assert "Allow GitHub Actions to create and approve pull requests" in err[0]
    assert f"pushed {bump.BRANCH}" in err[0] and "OPSWEEP_APP_CLIENT_ID" in err[0]
    assert git(bare, "rev-parse", bump.BRANCH)  # the branch is there for a person to open
    assert github.repo(REPO).pulls == {}


ADOPTER = Path(__file__).parent / "adopter"


@pytest.fixture
def adopter_checkout(tmp_path):
    """The fixture adopter (torch pinned in requirements/onnx.txt, behind at 2.12.0) after
    `opsweep init`, pushed to a local bare repository."""
    from ..conftest import require
    require(shutil.which("git") is not None, "git")
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "work"
    shutil.copytree(ADOPTER, work)
    assert main(["init", "--repo-dir", str(work), "--catalog", "none", "--specs", "demo_specs",
                 "--action-sha", "a" * 40]) == 0
    git(work, "init", "-q", "-b", "main")
    git(work, "add", ".")
    git(work, *IDENT, "commit", "-qm", "Adopt opsweep")
    git(work, "remote", "add", "origin", str(bare))
    git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
    return bare, work


def test_an_adopter_s_requirements_pin_is_bumped_in_its_own_file(github, index, monkeypatch,
                                                                 tmp_path, adopter_checkout):
    """[tool.opsweep] pins = { requirements = ... }: the bump rewrites that file (its comment
    kept, pyproject.toml untouched) and names it in the pull request."""
    bare, work = adopter_checkout
    github.repo(REPO)
    pins = "requirements/onnx.txt"
    before = git(bare, "show", f"main:{pins}")
    out = run_bump(github, index, monkeypatch, tmp_path, work)
    assert out["created"] == "true" and out["moved"] == "torch:2.12.0:2.15.0"
    after = git(bare, "show", f"{bump.BRANCH}:{pins}")
    assert after == before.replace("torch==2.12.0", "torch==2.15.0")
    assert after.startswith("# the exporter stack this project ships against\n")
    changed = git(bare, "diff", "--name-only", "main", bump.BRANCH).split()
    assert changed == [pins]
    (pull,) = github.repo(REPO).pulls.values()
    assert pull["title"] == "Bump torch to 2.15.0"
    assert f"Pins of `{pins}`" in pull["body"] and "`torch` 2.12.0 → 2.15.0" in pull["body"]
    # the next day, nothing new: the branch and the pull request are left alone
    writes = len(github.writes)
    again = run_bump(github, index, monkeypatch, tmp_path, work)
    assert again["pushed"] == "false" and github.writes[writes:] == []


def test_an_adopter_s_pin_that_is_not_exact_is_refused_in_one_line(github, index, monkeypatch,
                                                                   tmp_path, adopter_checkout,
                                                                   capsys):
    bare, work = adopter_checkout
    github.repo(REPO)
    pins = work / "requirements" / "onnx.txt"
    pins.write_text(pins.read_text() + "onnx>=1.17\n")
    git(work, *IDENT, "commit", "-qam", "onnx, loosely")
    git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
    code, out = run_bump_raw(github, index, monkeypatch, tmp_path, work)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "requirements/onnx.txt" in err[0] and "'onnx>=1.17', not an exact pin" in err[0]
    assert github.repo(REPO).pulls == {} and "changed" not in out
    assert not git(bare, "branch", "--list", bump.BRANCH)


def _seed(bare, tmp_path, moves, *, apart: bool):
    """A writer pushes the bump branch ahead of the bot: tomorrow's pin moves (the index is
    public), committed under the bot's own git identity, and their own code -- in a commit
    of its own (`apart`) or in the same one."""
    from opsweep.bot.git import BOT_EMAIL, BOT_NAME
    clone = tmp_path / "writer"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    as_bot = ["-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}"]
    text = (clone / "pyproject.toml").read_text()
    (clone / "pyproject.toml").write_text(bump.apply(text, moves))
    if apart:
        git(clone, *as_bot, "commit", "-qam", bump.describe(moves)[0])
    (clone / "payload.py").write_text("import os  # the writer's code, bound for main\n")
    git(clone, "add", ".")
    git(clone, *as_bot, "commit", "-qm", bump.describe(moves)[0])
    git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{bump.BRANCH}")
    return git(clone, "rev-parse", "HEAD")


@pytest.mark.parametrize("apart", [True, False])
def test_a_bump_branch_a_writer_seeded_is_rebuilt_from_the_base(github, index, monkeypatch,
                                                                 tmp_path, checkout, apart):
    """Issue 48, finding 3 (failed before the fix: the seeded branch "already pinned exactly
    these moves", so the bot kept it and opened its pull request over the writer's code).
    The bot keeps a bump branch only when every commit after its base is its own, judged by
    content, never by the git identity a writer can forge."""
    bare, work = checkout
    github.repo(REPO)
    moves = [PinMove("hypothesis", "6.170.17", "6.171.0"), PinMove("torch", "2.13.0", "2.15.0")]
    seeded = _seed(bare, tmp_path, moves, apart=apart)
    out = run_bump(github, index, monkeypatch, tmp_path, work)
    assert out["pushed"] == "true" and out["created"] == "true"
    tip = git(bare, "rev-parse", bump.BRANCH)
    assert tip != seeded and git(bare, "rev-parse", f"{tip}~1") == git(bare, "rev-parse", "main")
    assert git(bare, "diff", "--name-only", "main", tip).split() == ["pyproject.toml"]
    assert read_pins(git(bare, "show", f"{tip}:pyproject.toml"))["torch"] == "2.15.0"


def test_a_writer_s_commit_on_the_open_bump_pull_request_is_not_kept(github, index,
                                                                      monkeypatch, tmp_path,
                                                                      checkout):
    """The bot's pull request is open, its regenerated commit on it; a writer pushes their
    own commit on top (failed before the fix: kept as "a fix"). The next run rebuilds the
    branch from the base: the bot's pull request carries the bot's commits only."""
    bare, work = checkout
    github.repo(REPO)
    first = run_bump(github, index, monkeypatch, tmp_path, work)
    _regenerated_on_bump_branch(bare, tmp_path)
    _push_on_bump_branch(bare, tmp_path, "payload")
    second = run_bump(github, index, monkeypatch, tmp_path, work)
    assert second["pushed"] == "true" and second["pr"] == first["pr"]
    tip = git(bare, "rev-parse", bump.BRANCH)
    assert git(bare, "rev-parse", f"{tip}~1") == git(bare, "rev-parse", "main")
    assert git(bare, "diff", "--name-only", "main", tip).split() == ["pyproject.toml"]

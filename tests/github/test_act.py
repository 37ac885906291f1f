"""End to end: the real workflow files under nektos/act, for each trigger.

Jobs run self-hosted on this machine; actions/checkout, upload-artifact and
download-artifact are replaced by local stand-ins (a local bare repository is
the origin, a directory holds one run's artifacts); GITHUB_API_URL points at the
stateful fake of GitHub's REST API, and each run gets the token GitHub would
give it (read-only for a fork's or Dependabot's pull_request run). A measuring
run (onnx-measure, onnx-command) is followed by onnx-publish with the
workflow_run payload GitHub sends. The runner's environment provides the test
venv (OPSWEEP_PYTHON_ENV) and a tiny catalog (OPSWEEP_SWEEP_ARGS); the
workflow files are the production ones, unmodified. Three sweeps in all: one
pull-request measurement, shared by the publish scenarios (and its one
same-repository publish by the scenarios that go on from the bot's commit), one
accepted /regen-onnx and one push to main. All traffic stays on 127.0.0.1.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from opsweep.bot.github import MARKER
from opsweep.bot.git import TRAILER
from opsweep.bot.pins import read_pins
from opsweep.cli.main import main as cli_main

from ..factories import project_copy
from .fake_github import FakeGitHub, display_title

ROOT = Path(__file__).resolve().parents[2]
#: the torch the feature branch bumps to: the installed one, which measures it under act
INSTALLED = metadata.version("torch").split("+", 1)[0]
STANDINS = Path(__file__).parent / "standins"
REPO = "octo/demo"
PR = 12
ONLY = "--only sin relu cdist --jobs 0"
PINNED = {  # the remote actions the workflows use, by the exact ref they pin
    "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1": "checkout",
    "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f": "upload-artifact",
    "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c": "download-artifact",
    "actions/create-github-app-token@1b10c78c7865c340bc4f6099eb2f838309f1e8c3":
        "create-github-app-token",
    "actions/cache@55cc8345863c7cc4c66a329aec7e433d2d1c52a9": "cache",  # restore/, save/
}
pytestmark = pytest.mark.integration



def _require_git():
    from ..conftest import require
    require(shutil.which("git") is not None, "git")


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


IDENT = ["-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]


def _without_models(tree: Path) -> None:
    """The copy measures a tiny catalog: its [tool.opsweep] models (opsweep's scoreboard,
    the whole public model set) left out, or each workflow's assemble step would check
    every model of the set (minutes; the models step has tests of its own)."""
    path = tree / "pyproject.toml"
    text = path.read_text()
    new = re.sub(r"^models = \[\n.*?^\]\n", "", text, count=1, flags=re.M | re.S)
    assert "models" not in tomllib.loads(new)["tool"]["opsweep"], "models left in the copy"
    path.write_text(new)


def _set_pin(tree: Path, pin: str) -> None:
    path = tree / "pyproject.toml"
    text = path.read_text()
    new = re.sub(r'"torch==[^"]+"', f'"torch=={pin}"', text, count=1)
    assert new != text or f'"torch=={pin}"' in text, "the fixture could not move the torch pin"
    path.write_text(new)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A bare origin holding this project at `main` (pin 2.12.0, an artifact measured on
    2.12.0) and a `feature` branch that bumps the pin to the installed torch."""
    _require_git()
    top = tmp_path_factory.mktemp("e2e")
    tree = project_copy(top / "work")
    _without_models(tree)
    artifact = tree / "docs" / "onnx_support_measured.json"
    artifact.unlink()  # the fixture's own small artifact, measured below
    # the CLI in this process (in the tree, as a project runs it): what the fixture needs
    # is the artifact and its pages, not a process of their own (each costs ~5 s of imports)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tree)
        assert cli_main(["sweep", *ONLY.split(), "--no-reuse", "--quiet",
                         "--out", str(artifact)]) == 0
        data = json.loads(artifact.read_text())
        data["fingerprint"]["torch"] = "2.12.0"
        artifact.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        _set_pin(tree, "2.12.0")
        # its pages are the render of that artifact, as a project's are: smaller than
        # opsweep's own (each job of every act run copies the tree, twice), and a
        # regeneration's commit holds what it changed, not the whole site of the catalog's
        # artifact it replaced
        assert cli_main(["render", "--onnx-report", str(artifact), "--history", "docs/history",
                         "--torch-version", "2.12.0"]) == 0
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, *IDENT, "commit", "-qm", "base")
    base = git(tree, "rev-parse", "HEAD")
    git(tree, "checkout", "-q", "-b", "feature")
    _set_pin(tree, INSTALLED)
    git(tree, *IDENT, "commit", "-qam", f"Bump torch to {INSTALLED}")
    head = git(tree, "rev-parse", "HEAD")
    git(tree, "checkout", "-q", "main")  # the default branch: what privileged runs execute
    TREE[:] = [tree]
    git(tree, "remote", "add", "origin", f"https://github.com/{REPO}.git")  # what act reads
    return {"tree": tree, "base": base, "head": head}


def fresh_origin(built, where):
    where.mkdir(parents=True, exist_ok=True)
    origin = where / "origin.git"
    git(where, "clone", "-q", "--bare", str(built["tree"]), str(origin))
    git(origin, "symbolic-ref", "HEAD", "refs/heads/main")
    return origin


def fake_for(httpserver, built, head_repo=REPO):
    github = FakeGitHub(httpserver)
    github.add_pull(REPO, PR, ref="feature", sha=built["head"], head_repo=head_repo,
                    base_sha=built["base"])
    github.repo(REPO).permissions.update({"maintainer": "admin", "reader": "read"})
    return github


def act(origin, fake, event_name, payload, run_dir, workflow, artifacts, token="fake-token",
        variables=(), check=True):
    run_dir.mkdir(parents=True, exist_ok=True)
    event = run_dir / "event.json"
    event.write_text(json.dumps(payload))
    artifacts.mkdir(parents=True, exist_ok=True)
    cmd = [shutil.which("act") or str(Path(sys.executable).with_name("act")), event_name,
           "-e", str(event), "-W", f".github/workflows/{workflow}.yml",
           "-P", "ubuntu-latest=-self-hosted", "--no-skip-checkout",
           "--artifact-server-addr", "127.0.0.1", "--cache-server-addr", "127.0.0.1",
           "-s", f"GITHUB_TOKEN={token}",
           "--env", f"GITHUB_API_URL={fake.base}", "--env", f"E2E_ORIGIN={origin}",
           # the runner's own API server: the bot's requests unpaced (docs/github_action.md)
           "--env", "OPSWEEP_GITHUB_PACING=off",
           "--env", f"E2E_ARTIFACTS={artifacts}",
           "--env", f"OPSWEEP_PYTHON_ENV={sys.prefix}", "--env", f"OPSWEEP_SWEEP_ARGS={ONLY}"]
    for ref, name in PINNED.items():
        cmd += ["--local-repository", f"{ref}={STANDINS / name}"]
    for variable in variables:
        cmd += ["--var", variable]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    result = subprocess.run(cmd, cwd=TREE[0], capture_output=True, text=True, timeout=900,
                            env=env, check=False)
    (run_dir / "act.log").write_text(result.stdout + result.stderr)
    assert result.returncode == 0 or not check, (run_dir / "act.log").read_text()[-6000:]
    return result.stdout + result.stderr


TREE: list[Path] = []  # the working tree act reads the workflow files from (set by `built`)


def pull_request_event(built, head_repo=REPO, actor="dev", sha=None):
    sha = sha or built["head"]
    return {"action": "synchronize", "number": PR, "sender": {"login": actor},
            "pull_request": {"number": PR, "head": {"sha": sha, "ref": "feature",
                                                    "repo": {"full_name": head_repo}},
                             "base": {"sha": built["base"], "ref": "main"}},
            "repository": {"full_name": REPO}}


def workflow_run_event(built, event, sha, head_repo=REPO, conclusion="success", branch="feature",
                       title=f"PR {PR}"):
    """`title`: the run's display_title (an onnx-command run's is its run-name, see
    `command_title`)."""
    return {"action": "completed", "repository": {"full_name": REPO},
            "workflow_run": {"id": 4242, "event": event, "head_sha": sha, "head_branch": branch,
                             "display_title": title, "path": ".github/workflows/" + (
                                 "onnx-command.yml" if event == "issue_comment"
                                 else "onnx-measure.yml"),
                             "conclusion": conclusion, "pull_requests": [],
                             "html_url": "https://example.invalid/run/4242",
                             "head_repository": {"full_name": head_repo}}}


@pytest.fixture(scope="module")
def measured(built, tmp_path_factory):
    """One pull-request measurement with a read-only token (as a fork's or Dependabot's
    run gets), whose artifacts the publish scenarios share."""
    from pytest_httpserver import HTTPServer
    where = tmp_path_factory.mktemp("measured")
    origin = fresh_origin(built, where)
    server = HTTPServer(host="127.0.0.1")
    server.start()
    try:
        fake = fake_for(server, built)
        log = act(origin, fake, "pull_request", pull_request_event(built), where / "run",
                  "onnx-measure", where / "artifacts", token="read-token")
        assert fake.writes == [] and fake.refused == []  # the measuring run never writes
    finally:
        server.clear()
        server.stop()
    return {"artifacts": where / "artifacts", "log": log}


def publish_run(built, measured, fake, tmp_path, event="pull_request", head_repo=REPO, sha=None):
    origin = fresh_origin(built, tmp_path)
    artifacts = tmp_path / "artifacts"
    shutil.copytree(measured["artifacts"], artifacts)
    log = act(origin, fake, "workflow_run",
              workflow_run_event(built, event, sha or built["head"], head_repo), tmp_path / "run",
              "onnx-publish", artifacts)
    return origin, log


@pytest.fixture(scope="module")
def published(built, measured, tmp_path_factory):
    """One onnx-publish of the shared measurement for a same-repository pull request opened
    by Dependabot (its pull_request run had a read-only token: `measured`; neither the
    workflows nor the bot read a pull request's author), with a write token. The scenarios
    that go on from the bot's commit start from copies of its origin and of the fake's state
    (`after_publish`), so each still runs alone and in any order."""
    from pytest_httpserver import HTTPServer
    where = tmp_path_factory.mktemp("published")
    server = HTTPServer(host="127.0.0.1")
    server.start()
    try:
        fake = fake_for(server, built)
        fake.repo(REPO).pulls[PR]["user"] = "dependabot[bot]"
        origin, log = publish_run(built, measured, fake, where)
    finally:
        server.clear()
        server.stop()
    return {"origin": origin, "log": log, "where": where, "fake": fake.state()}


def after_publish(published, fake, where):
    """`fake` (its branch protection kept: no run reads it) given the state the shared
    publish left (comments, reactions, statuses), and a copy of that publish's origin (the
    bot's commit on `feature`) under `where`."""
    fake.take_state(published["fake"])
    where.mkdir(parents=True, exist_ok=True)
    origin = where / "origin.git"
    shutil.copytree(published["origin"], origin, symlinks=True)
    return origin


def marked(fake):
    return [c for c in fake.comments(REPO, PR) if MARKER in c.body]


def test_measuring_run_uploads_data_only(measured):
    artifacts = measured["artifacts"]
    assert json.loads((artifacts / "onnx-request" / "request.json").read_text())["pr"] == PR
    result = artifacts / "onnx-result" / "docs"
    committed = json.loads((result / "onnx_support_measured.json").read_text())
    assert set(committed["specs"]) == {"sin", "relu", "cdist"} and "shard" not in committed
    assert (result / "supported_operators.md").is_file()
    assert (result / "operators" / "sin.md").is_file() and (result / "specs" / "index.md").is_file()
    assert (result / "dtypes.md").is_file()
    assert len(list((result / "history").glob(f"torch-{INSTALLED}+*.json"))) == 1
    checkouts = (artifacts.parent / "checkouts.log").read_text()
    assert "persist=true" not in checkouts
    # each sweep job restored its shard's export cache (none yet) and saved what it exported,
    # under the stack's key and the shard (the stand-in keeps what GitHub's cache service would)
    saved = sorted((artifacts / ".actions-cache").iterdir())
    assert [re.sub(r"^opsweep-export-[0-9a-f]{16}-(shard-\d-of-2)-\d+-\d+$", r"\1", p.name)
            for p in saved] == ["shard-1-of-2", "shard-2-of-2"], saved
    assert all(list(p.glob("*/*.export")) for p in saved)


def test_same_repository_bump_is_commented_and_committed(built, published, httpserver, tmp_path):
    """Also Dependabot's bump (the shared publish's pull request is Dependabot's): its
    pull_request run measured read-only, the workflow_run that follows publishes."""
    fake = FakeGitHub(httpserver)
    origin = after_publish(published, fake, tmp_path)
    log = published["log"]
    # the privileged half neither restores nor saves the export cache
    assert "Restore the export cache" not in log and "Save the export cache" not in log
    (comment,) = marked(fake)
    # the sweep jobs' cache counts reach the comment: torch moved, every export made anew
    assert "- `torch` moved: every stage re-measured (" in comment.body
    assert "; exports: 0 from the export cache, " in comment.body
    assert f"torch 2.12.0 → {INSTALLED}" in comment.body and "Committed the regenerated" in comment.body
    assert TRAILER in git(origin, "log", "-1", "--format=%B", "feature")
    committed = json.loads(git(origin, "show", "feature:docs/onnx_support_measured.json"))
    assert committed["fingerprint"]["torch"].startswith(INSTALLED)
    # the project's configuration measures the torchscript exporter and the opset targets
    # beside stock (the base has torchscript too) and the workflow adds its translation
    # table (the base has not)
    targets = set(committed["targets"])
    assert targets == {"examples/custom_translations.py:TABLE", "torchscript", "opset18",
                       "opset28"}
    assert "target examples/custom_translations.py:TABLE added" in comment.body
    assert "target torchscript added" not in comment.body
    (name,) = [n for n in git(origin, "ls-tree", "--name-only", "feature", "docs/history/").split()
               if n.startswith(f"docs/history/torch-{INSTALLED}+")]
    record = json.loads(git(origin, "show", f"feature:{name}"))
    assert set(record["targets"]) == {"stock", *targets}
    assert f"/{REPO}/blob/feature/docs/history.md" in comment.body


def test_fork_bump_is_commented_never_pushed_and_its_code_never_checked_out(
        built, measured, httpserver, tmp_path):
    fake = fake_for(httpserver, built, head_repo="someone/demo-fork")
    origin, _ = publish_run(built, measured, fake, tmp_path, head_repo="someone/demo-fork")
    (comment,) = marked(fake)
    assert "lives in a fork" in comment.body
    assert git(origin, "rev-parse", "feature") == built["head"]
    checkouts = (tmp_path / "checkouts.log").read_text().splitlines()
    # the default branch only: once to reach the action, once as the action's data
    assert [line.split()[2] for line in checkouts if "onnx-publish" in line] == [
        "base", ".opsweep/base"]
    assert {m for m, _, _ in fake.writes} == {"POST"}
    assert all("/comments" in p or "/statuses/" in p for _, p, _ in fake.writes)
    assert fake.repo(REPO).statuses[built["head"]]["onnx-support"]["state"] == "success"


def test_a_push_during_the_sweep_publishes_nothing_stale(built, measured, httpserver, tmp_path):
    fake = fake_for(httpserver, built)
    fake.repo(REPO).pulls[PR]["sha"] = "e" * 40  # the head moved while the sweep ran
    origin, log = publish_run(built, measured, fake, tmp_path)
    assert "publish=false" in log or "no open pull request has head" in log
    assert not marked(fake) and TRAILER not in git(origin, "log", "-1", "--format=%B", "feature")


def comment_event(body, login, comment_id=0):
    return {"action": "created", "issue": {"number": PR, "pull_request": {"url": "x"}},
            "comment": {"id": comment_id, "body": body, "user": {"login": login, "type": "User"}},
            "repository": {"full_name": REPO}}


def command_title(event):
    """The display_title GitHub gives the onnx-command run of `event`: its run-name."""
    return display_title(ROOT / ".github" / "workflows" / "onnx-command.yml", event,
                         default=f"PR {PR}")


def command_run(built, fake, tmp_path, body, login):
    origin = fresh_origin(built, tmp_path)
    comment = fake.add_comment(REPO, PR, body, login)
    log = act(origin, fake, "issue_comment", comment_event(body, login, comment.id),
              tmp_path / "run", "onnx-command", tmp_path / "artifacts")
    return origin, comment, log


def test_regen_refused_for_a_reader_and_for_a_stale_sha(built, httpserver, tmp_path):
    fake = fake_for(httpserver, built)
    _, reader, _ = command_run(built, fake, tmp_path / "a", "/regen-onnx", "reader")
    assert reader.reactions == [("confused", "github-actions[bot]")]
    assert any("has read permission" in c.body for c in fake.comments(REPO, PR))
    _, stale, _ = command_run(built, fake, tmp_path / "b", "/Regen-Onnx 1234567", "maintainer")
    assert stale.reactions == [("confused", "github-actions[bot]")]
    assert any("is not the head any more" in c.body for c in fake.comments(REPO, PR))
    assert not marked(fake) and not (tmp_path / "b" / "artifacts" / "onnx-request").exists()


def test_a_comment_during_a_pending_sweep_starts_nothing(built, httpserver, tmp_path):
    fake = fake_for(httpserver, built)
    _, comment, log = command_run(built, fake, tmp_path, "LGTM, thanks", "maintainer")
    assert fake.writes == [] and comment.reactions == []
    assert "Parse, authorise" not in log and "onnx-sweep" not in log  # no job started


def test_regen_accepted_measures_then_publishes_with_eyes_then_rocket(built, httpserver, tmp_path):
    fake = fake_for(httpserver, built)
    origin, comment, _ = command_run(built, fake, tmp_path, f"/regen-onnx {built['head'][:10]}",
                                     "maintainer")
    assert [r for r, _ in comment.reactions] == ["eyes"]
    request = json.loads((tmp_path / "artifacts" / "onnx-request" / "request.json").read_text())
    assert request["sha"] == built["head"] and request["comment_id"] == comment.id
    shutil.rmtree(tmp_path / "run")
    title = command_title(comment_event(comment.body, comment.login, comment.id))
    act(origin, fake, "workflow_run", workflow_run_event(built, "issue_comment", built["base"],
                                                         branch="main", title=title),
        tmp_path / "run", "onnx-publish", tmp_path / "artifacts")
    assert [r for r, _ in comment.reactions] == ["rocket"]
    assert len(marked(fake)) == 1
    assert TRAILER in git(origin, "log", "-1", "--format=%B", "feature")


def test_the_bot_s_own_commit_does_not_trigger_another_sweep(built, published, httpserver,
                                                            tmp_path):
    fake = FakeGitHub(httpserver)
    origin = after_publish(published, fake, tmp_path / "first")
    bot_head = git(origin, "rev-parse", "feature")
    log = act(origin, fake, "pull_request", pull_request_event(built, sha=bot_head),
              tmp_path / "second", "onnx-measure", tmp_path / "second" / "artifacts",
              token="read-token")
    assert "run=false" in log and not (tmp_path / "second" / "artifacts" / "onnx-shard-1").exists()
    assert git(origin, "rev-parse", "feature") == bot_head


def test_the_scheduled_bump_opens_one_pull_request(built, httpserver, tmp_path):
    from pytest_httpserver import HTTPServer

    from .test_bump import FakeIndex, releases
    server = HTTPServer(host="127.0.0.1")
    server.start()
    try:
        index = FakeIndex(server)
        index.packages.update({"torch": releases("2.12.0", "2.13.0"),
                               "hypothesis": releases("6.170.17")})
        # the rest of the watched stack, current on the index: nothing else moves
        index.packages.update({name: releases(version) for name, version in read_pins(
            (ROOT / "pyproject.toml").read_text()).items() if name not in index.packages})
        fake = FakeGitHub(httpserver)
        fake.repo(REPO)
        origin = fresh_origin(built, tmp_path)
        # what GitHub sends for a schedule: no `repository` object (so no default_branch)
        payload = {"schedule": "17 5 * * *", "workflow": ".github/workflows/onnx-bump.yml"}
        act(origin, fake, "schedule", payload, tmp_path / "run", "onnx-bump",
            tmp_path / "artifacts", variables=[f"OPSWEEP_INDEX_URL={index.url}"])
    finally:
        server.clear()
        server.stop()
    (pull,) = fake.repo(REPO).pulls.values()
    assert pull["title"] == "Bump torch to 2.13.0" and pull["ref"] == "opsweep/bump-pins"
    assert '"torch==2.13.0"' in git(origin, "show", "opsweep/bump-pins:pyproject.toml")
    assert git(origin, "rev-parse", "opsweep/bump-pins~1") == built["base"]


def test_regen_with_nothing_to_do_answers_instead_of_keeping_eyes(built, published, httpserver,
                                                                  tmp_path):
    """After the bot's commit the artifact already describes the pins: the command says so."""
    fake = FakeGitHub(httpserver)
    origin = after_publish(published, fake, tmp_path / "first")
    fake.repo(REPO).pulls[PR]["sha"] = git(origin, "rev-parse", "feature")
    comment = fake.add_comment(REPO, PR, "/regen-onnx", "maintainer")
    act(origin, fake, "issue_comment", comment_event("/regen-onnx", "maintainer", comment.id),
        tmp_path / "run", "onnx-command", tmp_path / "artifacts")
    assert comment.reactions == [("+1", "github-actions[bot]")]
    assert any(f"Nothing to do: `artifact already measured torch {INSTALLED} at ci" in c.body
               for c in fake.comments(REPO, PR))
    assert not (tmp_path / "artifacts" / "onnx-request").exists()


# --- issue 30: where the loop from a new release to a merged page stopped silently ------

CHECK = "onnx-support"


def _state(fake, sha):
    return fake.repo(REPO).statuses.get(sha, {}).get(CHECK, {}).get("state")


def test_a_bump_cannot_merge_green_without_its_measurement(built, measured, published,
                                                           httpserver, tmp_path):
    """Branch protection requires onnx-support: unmeasured, the head cannot merge; the
    publish reports it on the measured head and on the bot's own commit (pushed with
    GITHUB_TOKEN, which starts no run that could); a failed measurement blocks it."""
    fake = fake_for(httpserver, built)
    fake.repo(REPO).required = [CHECK]
    assert fake.merge_blocked(REPO, PR) == [f'Required status check "{CHECK}" is expected.']
    origin = after_publish(published, fake, tmp_path / "ok")
    bot_commit = git(origin, "rev-parse", "feature")
    assert _state(fake, built["head"]) == "success" and _state(fake, bot_commit) == "success"
    fake.repo(REPO).pulls[PR]["sha"] = bot_commit  # GitHub moves the pull request's head
    assert fake.merge_blocked(REPO, PR) == []
    failing = fake  # one fake per server: start its state over for the failed run
    failing.repo(REPO).statuses.clear()
    failing.repo(REPO).pulls[PR]["sha"] = built["head"]
    act(fresh_origin(built, tmp_path / "failed"), failing, "workflow_run",
        workflow_run_event(built, "pull_request", built["head"], conclusion="failure"),
        tmp_path / "failed" / "run", "onnx-publish", measured["artifacts"])
    assert _state(failing, built["head"]) == "failure"
    assert failing.merge_blocked(REPO, PR) == [f'Required status check "{CHECK}" is failing.']


def test_a_pull_request_that_moves_no_pin_gets_a_green_check(built, httpserver, tmp_path):
    """onnx-measure runs on every pull request (no paths filter), decides there is nothing
    to measure, and the required check reports success instead of staying pending."""
    fake = fake_for(httpserver, built)
    fake.repo(REPO).pulls[PR]["sha"] = built["base"]
    fake.repo(REPO).required = [CHECK]
    origin = fresh_origin(built, tmp_path)
    act(origin, fake, "pull_request", pull_request_event(built, sha=built["base"]),
        tmp_path / "measure", "onnx-measure", tmp_path / "artifacts", token="read-token")
    assert not (tmp_path / "artifacts" / "onnx-request").exists()  # nothing measured
    act(origin, fake, "workflow_run", workflow_run_event(built, "pull_request", built["base"]),
        tmp_path / "publish", "onnx-publish", tmp_path / "artifacts")
    assert _state(fake, built["base"]) == "success" and fake.merge_blocked(REPO, PR) == []


def test_a_cancelled_command_gets_its_final_reaction_and_a_reply(built, httpserver, tmp_path):
    """A cancelled run is neither success nor failure: it still ends the command."""
    fake = fake_for(httpserver, built)
    comment = fake.add_comment(REPO, PR, "/regen-onnx", "maintainer")
    comment.reactions.append(("eyes", "github-actions[bot]"))
    comment.reaction_ids.append(1)
    artifacts = tmp_path / "artifacts"
    (artifacts / "onnx-request").mkdir(parents=True)
    (artifacts / "onnx-request" / "request.json").write_text(json.dumps(
        {"event": "issue_comment", "pr": PR, "sha": built["head"], "profile": "ci",
         "comment_id": comment.id}))
    act(fresh_origin(built, tmp_path), fake, "workflow_run",
        workflow_run_event(built, "issue_comment", built["base"], conclusion="cancelled",
                           branch="main",
                           title=command_title(comment_event(comment.body, comment.login,
                                                             comment.id))),
        tmp_path / "run", "onnx-publish", artifacts)
    assert comment.reactions == [("-1", "github-actions[bot]")]
    assert any(c.body.startswith("> /regen-onnx") and "was cancelled" in c.body
               for c in fake.comments(REPO, PR))
    assert _state(fake, built["head"]) == "failure"


def test_a_merge_that_left_main_stale_comes_back_as_a_bot_pull_request(built, httpserver,
                                                                      tmp_path):
    """A fork's pin bump merged without its regenerated files: main's push is measured
    (onnx-measure decides so itself) and onnx-publish proposes the result as the bot's
    pull request; main itself is never pushed to."""
    fake = fake_for(httpserver, built)
    origin = fresh_origin(built, tmp_path)
    git(origin, "update-ref", "refs/heads/main", built["head"])  # the merge: pins moved, files not
    fake.attach_git(REPO, origin)  # publish asks the API that `main` is a branch at the head
    merged = tmp_path / "merged"  # the tree act reads: main at the merge (act's github.sha)
    git(tmp_path, "clone", "-q", str(built["tree"]), str(merged))
    git(merged, "checkout", "-q", "-B", "main", built["head"])
    git(merged, "remote", "set-url", "origin", f"https://github.com/{REPO}.git")
    artifacts = tmp_path / "artifacts"
    push = {"ref": "refs/heads/main", "before": built["base"], "after": built["head"],
            "repository": {"full_name": REPO, "default_branch": "main"}}
    TREE.insert(0, merged)
    try:
        act(origin, fake, "push", push, tmp_path / "measure", "onnx-measure", artifacts,
            token="read-token")
    finally:
        TREE.pop(0)
    request = json.loads((artifacts / "onnx-request" / "request.json").read_text())
    assert request["event"] == "push" and request["sha"] == built["head"]
    event = workflow_run_event(built, "push", built["head"], branch="main")
    act(origin, fake, "workflow_run", event, tmp_path / "run", "onnx-publish", artifacts)
    branch = f"opsweep/regen-{built['head'][:12]}"
    (number,) = [n for n, p in fake.repo(REPO).pulls.items() if p["ref"] == branch]
    assert fake.repo(REPO).pulls[number]["base"] == "main"
    assert git(origin, "rev-parse", "main") == built["head"]  # main untouched
    assert git(origin, "rev-parse", f"{branch}~1") == built["head"]
    assert TRAILER in git(origin, "log", "-1", "--format=%B", branch)
    committed = json.loads(git(origin, "show", f"{branch}:docs/onnx_support_measured.json"))
    assert committed["fingerprint"]["torch"].startswith(INSTALLED)
    assert any(MARKER in c.body for c in fake.comments(REPO, number))
    assert _state(fake, git(origin, "rev-parse", branch)) == "success"


def test_a_fork_command_run_s_forged_request_commits_nothing_to_another_branch(
        built, measured, httpserver, tmp_path):
    """Issue 30, finding 1, under act: the fork's code in a /regen-onnx run re-uploaded
    onnx-request naming an old command on same-repository PR #12 and its head; onnx-publish
    reads the run's binding from its display_title (onnx-command's run-name) and refuses."""
    fake = fake_for(httpserver, built)
    old = fake.add_comment(REPO, PR, "/regen-onnx", "maintainer")
    fork_head = "f" * 40
    fake.add_pull(REPO, PR + 1, head_repo="someone/demo-fork", ref="main", sha=fork_head)
    fork_command = fake.add_comment(REPO, PR + 1, f"/regen-onnx {fork_head}", "maintainer")
    event = comment_event(fork_command.body, "maintainer", fork_command.id)
    event["issue"]["number"] = PR + 1
    origin = fresh_origin(built, tmp_path)
    artifacts = tmp_path / "artifacts"
    shutil.copytree(measured["artifacts"], artifacts)
    (artifacts / "onnx-request" / "request.json").write_text(json.dumps(
        {"event": "issue_comment", "pr": PR, "sha": built["head"], "profile": "ci",
         "comment_id": old.id}))
    log = act(origin, fake, "workflow_run",
              workflow_run_event(built, "issue_comment", built["base"], branch="main",
                                 title=command_title(event)),
              tmp_path / "run", "onnx-publish", artifacts, check=False)
    assert git(origin, "rev-parse", "feature") == built["head"], "committed to #12's branch"
    assert f"request.json names pull request #{PR} and comment {old.id}" in log
    assert not marked(fake) and old.reactions == []
    assert fork_command.reactions == [("-1", "github-actions[bot]")]  # the command is answered

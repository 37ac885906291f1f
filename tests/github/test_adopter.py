"""Issue 31's proof: a project that is not opsweep adopts it. The fixture repository
(tests/github/adopter: its own pyproject.toml, torch pinned in requirements/onnx.txt, one
spec module of two operators, one translation table, its own docs, none of opsweep's
files) runs `opsweep init`; then, under act, a pull request that moves its pin is
measured through `uses: OWNER/opsweep@v0` (the privileged callers: a release commit) and
the reusable `OWNER/opsweep/.github/workflows/onnx-sweep.yml@v0`, all mapped to this checkout
(--local-repository), with the built-in catalog off; the privileged onnx-publish that
follows (workflow_run) posts one sticky comment on the fake GitHub and commits the
regenerated artifact and page to the branch of a real bare repository. The built-in
catalog's path is proven at the cost of a few specs: with `catalog = "used"` the
measuring run measures opsweep's own specs of the operators the project's model uses."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from opsweep.bot.git import TRAILER
from opsweep.cli.main import main

from ..factories import project_copy
from .fake_github import FakeGitHub, display_title
from .test_act import (
    IDENT,
    INSTALLED,
    PINNED,
    PR,
    REPO,
    STANDINS,
    comment_event,
    git,
    marked,
    pull_request_event,
    workflow_run_event,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "adopter"
ACTION = "OWNER/opsweep@v0"
RELEASE = "a1" * 20  # the release commit the privileged callers pin (init --action-sha)
pytestmark = pytest.mark.integration


def _opsweep_repository(where: Path) -> Path:
    """opsweep's tracked files (this checkout's working tree) as a repository tagged v0:
    what the reusable workflow's checkout of `OWNER/opsweep@v0` clones."""
    tree = project_copy(where / "OWNER" / "opsweep")
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, *IDENT, "commit", "-qm", "opsweep")
    git(tree, "tag", "v0")
    return tree


def _adopt(top: Path, init_args: list[str], artifact_from: Path | None = None) -> dict:
    """The fixture adopter after `opsweep init` with `init_args`, committed at `main` (its
    artifact measured as if on 2.12.0, or copied from `artifact_from`) and `feature` (its
    pin moved to the installed torch)."""
    tree = top / "work"
    shutil.copytree(FIXTURE, tree)
    assert not (tree / "specs").exists() and not (tree / "action.yml").exists()
    assert main(["init", "--repo-dir", str(tree), "--specs", "demo_specs",
                 "--translations", "demo_lib/translations.py:TABLE", "--action", ACTION,
                 "--action-sha", RELEASE, *init_args]) == 0
    # issue 53: the project's pin, not its docs build's; its Renovate file extended; the
    # project itself installed by the measuring jobs; a local run's leftovers ignored
    pyproject = (tree / "pyproject.toml").read_text()
    assert 'pins = { requirements = "requirements/onnx.txt" }' in pyproject
    renovate = json.loads((tree / "renovate.json").read_text())
    assert renovate["extends"] == ["config:recommended"]
    assert renovate["packageRules"][0]["groupName"] == "onnx exporter stack"
    assert not (tree / ".github" / "renovate.json5").exists()
    assert 'install: "-e ."' in (tree / ".github" / "workflows" / "onnx-measure.yml").read_text()
    assert ".opsweep-cache/" in (tree / ".gitignore").read_text().splitlines()
    artifact = tree / "docs" / "onnx" / "onnx_support_measured.json"
    if artifact_from is not None:
        artifact.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(artifact_from, artifact)
    else:  # the committed artifact of the base: the two specs, as if measured on 2.12.0
        subprocess.run([sys.executable, "-m", "opsweep", "sweep", "--jobs", "0", "--no-reuse",
                        "--quiet"], check=True, capture_output=True, cwd=tree)
        data = json.loads(artifact.read_text())
        assert set(data["specs"]) == {"sin", "cos"}
        data["fingerprint"]["torch"] = "2.12.0"
        artifact.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    # the project keeps no copy of the retired listing's claims: the action's steps import
    # opsweep from its source checkout, whose docs/data holds them (page.documented.find)
    assert not (tree / "docs" / "onnx" / "data" / "documented.json").exists()
    for leftover in tree.glob("docs/onnx/*.jsonl"):
        leftover.unlink()
    shutil.rmtree(tree / ".opsweep-cache", ignore_errors=True)
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, *IDENT, "commit", "-qm", "Adopt opsweep")
    base = git(tree, "rev-parse", "HEAD")
    git(tree, "checkout", "-q", "-b", "feature")
    pins = tree / "requirements" / "onnx.txt"
    pins.write_text(pins.read_text().replace("torch==2.12.0", f"torch=={INSTALLED}"))
    git(tree, *IDENT, "commit", "-qam", f"Bump torch to {INSTALLED}")
    head = git(tree, "rev-parse", "HEAD")
    git(tree, "checkout", "-q", "main")
    git(tree, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    return {"tree": tree, "base": base, "head": head, "repos": top / "repos",
            "opsweep": _opsweep_repository(top / "repos")}


@pytest.fixture(scope="module")
def adopter(tmp_path_factory):
    from ..conftest import require
    require(shutil.which("git") is not None, "git")
    return _adopt(tmp_path_factory.mktemp("adopter"), ["--catalog", "none"])


@pytest.fixture(scope="module")
def used_adopter(adopter, tmp_path_factory):
    """The same project with `catalog = "used"` and its model: opsweep's built-in catalog
    restricted to the operators demo_lib/models.py uses (sin, cos, add, relu; sin and cos
    are the project's own specs). Its base artifact is the catalog-none one."""
    return _adopt(tmp_path_factory.mktemp("used"),
                  ["--catalog", "used", "--models", "demo_lib/models.py:build",
                   "--models", "demo_lib/packaged.py:build"],
                  artifact_from=adopter["tree"] / "docs" / "onnx" / "onnx_support_measured.json")


def origin_for(adopter, where):
    """A bare repository holding the adopter at `main` and `feature`, for one test."""
    origin = where / "origin.git"
    git(where, "clone", "-q", "--bare", str(adopter["tree"]), str(origin))
    git(origin, "symbolic-ref", "HEAD", "refs/heads/main")
    return origin


def fake_for(httpserver, adopter):
    fake = FakeGitHub(httpserver)
    fake.add_pull(REPO, PR, ref="feature", sha=adopter["head"], head_repo=REPO,
                  base_sha=adopter["base"])
    fake.repo(REPO).permissions.update({"maintainer": "admin"})
    return fake


def act(adopter, origin, fake, event_name, payload, run_dir, workflow, artifacts,
        token="fake-token"):
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
           "--env", f"E2E_ARTIFACTS={artifacts}", "--env", f"E2E_REPOS={adopter['repos']}",
           "--env", f"OPSWEEP_PYTHON_ENV={sys.prefix}", "--env", "OPSWEEP_SWEEP_ARGS=--jobs 0",
           "--local-repository", f"{ACTION}={adopter['opsweep']}",
           "--local-repository", f"OWNER/opsweep@{RELEASE}={adopter['opsweep']}"]
    for ref, name in PINNED.items():
        cmd += ["--local-repository", f"{ref}={STANDINS / name}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    result = subprocess.run(cmd, cwd=adopter["tree"], capture_output=True, text=True,
                            timeout=900, env=env, check=False)
    (run_dir / "act.log").write_text(result.stdout + result.stderr)
    assert result.returncode == 0, (run_dir / "act.log").read_text()[-6000:]
    return result.stdout + result.stderr


def test_an_adopter_s_pin_bump_is_measured_commented_and_committed(adopter, httpserver, tmp_path):
    fake = fake_for(httpserver, adopter)
    origin = origin_for(adopter, tmp_path)
    artifacts = tmp_path / "artifacts"
    log = act(adopter, origin, fake, "pull_request", pull_request_event(adopter), tmp_path / "measure",
              "onnx-measure", artifacts, token="read-token")
    assert fake.writes == [] and fake.refused == []  # the measuring run never writes
    result = json.loads((artifacts / "onnx-result" / "docs" / "onnx" / "onnx_support_measured.json")
                        .read_text())
    assert set(result["specs"]) == {"sin", "cos"}  # the built-in catalog is off
    assert list(result["targets"]) == ["demo_lib/translations.py:TABLE"]
    act(adopter, origin, fake, "workflow_run",
        workflow_run_event(adopter, "pull_request", adopter["head"]), tmp_path / "publish",
        "onnx-publish", artifacts)
    (comment,) = marked(fake)
    assert f"torch 2.12.0 → {INSTALLED}" in comment.body
    assert "Committed the regenerated" in comment.body
    assert TRAILER in git(origin, "log", "-1", "--format=%B", "feature")
    committed = json.loads(git(origin, "show", "feature:docs/onnx/onnx_support_measured.json"))
    assert committed["fingerprint"]["torch"].startswith(INSTALLED)
    assert set(committed["specs"]) == {"sin", "cos"}
    page = git(origin, "show", "feature:docs/onnx/supported_operators.md")
    assert "sin" in page
    assert git(origin, "show", "feature:docs/index.md").startswith("# demo-lib")
    tree = git(origin, "ls-tree", "-r", "--name-only", "feature").split()
    assert "action.yml" not in tree and not any(n.startswith("specs/") for n in tree)
    checkouts = (tmp_path / "checkouts.log").read_text().splitlines()
    assert not [c for c in checkouts if "onnx-publish" in c and ".opsweep/head" not in c
                and ".opsweep/base" not in c]
    assert "Measure one shard" in log


def test_an_adopter_s_regen_command_is_bound_measured_and_published(adopter, httpserver,
                                                                    tmp_path):
    """/regen-onnx through the adopter's onnx-command caller: the run-name binding lives in
    the adopter's file, every step in opsweep's action; 👀, then 🚀 after the publish."""
    fake = fake_for(httpserver, adopter)
    origin = origin_for(adopter, tmp_path)
    comment = fake.add_comment(REPO, PR, "/regen-onnx", "maintainer")
    event = comment_event("/regen-onnx", "maintainer", comment.id)
    artifacts = tmp_path / "artifacts"
    act(adopter, origin, fake, "issue_comment", event, tmp_path / "command", "onnx-command",
        artifacts)
    assert [r for r, _ in comment.reactions] == ["eyes"]
    request = json.loads((artifacts / "onnx-request" / "request.json").read_text())
    assert request["sha"] == adopter["head"] and request["comment_id"] == comment.id
    title = display_title(adopter["tree"] / ".github" / "workflows" / "onnx-command.yml", event,
                          default=f"PR {PR}")
    assert title == f"/regen-onnx #{PR} comment {comment.id}"
    act(adopter, origin, fake, "workflow_run",
        workflow_run_event(adopter, "issue_comment", adopter["base"], branch="main", title=title),
        tmp_path / "publish", "onnx-publish", artifacts)
    assert [r for r, _ in comment.reactions] == ["rocket"] and len(marked(fake)) == 1
    assert TRAILER in git(origin, "log", "-1", "--format=%B", "feature")


def test_an_adopter_s_used_catalog_measures_the_built_in_specs_its_model_needs(
        used_adopter, httpserver, tmp_path):
    """The built-in catalog's path under act, at the cost of a few specs: `catalog = "used"`
    measures opsweep's own specs of the operators the project's model uses (add, relu)
    beside the project's specs (sin, cos), and checks the model against the result."""
    fake = fake_for(httpserver, used_adopter)
    origin = origin_for(used_adopter, tmp_path)
    artifacts = tmp_path / "artifacts"
    act(used_adopter, origin, fake, "pull_request", pull_request_event(used_adopter),
        tmp_path / "measure", "onnx-measure", artifacts, token="read-token")
    assert fake.writes == [] and fake.refused == []
    result = artifacts / "onnx-result" / "docs" / "onnx"
    measured = json.loads((result / "onnx_support_measured.json").read_text())
    assert set(measured["specs"]) == {"sin", "cos", "add", "relu"}
    families = {name: spec["family"] for name, spec in measured["specs"].items()}
    # the project's module (demo_specs/ops.py), and opsweep's own built-in families
    assert families == {"sin": "ops", "cos": "ops", "add": "binary", "relu": "activations"}
    assert measured["fingerprint"]["torch"].startswith(INSTALLED)
    checked = json.loads((result / "models_checked.json").read_text())
    assert "block" in json.dumps(checked)
    # the model that imports the project's own package loaded (`install: "-e ."` installed
    # the project; its version comes from the installed metadata) and exported
    assert "residual 1.0.0" in json.dumps(checked), json.dumps(checked)[:2000]

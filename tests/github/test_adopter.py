"""Issue 31's proof: a project that is not opsweep adopts it. The fixture repository
(tests/github/adopter: its own pyproject.toml, torch pinned in requirements/onnx.txt, one
spec module of two operators, one translation table, its own docs, none of opsweep's
files) runs `opsweep init`; then, under act, a pull request that moves its pin is
measured through `uses: OWNER/opsweep@v0` (the privileged callers: a release commit) and
the reusable `OWNER/opsweep/.github/workflows/onnx-sweep.yml@v0`, all mapped to this checkout
(--local-repository), with the built-in catalog off; the privileged onnx-publish that
follows (workflow_run) posts one sticky comment on the fake GitHub and commits the
regenerated artifact and page to the branch of a real bare repository.

Issue 53's newcomer (used_adopter): the same fixture (a `docs/requirements.txt` pinning
torch too, an existing `renovate.json`, models importing its own package) follows
docs/adopting.md and nothing else: step 2's `opsweep init` line and step 3's commands
are read from the page and run in the repository, then the pull request moving its pin
is measured (`catalog = "used"`: opsweep's own specs of the operators its models use)
and onnx-publish posts the first sticky comment and commits the page."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
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
ADOPTING = ROOT / "docs" / "adopting.md"
BUILTIN_FAMILIES = {"sin": "unary", "cos": "unary", "add": "binary", "relu": "activations"}
pytestmark = pytest.mark.integration


#: opsweep's rendered site: the operators' and specs' pages, the committed artifact and its
#: history records (50 of the tree's 55 MB). An adopter's runs read opsweep's action, its
#: workflows, its source and docs/data, never these; each job that uses the action copies
#: the repository (act's action copy, the reusable workflow's checkout), so they are left
#: out of the release the adopters use here.
SITE = ("docs/operators/", "docs/specs/", "docs/history/", "docs/onnx_support_measured.json")


def _opsweep_repository(where: Path) -> Path:
    """opsweep's tracked files (this checkout's working tree) but its site (SITE), as a
    repository tagged v0: what the reusable workflow's checkout of `OWNER/opsweep@v0`
    clones."""
    tree = project_copy(where / "OWNER" / "opsweep", leave_out=SITE)
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, *IDENT, "commit", "-qm", "opsweep")
    git(tree, "tag", "v0")
    return tree


def _adopt(top: Path, repos: Path, init_args: list[str]) -> dict:
    """The fixture adopter after `opsweep init` with `init_args`, committed at `main` (its
    artifact measured as if on 2.12.0) and `feature` (its pin moved to the installed torch)."""
    tree = top / "work"
    shutil.copytree(FIXTURE, tree)
    assert not (tree / "specs").exists() and not (tree / "action.yml").exists()
    assert main(["init", "--repo-dir", str(tree), "--specs", "demo_specs",
                 "--translations", "demo_lib/translations.py:TABLE", "--action", ACTION,
                 "--action-sha", RELEASE, *init_args]) == 0
    _initialised(tree)
    artifact = tree / "docs" / "onnx" / "onnx_support_measured.json"
    # the committed artifact of the base: the two specs, as if measured on 2.12.0 (the CLI
    # in this process, in the repository as its developer runs it: the fixture needs the
    # artifact, not a process of its own; docs/adopting.md's commands run as commands in
    # _adopt_as_documented)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tree)
        assert main(["sweep", "--jobs", "0", "--no-reuse", "--quiet"]) == 0
    assert set(json.loads(artifact.read_text())["specs"]) == {"sin", "cos"}
    _as_pinned(artifact)
    # the project keeps no copy of the retired listing's claims: the action's steps import
    # opsweep from its source checkout, whose docs/data holds them (page.documented.find)
    assert not (tree / "docs" / "onnx" / "data" / "documented.json").exists()
    for leftover in tree.glob("docs/onnx/*.jsonl"):
        leftover.unlink()
    shutil.rmtree(tree / ".opsweep-cache", ignore_errors=True)
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, *IDENT, "commit", "-qm", "Adopt opsweep")
    return _pull_request(tree, repos)


def _initialised(tree: Path) -> None:
    """issue 53: the project's pin, not its docs build's; its Renovate file extended; the
    project itself installed by the measuring jobs; a local run's leftovers ignored, the
    project's own ignore rules kept."""
    pyproject = (tree / "pyproject.toml").read_text()
    assert 'pins = { requirements = "requirements/onnx.txt" }' in pyproject
    renovate = json.loads((tree / "renovate.json").read_text())
    assert renovate["extends"] == ["config:recommended"]
    assert renovate["packageRules"][0]["groupName"] == "onnx exporter stack"
    assert not (tree / ".github" / "renovate.json5").exists()
    assert 'install: "-e ."' in (tree / ".github" / "workflows" / "onnx-measure.yml").read_text()
    ignored = (tree / ".gitignore").read_text().splitlines()
    assert {".opsweep-cache/", "*.run.jsonl", "__pycache__/", "*.egg-info/"} <= set(ignored)


def _as_pinned(artifact: Path) -> None:
    """The stand-in for measuring at the base's pin: the test environment holds the torch
    the pull request moves to, so the base's artifact, measured with it, is labelled with
    the pin it is committed beside (torch==2.12.0), and the pull request is a torch move."""
    data = json.loads(artifact.read_text())
    data["fingerprint"]["torch"] = "2.12.0"
    artifact.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def _pull_request(tree: Path, repos: Path) -> dict:
    """`feature`: the adopter's pin moved to the installed torch, over `main` as it is;
    `repos`: where the other repositories its workflows check out are (`opsweep_repos`)."""
    base = git(tree, "rev-parse", "HEAD")
    git(tree, "checkout", "-q", "-b", "feature")
    pins = tree / "requirements" / "onnx.txt"
    pins.write_text(pins.read_text().replace("torch==2.12.0", f"torch=={INSTALLED}"))
    git(tree, *IDENT, "commit", "-qam", f"Bump torch to {INSTALLED}")
    head = git(tree, "rev-parse", "HEAD")
    git(tree, "checkout", "-q", "main")
    git(tree, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    return {"tree": tree, "base": base, "head": head, "repos": repos,
            "opsweep": repos / "OWNER" / "opsweep"}


def _documented() -> tuple[list[str], list[str]]:
    """docs/adopting.md's step 2 `$ opsweep init` line (its generated init-sample) and
    step 3's commands, as a newcomer copies them."""
    text = ADOPTING.read_text("utf-8")
    sample = text.split("<!-- generated: init-sample -->", 1)[1].split("<!-- end: init-sample", 1)[0]
    (init,) = [x[2:] for x in sample.splitlines() if x.startswith("$ opsweep init")]
    step3 = text.split("## 3. Measure once and commit", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```console\n(.*?)```", step3, re.S)
    assert block, "docs/adopting.md step 3: no console block"
    commands = [x[2:] for x in block.group(1).splitlines() if x.startswith("$ ")]
    return shlex.split(init), commands


def _newcomer_env(top: Path) -> Path:
    """`pip install opsweep`, as the test environment has it: a venv of this interpreter
    that sees its packages (opsweep, and the exporter stack at the installed pins), with an
    `opsweep` command of its own; what step 3 installs goes there, never into the test
    environment (the action's own way over OPSWEEP_PYTHON_ENV)."""
    venv = top / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "opsweep-prepared.pth").write_text("".join(
        f"import site; site.addsitedir({sysconfig.get_path(k)!r})\n" for k in ("purelib", "platlib")))
    # the command the action writes there (action.yml, the install step's printf): the
    # sweep's workers run from it, so an unguarded one fails step 3 here
    (script,) = re.findall(r"printf '(#!%s\\n[^']*)'", (ROOT / "action.yml").read_text())
    (venv / "bin" / "opsweep").write_text(script.replace("\\n", "\n") % python)
    (venv / "bin" / "opsweep").chmod(0o755)
    return venv


def _pip_install(venv: Path, tree: Path, line: str) -> None:
    """Step 3's `pip install -r requirements/onnx.txt -e . opsweep` in the test
    environment: `-r` the pins and `opsweep` are there already (the stack at the torch the
    pull request moves to: see _as_pinned); `-e .`, the project itself, is really installed
    (no dependencies: they are the pins). Any other word fails: the page changed."""
    words = shlex.split(line)
    assert words[:2] == ["pip", "install"], line
    rest, own = words[2:], []
    while rest:
        word = rest.pop(0)
        if word == "-r":
            assert rest.pop(0) == "requirements/onnx.txt", line  # the pins init chose
        elif word == "-e":
            own += ["-e", rest.pop(0)]
        else:
            assert word == "opsweep", line
    assert own == ["-e", "."], line
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "--quiet", "--no-deps", "--no-build-isolation", *own],
                   check=True, capture_output=True, cwd=tree)


def _adopt_as_documented(top: Path, repos: Path) -> dict:
    """The fixture adopter, a repository of its own, taken through docs/adopting.md: step
    2's init line (its placeholder package `mylib` is the fixture's `demo_lib`), then step
    3's install, measure and commit; then the pull request moving its pin."""
    init, commands = _documented()
    tree = top / "work"
    shutil.copytree(FIXTURE, tree)
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, *IDENT, "commit", "-qm", "demo-lib")
    venv = _newcomer_env(top)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.invalid",
           "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.invalid"}
    assert init[:2] == ["opsweep", "init"] and "--models" in init, init
    # the options the test environment needs, and only those: act maps the action's
    # reference (`OWNER/opsweep@v0`) and the privileged callers' release commit (RELEASE)
    # to this checkout (--local-repository), and an opsweep installed from a checkout
    # records no release commit (docs/adopting.md, Versions and upgrades)
    argv = [w.replace("mylib.", "demo_lib.") for w in init] + [
        "--action", ACTION, "--action-sha", RELEASE]
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    _initialised(tree)
    assert 'catalog = "used"' in (tree / "pyproject.toml").read_text()
    # init's checklist for this repository is the page's: its pins line; its step 1, with
    # the repository's own renovate.json that init extended in its `git add` (step 3 says so)
    page = ADOPTING.read_text("utf-8")
    assert "add your Renovate file too: init's step 1 names it" in " ".join(page.split())
    (pins,) = [x for x in done.stdout.splitlines() if x.startswith("opsweep: pins:")]
    (first,) = [x for x in done.stdout.splitlines() if x.startswith("  1. measure")]
    assert pins in page
    assert "git add .github .gitignore pyproject.toml renovate.json docs/onnx " in first, first
    assert first.replace(" renovate.json ", " ") in page, first
    install, *rest = commands
    _pip_install(venv, tree, install)
    for command in rest:
        if command.startswith("git add "):
            command = command.replace("git add ", "git add renovate.json ", 1)
        ran = subprocess.run(["bash", "-c", command], cwd=tree, env=env, capture_output=True,
                             text=True, check=False)
        assert ran.returncode == 0, f"{command}: {ran.stderr[-3000:]}{ran.stdout[-3000:]}"
        if command.startswith("opsweep sweep"):  # measured, before it is committed
            _as_pinned(tree / "docs" / "onnx" / "onnx_support_measured.json")
    # the commit holds what the page names; nothing is left over: the local run's cache and
    # run logs are ignored (init's .gitignore lines), so `git add docs/onnx` took none
    assert git(tree, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(tree, "log", "-1", "--format=%s") == "Adopt opsweep"
    committed = git(tree, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "docs/onnx/onnx_support_measured.json" in committed
    assert "docs/onnx/supported_operators.md" in committed
    assert not [n for n in committed if n.endswith(".jsonl") or ".opsweep-cache" in n
                or ".egg-info" in n]
    first = json.loads(git(tree, "show", "HEAD:docs/onnx/onnx_support_measured.json"))
    assert {n: s["family"] for n, s in first["specs"].items()} == BUILTIN_FAMILIES
    return _pull_request(tree, repos)


@pytest.fixture(scope="module")
def opsweep_repos(tmp_path_factory):
    """The repositories the adopters' workflows reach besides their own (opsweep tagged v0,
    `_opsweep_repository`), made once for the module: act and the checkout stand-in only
    read them."""
    from ..conftest import require
    require(shutil.which("git") is not None, "git")
    repos = tmp_path_factory.mktemp("repos")
    _opsweep_repository(repos)
    return repos


@pytest.fixture(scope="module")
def adopter(tmp_path_factory, opsweep_repos):
    return _adopt(tmp_path_factory.mktemp("adopter"), opsweep_repos, ["--catalog", "none"])


@pytest.fixture(scope="module")
def used_adopter(tmp_path_factory, opsweep_repos):
    """The newcomer's project: its models, no specs of its own (`catalog = "used"`: opsweep's
    built-in catalog restricted to the operators demo_lib/models.py's two models use: sin,
    cos, add, relu), adopted by docs/adopting.md's steps 2 and 3."""
    return _adopt_as_documented(tmp_path_factory.mktemp("used"), opsweep_repos)


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
           # the runner's own API server: the bot's requests unpaced (docs/github_action.md)
           "--env", "OPSWEEP_GITHUB_PACING=off",
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


def _published(adopter, origin, fake, tmp_path, artifacts):
    """onnx-publish under act after a measuring run of the pin move: the one sticky comment
    says the move and the commit, the bot's commit is on `feature`, and the committed
    artifact is the installed torch's. (the committed artifact, the committed support page)"""
    act(adopter, origin, fake, "workflow_run",
        workflow_run_event(adopter, "pull_request", adopter["head"]), tmp_path / "publish",
        "onnx-publish", artifacts)
    (comment,) = marked(fake)
    assert f"torch 2.12.0 → {INSTALLED}" in comment.body
    assert "Committed the regenerated artifact and page as" in comment.body
    assert TRAILER in git(origin, "log", "-1", "--format=%B", "feature")
    committed = json.loads(git(origin, "show", "feature:docs/onnx/onnx_support_measured.json"))
    assert committed["fingerprint"]["torch"].startswith(INSTALLED)
    return committed, git(origin, "show", "feature:docs/onnx/supported_operators.md")


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
    committed, page = _published(adopter, origin, fake, tmp_path, artifacts)
    assert set(committed["specs"]) == {"sin", "cos"}
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
    """Issue 53's newcomer, from docs/adopting.md's steps (used_adopter) to the first sticky
    comment and the committed page: `catalog = "used"` measures opsweep's own specs of the
    operators the project's models use (sin, cos, add, relu), checks both models against the
    result, and onnx-publish comments once and commits the regenerated artifact and page."""
    fake = fake_for(httpserver, used_adopter)
    origin = origin_for(used_adopter, tmp_path)
    artifacts = tmp_path / "artifacts"
    act(used_adopter, origin, fake, "pull_request", pull_request_event(used_adopter),
        tmp_path / "measure", "onnx-measure", artifacts, token="read-token")
    assert fake.writes == [] and fake.refused == []
    result = artifacts / "onnx-result" / "docs" / "onnx"
    measured = json.loads((result / "onnx_support_measured.json").read_text())
    # no specs of its own: opsweep's built-in families, only the operators the models use
    assert {n: s["family"] for n, s in measured["specs"].items()} == BUILTIN_FAMILIES
    assert measured["fingerprint"]["torch"].startswith(INSTALLED)
    checked = json.dumps(json.loads((result / "models_checked.json").read_text()))
    # both models loaded: they import the project's own package (`install: "-e ."`
    # installed the project; its version comes from the installed metadata) and exported
    assert '"block"' in checked and "large 1.0.0" in checked, checked[:2000]
    committed, page = _published(used_adopter, origin, fake, tmp_path, artifacts)
    assert {n: s["family"] for n, s in committed["specs"].items()} == BUILTIN_FAMILIES
    assert "relu" in page and "sin" in page
    assert "large 1.0.0" in git(origin, "show", "feature:docs/onnx/models_checked.json")
    assert git(origin, "show", "feature:docs/index.md").startswith("# demo-lib")

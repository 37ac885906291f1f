"""The two halves of the bot around the Security Lab split, with real git (a local bare
repository), real PyGithub against the fake, and workflow_run payloads as GitHub sends
them (`pull_requests` empty for a fork's head)."""

import json
import shutil
import subprocess
from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.bot.github import MARKER
from opsweep.cli.main import main
from opsweep.bot.git import TRAILER
from opsweep.model import Stage

from ..factories import FP, cell, errored, result

REPO = "octo/opsweep-demo"
IDENT = ["-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]
PYPROJECT = '[tool.tox.env.proptest_onnx]\ndeps = ["torch=={}", "hypothesis==6.170.17"]\n'

from .fake_github import read_outputs

#: the bot's own client, without PyGithub's politeness delays (conftest.py says why)
pytestmark = pytest.mark.usefixtures("no_politeness_delays")


@pytest.fixture(autouse=True)
def _needs_git():
    from ..conftest import require
    require(shutil.which("git") is not None, "git")


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def whole(torch="2.13.0", stage=Stage.OK):
    return art.make_artifact(replace(FP, torch=torch), "ci", 25, 0, {
        "sin": result(["sin"], stage), "relu": result(["relu"], Stage.OK)})


@pytest.fixture
def origin(tmp_path):
    """A bare origin whose `feature` branch pins torch 2.13.0 and commits an artifact
    measured on 2.12.0; returns (bare, head SHA)."""
    return make_origin(tmp_path)


def make_origin(tmp_path, committed=None):
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    (seed / "pyproject.toml").write_text(PYPROJECT.format("2.13.0"))
    art.save(seed / "docs" / "onnx_support_measured.json", committed or whole("2.12.0"))
    git(seed, "add", ".")
    git(seed, *IDENT, "commit", "-qm", "bump torch")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/feature")
    return bare, git(seed, "rev-parse", "HEAD")


def checkout(bare, where):
    git(bare.parent, "clone", "-q", "-b", "feature", str(bare), str(where))
    return where


def measured(tmp_path, artifact):
    """The unprivileged run's result directory."""
    out = tmp_path / "result"
    art.save(out / "docs" / "onnx_support_measured.json", artifact)
    (out / "docs" / "supported_operators.md").write_text("# page\n")
    return out


def run_payload(sha, head_repo, event="pull_request", branch="feature", title="PR 5", path=""):
    """`title`: the run's display_title (an onnx-command run's is its run-name); `path`: the
    workflow file that ran (default: onnx-command's for a command, else onnx-measure's)."""
    path = path or (".github/workflows/onnx-command.yml" if event == "issue_comment"
                    else ".github/workflows/onnx-measure.yml")
    return {"workflow_run": {"event": event, "head_sha": sha, "head_branch": branch,
                             "conclusion": "success", "pull_requests": [],
                             "display_title": title, "path": path,
                             "head_repository": {"full_name": head_repo}}}


def command_payload(request):
    """The workflow_run of the onnx-command run that `request`'s comment started."""
    from .fake_github import display_title
    from .test_act import ROOT
    event = {"issue": {"number": request["pr"]}, "comment": {"id": request["comment_id"]}}
    title = display_title(ROOT / ".github" / "workflows" / "onnx-command.yml", event, "")
    return run_payload("5" * 40, REPO, event="issue_comment", branch="main", title=title)


def publish(tmp_path, github, monkeypatch, payload, head, result, request=None, token="t0ken"):
    (tmp_path / "run.json").write_text(json.dumps(payload))
    out = tmp_path / "gh_output"
    out.write_text("")
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    args = ["bot", "publish", "--run-event", str(tmp_path / "run.json"), "--result", str(result),
            "--repo-dir", str(head), "--base-dir", str(head), "--repo", REPO,
            "--bot-login", "github-actions[bot]"]
    if request is not None:
        (tmp_path / "request.json").write_text(json.dumps(request))
        args += ["--request", str(tmp_path / "request.json")]
    assert main(args) == 0
    return read_outputs(out.read_text())


def test_same_repository_head_is_committed_and_commented(github, monkeypatch, tmp_path, origin):
    bare, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head,
                  measured(tmp_path, whole("2.13.0", Stage.NO_TRANSLATION)))
    assert out["changed"] == "true" and out["regressions"] == "1" and out["pr"] == "5"
    assert TRAILER in git(bare, "log", "-1", "--format=%B", "feature")
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    assert "`torch 2.12.0 → 2.13.0`" in comment.body and "Committed the regenerated" in comment.body
    assert f"/{REPO}/blob/feature/docs/history.md" in comment.body
    assert "### Models" not in comment.body  # no models record on either side


def test_a_fork_head_is_found_from_its_sha_commented_and_never_pushed(github, monkeypatch,
                                                                       tmp_path, origin):
    bare, sha = origin
    github.add_pull(REPO, 6, head_repo="someone/fork", ref="main", sha=sha)  # fork branch `main`
    github.add_pull(REPO, 4, ref="other", sha="9" * 40)
    head = checkout(bare, tmp_path / "head")
    before = git(bare, "rev-parse", "feature")
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, "someone/fork", branch="main"),
                  head, measured(tmp_path, whole("2.13.0")))
    assert out["pr"] == "6" and out["same_repo"] == "false" and out["changed"] == "false"
    assert git(bare, "rev-parse", "feature") == before
    assert [(m, p) for m, p, _ in github.writes] == [("POST", f"/repos/{REPO}/issues/6/comments")]
    (comment,) = [c for c in github.comments(REPO, 6) if MARKER in c.body]
    assert "lives in a fork" in comment.body and "blob/" not in comment.body


def test_a_spec_the_new_torch_no_longer_has_is_not_a_partial_sweep(github, monkeypatch,
                                                                   tmp_path, origin):
    """Found carrying the torch 2.15.0 bump through publish: cholesky and qr, measured in
    the 2.13 artifact, are recorded as absent under 2.15 and were refused as 'missing'."""
    bare, sha = origin
    github.add_pull(REPO, 8, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    why = "aten::relu not in torch 2.13.0's operator listing"
    gone = art.make_artifact(FP, "ci", 25, 0, {"sin": result(["sin"], Stage.OK)},
                             absent={"relu": why})
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head,
                  measured(tmp_path, gone))
    assert out["changed"] == "true", out
    committed = tmp_path / "committed.json"
    committed.write_text(git(bare, "show", "feature:docs/onnx_support_measured.json") + "\n")
    assert art.load(committed).absent == {"relu": why}


@pytest.mark.parametrize("artifact, why", [
    (whole("2.12.5"), "does not describe the head's pins (torch measured 2.12.5, pinned 2.13.0)"),
    (art.make_artifact(FP, "ci", 25, 0, {"sin": result(["sin"], Stage.OK)}),
     "not a whole sweep: 1 spec(s) measured before are missing (relu)"),
])
def test_stale_or_partial_results_are_refused(github, monkeypatch, tmp_path, origin, artifact, why):
    bare, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    before = git(bare, "rev-parse", "feature")
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head,
                  measured(tmp_path, artifact))
    assert out["outcome"] == "failed" and why in out["reason"]
    assert git(bare, "rev-parse", "feature") == before
    assert any(why in c.body for c in github.comments(REPO, 5))


def test_unexpected_files_in_the_result_are_refused(github, monkeypatch, tmp_path, origin):
    from opsweep.errors import UsageError
    from opsweep.bot.publish import Layout, collect
    result_dir = measured(tmp_path, whole())
    (result_dir / ".github" / "workflows").mkdir(parents=True)
    (result_dir / ".github" / "workflows" / "x.yml").write_text("on: push\n")
    with pytest.raises(UsageError, match="not a file the measured result may carry"):
        collect(result_dir, Layout())


def test_the_rendered_directories_pages_are_result_files_the_bot_commits(tmp_path):
    """An operator's page, a spec file's page and their index are results; anything else
    in those directories, or below them, is not."""
    from opsweep.errors import UsageError
    from opsweep.bot.publish import Layout, collect
    result_dir = measured(tmp_path, whole())
    for page in ("specs/index.md", "specs/unary.md", "operators/index.md", "operators/sin.md",
                 "dtypes.md"):
        (result_dir / "docs" / page).parent.mkdir(exist_ok=True)
        (result_dir / "docs" / page).write_text("# a page\n")
    kept = collect(result_dir, Layout())  # what collect keeps is committed
    assert {"docs/specs/unary.md", "docs/operators/sin.md", "docs/dtypes.md"} <= set(kept)
    for stray in ("operators/run.py", "operators/deeper/x.md"):
        (result_dir / "docs" / stray).parent.mkdir(exist_ok=True)
        (result_dir / "docs" / stray).write_text("x\n")
        with pytest.raises(UsageError, match="not a file the measured result may carry"):
            collect(result_dir, Layout())
        (result_dir / "docs" / stray).unlink()


def test_the_models_history_record_is_a_result_file_validated_as_one(tmp_path):
    """The models step's record of its pin set (docs/history/models/) travels with the
    result and is committed; a file there that is not a models history record is refused."""
    import re
    from pathlib import Path

    from opsweep.artifact import models_history
    from opsweep.bot.publish import Layout, collect
    from opsweep.errors import DataFileError, UsageError
    result_dir = measured(tmp_path, whole())
    root = Path(__file__).resolve().parents[2]
    entry = next(m for m in json.loads((root / "docs/models_checked.json").read_text())["models"]
                 if not m.get("lost"))
    record = models_history.from_models({"models_version": 2, "models": [entry]})
    path = models_history.write(record, result_dir / Layout().models_history)
    assert f"{Layout().models_history}/{path.name}" in collect(result_dir, Layout())
    path.write_bytes(next((root / "docs/history").glob("torch-*.json")).read_bytes())
    with pytest.raises(DataFileError, match=re.escape(f"{path.name} at models_history_version")):
        collect(result_dir, Layout())
    path.unlink()
    (path.parent / "notes.json").write_text("{}")
    with pytest.raises(UsageError, match="not a file the measured result may carry"):
        collect(result_dir, Layout())


def command_request(github, sha, login="maintainer", body="/regen-onnx"):
    comment = github.add_comment(REPO, 5, body, login)
    return {"event": "issue_comment", "pr": 5, "sha": sha, "profile": "ci",
            "comment_id": comment.id}


def test_a_command_run_is_re_authorised_and_bound_to_the_measured_head(github, monkeypatch,
                                                                       tmp_path, origin, capsys):
    bare, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    github.repo(REPO).permissions.update({"maintainer": "admin", "reader": "read"})
    head = checkout(bare, tmp_path / "head")
    result_dir = measured(tmp_path, whole("2.13.0"))
    # the head moved during the sweep: nothing committed, the comment says why
    moved = command_request(github, "7" * 40)
    out = publish(tmp_path, github, monkeypatch, command_payload(moved), head, result_dir, moved)
    assert out["changed"] == "false"
    assert any("the head moved during the sweep" in c.body for c in github.comments(REPO, 5))
    # a request pointing at a reader's comment is not a command at all
    with pytest.raises(AssertionError, match="assert 2 == 0"):  # exit 2: refused input
        reader = command_request(github, sha, login="reader")
        publish(tmp_path, github, monkeypatch, command_payload(reader), head, result_dir, reader)
    assert "has read permission" in capsys.readouterr().err
    good = command_request(github, sha)
    out = publish(tmp_path, github, monkeypatch, command_payload(good), head, result_dir, good)
    assert out["changed"] == "true" and out["comment_id"] == str(good["comment_id"])


def test_loop_guard_re_measures_a_bot_head_whose_artifact_is_stale(tmp_path, origin,
                                                                   monkeypatch):
    bare, _ = origin
    head = checkout(bare, tmp_path / "head")
    (head / "x").write_text("1")
    git(head, "add", "x")
    git(head, *IDENT, "commit", "-qm", f"bot\n\n{TRAILER}")
    out = tmp_path / "o"
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    assert main(["bot", "should-run", "--repo-dir", str(head)]) == 0
    outputs = read_outputs(out.read_text())
    assert outputs["run"] == "true" and "torch measured 2.12.0, pinned 2.13.0" in outputs["reason"]
    art.save(head / "docs" / "onnx_support_measured.json", whole("2.13.0+cpu"))
    out.write_text("")
    assert main(["bot", "should-run", "--repo-dir", str(head)]) == 0
    assert read_outputs(out.read_text())["run"] == "false"


def test_assemble_refuses_a_partial_sweep_against_the_catalog(tmp_path):
    import torch
    repo_dir = tmp_path / "repo"
    art.save(repo_dir / "docs" / "onnx_support_measured.json",
             replace(whole(torch.__version__)))
    part = tmp_path / "part.json"
    art.save(part, art.make_artifact(replace(FP, torch=torch.__version__), "ci", 25, 0,
                                     {"sin": result(["sin"], Stage.OK)}))
    with pytest.raises(Exception, match=r"partial sweep: 1 spec\(s\) measured before are missing \(relu\)"):
        main_raising(["bot", "assemble", str(part), "--repo-dir", str(repo_dir),
                      "--out", str(tmp_path / "out")])


def main_raising(argv):
    from opsweep.cli.invocation import Invocation
    from opsweep.cli.main import main, parse
    from opsweep.cli.settings import Settings
    settings = Settings.read()
    options = parse(argv, settings)
    # as opsweep.cli.main runs a bot step, without its mapping of errors to exit codes
    return options.run(Invocation(options, settings, main))


def test_a_pin_pushed_during_the_sweep_is_never_overwritten(github, monkeypatch, tmp_path,
                                                            origin):
    """Defect 3 through the privileged half: the branch is re-pinned after the head was
    checked out; the push is rejected and the stale files are not rebased onto it."""
    bare, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    human = checkout(bare, tmp_path / "human")
    (human / "pyproject.toml").write_text(PYPROJECT.format("2.15.0"))
    git(human, *IDENT, "commit", "-qam", "pin torch 2.15.0")
    git(human, "push", "-q", "origin", "HEAD:refs/heads/feature")
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head,
                  measured(tmp_path, whole("2.13.0")))
    assert out["changed"] == "false"
    assert git(bare, "log", "-1", "--format=%s", "feature") == "pin torch 2.15.0"
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    assert "Not committed" in comment.body and "torch 2.13.0 -> 2.15.0" in comment.body


def test_a_failed_command_run_says_so_and_replaces_the_eyes(github, monkeypatch, tmp_path,
                                                            origin):
    from opsweep.bot import github as bot
    _, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    github.repo(REPO).permissions.update({"maintainer": "admin"})
    request = command_request(github, sha)
    gh_comment = next(c for c in github.comments(REPO, 5) if c.id == request["comment_id"])
    from github import Auth, Github
    bot.react(Github(base_url=github.base, auth=Auth.Token("t0ken")), REPO, 5, gh_comment.id,
              "eyes")
    (tmp_path / "run.json").write_text(json.dumps(command_payload(request)))
    (tmp_path / "request.json").write_text(json.dumps(request))
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    assert main(["bot", "failed", "--run-event", str(tmp_path / "run.json"), "--repo", REPO,
                 "--request", str(tmp_path / "request.json"),
                 "--bot-login", "github-actions[bot]"]) == 0
    assert gh_comment.reactions == [("-1", "github-actions[bot]")]
    (sticky,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    assert f"measurement of `{sha[:12]}` failed" in sticky.body


def broken_result(tmp_path):
    """What `bot assemble` uploads for a pin set whose canary failed."""
    from opsweep.artifact.data import Breakage
    new = art.make_artifact(replace(FP, torch="2.13.0", onnxscript="0.9.9"), "ci", 25, 0, {},
                            broken=Breakage("stock", "raw-error", "ImportError: no onnxscript"))
    out = tmp_path / "result"
    art.save(out / "docs" / "onnx_support_measured.json", new)
    return out


def test_a_pin_set_that_breaks_the_exporter_is_headlined_once_and_never_committed(
        github, monkeypatch, tmp_path, origin):
    bare, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    (tmp_path / "run.json").write_text(json.dumps(run_payload(sha, REPO)))
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "gh_output"))
    args = ["bot", "publish", "--run-event", str(tmp_path / "run.json"), "--result",
            str(broken_result(tmp_path)), "--repo-dir", str(head), "--base-dir", str(head),
            "--repo", REPO, "--bot-login", "github-actions[bot]"]
    assert main(args) == 1  # the job fails: the bump cannot merge green
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    assert comment.body.count("breaks the exporter") == 1
    assert "ImportError: no onnxscript" in comment.body and "`0.9.9`" in comment.body
    assert "| regression |" not in comment.body  # no per-operator rows
    assert git(bare, "rev-parse", "feature") == sha  # nothing pushed
    outputs = read_outputs((tmp_path / "gh_output").read_text())
    assert outputs["broken"] == "true" and outputs["changed"] == "false"


def test_a_failed_run_whose_result_is_a_breakage_comments_the_breakage(
        github, monkeypatch, tmp_path, origin):
    """The measuring run fails after uploading a breakage (so the check is red): the failed
    job comments the headline, not "the measurement failed"."""
    bare, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    base = checkout(bare, tmp_path / "base")
    payload = run_payload(sha, REPO)
    payload["workflow_run"]["conclusion"] = "failure"
    (tmp_path / "run.json").write_text(json.dumps(payload))
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    for result in (tmp_path / "nothing", broken_result(tmp_path)):
        assert main(["bot", "failed", "--run-event", str(tmp_path / "run.json"), "--repo", REPO,
                     "--bot-login", "github-actions[bot]", "--result", str(result),
                     "--base-dir", str(base)]) == 0
        (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
        if result.name == "nothing":
            assert "failed; see the run" in comment.body
        else:
            assert comment.body.count("breaks the exporter") == 1
            assert "ImportError: no onnxscript" in comment.body


def _models(torch: str, numerics: str = "pass", lost: str = "", torchscript: str = "") -> str:
    """A models record (version 2) as the main command writes it, checked at `torch`; with
    `torchscript` (bert's TorchScript export verdict), version 3, checked with that target
    too (check-targets = ["torchscript"])."""
    key = {"stack": {"torch": torch, "onnx": FP.onnx, "onnxruntime": FP.onnxruntime,
                     "onnxscript": FP.onnxscript}, "opset": 20, "model": "", "opsweep": "0.9.0",
           "tolerance_policy": "builtin", "export": True}
    bert = {"name": "tiny bert", "source": "m.py:bert", "failed": numerics != "pass",
            "uses": [{"op": "sin"}], "check_fingerprint": key,
            "verdict": {"export": "pass", "runtime": "pass", "numerics": numerics},
            "reality": {"stage": "ok" if numerics == "pass" else "numerics",
                        "node": "" if numerics == "pass" else "sin_3", "op": "sin",
                        "error": "", "dynamic_stage": "", "dynamic_error": ""}}
    vit = {"name": "vit", "source": "m.py:vit", "failed": bool(lost), "uses": [{"op": "relu"}],
           "check_fingerprint": key, **({"lost": lost, "verdict": None} if lost else {
               "verdict": {"export": "pass", "runtime": "pass", "numerics": "pass"}})}
    if torchscript:
        failed = torchscript != "pass"
        after = "not reached" if failed else "pass"
        bert["targets"] = {"torchscript": {
            "measured": False, "prediction": {}, "uses": [], "failed": failed,
            "verdict": {"export": torchscript, "runtime": after, "numerics": after},
            "reality": {"stage": "translation-error" if failed else "ok",
                        "op": "sin" if failed else "",
                        "error": "Unsupported: ONNX export of operator sin" if failed else ""}}}
    return json.dumps({"models_version": 3 if torchscript else 2, "models": [bert, vit]})


TRANSITION = ("- **regression** `tiny bert`: numerics pass → **fail** at `torch 2.13.0`; first "
              "diverging node `sin_3` (`aten::sin`)")


def test_a_pin_move_s_model_transitions_follow_the_operator_transitions_in_the_sticky_comment(
        github, monkeypatch, tmp_path, origin):
    """torch 2.12.0 → 2.13.0 breaks `sin`: the one sticky comment (the bot's earlier one,
    edited) says so, then lists the models whose verdict moved, each with where the new
    record says it fails, and the regenerated models record is committed."""
    bare, sha = origin
    seed = checkout(bare, tmp_path / "seed2")  # the branch's committed models record
    (seed / "docs" / "models_checked.json").write_text(_models("2.12.0"))
    git(seed, "add", ".")
    git(seed, *IDENT, "commit", "-qm", "models checked")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/feature")
    sha = git(seed, "rev-parse", "HEAD")
    github.add_pull(REPO, 7, ref="feature", sha=sha)
    earlier = github.add_comment(REPO, 7, f"{MARKER}\nan earlier run's report",
                                 "github-actions[bot]", "Bot")
    head = checkout(bare, tmp_path / "head")
    result = measured(tmp_path, whole("2.13.0", Stage.NUMERICS))
    (result / "docs" / "models_checked.json").write_text(
        _models("2.13.0", "fail", lost="worker killed by SIGSEGV"))
    publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head, result)
    (comment,) = [c for c in github.comments(REPO, 7) if MARKER in c.body]
    assert comment.id == earlier.id
    assert [(m, p) for m, p, _ in github.writes if "/comments" in p] == [
        ("PATCH", f"/repos/{REPO}/issues/comments/{earlier.id}")]
    body = comment.body
    assert body.index("### Regressions") < body.index("### Models") < body.index(TRANSITION)
    assert ("(moved: `torch 2.12.0 → 2.13.0`): 1 regression; 1 lost; 0 unchanged.") in body
    assert ("- **lost** `vit`: machine failure, no verdict at `torch 2.13.0`: "
            "`worker killed by SIGSEGV`") in body
    assert "`sin` numerics: full → none (regression)" in body  # the operator tiny bert uses
    assert body.index("### Models") < body.index("Committed the regenerated")
    assert "docs/models_checked.json" in git(bare, "show", "--stat", "feature")
    summary = (tmp_path / "summary.md").read_text()
    assert TRANSITION in summary


ADOPTER = """[project]
name = "adopter"
[tool.opsweep]
pins = { requirements = "requirements/onnx.txt" }
artifact = "site/data/onnx.json"
pages-dir = "site"
history-dir = "site/history"
"""


def adopter_origin(tmp_path, models=None):
    """An adopter's origin: its own layout and torch pinned in a requirements file; with
    `models` (a models record), its own [tool.opsweep] models, checked as that record says."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    (seed / "pyproject.toml").write_text(ADOPTER + ('models = ["demo/models.py:build"]\n'
                                                    if models is not None else ""))
    if models is not None:
        (seed / "site").mkdir()
        (seed / "site" / "models_checked.json").write_text(models)
    (seed / "requirements").mkdir()
    (seed / "requirements" / "onnx.txt").write_text("torch==2.13.0\nhypothesis==6.170.17\n")
    art.save(seed / "site" / "data" / "onnx.json", whole("2.12.0"))
    git(seed, "add", ".")
    git(seed, *IDENT, "commit", "-qm", "bump torch")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/feature")
    return bare, git(seed, "rev-parse", "HEAD")


def adopter_result(tmp_path, artifact):
    out = tmp_path / "result"
    art.save(out / "site" / "data" / "onnx.json", artifact)
    (out / "site" / "supported_operators.md").write_text("# page\n")
    return out


def test_publish_honours_the_configured_layout_and_pin_source(github, monkeypatch, tmp_path):
    """[tool.opsweep] artifact, pages-dir and pins (a requirements file) of the default
    branch's checkout: the result is taken from those paths, checked against those pins,
    and committed there; nothing lands in opsweep's own docs/ layout."""
    bare, sha = adopter_origin(tmp_path)
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head,
                  adopter_result(tmp_path, whole("2.13.0", Stage.NO_TRANSLATION)))
    assert out["changed"] == "true" and out["regressions"] == "1", out
    tree = git(bare, "ls-tree", "-r", "--name-only", "feature").split("\n")
    assert "site/supported_operators.md" in tree and not any(p.startswith("docs/") for p in tree)
    committed = git(bare, "show", "feature:site/data/onnx.json")
    assert json.loads(committed)["fingerprint"]["torch"] == "2.13.0"
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    assert "`torch 2.12.0 → 2.13.0`" in comment.body


def test_an_adopter_s_own_models_get_the_same_section(github, monkeypatch, tmp_path):
    """[tool.opsweep] models of an adopter with its own layout: the models record lives in
    its pages directory (site/models_checked.json), on the base and in the result (the
    other cases, a record on one side only: tests/unit/test_models_diff.py)."""
    bare, sha = adopter_origin(tmp_path, models=_models("2.12.0"))
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    result = adopter_result(tmp_path, whole("2.13.0", Stage.NUMERICS))
    (result / "site" / "models_checked.json").write_text(_models("2.13.0", "fail"))
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head, result)
    assert out["changed"] == "true", out
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    body = comment.body
    assert body.index("### Regressions") < body.index("### Models") < body.index(TRANSITION)
    assert "1 regression; 1 unchanged." in body
    committed = json.loads(git(bare, "show", "feature:site/models_checked.json"))
    assert committed["models"][0]["verdict"]["numerics"] == "fail"


def test_a_models_target_s_transitions_are_its_own_in_the_section(github, monkeypatch,
                                                                  tmp_path):
    """Models checked with the TorchScript exporter too: bert's TorchScript export moves
    pass → fail while its stock verdicts stay; the section says so on a line of its own,
    naming the target, and counts the stock verdicts unchanged."""
    bare, sha = adopter_origin(tmp_path, models=_models("2.12.0", torchscript="pass"))
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    result = adopter_result(tmp_path, whole("2.13.0", Stage.NUMERICS))
    (result / "site" / "models_checked.json").write_text(_models("2.13.0", torchscript="fail"))
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head, result)
    assert out["changed"] == "true", out
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    body = comment.body
    assert ("- **regression** `tiny bert` with `torchscript`: export pass → **fail**, runtime "
            "pass → **not reached**, numerics pass → **not reached** at `torch 2.13.0`; fails "
            "in `translation-error` at `aten::sin`: `Unsupported: ONNX export of operator sin`"
            ) in body, body
    assert "1 regression; 1 unchanged." in body  # vit unchanged; bert's stock verdicts too
    committed = json.loads(git(bare, "show", "feature:site/models_checked.json"))
    assert committed["models"][0]["targets"]["torchscript"]["verdict"]["export"] == "fail"


def test_publish_checks_the_result_against_the_configured_pins(github, monkeypatch, tmp_path):
    bare, sha = adopter_origin(tmp_path)
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    before = git(bare, "rev-parse", "feature")
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head,
                  adopter_result(tmp_path, whole("2.12.5")))
    assert out["outcome"] == "failed"
    assert "torch measured 2.12.5, pinned 2.13.0" in out["reason"]  # read from requirements/
    assert git(bare, "rev-parse", "feature") == before


def test_the_sticky_comment_reports_drift_after_the_transitions(github, monkeypatch, tmp_path):
    """A cell whose error grew within tolerance is reported with the pin that moved; one
    whose numbers are the same is not."""
    def measured_at(torch, ulp, max_abs):
        return art.make_artifact(replace(FP, torch=torch), "ci", 25, 0, {
            "softmax": errored(["softmax"], cell(ulp=ulp, max_abs=max_abs),
                               cell("float32", 2, 1e-6)),
            "sin": result(["sin"], Stage.OK if torch == "2.12.0" else Stage.NO_TRANSLATION)})
    bare, sha = make_origin(tmp_path, measured_at("2.12.0", 2, 0.0009766))
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    out = publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head,
                  measured(tmp_path, measured_at("2.13.0", 9, 0.001466)))
    assert out["regressions"] == "1"
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    body = comment.body
    line = ("- `softmax` float16 rank 3: max error 2 → 9 ULP (0.000977 → 0.00147) with "
            "`torch 2.13.0`")
    assert body.index("### Regressions") < body.index("### Numerics drift") < body.index(line)
    assert "float32 rank 2" not in body  # the same numbers: nothing said


def test_the_sample_comment_in_adopting_md_is_the_bot_s(github, monkeypatch, tmp_path, origin):
    """docs/adopting.md shows the comment this fake-GitHub run posts (a torch move that
    regresses `sin`), its commit SHAs written as placeholders: regenerated with
    OPSWEEP_UPDATE_DOCS=1, and this test fails when the bot's wording moves without it."""
    import re
    from pathlib import Path

    from ..docsync import check
    bare, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    head = checkout(bare, tmp_path / "head")
    publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head,
            measured(tmp_path, whole("2.13.0", Stage.NO_TRANSLATION)))
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    body = re.sub(r"\b[0-9a-f]{40}\b", "<sha>", comment.body)
    body = re.sub(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}\b", "<sha>", body)
    assert "torch 2.12.0 → 2.13.0" in body and "Committed the regenerated" in body
    fence = "`" * max(4, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    check(Path(__file__).resolve().parents[2] / "docs" / "adopting.md", "sample-comment",
          f"{fence}markdown\n{body.rstrip()}\n{fence}\n")

"""Issue 30's attacks on the privileged half, each performed for real: PyGithub against the
fake GitHub, real git against a local bare repository, the production workflow files read
as GitHub reads them. Each test is the attack; it failed on the code before its fix."""

import json
import shutil
import re
from pathlib import Path

import pytest
import yaml

from opsweep.artifact import data as art
from opsweep.bot.github import MARKER
from opsweep.cli.main import main
from opsweep.errors import ArtifactError

from .fake_github import display_title
from .fake_github import read_outputs as github_outputs
from .test_publish import REPO, checkout, git, make_origin, measured, run_payload, whole

#: the bot's own client, without PyGithub's politeness delays (conftest.py says why)
pytestmark = pytest.mark.usefixtures("no_politeness_delays")

ROOT = Path(__file__).resolve().parents[2]
COMMAND_WORKFLOW = ROOT / ".github" / "workflows" / "onnx-command.yml"
BOT = "github-actions[bot]"


@pytest.fixture
def origin(tmp_path):
    """test_publish's origin: `feature` pins torch 2.13.0 over an artifact of 2.12.0."""
    return make_origin(tmp_path)


def env_for(monkeypatch, github, tmp_path, token="t0ken"):
    out = tmp_path / "gh_output"
    out.write_text("")
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    return out


def command_event(number, comment, pull_request=True):
    return {"action": "created",
            "issue": {"number": number, "title": f"PR {number}",
                      **({"pull_request": {"url": "x"}} if pull_request else {})},
            "comment": {"id": comment.id, "body": comment.body,
                        "user": {"login": comment.login, "type": "User"}},
            "repository": {"full_name": REPO}}


def run_command(tmp_path, monkeypatch, github, number, comment):
    out = env_for(monkeypatch, github, tmp_path)
    (tmp_path / "event.json").write_text(json.dumps(command_event(number, comment)))
    rc = main(["bot", "command", "--event", str(tmp_path / "event.json"), "--repo", REPO,
               "--bot-login", BOT, "--request", str(tmp_path / "request" / "request.json")])
    assert rc == 0
    return github_outputs(out.read_text())


def command_run_payload(comment_event: dict, sha: str) -> dict:
    """The workflow_run payload GitHub sends onnx-publish after an onnx-command run: the
    run's head is the default branch, and `display_title` is onnx-command's `run-name`
    evaluated on the comment's event (the issue's title when there is no run-name)."""
    payload = run_payload(sha, REPO, event="issue_comment", branch="main")
    payload["workflow_run"].update(id=4242, display_title=display_title(
        COMMAND_WORKFLOW, comment_event, default=comment_event["issue"]["title"]))
    return payload


def publish_rc(tmp_path, monkeypatch, github, payload, request, result, head):
    out = env_for(monkeypatch, github, tmp_path)
    (tmp_path / "run.json").write_text(json.dumps(payload))
    (tmp_path / "request.json").write_text(json.dumps(request))
    rc = main(["bot", "publish", "--run-event", str(tmp_path / "run.json"), "--repo", REPO,
               "--request", str(tmp_path / "request.json"), "--result", str(result),
               "--repo-dir", str(head), "--base-dir", str(head), "--bot-login", BOT])
    return rc, out


# --- finding 1 -------------------------------------------------------------------------------

def test_a_fork_run_with_a_forged_request_cannot_get_files_committed_to_another_pr(
        github, monkeypatch, tmp_path, origin, capsys):
    """The fork's code re-uploads `onnx-request` naming an old `/regen-onnx` on
    same-repository PR #5 (say the bump branch) and its current head: publish must see that
    this run was started by the command on fork PR #6, refuse, and commit nothing."""
    bare, sha = origin
    github.repo(REPO).permissions.update({"maintainer": "admin"})
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    old = github.add_comment(REPO, 5, "/regen-onnx", "maintainer")
    fork_head = "f" * 40
    github.add_pull(REPO, 6, head_repo="someone/fork", ref="main", sha=fork_head)
    fork_command = github.add_comment(REPO, 6, f"/regen-onnx {fork_head}", "maintainer")
    payload = command_run_payload(command_event(6, fork_command), "a" * 40)
    forged = {"event": "issue_comment", "pr": 5, "sha": sha, "profile": "ci",
              "comment_id": old.id}
    result = measured(tmp_path, whole("2.13.0"))
    (result / "docs" / "supported_operators.md").write_text("<script>alert(1)</script>\n")
    head = checkout(bare, tmp_path / "head")
    rc, _ = publish_rc(tmp_path, monkeypatch, github, payload, forged, result, head)
    err = capsys.readouterr().err
    assert git(bare, "rev-parse", "feature") == sha, "the fork's files were committed to #5"
    assert rc != 0
    assert "names pull request #5 and comment" in err and "#6" in err, err
    assert not any(MARKER in c.body for c in github.comments(REPO, 5))


def test_the_command_run_s_binding_is_the_run_name_of_trusted_numeric_fields_only():
    wf = yaml.safe_load(COMMAND_WORKFLOW.read_text())
    fields = re.findall(r"\$\{\{\s*([^}]*?)\s*\}\}", wf.get("run-name", ""))
    assert fields == ["github.event.issue.number", "github.event.comment.id"]


# --- finding 2 -------------------------------------------------------------------------------

def test_a_symlinked_destination_on_the_branch_writes_nothing_outside_the_checkout(
        github, monkeypatch, tmp_path, origin, capsys):
    """A same-repository branch commits docs/operators/sin.md as a link into the bot's installed
    package: publish must not write through it (the refusal is the outcome: nothing is
    committed, the comment and the exit code say why)."""
    bare, _ = origin
    package = tmp_path / "site-packages" / "opsweep" / "cli" / "settings.py"
    package.parent.mkdir(parents=True)
    package.write_text("ORIGINAL = True\n")
    work = checkout(bare, tmp_path / "writer")
    (work / "docs" / "operators").mkdir(exist_ok=True)
    (work / "docs" / "operators" / "sin.md").symlink_to(package)
    git(work, "add", "docs/operators/sin.md")
    git(work, "-c", "user.name=w", "-c", "user.email=w@example.invalid", "commit", "-qm", "link")
    git(work, "push", "-q", "origin", "HEAD:refs/heads/feature")
    sha = git(work, "rev-parse", "HEAD")
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    result = measured(tmp_path, whole("2.13.0"))
    (result / "docs" / "operators").mkdir(exist_ok=True)
    (result / "docs" / "operators" / "sin.md").write_text("import os  # runs in the publish job\n")
    head = checkout(bare, tmp_path / "head")
    (tmp_path / "request.json").write_text("{}")
    rc, _ = publish_rc(tmp_path, monkeypatch, github, run_payload(sha, REPO), {}, result, head)
    assert package.read_text() == "ORIGINAL = True\n", "publish wrote through the link"
    assert git(bare, "rev-parse", "feature") == sha
    assert rc == 1
    assert "docs/operators/sin.md is a symbolic link" in capsys.readouterr().err
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    assert "docs/operators/sin.md is a symbolic link" in comment.body


def test_the_commit_is_built_from_blobs_and_refuses_links_and_escapes(tmp_path, origin):
    from opsweep.bot.git import GitError, commit_files
    bare, sha = origin
    head = checkout(bare, tmp_path / "head")
    victim = tmp_path / "victim"
    victim.mkdir()
    (head / "docs" / "history").symlink_to(victim, target_is_directory=True)
    git(head, "add", "docs/history")
    git(head, "-c", "user.name=w", "-c", "user.email=w@example.invalid", "commit", "-qm", "dir")
    linked = git(head, "rev-parse", "HEAD")
    source = tmp_path / "record.json"
    source.write_text("{}\n")
    for path, why in [("docs/history/torch-x.json", "docs/history is a symbolic link"),
                      ("../outside.json", "not a path inside the checkout"),
                      ("/etc/x.json", "not a path inside the checkout"),
                      (".git/hooks/post-commit", "not a path inside the checkout")]:
        with pytest.raises(GitError, match=re.escape(why)):
            commit_files(head, {path: source}, "feature", linked, "m")
    assert list(victim.iterdir()) == []
    # a regular destination: the commit holds the blob, the working tree is not written
    clean = checkout(bare, tmp_path / "clean")
    pushed = commit_files(clean, {"docs/new.json": source}, "feature", sha, "m")
    assert git(bare, "show", f"{pushed.sha}:docs/new.json") == "{}"
    assert not (clean / "docs" / "new.json").exists()


def test_the_commit_removes_stale_rendered_pages_and_never_a_hand_written_one(tmp_path, origin):
    """An operator gone from the catalog: its rendered page leaves the branch with the commit
    that regenerates the others; a hand-written page beside it, and any page of a directory
    the result does not render, stay."""
    from opsweep.bot.git import commit_files
    bare, _ = origin
    head = checkout(bare, tmp_path / "head")
    mark = "<!-- Generated by `opsweep render`; edit the templates, not this file. -->\n"
    (head / "docs" / "operators").mkdir()
    for name, text in (("gone.md", mark), ("sin.md", mark), ("index.md", mark),
                       ("notes.md", "# ours\n")):
        (head / "docs" / "operators" / name).write_text(text)
    git(head, "add", "docs/operators")
    git(head, "-c", "user.name=w", "-c", "user.email=w@example.invalid", "commit", "-qm", "pages")
    sha = git(head, "rev-parse", "HEAD")
    source = tmp_path / "page.md"
    source.write_text(f"# sin\n{mark}")
    files = {"docs/operators/sin.md": source, "docs/operators/index.md": source}
    pushed = commit_files(head, files, "feature", sha, "m", prune=["docs/operators", "docs/specs"])
    tree = git(bare, "ls-tree", "-r", "--name-only", pushed.sha, "docs/operators").split()
    assert tree == ["docs/operators/index.md", "docs/operators/notes.md", "docs/operators/sin.md"]


# --- finding 3 -------------------------------------------------------------------------------

def test_a_fork_head_is_bound_by_its_full_sha_only(github, monkeypatch, tmp_path):
    head = "c0ffee" + "1" * 34
    github.repo(REPO).permissions.update({"maintainer": "admin"})
    github.add_pull(REPO, 6, head_repo="someone/fork", ref="main", sha=head)
    short = github.add_comment(REPO, 6, f"/regen-onnx {head[:7]}", "maintainer")
    out = run_command(tmp_path, monkeypatch, github, 6, short)
    assert out["accepted"] == "false", "a 7-digit prefix bound a fork's head"
    assert "full 40-character" in out["reason"]
    assert any("full 40-character" in c.body for c in github.comments(REPO, 6))
    full = github.add_comment(REPO, 6, f"/regen-onnx {head}", "maintainer")
    assert run_command(tmp_path, monkeypatch, github, 6, full)["accepted"] == "true"


# --- finding 10 ------------------------------------------------------------------------------

def test_a_fingerprint_string_cannot_add_lines_to_the_step_outputs(tmp_path, origin,
                                                                    monkeypatch):
    bare, _ = origin
    head = checkout(bare, tmp_path / "head")
    path = head / "docs" / "onnx_support_measured.json"
    data = json.loads(path.read_text())
    data["fingerprint"]["torch"] = "2.12.0\nrun=false\nx"
    path.write_text(json.dumps(data))
    out = tmp_path / "o"
    out.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    assert main(["bot", "should-run", "--repo-dir", str(head)]) == 0
    outputs = github_outputs(out.read_text())
    assert outputs["run"] == "true" and set(outputs) == {"run", "reason"}
    assert "\n" not in outputs["reason"]
    with pytest.raises(ArtifactError, match="fingerprint"):
        art.validate_data(data)


def test_outputs_use_the_delimiter_syntax_and_refuse_what_breaks_a_strict_key(tmp_path):
    from opsweep.cli import actions
    from opsweep.errors import UsageError
    target = tmp_path / "out"
    actions.write_outputs({"reason": "a\nb=c", "run": True}, str(target))
    text = target.read_text()
    assert re.match(r"reason<<ghadelimiter_[0-9a-f]{32}\n", text)
    assert github_outputs(text) == {"reason": "a b=c", "run": "true"}
    for key, value in [("sha", "1234\nrun=false"), ("pr", "5 6"), ("run", "maybe")]:
        with pytest.raises(UsageError, match=f"output {key}"):
            actions.write_outputs({key: value}, str(target))


# --- finding 11 ------------------------------------------------------------------------------

def outside_code(text: str) -> str:
    return re.sub(r"(`+).*?\1", "", text, flags=re.DOTALL)


def test_a_reader_cannot_make_the_bot_post_their_mentions_and_links(github, monkeypatch,
                                                                     tmp_path):
    github.repo(REPO).permissions.update({"reader": "read", "maintainer": "admin"})
    github.add_pull(REPO, 5, sha="5" * 40)
    body = "/regen-onnx @octo-org/everyone [click](https://evil.example) #1"
    comment = github.add_comment(REPO, 5, body, "reader")
    out = run_command(tmp_path, monkeypatch, github, 5, comment)
    replies = [c.body for c in github.comments(REPO, 5) if c.login == BOT]
    assert out["accepted"] == "false" and len(replies) == 1
    assert "read permission" in replies[0], replies
    for text in ("@", "evil.example", "#1", "unknown"):
        assert text not in outside_code(replies[0]), replies[0]
    # a writer's unknown argument is echoed, inside a code span only
    writer = github.add_comment(REPO, 5, "/regen-onnx @octo `x` [y](https://evil.example)",
                                "maintainer")
    run_command(tmp_path, monkeypatch, github, 5, writer)
    reply = [c.body for c in github.comments(REPO, 5) if c.login == BOT][-1]
    assert "unknown argument" in reply
    for text in ("@octo", "evil.example"):
        assert text in reply and text not in outside_code(reply), reply


# --- finding 12 ------------------------------------------------------------------------------

def test_a_refused_push_fails_the_run_and_says_so(github, monkeypatch, tmp_path, origin, capsys):
    """A protected branch (here: the origin's pre-receive hook declines) on a dispatch."""
    bare, sha = origin
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'GH006: Protected branch update failed' >&2\nexit 1\n")
    hook.chmod(0o755)
    github.attach_git(REPO, bare)  # the API says `feature` is a branch at the measured head
    head = checkout(bare, tmp_path / "head")
    payload = run_payload(sha, REPO, event="workflow_dispatch")
    rc, out = publish_rc(tmp_path, monkeypatch, github, payload, {"profile": "ci"},
                         measured(tmp_path, whole("2.13.0")), head)
    err = capsys.readouterr().err
    assert rc == 1, "a push the remote refused ended green"
    assert "Protected branch update failed" in err and "not committed" in err, err
    assert github_outputs(out.read_text())["outcome"] == "failed"


# --- finding 13 ------------------------------------------------------------------------------

def test_the_job_summary_stays_under_github_s_limit_and_says_where_the_rest_is(tmp_path):
    from opsweep.cli import actions
    summary = tmp_path / "summary.md"
    summary.write_text("## earlier step\n")
    actions.append_summary("| row |\n" * 300_000, str(summary))  # 2.4 MB
    size = summary.stat().st_size
    assert size < 1024 * 1024, size
    assert summary.read_text().startswith("## earlier step\n")
    assert "onnx-result" in summary.read_text()[-400:]


# --- finding 14 ------------------------------------------------------------------------------

def _closure(names):
    from importlib import metadata

    from packaging.requirements import Requirement
    seen, todo = {}, list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        dist = metadata.distribution(name)
        seen[key] = dist.version
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": "crypto"}):
                todo.append(req.name)
    return seen


def test_the_privileged_install_is_pinned_with_hashes():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    install = action["runs"]["steps"][0]["run"]
    # the light modes (bot and every privileged one) install the hash-pinned requirements
    assert "bot|decide|command|publish|failed|bump) light=true" in install
    bot = install.split('if [ "$light" = "true" ]', 1)[1].split("\nfi", 1)[0]
    assert "--require-hashes" in bot and "PyGithub jsonschema jinja2" not in bot, bot
    (name,) = re.findall(r"-r \"\$OPSWEEP_SOURCE/([\w./-]+)\"", bot)
    pins = {}
    for entry in (ROOT / name).read_text().replace("\\\n", " ").splitlines():
        entry = entry.split("#", 1)[0].strip()
        if entry:
            m = re.fullmatch(r"([A-Za-z0-9._-]+)==(\S+)((?:\s+--hash=sha256:[0-9a-f]{64})+)", entry)
            assert m, entry
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    missing = set(_closure(["PyGithub", "jsonschema", "jinja2"])) - set(pins)
    assert not missing, f"not pinned: {sorted(missing)}"


# --- issue 48: a writer (may push branches and tags, not to the protected main) ----------

MEASURE_FILE = ".github/workflows/onnx-measure.yml"


def writer_tag(bare, tmp_path, workflow=MEASURE_FILE, tag="main"):
    """`main` is at `feature`'s commit; the writer commits their own workflow named
    onnx-measure on top of it and pushes that commit as refs/tags/`tag` (no branch)."""
    work = checkout(bare, tmp_path / "writer")
    git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
    (work / workflow).parent.mkdir(parents=True, exist_ok=True)
    (work / workflow).write_text("name: onnx-measure\non: push\njobs: {}\n")
    (work / "payload.py").write_text("import os  # the writer's code, bound for main\n")
    git(work, "add", ".")
    git(work, "-c", "user.name=w", "-c", "user.email=w@example.invalid", "commit", "-qm", "mine")
    git(work, "push", "-q", "origin", f"HEAD:refs/tags/{tag}")
    return git(work, "rev-parse", "HEAD")


def head_at(bare, where, sha):
    """The publish job's checkout of the measured head (a tag's commit included)."""
    head = checkout(bare, where)
    git(head, "checkout", "-q", sha)
    return head


def branches(bare):
    listed = git(bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
    return {name.removeprefix("refs/heads/"): sha
            for name, sha in (line.split(" ") for line in listed.split("\n"))}


@pytest.mark.parametrize("event", ["push", "workflow_dispatch"])
@pytest.mark.parametrize("workflow", [MEASURE_FILE, ".github/workflows/mine.yml"])
def test_a_tag_named_like_the_default_branch_publishes_nothing(
        github, monkeypatch, tmp_path, origin, capsys, event, workflow):
    """Finding 1 (failed before the fix: on `push` the writer's commit went into
    opsweep/regen-… and a pull request the bot opened; on `workflow_dispatch` main was
    fast-forwarded to it). The run's head_branch is the tag's name, `main`: publish asks the
    API whether a BRANCH `main` has that head (it does not: a tag does) and whether the run's
    workflow file is onnx-measure's, and publishes nothing."""
    bare, sha = origin
    github.attach_git(REPO, bare)
    tagged = writer_tag(bare, tmp_path, workflow)
    before = branches(bare)
    payload = run_payload(tagged, REPO, event=event, branch="main", path=workflow)
    rc, _ = publish_rc(tmp_path, monkeypatch, github, payload, {"profile": "ci"},
                       measured(tmp_path, whole("2.13.0")), head_at(bare, tmp_path / "h", tagged))
    err = capsys.readouterr().err
    assert branches(bare) == before == {"feature": sha, "main": sha}, "the writer's commit landed"
    assert github.repo(REPO).pulls == {} and github.writes == []
    assert rc == 2, err
    why = "refs/tags/main" if workflow == MEASURE_FILE else f"workflow_run.path '{workflow}'"
    assert why in err, err


@pytest.mark.parametrize("event", ["push", "workflow_dispatch"])
def test_no_mode_pushes_to_the_default_branch(github, monkeypatch, tmp_path, origin, event):
    """A dispatch on the default branch (failed before the fix: it pushed to main) goes the
    way of a push's stale artifact: a bot branch and the bot's pull request into main."""
    bare, sha = origin
    github.attach_git(REPO, bare)
    git(bare, "update-ref", "refs/heads/main", sha)
    payload = run_payload(sha, REPO, event=event, branch="main")
    rc, out = publish_rc(tmp_path, monkeypatch, github, payload, {"profile": "nightly"},
                         measured(tmp_path, whole("2.13.0")), head_at(bare, tmp_path / "h", sha))
    assert rc == 0
    assert git(bare, "rev-parse", "main") == sha, "a privileged mode pushed to main"
    bot_branch = f"opsweep/regen-{sha[:12]}"
    assert git(bare, "rev-parse", f"{bot_branch}~1") == sha
    (pull,) = github.repo(REPO).pulls.values()
    assert (pull["ref"], pull["base"], pull["user"]) == (bot_branch, "main", BOT)
    assert github_outputs(out.read_text())["changed"] == "true"


def test_a_default_branch_that_moved_on_is_not_published(github, monkeypatch, tmp_path, origin):
    """The run's head is no longer the branch's tip (a merge landed meanwhile): its own run
    measures the new tip; this one commits nothing and says why."""
    bare, sha = origin
    github.attach_git(REPO, bare)
    newer = checkout(bare, tmp_path / "newer")
    git(newer, "-c", "user.name=m", "-c", "user.email=m@example.invalid", "commit", "-q",
        "--allow-empty", "-m", "a merge")
    git(newer, "push", "-q", "origin", "HEAD:refs/heads/main")
    rc, out = publish_rc(tmp_path, monkeypatch, github, run_payload(sha, REPO, "push", "main"),
                         {}, measured(tmp_path, whole("2.13.0")),
                         head_at(bare, tmp_path / "h", sha))
    assert rc == 0 and github.repo(REPO).pulls == {}
    assert set(branches(bare)) == {"feature", "main"}
    summary = (tmp_path / "summary.md").read_text()
    assert f"the branch 'main' is at {git(newer, 'rev-parse', 'HEAD')[:12]}" in summary


def test_a_pull_request_whose_head_is_the_default_branch_commits_nothing(
        github, monkeypatch, tmp_path, origin):
    """Finding 2 (failed before the fix: the regenerated commit fast-forwarded main). The
    writer opens a pull request from `main` into a branch of theirs whose onnx-measure.yml
    they edited; whatever the event, the bot never commits to the default branch."""
    bare, sha = origin
    github.attach_git(REPO, bare)
    git(bare, "update-ref", "refs/heads/main", sha)
    git(bare, "update-ref", "refs/heads/writer-base", sha)
    github.repo(REPO).permissions.update({"writer": "write"})
    github.add_pull(REPO, 7, ref="main", sha=sha, base="writer-base", user="writer")
    command = github.add_comment(REPO, 7, "/regen-onnx", "writer")
    request = {"event": "issue_comment", "pr": 7, "sha": sha, "profile": "ci",
               "comment_id": command.id}
    for payload in (run_payload(sha, REPO, branch="main"),
                    command_run_payload(command_event(7, command), sha)):
        rc, _ = publish_rc(tmp_path, monkeypatch, github, payload, request,
                           measured(tmp_path, whole("2.13.0")), head_at(bare, tmp_path / "h", sha))
        shutil.rmtree(tmp_path / "h")
        assert rc == 0
        assert git(bare, "rev-parse", "main") == sha, "the bot committed to the default branch"
        (comment,) = [c for c in github.comments(REPO, 7) if MARKER in c.body]
        assert "Not committed: the branch 'main' is the default branch" in comment.body


def test_the_published_workflow_files_are_the_ones_that_exist_and_init_writes():
    """The `path` a run must have is the file of that name in this repository and in an
    adopter's (`opsweep init` writes the same file names), and onnx-publish follows them."""
    from opsweep.bot.publish import COMMAND_WORKFLOW, MEASURE_WORKFLOW
    from opsweep.cli.init import WORKFLOWS
    for path, name in ((MEASURE_WORKFLOW, "onnx-measure"), (COMMAND_WORKFLOW, "onnx-command")):
        assert yaml.safe_load((ROOT / path).read_text())["name"] == name
        assert path.removeprefix(".github/workflows/") in WORKFLOWS
    publish = yaml.safe_load((ROOT / ".github" / "workflows" / "onnx-publish.yml").read_text())
    assert publish[True]["workflow_run"]["workflows"] == ["onnx-measure", "onnx-command"]

"""The bot against a stateful local fake of GitHub's REST API, with real PyGithub."""

import threading

import pytest

from opsweep.bot import github as bot
from opsweep.bot.comment import GITHUB_COMMENT_LIMIT, MARKER

from .fake_github import read_outputs

#: the bot's own client, without PyGithub's politeness delays (conftest.py says why)
pytestmark = pytest.mark.usefixtures("no_politeness_delays")

REPO = "octo/opsweep-demo"
BOT = bot.DEFAULT_BOT


def pr(github, number=7, **kw):
    github.add_pull(REPO, number, **kw)
    github.repo(REPO).permissions.update({"maintainer": "admin", "dev": "write", "reader": "read"})
    return number


def marked(github, number=7):
    return [c for c in github.comments(REPO, number) if MARKER in c.body]


def test_creates_then_edits_one_sticky_comment(github, gh):
    n = pr(github)
    first = bot.upsert_comment(gh, REPO, n, "report one", BOT)
    second = bot.upsert_comment(gh, REPO, n, "report two", BOT)
    assert first == second
    (comment,) = marked(github)
    assert comment.body == f"{MARKER}\nreport two"


def test_finds_its_comment_across_pages_and_ignores_impostors(github, gh):
    n = pr(github)
    for i in range(130):
        github.add_comment(REPO, n, f"chatter {i}", "dev")
    mine = github.add_comment(REPO, n, f"{MARKER}\nold report", BOT, "Bot")
    github.add_comment(REPO, n, f"{MARKER}\nquoted by a human", "dev")
    for i in range(130):
        github.add_comment(REPO, n, f"more chatter {i}", "reader")
    assert bot.upsert_comment(gh, REPO, n, "new report", BOT) == mine.id
    assert mine.body.endswith("new report")
    assert len(github.comments(REPO, n)) == 262  # nothing added
    pages = {path for method, path in github.log if method == "GET" and "/comments" in path}
    assert any("page=3" in p for p in pages), pages  # followed the Link headers to the end


def test_two_concurrent_runs_leave_one_comment(github, gh):
    n = pr(github)
    barrier = threading.Barrier(2)
    errors = []

    def run(text):
        try:
            barrier.wait()
            bot.upsert_comment(gh, REPO, n, text, BOT)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(f"run {i}",)) for i in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    assert len(marked(github)) == 1


def test_comment_over_the_limit_is_cut_with_a_pointer(github, gh):
    n = pr(github)
    bot.upsert_comment(gh, REPO, n, "x" * (GITHUB_COMMENT_LIMIT + 5000), BOT)
    (comment,) = marked(github)
    assert len(comment.body) <= GITHUB_COMMENT_LIMIT and "job summary" in comment.body


def event(github, body, login, action="created", number=7, type="User"):
    comment = github.add_comment(REPO, number, body, login, type)
    return comment, {"action": action, "issue": {"number": number, "pull_request": {"url": "x"}},
                     "comment": {"id": comment.id, "body": body, "user": {"login": login, "type": type}}}


def test_write_users_are_accepted_with_eyes(github, gh):
    pr(github)
    for login in ("maintainer", "dev"):
        comment, ev = event(github, "/regen-onnx nightly", login)
        cmd = bot.authorize(gh, REPO, ev, bot.parse_command(ev))
        assert cmd.accepted and cmd.profile == "nightly"
        bot.react(gh, REPO, 7, comment.id, "eyes")
        assert comment.reactions == [("eyes", BOT)]


def test_refusals(github, gh):
    pr(github)
    cases = {"reader": "has read permission", "outsider": "has none permission"}
    for login, why in cases.items():
        comment, ev = event(github, "/regen-onnx", login)
        cmd = bot.authorize(gh, REPO, ev, bot.parse_command(ev))
        assert not cmd.accepted and why in cmd.reason and cmd.respond
        bot.refuse(gh, REPO, 7, comment.id, cmd)
        assert comment.reactions == [("confused", BOT)]
        assert any(why in c.body for c in github.comments(REPO, 7))
    _, edited = event(github, "/regen-onnx", "maintainer", action="edited")
    assert not bot.parse_command(edited).accepted and not bot.parse_command(edited).respond
    _, own = event(github, "/regen-onnx", BOT, type="Bot")
    assert not bot.parse_command(own).accepted and not bot.parse_command(own).respond
    _, chatter = event(github, "please /regen-onnx", "maintainer")
    assert bot.parse_command(chatter) is None


def test_rate_limit_response_is_waited_out(github, gh):
    n = pr(github)
    github.rate_limited = 1
    bot.upsert_comment(gh, REPO, n, "after the limit", BOT)
    assert len(marked(github)) == 1


def test_fork_pull_request_is_reported_as_such(github, monkeypatch, tmp_path, capsys):
    from opsweep.cli.main import main
    github.add_pull(REPO, 9, head_repo="someone/opsweep-fork", ref="patch-1", sha="f" * 40)
    github.repo("someone/opsweep-fork")
    out = tmp_path / "out"
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    assert main(["bot", "pull", "--repo", REPO, "--pr", "9"]) == 0
    outputs = read_outputs(out.read_text())
    assert outputs == {"head_ref": "patch-1", "head_sha": "f" * 40,
                       "head_repo": "someone/opsweep-fork", "same_repo": "false"}




# --- the token actually used (defect 9) ------------------------------------------------------

def test_another_identity_never_overwrites_nor_deletes_other_authors_comments(github, client_for):
    n = pr(github)
    theirs = github.add_comment(REPO, n, f"{MARKER}\nthe Actions bot's report", BOT, "Bot")
    human = github.add_comment(REPO, n, f"{MARKER}\nquoted by a human", "dev")
    app = client_for("app-token")  # an App installation token: GET /user is not allowed
    first = bot.upsert_comment(app, REPO, n, "report one")  # login unknown: learnt from GitHub
    second = bot.upsert_comment(app, REPO, n, "report two")  # converges on the first
    third = bot.upsert_comment(app, REPO, n, "report three", "opsweep-app[bot]")
    fourth = bot.upsert_comment(app, REPO, n, "report two", "opsweep-app[bot]")
    assert first == second == third == fourth
    assert theirs.body.endswith("the Actions bot's report") and human.body.endswith("by a human")
    mine = [c for c in marked(github, n) if c.login == "opsweep-app[bot]"]
    assert [c.body for c in mine] == [f"{MARKER}\nreport two"]
    assert len(github.comments(REPO, n)) == 3


def test_identity_is_asked_of_the_api_when_the_token_may(github, client_for):
    from .fake_github import Token
    github.tokens["pat"] = Token("maint-user", installation=False, type="User")
    assert bot.identity(client_for("pat")) == "maint-user"
    assert bot.identity(client_for("t0ken")) is None  # installation token: may not ask
    n = pr(github)
    bot.upsert_comment(client_for("pat"), REPO, n, "one")
    bot.upsert_comment(client_for("pat"), REPO, n, "two")
    assert [c.body for c in marked(github, n)] == [f"{MARKER}\ntwo"]


def test_a_read_only_token_cannot_comment(github, client_for):
    """The fake models GitHub: a fork's pull_request run gets a read-only token."""
    from github import GithubException
    n = pr(github)
    try:
        bot.upsert_comment(client_for("read-token"), REPO, n, "x")
    except GithubException as exc:
        assert exc.status == 403
    else:
        raise AssertionError("a read-only token wrote a comment")
    assert github.refused and not marked(github, n)


# --- one parser, the workflow's filter agrees (defect 8) -------------------------------------

BODIES = ["/regen-onnx", "/Regen-Onnx", "  /regen-onnx nightly", "\n/REGEN-ONNX CI",
          "/regen-onnx please", "/regen-onnx nightly abc1234", "/regen-onnx abc1234def",
          "/regen-onnx\nthanks!", "please /regen-onnx", "LGTM", "/regen-onnxx", "", "/regen"]


def ev(body, login="maintainer", action="created", number=7):
    return {"action": action, "issue": {"number": number, "pull_request": {"url": "x"}},
            "comment": {"id": 1, "body": body, "user": {"login": login, "type": "User"}}}


def test_the_workflow_filter_lets_through_everything_the_parser_reads_as_a_command():
    import yaml

    from .test_workflows import ROOT
    wf = yaml.safe_load((ROOT / ".github/workflows/onnx-command.yml").read_text())
    job_if = wf["jobs"]["command"]["if"]
    assert bot.WORKFLOW_FILTER in job_if
    for body in BODIES:
        if bot.parse_command(ev(body)) is not None:  # GitHub's contains() ignores case
            assert "/regen-onnx" in body.lower(), body


def test_parser_reads_case_blanks_arguments_and_sha():
    parsed = {b: bot.parse_command(ev(b)) for b in BODIES}
    assert parsed["/Regen-Onnx"].accepted and parsed["\n/REGEN-ONNX CI"].profile == "ci"
    assert parsed["  /regen-onnx nightly"].profile == "nightly"
    please = parsed["/regen-onnx please"]
    assert not please.accepted and please.respond and "unknown argument" in please.reason
    assert parsed["/regen-onnx nightly abc1234"].sha == "abc1234"
    assert parsed["/regen-onnx\nthanks!"].accepted  # only the first line is the command
    for body in ("please /regen-onnx", "LGTM", "/regen-onnxx", "", "/regen"):
        assert parsed[body] is None, body


def test_bind_refuses_closed_stale_and_unnamed_fork_heads(github, gh):
    head = "ab" * 20
    pr(github, 7, sha=head)
    ok = bot.bind(gh, REPO, bot.parse_command(ev("/regen-onnx")))
    assert ok.accepted and ok.sha == head and ok.head_repo == REPO
    named = bot.bind(gh, REPO, bot.parse_command(ev(f"/regen-onnx {head[:9]}")))
    assert named.accepted and named.sha == head
    stale = bot.bind(gh, REPO, bot.parse_command(ev("/regen-onnx 1234567")))
    assert not stale.accepted and "not the head any more" in stale.reason
    github.add_pull(REPO, 8, head_repo="someone/fork", sha="cd" * 20)
    fork = bot.bind(gh, REPO, bot.parse_command(ev("/regen-onnx", number=8)))
    assert not fork.accepted and "lives in a fork: name the full 40-character head SHA" in fork.reason
    fork = bot.bind(gh, REPO, bot.parse_command(ev("/regen-onnx cdcdcdc", number=8)))
    assert not fork.accepted and "full 40-character" in fork.reason  # a prefix binds nothing
    fork = bot.bind(gh, REPO, bot.parse_command(ev(f"/regen-onnx {'cd' * 20}", number=8)))
    assert fork.accepted and fork.head_repo == "someone/fork"
    github.add_pull(REPO, 9, state="closed")
    closed = bot.bind(gh, REPO, bot.parse_command(ev("/regen-onnx", number=9)))
    assert not closed.accepted and "is closed" in closed.reason and closed.respond


def test_finish_replaces_eyes_by_the_outcome(github, gh):
    pr(github)
    for outcome, content in (("done", "rocket"), ("nothing", "+1"), ("failed", "-1")):
        comment = github.add_comment(REPO, 7, "/regen-onnx", "maintainer")
        bot.react(gh, REPO, 7, comment.id, "eyes")
        github.add_comment(REPO, 7, "x", "dev")
        bot.finish(gh, REPO, 7, comment.id, outcome)
        assert comment.reactions == [(content, BOT)]


def test_command_cli_outputs_the_bound_sha_and_writes_the_request(github, monkeypatch, tmp_path):
    import json

    from opsweep.cli.main import main
    head = "ef" * 20
    pr(github, 7, sha=head)
    comment = github.add_comment(REPO, 7, "/Regen-Onnx nightly", "dev")
    payload = ev("/Regen-Onnx nightly", login="dev")
    payload["comment"]["id"] = comment.id
    (tmp_path / "event.json").write_text(json.dumps(payload))
    out = tmp_path / "out"
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    assert main(["bot", "command", "--event", str(tmp_path / "event.json"), "--repo", REPO,
                 "--request", str(tmp_path / "request.json")]) == 0
    outputs = read_outputs(out.read_text())
    assert outputs["accepted"] == "true" and outputs["sha"] == head
    assert outputs["profile"] == "nightly"
    assert json.loads((tmp_path / "request.json").read_text()) == {
        "event": "issue_comment", "pr": 7, "sha": head, "profile": "nightly",
        "comment_id": comment.id}
    assert comment.reactions == [("eyes", BOT)]


def test_a_step_takes_its_left_out_repo_and_login_from_the_environment(github, monkeypatch,
                                                                        tmp_path):
    """--repo left out: $GITHUB_REPOSITORY; --bot-login left out: $OPSWEEP_BOT_LOGIN, with
    which an App's token (that may not ask who it is) edits its own comment without posting
    one first. Both are filled in once, when the options are made, never assigned by the
    step into its options (issue 49; tests/unit/test_invocation.py)."""
    from opsweep.cli.main import main
    n = pr(github)
    mine = github.add_comment(REPO, n, f"{MARKER}\nold", "opsweep-app[bot]", "Bot")
    (tmp_path / "body.md").write_text("new")
    monkeypatch.setenv("GITHUB_TOKEN", "app-token")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("OPSWEEP_BOT_LOGIN", "opsweep-app[bot]")
    assert main(["bot", "comment", "--repo", REPO, "--pr", str(n),
                 "--body", str(tmp_path / "body.md")]) == 0
    assert [method for method, _, _ in github.writes] == ["PATCH"]  # no comment posted first
    assert mine.body == f"{MARKER}\nnew"
    assert main(["bot", "check", "--sha", "a" * 40, "--outcome", "done"]) == 0  # no --repo
    assert github.repo(REPO).statuses["a" * 40]["onnx-support"]["state"] == "success"

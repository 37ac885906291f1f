"""The bot against a stateful local fake of GitHub's REST API, with real PyGithub."""

import threading

from opsweep import bot
from opsweep.report import GITHUB_COMMENT_LIMIT, MARKER

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
        bot.react(gh, REPO, ev, "eyes")
        assert comment.reactions == [("eyes", BOT)]


def test_refusals(github, gh):
    pr(github)
    cases = {"reader": "has read permission", "outsider": "has none permission"}
    for login, why in cases.items():
        comment, ev = event(github, "/regen-onnx", login)
        cmd = bot.authorize(gh, REPO, ev, bot.parse_command(ev))
        assert not cmd.accepted and why in cmd.reason and cmd.respond
        bot.refuse(gh, REPO, ev, cmd)
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
    from opsweep.cli import main
    github.add_pull(REPO, 9, head_repo="someone/opsweep-fork", ref="patch-1", sha="f" * 40)
    github.repo("someone/opsweep-fork")
    out = tmp_path / "out"
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    assert main(["bot", "pull", "--repo", REPO, "--pr", "9"]) == 0
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert outputs == {"head_ref": "patch-1", "head_sha": "f" * 40,
                       "head_repo": "someone/opsweep-fork", "same_repo": "false"}


def test_publish_without_commit_tells_where_to_get_the_files(github, monkeypatch, tmp_path):
    """A fork's pull request: the comment carries the transitions and where the files are."""
    from dataclasses import replace as dc_replace

    from opsweep import artifact as art
    from opsweep.cli import main
    from opsweep.model import Stage

    from ..unit.test_artifact import FP, result
    n = pr(github, 11)
    repo_dir = tmp_path / "head"
    (repo_dir / "docs" / "data").mkdir(parents=True)
    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    (repo_dir / "docs" / "data" / "documented.json").write_bytes(
        (root / "docs" / "data" / "documented.json").read_bytes())
    old = art.make_artifact(dc_replace(FP, torch="2.12.0"), "ci", 25, 0,
                            {"sin": result(["sin"], Stage.OK)})
    art.save(repo_dir / "docs" / "onnx_support_measured.json", old)
    import torch
    new = art.make_artifact(dc_replace(FP, torch=torch.__version__), "ci", 25, 1,
                            {"sin": result(["sin"], Stage.NO_TRANSLATION)})
    part = tmp_path / "new.json"
    art.save(part, new)
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_API_URL", github.base)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    assert main(["bot", "publish", str(part), "--repo-dir", str(repo_dir), "--repo", REPO,
                 "--pr", str(n), "--comment"]) == 0
    (comment,) = marked(github, n)
    assert "`sin` export: full → none" in comment.body or "sin</code> export: full → none" in comment.body
    assert "Not committed" in comment.body and "job summary" in comment.body
    assert "full → none" in (tmp_path / "summary.md").read_text()
    # the history record and view are written beside the page, for the run's artifacts
    version = torch.__version__.split("+")[0]
    assert (repo_dir / "docs" / "history" / f"torch-{version}.json").is_file()
    assert f"torch {version}" in (repo_dir / "docs" / "history.md").read_text()
    # the operators page beside the support page, with the grades per release of this
    # checkout's history (this version's record included), not of the working directory's
    details = (repo_dir / "docs" / "operators.md").read_text()
    assert f"Per recorded release: torch {version} " in details
    assert not [p.stem for p in (root / "docs" / "history").glob("torch-*.json")
                if p.stem != f"torch-{version}" and p.stem.replace("-", " ") + " " in details]
    assert "blob/" not in comment.body  # no branch to link the history view on

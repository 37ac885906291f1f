"""A regeneration that changes no measurement changes no line a reviewer reads.

Real sweeps (as `tox -e proptest_onnx` runs them, but in this process), the real render
and history commands, and real git: in a checkout where the user regenerates,
and through the bot's publish step into a local bare repository.
"""

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from opsweep.artifact import data as art
from opsweep.cli.main import main
from opsweep.artifact.records import pin_path
from opsweep.artifact.account import UNCHANGED
from opsweep.sweep.journal import read_run, run_path
from opsweep.sweep.planning import versions
from opsweep.bot.publish import NO_CHANGE

from ..factories import changed_paths

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
ARTIFACT, PAGE = "docs/onnx_support_measured.json", "docs/supported_operators.md"
DETAILS = "docs/operators/"  # the operators' pages (one each), beside the support page
SOURCES = "docs/specs/"  # the spec sources pages (one per file), beside it too
HOME = "docs/index.md"  # the home page (its headline numbers follow the measurement)
# the migration view: this project measures the torchscript target beside stock
# ([tool.opsweep] torchscript = true), and sin's torchscript grades move with its spec; they
# show on sin's own page (DETAILS), while the migration page lists sin under its kind only
# (graded alike or not), which does not move
MIGRATING = "docs/migrating.md"
DTYPES = "docs/dtypes.md"  # the dtype matrix: sin's row moves with its grade
HISTORY, HISTORY_PAGE = "docs/history", "docs/history.md"
VERSION = torch.__version__.split("+")[0]
RECORD = pin_path(Path(HISTORY), versions()).as_posix()  # this pin set's record
# t_full is measured full and cdist none; neither is in the rotation at regen_index 1 or 2,
# so at unchanged pins both are carried
ONLY = ["t_full", "cdist"]
SPEC = """
from dataclasses import replace
from opsweep.catalog.families import unary

SPECS = [replace(unary("sin", dtypes={dtypes!r}, max_rank=2), name="t_full")]
"""
# complex sin has no translation: the spec's outcome changes
CHANGED = SPEC.format(dtypes=("float32", "complex64"))
# what the changed spec may move in the artifact: its own results and sin's grades, in
# every target, and the header
MOVED = {("specs", "t_full"), ("operators", "sin"), ("regen_index",),
         ("targets", "torchscript", "specs", "t_full"),
         ("targets", "torchscript", "operators", "sin")}
IDENT = ["-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]


@pytest.fixture(autouse=True)
def _needs_git():
    from ..conftest import require
    require(shutil.which("git") is not None, "git")


def git(cwd, *args) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def checkout(path: Path) -> Path:
    """A project checkout: what render needs from docs/data, and the project's .gitignore."""
    (path / "docs" / "data").mkdir(parents=True)
    for name in ("documented.json", f"doc-links-torch-{VERSION}.json"):
        if (ROOT / "docs" / "data" / name).exists():
            shutil.copy(ROOT / "docs" / "data" / name, path / "docs" / "data" / name)
    shutil.copy(ROOT / ".gitignore", path / ".gitignore")
    return path


def regenerate(repo: Path, specs: Path, summary: Path) -> str:
    """What `tox -e proptest_onnx -- --only ...` does: sweep, then assemble (history record,
    view and pages). Returns the sweep's summary (also appended to `summary`, as under
    Actions). The sweep runs in this process (--jobs 0 measures in the sweep's own process
    either way; a fresh one would cost seconds of imports and set-up), what it prints
    taken as its output."""
    out = repo / ARTIFACT
    # and reads the spec files afresh, as a process of its own would (the catalog keeps a
    # module it imported from a spec file, by the file's path, for the process's life)
    for name in [n for n in sys.modules if n.startswith("opsweep_user_specs.t_full_")]:
        del sys.modules[name]
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        assert main(["sweep", "--only", *ONLY, "--jobs", "0", "--quiet", "--specs", str(specs),
                     "--out", str(out)]) == 0
    assert main(["assemble", "--repo-dir", str(repo), "--specs", str(specs)]) == 0
    return printed.getvalue()


def pages(files) -> set[str]:
    """The paths, a page of the operators' or the spec sources' directory as its directory."""
    return {next((d for d in (DETAILS, SOURCES) if f.startswith(d)), f) for f in files}


def changed_files(repo: Path) -> set[str]:
    return pages(line[3:] for line in git(repo, "status", "--porcelain", "-uall").splitlines())


def changed_lines(repo: Path, path: str) -> list[str]:
    """The removed and added lines of one file's diff against the last commit."""
    diff = git(repo, "diff", "-U0", "--", path).splitlines()
    return [d for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))]


@pytest.fixture(scope="module")
def regenerations(tmp_path_factory):
    """Three regenerations in a user's checkout: the first is committed; the second
    changes nothing; the third follows a change of one spec. Each one's committed files
    (artifact, page, history) are kept for the bot's turn."""
    tmp = tmp_path_factory.mktemp("quiet")
    specs = tmp / "specs"
    specs.mkdir()
    (specs / "t_full.py").write_text(SPEC.format(dtypes=("float32",)))
    repo = checkout(tmp / "work")
    git(repo, "init", "-q", "-b", "main")
    runs = {}
    for step in ("first", "again", "changed"):
        if step == "changed":
            git(repo, "checkout", "-q", "--", ".")  # back to the committed first regeneration
            (specs / "t_full.py").write_text(CHANGED)
        summary = tmp / f"{step}.summary.md"
        stdout = regenerate(repo, specs, summary)
        runs[step] = {"stdout": stdout, "summary": summary.read_text(),"artifact": (repo / ARTIFACT).read_bytes(), "files": changed_files(repo),
                      "diff": {p: changed_lines(repo, p) for p in (ARTIFACT, PAGE, HISTORY_PAGE)},
                      "log": read_run(run_path(repo / ARTIFACT))}
        if step == "first":
            git(repo, "add", "-A")
            git(repo, *IDENT, "commit", "-qm", "first measurement")
            runs[step]["committed"] = pages(git(repo, "ls-files").split())
        else:
            runs[step]["paths"] = changed_paths(runs["first"]["artifact"], runs[step]["artifact"])
    return tmp, runs


def test_a_regeneration_with_nothing_changed_moves_only_the_header(regenerations):
    _, runs = regenerations
    committed = runs["first"]["committed"]
    assert {ARTIFACT, HOME, PAGE, DETAILS, SOURCES, HISTORY_PAGE, RECORD} <= committed
    assert not any(name.endswith((".run.jsonl", ".checkpoint.jsonl")) for name in committed)
    again = runs["again"]
    _, log = again["log"]
    why = {e["spec"]: (e["reused"], e["reason"]) for e in log}
    assert why["t_full"] == (True, UNCHANGED)
    assert why["cdist"] == (True, UNCHANGED)  # none, and carried: nothing that could change it moved
    # the same story in the sweep's summary and in the job summary
    assert "reused 2 (nothing moved), re-measured 0" in again["stdout"]
    assert again["stdout"].strip() in again["summary"]
    assert again["files"] == {ARTIFACT}  # not the page, not the history record or view
    assert again["paths"] == {("regen_index",)}
    assert again["diff"][ARTIFACT] == ['- "regen_index": 0,', '+ "regen_index": 1,']


def test_one_changed_spec_moves_only_its_lines_its_operators_and_the_header(regenerations):
    _, runs = regenerations
    changed = runs["changed"]
    after = art.load(regenerations[0] / "work" / ARTIFACT)
    assert after.operators["sin"].grades.export.value == "partial"
    assert ("specs", "t_full") in changed["paths"]
    assert changed["paths"] <= MOVED
    assert not any(p[:2] == ("specs", "cdist") for p in changed["paths"])
    _, log = changed["log"]
    assert {e["spec"]: e["reason"] for e in log}["t_full"] == "spec changed"
    # the spec sources page too: the changed spec's statement is on it
    assert changed["files"] == {ARTIFACT, HOME, PAGE, DTYPES, DETAILS, SOURCES, HISTORY_PAGE,
                                RECORD}
    assert MIGRATING in runs["first"]["committed"]  # rendered, and unchanged by this change
    # the page's own diff: sin's rows, and the headline numbers its grade moves (and the
    # ranks the Failing at filter offers, on the table's line: sin now fails at a new rank)
    headline = ("measured full", '[=', "exported fully", ' data-ranks="')
    page = [line for line in changed["diff"][PAGE]
            if 'data-op="sin"' not in line and "`sin`" not in line]  # its rows (table, gap view)
    assert page and all(any(h in line for h in headline) for line in page), \
        [line for line in page if not any(h in line for h in headline)]
    # the history view: sin's rows, the record's date, and the chart and counts of full
    # operators that sin's export grade moves: one count down in each exporter (stock and
    # each opset target from 1 to 0; torchscript, which exports cdist too, from 2 to 1)
    other = [line for line in changed["diff"][HISTORY_PAGE] if "`sin`" not in line
             and VERSION not in line and not line[1:].startswith("<svg")]
    # (the opset targets alike: sin is full at each in the base)
    assert sorted(other) == sorted(["-| export (stock) | 1 |", "+| export (stock) | 0 |",
                                    "-| export with opset18 | 1 |",
                                    "+| export with opset18 | 0 |",
                                    "-| export with opset28 | 1 |",
                                    "+| export with opset28 | 0 |",
                                    "-| export with torchscript | 2 |",
                                    "+| export with torchscript | 1 |"]), sorted(other)


def publish(repo: Path, artifact: bytes, tmp: Path, name: str, monkeypatch) -> dict[str, str]:
    """The bot's two halves: `bot assemble` (unprivileged: render and record the measured
    artifact into a result directory), then the privileged publish of that result as data
    (a dispatched run on the repository's own branch: no pull request to comment on)."""
    from opsweep.bot import publish as pub
    git(repo, "reset", "-q", "--hard", "HEAD")  # each run checks the head out afresh: publish
    part = tmp / f"{name}.json"                  # commits from blobs, never through the files
    part.write_bytes(artifact)
    result = tmp / f"{name}.result"
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp / f"{name}.out"))
    assert main(["bot", "assemble", str(part), "--repo-dir", str(repo), "--out",
                 str(result)]) == 0
    git(repo, "checkout", "-q", "--", ".")  # the measuring checkout is thrown away
    git(repo, "clean", "-qfd")
    head = git(repo, "rev-parse", "HEAD").strip()
    target = pub.Target("workflow_dispatch", head, "main", "octo/demo", True)
    done = pub.publish(None, "octo/demo", target, pub.collect(result, pub.Layout()), repo, repo,
                       pub.Layout(), push_token=None, bot=None, message="Regenerate")
    (tmp / f"{name}.summary.md").write_text(done.summary, "utf-8")
    counts = done.counts
    return {"changed": str(bool(done.committed)).lower(), "sha": done.committed,
            "regressions": str(counts.get("regression", 0)),
            "measured anew": str(counts.get("measured anew", 0))}


def test_the_bot_commits_a_change_and_reports_no_change_without_committing(regenerations,
                                                                           monkeypatch):
    tmp, runs = regenerations
    bare = tmp / "origin.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    repo = checkout(tmp / "head")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, *IDENT, "commit", "-qm", "start")
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    first = publish(repo, runs["first"]["artifact"], tmp, "first", monkeypatch)
    assert first["changed"] == "true"
    sha = git(bare, "rev-parse", "main").strip()
    again = publish(repo, runs["again"]["artifact"], tmp, "again", monkeypatch)
    assert again["changed"] == "false" and again["sha"] == ""
    assert git(bare, "rev-parse", "main").strip() == sha  # nothing committed or pushed
    assert changed_files(repo) == set()  # and nothing left modified in the checkout
    assert NO_CHANGE in (tmp / "again.summary.md").read_text()
    changed = publish(repo, runs["changed"]["artifact"], tmp, "changed", monkeypatch)
    # the changed spec (its digest) moved sin's grade: measured anew, not a regression
    assert changed["changed"] == "true" and int(changed["measured anew"]) >= 1
    assert changed["regressions"] == "0"
    assert NO_CHANGE not in (tmp / "changed.summary.md").read_text()
    committed = pages(git(bare, "show", "--format=", "--name-only", "main").split())
    assert committed == {ARTIFACT, HOME, PAGE, DTYPES, DETAILS, HISTORY_PAGE, RECORD}
    old = git(bare, "show", f"{sha}:{ARTIFACT}").encode()
    new = git(bare, "show", f"main:{ARTIFACT}").encode()
    assert ("specs", "t_full") in changed_paths(old, new)
    assert changed_paths(old, new) <= MOVED

"""Issue 38 in the review bot: a run at unchanged pins says in its comment what it measured
again and why, from the run logs its sweep jobs left beside their shards."""

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from opsweep.artifact import account
from opsweep.artifact import data as art
from opsweep.artifact.account import UNCHANGED, run_path
from opsweep.bot.comment import MARKER
from opsweep.cli.main import main
from opsweep.model import Stage
from opsweep.sweep.journal import write_run
from opsweep.sweep.reuse import Decision

from ..factories import FP, result

ROOT = Path(__file__).resolve().parents[2]
from .test_publish import IDENT, PYPROJECT, REPO, checkout, git, origin, publish, run_payload  # noqa: F401  (fixture)


def test_an_unchanged_pin_run_says_what_it_re_measured_and_why(github, monkeypatch, tmp_path,
                                                               origin):  # noqa: F811
    import torch
    version = torch.__version__.split("+")[0]
    bare, _ = origin
    seed = checkout(bare, tmp_path / "pinned")  # the head pins the installed torch
    (seed / "pyproject.toml").write_text(PYPROJECT.format(version))
    git(seed, *IDENT, "commit", "-qam", "pin the installed torch")
    git(seed, "push", "-q", "origin", "HEAD:feature")
    sha = git(seed, "rev-parse", "HEAD")
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    part = tmp_path / "parts" / "onnx-shard-1-of-1.json"
    part.parent.mkdir()
    new = art.make_artifact(replace(FP, torch=version), "ci", 25, 1,
                            {"sin": result(["sin"], Stage.OK),
                             "relu": result(["relu"], Stage.NO_TRANSLATION)})
    art.save(part, new)
    write_run(run_path(part), {"artifact": part.name, "regen_index": 1},
              {"stock": {"sin": Decision(False, "spec changed"),
                         "relu": Decision(True, UNCHANGED)}})
    repo_dir = tmp_path / "repo"
    (repo_dir / "docs" / "data").mkdir(parents=True)  # what render needs of the project
    shutil.copy(ROOT / "docs" / "data" / "documented.json", repo_dir / "docs" / "data")
    out = tmp_path / "result"
    assert main(["bot", "assemble", str(part), "--repo-dir", str(repo_dir), "--out", str(out)]) == 0
    assert account.load(out / account.ACCOUNT_FILE).targets["stock"].changed == ("sin",)
    head = checkout(bare, tmp_path / "head")
    publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head, out)
    (comment,) = [c for c in github.comments(REPO, 5) if MARKER in c.body]
    assert "- `stock` re-measured 1: 1 `spec changed` (`sin`); reused 1: 1 because nothing " \
           "that could change them moved." in comment.body


def test_a_symlinked_account_is_refused_like_any_other_result_file(github, monkeypatch, tmp_path,
                                                                    origin):  # noqa: F811
    bare, sha = origin
    github.add_pull(REPO, 5, ref="feature", sha=sha)
    out = tmp_path / "result"
    art.save(out / "docs" / "onnx_support_measured.json",
             art.make_artifact(replace(FP, torch="2.13.0"), "ci", 25, 0,
                               {"sin": result(["sin"], Stage.OK), "relu": result(["relu"], Stage.OK)}))
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    (out / account.ACCOUNT_FILE).symlink_to(secret)
    head = checkout(bare, tmp_path / "head")
    with pytest.raises(AssertionError):
        publish(tmp_path, github, monkeypatch, run_payload(sha, REPO), head, out)
    assert not [c for c in github.comments(REPO, 5) if MARKER in c.body]

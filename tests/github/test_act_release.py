"""The release workflow (.github/workflows/release.yml) under nektos/act, unmodified: a
push to `main` at an untagged version tags the commit vX.Y.Z, moves vX, makes the GitHub
Release with the sdist and the wheel attached (the fake GitHub's git references and
releases, fake_releases.py), and uploads exactly those two files to a package index on
127.0.0.1 (the stand-in for pypa/gh-action-pypi-publish runs twine against it); a later
push at the same version makes nothing and uploads nothing."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from werkzeug import Request, Response

from opsweep.bot import release as rel

from ..factories import project_copy
from .fake_github import FakeGitHub
from .test_act import IDENT, PINNED, STANDINS, git

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
REPO = "octo/demo"
PUBLISH = {"pypa/gh-action-pypi-publish@ed0c53931b1dc9bd32cbe73a98c7f6766f8a527e":
           "gh-action-pypi-publish"}
INDEX_TOKEN = "pypi-stand-in-upload-token"


class FakeIndex:
    """A package index's upload endpoint (the legacy upload API twine speaks): keeps each
    file whose digest matches, refuses a file it already has (as an index does)."""

    def __init__(self, server) -> None:
        self.url = server.url_for("/legacy/")
        self.files: dict[str, bytes] = {}
        self.auth: list[str] = []
        server.expect_request("/legacy/", method="POST").respond_with_handler(self.upload)

    def upload(self, request: Request) -> Response:
        form, file = request.form, request.files.get("content")
        self.auth.append(request.authorization.username if request.authorization else "")
        if form.get(":action") != "file_upload" or file is None:
            return Response("Bad request", status=400)
        data = file.read()
        if hashlib.sha256(data).hexdigest() != form.get("sha256_digest"):
            return Response("digest mismatch", status=400)
        if file.filename in self.files:
            return Response("File already exists", status=400)
        self.files[file.filename] = data
        return Response("OK", status=200)


def _tree(where: Path) -> Path:
    """This project (its files as git sees them, committed or not) committed as `main`."""
    tree = project_copy(where / "tree", untracked=True)
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, *IDENT, "commit", "-qm", "release")
    git(tree, "remote", "add", "origin", f"https://github.com/{REPO}.git")  # what act reads
    return tree


def act_push(tree, origin, fake, index, run_dir):
    sha = git(tree, "rev-parse", "HEAD")
    (run_dir / "artifacts").mkdir(parents=True)
    event = run_dir / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main", "before": "0" * 40, "after": sha,
                                 "repository": {"full_name": REPO, "default_branch": "main"}}))
    cmd = [shutil.which("act") or str(Path(sys.executable).with_name("act")), "push",
           "-e", str(event), "-W", ".github/workflows/release.yml",
           "-P", "ubuntu-latest=-self-hosted", "--no-skip-checkout",
           "--artifact-server-addr", "127.0.0.1", "--cache-server-addr", "127.0.0.1",
           "-s", "GITHUB_TOKEN=fake-token", "--env", f"GITHUB_API_URL={fake.base}",
           # the runner's own API server: the bot's requests unpaced (docs/github_action.md)
           "--env", "OPSWEEP_GITHUB_PACING=off",
           "--env", f"E2E_ORIGIN={origin}", "--env", f"E2E_ARTIFACTS={run_dir / 'artifacts'}",
           "--env", f"E2E_INDEX={index.url}", "--env", f"E2E_INDEX_TOKEN={INDEX_TOKEN}",
           "--env", f"OPSWEEP_PYTHON_ENV={sys.prefix}"]
    for ref, name in {**PINNED, **PUBLISH}.items():
        cmd += ["--local-repository", f"{ref}={STANDINS / name}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    result = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=900,
                            env=env, check=False)
    log = result.stdout + result.stderr
    (run_dir / "act.log").write_text(log)
    assert result.returncode == 0, log[-6000:]
    return sha, log


def test_a_push_at_an_untagged_version_tags_releases_and_publishes_once(httpserver, tmp_path):
    from pytest_httpserver import HTTPServer
    tree = _tree(tmp_path)
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(tree), str(origin))
    version = rel.read_version(tree)
    major = f"v{version.split('.')[0]}"
    fake = FakeGitHub(httpserver)
    fake.repo(REPO)
    old = "c" * 40
    fake.set_ref(REPO, f"refs/tags/{major}", old)  # the previous release's
    server = HTTPServer(host="127.0.0.1")
    server.start()
    try:
        index = FakeIndex(server)
        sha, _ = act_push(tree, origin, fake, index, tmp_path / "first")
        assert fake.tags(REPO) == {f"v{version}": sha, major: sha}
        (made,) = fake.releases[REPO].values()
        assert (made.tag, made.target) == (f"v{version}", sha)
        assert made.body == rel.notes(tree, version)
        names = {f"opsweep-{version}.tar.gz", f"opsweep-{version}-py3-none-any.whl"}
        assert set(made.assets) == names
        assert index.files == made.assets  # exactly the wheel and the sdist, byte for byte
        assert set(index.auth) == {"__token__"}
        writes = list(fake.writes)
        # a later push at the same version: released already, nothing made or uploaded
        (tree / "README.md").write_text((tree / "README.md").read_text() + "\nmore\n")
        git(tree, *IDENT, "commit", "-qam", "docs")
        git(tree, "push", "-q", str(origin), "main")
        _, log = act_push(tree, origin, fake, index, tmp_path / "second")
    finally:
        server.clear()
        server.stop()
    assert f"v{version} tagged at {sha[:12]}" in log and fake.writes == writes
    assert "Tag, release, attach" not in log and "Upload them" not in log  # jobs skipped
    assert fake.tags(REPO) == {f"v{version}": sha, major: sha}
    assert set(index.files) == names and len(index.auth) == 2

"""Releases that tag themselves (the `release` workflow, on a push to the default branch).

The version lives in one place, ``opsweep.__version__``. When the pushed commit's version
``X.Y.Z`` has no tag ``vX.Y.Z`` yet, the workflow builds the wheel and the sdist
(:func:`build`), then :func:`publish_release` tags the commit ``vX.Y.Z``, moves the major
tag ``vX`` to it (unless a later ``vX.*.*`` release already holds it), and makes the
GitHub Release of ``vX.Y.Z`` with the CHANGELOG's section as its notes and both files
attached. Every step first looks at what is there, so a second run creates nothing, and
a run that stopped half-way (the tag made, the release not) finishes the job. A version
tagged on another commit is released already: nothing is made (bump the version to
release again). The tags are lightweight, made through the API with the job's token.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from github import GithubException, UnknownObjectException

from opsweep._release import record
from opsweep.errors import OpsweepError

#: where the one version number lives, in a checkout of opsweep
VERSION_FILE = "src/opsweep/__init__.py"
CHANGELOG = "CHANGELOG.md"
_VERSION = re.compile(r'^__version__ = "([^"]*)"$', re.MULTILINE)
_RELEASE = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")


class ReleaseRefused(OpsweepError):
    """A release that must not be made as asked (no version, no notes, odd files)."""


def read_version(repo_dir: Path) -> str:
    """The checkout's ``__version__``: ``X.Y.Z`` (anything else is refused, in one line
    naming the file)."""
    path = Path(repo_dir, VERSION_FILE)
    try:
        found = _VERSION.findall(path.read_text("utf-8"))
    except OSError as exc:
        raise ReleaseRefused(f"{path}: cannot read the version ({exc.strerror})") from None
    if len(found) != 1 or not _RELEASE.fullmatch(found[0]):
        raise ReleaseRefused(f"{path}: expected one line __version__ = \"X.Y.Z\", "
                             f"found {found or 'none'}")
    return found[0]


def notes(repo_dir: Path, version: str) -> str:
    """The CHANGELOG's section ``## X.Y.Z``: the release's notes (refused when missing,
    so that no release goes out undescribed)."""
    path = Path(repo_dir, CHANGELOG)
    text = path.read_text("utf-8") if path.is_file() else ""
    match = re.search(rf"^## {re.escape(version)}[ \t]*\n(.*?)(?=^## |\Z)", text,
                      re.MULTILINE | re.DOTALL)
    if match is None or not match.group(1).strip():
        raise ReleaseRefused(f"{path}: no section '## {version}' to release {version} with "
                             "(the changelog names each release)")
    return match.group(1).strip() + "\n"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class Plan:
    """What the repository holds of a version: its tag's commit (None: no tag yet)."""

    version: str
    tagged: str | None

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    @property
    def major(self) -> str:
        return f"v{self.version.split('.')[0]}"

    def needed(self, sha: str) -> bool:
        """Whether a run at `sha` has anything to do: the version is not tagged, or tagged
        here (a run that stopped half-way is finished)."""
        return self.tagged in (None, sha)


def _ref_commit(repo: Any, ref: str) -> str | None:
    try:
        return repo.get_git_ref(ref).object.sha
    except UnknownObjectException:
        return None


def plan(repo: Any, version: str) -> Plan:
    """The version's tag as the repository (PyGithub's) holds it."""
    return Plan(version, _ref_commit(repo, f"tags/v{version}"))


def _create_ref(repo: Any, ref: str, sha: str) -> None:
    try:
        repo.create_git_ref(f"refs/{ref}", sha)
    except GithubException as exc:  # 422 "Reference already exists": made meanwhile
        if exc.status != 422 or _ref_commit(repo, ref) != sha:
            raise


def _move_major(repo: Any, release: Plan, sha: str) -> str | None:
    """Point vX at `sha`, unless a later X.*.* release holds it; what was done, or None."""
    later = [ref.ref for ref in repo.get_git_matching_refs(f"tags/{release.major}.")
             if _RELEASE.fullmatch(name := ref.ref.removeprefix("refs/tags/v"))
             and _key(name) > _key(release.version)]
    if later:
        print(f"opsweep: {release.major} stays with the later release {later[0]}")
        return None
    now = _ref_commit(repo, f"tags/{release.major}")
    if now == sha:
        return None
    if now is None:
        _create_ref(repo, f"tags/{release.major}", sha)
    else:
        repo.get_git_ref(f"tags/{release.major}").edit(sha, force=True)
    return f"{release.major} {'made' if now is None else 'moved'} at {sha[:12]}"


def _release_of(repo: Any, release: Plan, sha: str, text: str) -> tuple[Any, bool]:
    """The GitHub Release of the tag, made when missing; (it, whether made here)."""
    try:
        return repo.get_release(release.tag), False
    except UnknownObjectException:
        pass
    try:
        return repo.create_git_release(release.tag, name=release.tag, message=text,
                                       target_commitish=sha), True
    except GithubException as exc:  # 422 already_exists: made meanwhile
        if exc.status != 422:
            raise
        return repo.get_release(release.tag), False


def publish_release(repo: Any, version: str, sha: str, files: list[Path], text: str
                    ) -> list[str]:
    """Tag `sha` vX.Y.Z, move vX, make the release with `files`: what was made (empty:
    nothing to do, the version is released already)."""
    release = plan(repo, version)
    if not release.needed(sha):
        print(f"opsweep: {release.tag} is released already, at {(release.tagged or '')[:12]}")
        return []
    made = []
    if release.tagged is None:
        _create_ref(repo, f"tags/{release.tag}", sha)
        made.append(f"{release.tag} made at {sha[:12]}")
    moved = _move_major(repo, release, sha)
    made += [moved] if moved else []
    github_release, new = _release_of(repo, release, sha, text)
    made += [f"release {release.tag} made"] if new else []
    there = {asset.name for asset in github_release.get_assets()}
    for path in files:
        if path.name not in there:
            github_release.upload_asset(str(path), name=path.name,
                                        content_type="application/octet-stream")
            made.append(f"{path.name} attached")
    return made


def distributions(where: Path, name: str, version: str) -> list[Path]:
    """The sdist and the wheel of `name` `version` in `where`, and nothing else there."""
    stem = f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}"
    files = sorted(p for p in Path(where).iterdir() if not p.name.startswith("."))
    sdists = [p for p in files if p.name == f"{stem}.tar.gz"]
    wheels = [p for p in files if p.name.startswith(f"{stem}-") and p.name.endswith(".whl")]
    if len(sdists) != 1 or len(wheels) != 1 or len(files) != 2:
        raise ReleaseRefused(f"{where}: expected {stem}.tar.gz and one {stem}-*.whl alone, "
                             f"found {[p.name for p in files]}")
    return [*sdists, *wheels]


def project_name(repo_dir: Path) -> str:
    path = Path(repo_dir, "pyproject.toml")
    try:
        return tomllib.loads(path.read_text("utf-8"))["project"]["name"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise ReleaseRefused(f"{path}: no [project] name ({exc})") from None


#: where a checkout of opsweep keeps the record of the commit it was released from
RELEASE_RECORD = "src/opsweep/_release.py"


def build(repo_dir: Path, out: Path, sha: str = "") -> list[Path]:
    """The sdist and the wheel of the checkout, built by its own build backend in this
    environment (no isolation: nothing is fetched), into `out`. With `sha`, the checkout's
    release record (opsweep._release, when it has one) names that commit first: `opsweep
    init` pins the privileged callers to it."""
    if sha and Path(repo_dir, RELEASE_RECORD).is_file():
        record(Path(repo_dir, RELEASE_RECORD), sha, read_version(repo_dir))
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    path = Path(repo_dir, "pyproject.toml")
    backend = tomllib.loads(path.read_text("utf-8"))["build-system"]["build-backend"]
    # (the arguments are read first: setuptools' hooks rewrite sys.argv)
    hooks = ("import importlib, sys; backend, out = sys.argv[1:]; "
             "b = importlib.import_module(backend); b.build_sdist(out); b.build_wheel(out)")
    done = subprocess.run([sys.executable, "-c", hooks, backend, str(out)], cwd=repo_dir,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReleaseRefused(f"{path}: building with {backend} failed: "
                             f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return distributions(out, project_name(repo_dir), read_version(repo_dir))

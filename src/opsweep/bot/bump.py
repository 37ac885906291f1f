"""Where pin bumps come from: `opsweep bot bump` asks a package index's JSON API
(`{index}/pypi/{name}/json`, the layout of the Python Package Index and its
mirrors) for the newest final release of every watched pin (the exporter stack,
pins.WATCHED) where ``[tool.opsweep] pins`` says they live -- a tox env's deps, a
requirements or constraints file, a dependency array of pyproject.toml -- and opens
-- or updates -- ONE pull request that moves every pin that is behind, rewriting that
file in place (bot.rewrite). Neither Dependabot nor Renovate's pep621 manager reads a
`[tool.tox.*]` pin; a Renovate rule (the one `opsweep init` writes) is the other
documented source (docs/github_action.md, docs/adopting.md).

The bump branch is the bot's own, and it is kept (with the regenerated artifact's commit
on it and the approvals that follow) only while the set of moves is unchanged and every
commit after its base is the bot's own (:func:`kept_branch`); otherwise it is rebuilt from
the base. "The bot's own" is judged by what a commit changes, never by its git identity,
which any writer can forge: the first commit is the bump itself (the pin file alone,
rewritten exactly as :func:`apply` rewrites its parent's); a later one, on the open bump
pull request only, changes nothing but publish's result files (data, never code).

The index's address is never written into the project: it comes from
``--index``, ``$OPSWEEP_INDEX_URL``, or pip's configured index
(``$PIP_INDEX_URL`` or ``pip config``); a `/simple` suffix is dropped.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from github import GithubException

from opsweep.bot.git import BOT_EMAIL, BOT_NAME, TRAILER, git, token_env
from opsweep.bot.pins import PinMove, read_pins
from opsweep.bot.rewrite import rewrite
from opsweep.config import PinSource
from opsweep.errors import UsageError

BRANCH = "opsweep/bump-pins"
_FINAL = re.compile(r"^\d+(?:\.\d+)*$")
MAX_JSON_BYTES = 64 * 1024 * 1024


def index_url(explicit: str = "") -> str:
    """The index's base URL: `explicit` (--index, else $OPSWEEP_INDEX_URL or $PIP_INDEX_URL,
    as the CLI read them), else pip's own configuration."""
    url = explicit
    if not url:
        url = _pip_index()
    if not url:
        raise UsageError("no package index configured: pass --index, or set "
                         "OPSWEEP_INDEX_URL, PIP_INDEX_URL or pip's global index setting")
    if not re.match(r"^https?://", url):
        raise UsageError(f"index URL {url!r}: expected http:// or https://")
    return re.sub(r"/simple/?$", "", url.rstrip("/"))


def _pip_index() -> str:
    """The index pip itself is configured with (its global section, either spelling)."""
    found = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                           capture_output=True, text=True, check=False)
    if found.returncode != 0:
        return ""
    for line in found.stdout.splitlines():
        m = re.match(r"^global\.index[-_]url\s*=\s*'?([^']*)'?\s*$", line.strip())
        if m:
            return m.group(1)
    return ""


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def newest(base: str, name: str, timeout: float = 30.0) -> str | None:
    """The newest final (not pre-release, not wholly yanked) release of `name`."""
    url = f"{base}/pypi/{name}/json"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = json.loads(response.read(MAX_JSON_BYTES))
    except urllib.error.HTTPError as exc:
        raise UsageError(f"{url}: the index answered {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise UsageError(f"{url}: cannot read the release list ({exc})") from None
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict):
        raise UsageError(f"{url}: no 'releases' object in the answer")
    finals = [v for v, files in releases.items() if isinstance(v, str) and _FINAL.match(v)
              and isinstance(files, list) and files and not all(f.get("yanked") for f in files)]
    return max(finals, key=_key) if finals else None


def behind(pins: Mapping[str, str], base: str) -> list[PinMove]:
    """Every watched pin whose index has a newer final release."""
    moves = []
    for name, pinned in sorted(pins.items()):
        latest = newest(base, name)
        if latest and _FINAL.match(pinned) and _key(latest) > _key(pinned):
            moves.append(PinMove(name, pinned, latest))
    return moves


def apply(text: str, moves: list[PinMove], where: str = "pyproject.toml",
          source: PinSource | None = None) -> str:
    """The text of the pin source's file (default: the sweep's tox env in pyproject.toml)
    with every move applied to its exact pins, and nothing else changed (bot.rewrite)."""
    return rewrite(text, source or PinSource(), moves, where)


@dataclass(frozen=True)
class BumpPull:
    number: int
    created: bool
    moves: tuple[PinMove, ...]


def describe(moves: list[PinMove], where: str = PinSource().where) -> tuple[str, str]:
    title = "Bump " + ", ".join(f"{m.name} to {m.new}" for m in moves)
    lines = "\n".join(f"- `{m.name}` {m.old} → {m.new}" for m in moves)
    body = (f"Pins of `{where}` with a newer release on the package index "
            f"(found by `opsweep bot bump`):\n\n{lines}\n\nThe measurement workflow re-measures "
            "this pull request and comments the grade transitions.\n")
    return title, body


def base_text(repo: Path, base_ref: str, pyproject: str, token: str | None,
              remote: str = "origin") -> tuple[str, str]:
    """(the base branch's commit, the text of its pin file `pyproject`), fetched: a bump
    always starts from the base branch's pins, whatever is checked out."""
    git(repo, "fetch", "-q", remote, base_ref, env=token_env(token))
    sha = git(repo, "rev-parse", "FETCH_HEAD").stdout.strip()
    return sha, git(repo, "show", f"{sha}:{pyproject}").stdout


def push_branch(repo: Path, base_sha: str, text: str, pyproject: str, title: str,
                token: str | None, remote: str = "origin") -> str:
    """Commit the bumped pin file on top of `base_sha` and push it to the bump branch
    (the bot's own branch: replaced with a lease, never anyone else's). Returns the SHA."""
    env = token_env(token)
    git(repo, "checkout", "-q", "-B", BRANCH, base_sha)
    Path(repo, pyproject).write_text(text, encoding="utf-8")
    git(repo, "add", "--", pyproject)
    git(repo, "-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}", "commit", "-q",
        "-m", title)
    lease = git(repo, "ls-remote", remote, f"refs/heads/{BRANCH}", env=env).stdout.split()
    expect = f"--force-with-lease=refs/heads/{BRANCH}:{lease[0] if lease else ''}"
    git(repo, "push", "-q", expect, remote, f"HEAD:refs/heads/{BRANCH}", env=env)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def kept_branch(repo: Path, base_sha: str, pins: Mapping[str, str], pyproject: str,
                token: str | None, *, remote: str = "origin", source: PinSource | None = None,
                regenerated: Callable[[str], bool] | None = None) -> tuple[str, str]:
    """(the bump branch's tip, '') when it may be kept: it already pins exactly `pins` (the
    set of moves is unchanged) and every commit after its base is the bot's own
    (:func:`foreign`); else ('', why it is rebuilt; '' when there is no branch)."""
    env = token_env(token)
    listed = git(repo, "ls-remote", remote, f"refs/heads/{BRANCH}", env=env).stdout.split()
    if not listed:
        return "", ""
    git(repo, "fetch", "-q", remote, f"refs/heads/{BRANCH}", env=env)
    tip = git(repo, "rev-parse", "FETCH_HEAD").stdout.strip()
    text = git(repo, "show", f"{tip}:{pyproject}", check=False)
    if text.returncode != 0:
        return "", f"it has no {pyproject}"
    if read_pins(text.stdout, f"{BRANCH}:{pyproject}", source) != dict(pins):
        return "", "the set of moves changed"
    why = foreign(repo, base_sha, tip, pyproject, source, regenerated)
    return ("", why) if why else (tip, "")


def foreign(repo: Path, base_sha: str, tip: str, pyproject: str, source: PinSource | None,
            regenerated: Callable[[str], bool] | None) -> str:
    """'' when every commit after the merge base of `base_sha` and `tip`, up to `tip`, is
    the bot's own, else which one is not. The first must be the bump (the pin file alone,
    as :func:`apply` rewrites its parent's); each later one must carry the bot's trailer
    and change only paths `regenerated` accepts (None: no later commit is the bot's)."""
    base = git(repo, "merge-base", base_sha, tip, check=False).stdout.strip()
    if not base:
        return "it shares no history with the base"
    listed = git(repo, "rev-list", "--reverse", "--parents", f"{base}..{tip}").stdout
    chain = [line.split() for line in listed.splitlines() if line]
    if not chain:
        return "it has no commit of its own"
    parent = base
    for i, (sha, *parents) in enumerate(chain):
        changed = [p for p in git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r",
                                  "-z", parent, sha).stdout.split("\0") if p]
        if i == 0:
            own = changed == [pyproject] and _is_bump(repo, parent, sha, pyproject, source)
        else:
            message = git(repo, "log", "-1", "--format=%B", sha).stdout
            own = (regenerated is not None and TRAILER in message and bool(changed)
                   and all(regenerated(p) for p in changed))
        if parents != [parent] or not own:
            return (f"commit {sha[:12]} is not the bot's own (it changes "
                    f"{', '.join(changed[:4]) or 'nothing'}{' ...' if len(changed) > 4 else ''})")
        parent = sha
    return ""


def _is_bump(repo: Path, parent: str, sha: str, pyproject: str,
             source: PinSource | None) -> bool:
    """Whether `sha`'s pin file is its parent's with pins moved exactly as `apply` moves
    them, and nothing else changed."""
    before = git(repo, "show", f"{parent}:{pyproject}").stdout
    after = git(repo, "show", f"{sha}:{pyproject}").stdout
    try:
        old = read_pins(before, pyproject, source)
        new = read_pins(after, pyproject, source)
        moves = [PinMove(n, old[n], v) for n, v in sorted(new.items()) if old.get(n) != v]
        return bool(moves) and apply(before, moves, pyproject, source) == after
    except (KeyError, UsageError):
        return False


def default_branch(gh, repo_name: str) -> str:
    """The repository's default branch, as the API says (a `schedule` payload has no
    `repository` object to read it from)."""
    return gh.get_repo(repo_name).default_branch


class PullsForbidden(UsageError):
    """GitHub refuses GITHUB_TOKEN's pull request: the repository setting is off."""


#: GitHub's 403 answer to GITHUB_TOKEN's POST /pulls while the setting is off
FORBIDDEN = "GitHub Actions is not permitted to create or approve pull requests"


def create_pull(repo, *, title: str, body: str, head: str, base: str):
    """`repo.create_pull`, with GitHub's refusal for GITHUB_TOKEN turned into one line
    naming the setting to enable (the branch is already pushed)."""
    try:
        return repo.create_pull(title=title, body=body, head=head, base=base)
    except GithubException as exc:
        message = str((exc.data or {}).get("message", "")) if isinstance(exc.data, dict) else ""
        if exc.status == 403 and FORBIDDEN in message:
            raise PullsForbidden(
                f"pushed {head}, but GitHub refused to open its pull request ({FORBIDDEN}): "
                "enable Settings > Actions > General > Workflow permissions > 'Allow GitHub "
                "Actions to create and approve pull requests' (for an organisation, in its "
                "settings first), or configure the GitHub App (OPSWEEP_APP_CLIENT_ID, see "
                "docs/github_action.md); or open the pull request from that branch by hand"
            ) from None
        raise


def open_pull(gh, repo_name: str):
    """The open pull request from the bump branch, or None."""
    owner = repo_name.split("/")[0]
    for pull in gh.get_repo(repo_name).get_pulls(state="open", head=f"{owner}:{BRANCH}"):
        return pull
    return None


def open_or_update(gh, repo_name: str, base_branch: str, moves: list[PinMove],
                   where: str = PinSource().where, pull=None) -> BumpPull:
    """ONE bump pull request: the open one from the bump branch (`pull`, else asked) is
    updated (only when its title or body would change), else one is opened."""
    title, body = describe(moves, where)
    pull = pull or open_pull(gh, repo_name)
    if pull is not None:
        if (pull.title, pull.body) != (title, body):
            pull.edit(title=title, body=body)
        return BumpPull(pull.number, False, tuple(moves))
    pull = create_pull(gh.get_repo(repo_name), title=title, body=body, head=BRANCH,
                       base=base_branch)
    return BumpPull(pull.number, True, tuple(moves))

"""The watched pins: every `name==version` entry of the pin source the project's
``[tool.opsweep] pins`` names (by default [tool.tox.env.proptest_onnx] deps in
pyproject.toml; else a requirements or constraints file, or a dependency array of
pyproject.toml): torch, onnx, onnxruntime, onnxscript and hypothesis, read at git revisions.

Only a change of a watched pin (not any edit of the file) triggers the
automatic re-measurement. A pull request is compared against its merge base
with the base branch, never against the base tip: a branch that is merely
behind a pin bump on main did not move any pin itself.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from opsweep.artifact.data import PINS
from opsweep.config import PinSource, _get, _requirement_lines
from opsweep.errors import UsageError

PIN_TABLE = ("tool", "tox", "env", "proptest_onnx")  # the default source
#: the exporter stack: what `bot bump` moves, and what opsweep init's Renovate rule groups
WATCHED = ("torch", "onnx", "onnxruntime", "onnxscript", "hypothesis")
_PIN = re.compile(r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*==\s*"
                  r"(?P<version>[^\s;,=]+)\s*$")


def is_pin(entry: str) -> bool:
    """Whether a requirement string is an exact pin (`name==version`, nothing else)."""
    return _PIN.match(entry) is not None


def normalize(name: str) -> str:
    """PEP 503 name normalisation: `ONNX_Script` and `onnx-script` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class PinMove:
    name: str
    old: str | None
    new: str | None

    def __str__(self) -> str:
        return f"{self.name} {self.old or 'unpinned'} -> {self.new or 'unpinned'}"


@dataclass(frozen=True)
class PinChange:
    old_pins: Mapping[str, str] = field(default_factory=dict)
    new_pins: Mapping[str, str] = field(default_factory=dict)
    base: str = ""  # the revision compared against (the merge base for a pull request)

    @property
    def moves(self) -> tuple[PinMove, ...]:
        names = sorted(set(self.old_pins) | set(self.new_pins))
        return tuple(PinMove(n, self.old_pins.get(n), self.new_pins.get(n)) for n in names
                     if self.old_pins.get(n) != self.new_pins.get(n))

    @property
    def changed(self) -> bool:
        return bool(self.moves)

    @property
    def old(self) -> str | None:  # the torch pin, the one most callers ask about
        return self.old_pins.get("torch")

    @property
    def new(self) -> str | None:
        return self.new_pins.get("torch")


def read_pins(text: str, where: str = "pyproject.toml",
              source: PinSource | None = None) -> dict[str, str]:
    """Every exact `name==version` pin of the pin source (default: the sweep's tox env) in
    `text` (the source's file), by normalised name."""
    source = source or PinSource()
    pins: dict[str, str] = {}
    for dep in source.entries(text, where):
        m = _PIN.match(dep)
        if m is None:
            continue
        name = normalize(m.group("name"))
        if name in pins:
            raise UsageError(f"{where}: {source.where} pins {name} more than once")
        pins[name] = m.group("version")
    return pins


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)


def resolve(revision: str, repo: Path = Path(".")) -> str:
    """The commit a revision names; an unknown one is an error, never "file absent"."""
    result = _git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if result.returncode != 0:
        raise UsageError(f"unknown revision {revision!r} in {repo} (not a commit there; "
                         "was it fetched?)")
    return result.stdout.strip()


def merge_base(base: str, head: str, repo: Path = Path(".")) -> str:
    result = _git(repo, "merge-base", resolve(base, repo), resolve(head, repo))
    if result.returncode != 0:
        raise UsageError(f"{base!r} and {head!r} have no common ancestor in {repo}")
    return result.stdout.strip()


def file_at(revision: str, path: str = "pyproject.toml", repo: Path = Path(".")) -> str | None:
    """The file's text at a git revision ('' rev = the working tree); None if absent there."""
    if not revision:
        p = repo / path
        return p.read_text("utf-8") if p.exists() else None
    commit = resolve(revision, repo)
    listed = _git(repo, "ls-tree", "--name-only", commit, "--", path)
    if listed.returncode != 0:
        raise UsageError(f"git ls-tree {revision} {path} failed: {listed.stderr.strip()}")
    if not listed.stdout.strip():
        return None
    result = _git(repo, "show", f"{commit}:{path}")
    if result.returncode != 0:
        raise UsageError(f"git show {revision}:{path} failed: {result.stderr.strip()}")
    return result.stdout


def pins_at(revision: str, path: str = "pyproject.toml", repo: Path = Path("."),
            source: PinSource | None = None) -> dict[str, str]:
    """The pins at `revision`: of `source` (its file) when given, else of the tox env in
    `path`."""
    path = source.file if source is not None else path
    text = file_at(revision, path, repo)
    return read_pins(text, f"{path}@{revision or 'worktree'}", source) if text is not None else {}


def pin_change(base: str, head: str = "HEAD", path: str = "pyproject.toml",
               repo: Path = Path("."), *, against_merge_base: bool = True,
               source: PinSource | None = None) -> PinChange:
    """The watched pins that moved between `base` and `head` ('' = the working tree).
    With `against_merge_base`, `base` is replaced by its merge base with `head`."""
    compared = base
    if against_merge_base:
        compared = merge_base(base, head or "HEAD", repo)
    return PinChange(pins_at(compared, path, repo, source), pins_at(head, path, repo, source),
                     compared)


def fingerprint_mismatches(fingerprint: object, pins: Mapping[str, str]) -> list[str]:
    """Pinned packages whose version in an artifact's fingerprint differs from the pin
    (local version labels such as `+cpu` ignored); [] when the artifact fits the pins."""
    out = []
    for name in PINS:  # the pins that are also fields of the artifact's fingerprint
        if name in pins:
            measured = str(getattr(fingerprint, name.replace("-", ""), "")).split("+", 1)[0]
            if measured != pins[name]:
                out.append(f"{name} measured {measured or 'unknown'}, pinned {pins[name]}")
    return out


# --- where a repository pins torch (opsweep init) -----------------------------------------

#: directories whose requirements files pin something else than the stack the project ships
#: against (a docs build, an example, a test fixture): chosen only when nothing else pins
_ASIDE = ("docs", "doc", "examples", "example", "tests", "test", "benchmarks", "notebooks")
_SKIP = (".git", "node_modules", "venv", "site-packages", "build", "dist", "__pycache__")
_ONNX = re.compile(r"onnx|export", re.IGNORECASE)


@dataclass(frozen=True)
class PinCandidate:
    """A place that pins torch exactly: `[tool.opsweep] pins` as (key, value), its rank
    (lower is preferred) and the reason of that rank, in a reader's words."""

    key: str
    value: str
    rank: int
    why: str

    @property
    def where(self) -> str:
        return self.value if self.key == "requirements" else PinSource(
            "tox" if self.key == "tox-env" else "dependencies", self.value).where


def pins_torch(entries: object) -> bool:
    """Whether a list of requirement strings pins torch exactly (`torch==X.Y.Z`)."""
    return isinstance(entries, list) and any(
        isinstance(e, str) and (m := _PIN.match(e)) is not None
        and normalize(m.group("name")) == "torch" for e in entries)


def _rank(name: str, aside: bool) -> tuple[int, str]:
    if aside:
        return 2, "under a docs, examples or tests directory: it pins something else"
    if _ONNX.search(name):
        return 0, "its name says onnx or export"
    return 1, "pins torch exactly"


def pin_candidates(root: Path, data: Mapping) -> list[PinCandidate]:
    """Every place of the repository at `root` (its parsed pyproject.toml: `data`) that pins
    torch exactly, best first: a name that says onnx or export, then the rest, then files
    under a docs, examples or tests directory."""
    found: list[PinCandidate] = []
    envs = _get(data, ("tool", "tox", "env"))
    for env, body in (envs if isinstance(envs, dict) else {}).items():
        if pins_torch(body.get("deps") if isinstance(body, dict) else None):
            found.append(PinCandidate("tox-env", env, *_rank(env, False)))
    arrays = [("project", _get(data, ("project", "dependencies")))]
    for table, kind in ((("project", "optional-dependencies"), "optional"),
                        (("dependency-groups",), "group")):
        section = _get(data, table)
        for name, entries in (section if isinstance(section, dict) else {}).items():
            arrays.append((f"{kind}:{name}", entries))
    for name, entries in arrays:
        if pins_torch(entries):
            found.append(PinCandidate("dependencies", name, *_rank(name, False)))
    files = {p for pattern in ("**/*requirements*.txt", "requirements/*.txt",
                               "**/constraints*.txt") for p in root.glob(pattern)}
    for path in sorted(files):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") or p in _SKIP for p in parts[:-1]):
            continue
        text = path.read_text("utf-8", "replace") if path.is_file() else ""
        if pins_torch(_requirement_lines(text)):
            relative = "/".join(parts)
            found.append(PinCandidate("requirements", relative,
                                      *_rank(relative, parts[0].lower() in _ASIDE)))
    return sorted(found, key=lambda c: c.rank)


def choose_pins(root: Path, data: Mapping) -> tuple[PinCandidate, str]:
    """The pin source init writes, and why (one line): the best-ranked place that pins
    torch; two equally good ones are a one-line error asking for --pins."""
    found = pin_candidates(root, data)
    if not found:
        raise UsageError(f"{root}: no exact torch pin (torch==X.Y.Z) found in pyproject.toml or "
                         "a requirements file; pass --pins FILE (or tox-env=ENV, "
                         "dependencies=project)")
    best = [c for c in found if c.rank == found[0].rank]
    if len(best) > 1:
        raise UsageError(f"{root}: torch is pinned in {len(best)} equally likely places ("
                         + ", ".join(c.where for c in best) + "): name the one the project "
                         "ships against with --pins FILE (or tox-env=ENV, dependencies=...)")
    chosen, others = found[0], found[1:]
    why = f"pins: {chosen.where} ({chosen.why}"
    if others:
        why += "; also pinning torch, not chosen: " + ", ".join(
            f"{c.where} ({c.why})" for c in others)
    return chosen, why + "; --pins FILE chooses another)"

"""A project's opsweep configuration: the ``[tool.opsweep]`` table of its pyproject.toml,
read once and validated (every error is one line naming the file, the key and what is
expected). opsweep's own repository is configured the same way.

The keys (all optional)::

    [tool.opsweep]
    version = 1                      # the configuration format
    pins = { tox-env = "proptest_onnx" }   # or { requirements = "path" }, or
                                     # { dependencies = "project" | "optional:NAME" | "group:NAME" }
    catalog = "builtin"              # opsweep's own specs too, "none", or "used": only the
                                     # built-in specs of the operators `models` use
    specs = ["tests/op_specs"]       # the project's spec directories
    translations = ["path.py:TABLE"] # custom translation tables, measured as further targets
    torchscript = false              # also the TorchScript exporter (dynamo=False): the
                                     # `torchscript` target and the migration view
    opsets = [18, 28]                # also the dynamo exporter at these opsets: the
                                     # `opset18`, `opset28` targets and the opsets view
    artifact = "docs/onnx_support_measured.json"
    pages-dir = "docs"               # the support page, operators, specs, history view, index
    history-dir = "docs/history"
    data-dir = "docs/data"
    templates = "docs/templates"     # a directory overriding the page templates
    source-url = "https://github.com/OWNER/REPO/blob/main"
    repo-url = "https://github.com/OWNER/REPO"
    models = ["pkg.models:build"]
    check-targets = ["torchscript"]  # the models checked with these targets too (opsweep
                                     # check --targets; "all": every target measured)
    tolerance-policy = "tolerances.json"  # the tolerance policy numerics are graded against
                                     # (docs/tolerances.md; default: opsweep's own)

This module reads files only (never the environment) and imports nothing beyond the
standard library, `opsweep.errors` and `opsweep.targets` (with `opsweep.model`: stdlib
only), so the Action runs it (``python3 -m opsweep.config``) before anything is installed.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NoReturn
from urllib.parse import urlsplit
from collections.abc import Iterable

from opsweep.errors import UsageError
from opsweep.targets import Kind, Target, configured, of_name

#: the newest configuration format this opsweep understands
VERSION = 1
TABLE = "[tool.opsweep]"
DEFAULT_TOX_ENV = "proptest_onnx"
_KEYS = ("version", "pins", "catalog", "specs", "translations", "torchscript", "opsets",
         "artifact", "pages-dir", "history-dir", "data-dir", "templates", "source-url",
         "repo-url", "models", "check-targets", "tolerance-policy")
#: the opsets a configuration may name (the exporter then decides which it can reach: the
#: canary records an opset it cannot export at absent)
OPSETS = range(1, 100)
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


@dataclass(frozen=True)
class PinSource:
    """Where the exporter stack is pinned: ``tox`` (a tox env's deps in pyproject.toml),
    ``requirements`` (a requirements or constraints file) or ``dependencies`` (a dependency
    array of pyproject.toml: ``project``, ``optional:NAME``, ``group:NAME``)."""

    kind: str = "tox"
    name: str = DEFAULT_TOX_ENV  # the tox env, the file's path, or which array
    pyproject: str = "pyproject.toml"

    @property
    def file(self) -> str:
        """The file (relative to the repository) that holds the pins."""
        return self.name if self.kind == "requirements" else self.pyproject

    @property
    def where(self) -> str:
        """The pins' place, as a reader would name it."""
        if self.kind == "tox":
            return f"[tool.tox.env.{self.name}] deps"
        if self.kind == "requirements":
            return self.name
        if self.name == "project":
            return "[project] dependencies"
        kind, _, name = self.name.partition(":")
        return (f"[project.optional-dependencies] {name}" if kind == "optional"
                else f"[dependency-groups] {name}")

    def entries(self, text: str, where: str = "") -> list[str]:
        """Every requirement string of the source, from the text of `file`."""
        where = where or self.file
        if self.kind == "requirements":
            return _requirement_lines(text)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"{where}: not valid TOML ({exc})") from None
        if self.kind == "tox":
            value = _get(data, ("tool", "tox", "env", self.name, "deps"))
        elif self.name == "project":
            value = _get(data, ("project", "dependencies"))
        else:
            kind, _, name = self.name.partition(":")
            path = (("project", "optional-dependencies", name) if kind == "optional"
                    else ("dependency-groups", name))
            value = _get(data, path)
        if value is None:
            return []
        if not isinstance(value, list):
            raise UsageError(f"{where}: {self.where} is not a list of requirement strings")
        return [v for v in value if isinstance(v, str)]


def _get(data: object, path: tuple[str, ...]) -> object:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _requirement_lines(text: str) -> list[str]:
    """A requirements file's requirement lines (comments, options and blank lines left out;
    continuation lines joined)."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line)
        line = re.sub(r"\s--?[a-z].*$", "", line).strip()  # per-line options: --hash=...
        if line and not line.startswith("-"):
            out.append(line)
    return out


@dataclass(frozen=True)
class Config:
    """The validated ``[tool.opsweep]`` of a project (paths relative to its root)."""

    version: int = VERSION
    pins: PinSource = field(default_factory=PinSource)
    catalog: str = "builtin"
    specs: tuple[str, ...] = ()
    translations: tuple[str, ...] = ()
    torchscript: bool = False
    opsets: tuple[int, ...] = ()
    artifact: str = "docs/onnx_support_measured.json"
    pages_dir: str = "docs"
    history_dir: str = "docs/history"
    data_dir: str = "docs/data"
    templates: str = ""
    source_url: str = ""
    repo_url: str = ""
    models: tuple[str, ...] = ()
    #: the other targets `models` are checked with (opsweep check --targets; "all")
    check_targets: tuple[str, ...] = ()
    pyproject: str = "pyproject.toml"
    #: the tolerance policy's file ("": opsweep's own; opsweep.policy)
    tolerance_policy: str = ""
    #: the keys the project's ``[tool.opsweep]`` sets; None: its pyproject.toml has no
    #: ``[tool.opsweep]`` (or there is no pyproject.toml): not a project opsweep measures
    keys: frozenset[str] | None = field(default=None, compare=False)

    def targets(self, translations: Iterable[str] = (), torchscript: bool = False,
                opsets: Iterable[int] = ()) -> tuple[Target, ...]:
        """What a sweep of this project measures with: the configured targets, with the
        command line's `translations` tables (after the configured ones), `torchscript` and
        `opsets` added (the command line's ``--opset``: checked here)."""
        wrong = [n for n in opsets if n not in OPSETS]
        if wrong:
            raise UsageError(f"--opset: expected an opset from {OPSETS.start} to "
                             f"{OPSETS.stop - 1}, got {wrong[0]}")
        return configured([*self.translations, *translations], self.torchscript or torchscript,
                          [*self.opsets, *opsets])

    @property
    def builtin(self) -> bool:
        """Whole built-in catalog (builtin) or none of it (none, used: see `scope`)."""
        return self.catalog == "builtin"

    @property
    def page(self) -> str:
        return _join(self.pages_dir, "supported_operators.md")

    @property
    def history_page(self) -> str:
        return _join(self.pages_dir, "history.md")

    @property
    def models_checked(self) -> str:
        return _join(self.pages_dir, "models_checked.json")


def _join(directory: str, name: str) -> str:
    return name if directory in ("", ".") else f"{directory}/{name}"


#: the configurations read, by the file's identity (see `load`)
_READ: dict[tuple, Config] = {}


def load(pyproject: str | Path = "pyproject.toml") -> Config:
    """The configuration in `pyproject` (its directory is the repository); the defaults
    when the file or the table is absent. The same contents at the same place are parsed
    once (a command's steps each ask for the configuration; a Config is frozen, so they
    share one); a file whose contents changed is parsed again."""
    pyproject = Path(pyproject)
    if not pyproject.is_file():
        return Config(pins=PinSource(pyproject=pyproject.name), pyproject=pyproject.name)
    try:
        raw = pyproject.read_bytes()
    except OSError as exc:
        raise UsageError(f"{pyproject}: cannot read it: {str(exc).splitlines()[0]}") from None
    key = (str(pyproject), str(pyproject.resolve()), raw)
    if key not in _READ:
        _READ.clear()  # one project per command: the newest only
        _READ[key] = _parsed(pyproject, raw)
    return _READ[key]


def _parsed(pyproject: Path, raw: bytes) -> Config:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{pyproject}: cannot read it: {str(exc).splitlines()[0]}") from None
    table = _get(data, ("tool", "opsweep"))
    if table is None:
        return Config(pins=PinSource(pyproject=pyproject.name), pyproject=pyproject.name)
    if not isinstance(table, dict):
        raise UsageError(f"{pyproject}: {TABLE} must be a table")
    return parse(table, pyproject)


def parse(table: dict, pyproject: Path) -> Config:
    """`table` (the ``[tool.opsweep]`` of `pyproject`) validated into a Config."""
    check = _Checker(pyproject)
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        check.fail(unknown[0], f"not a key opsweep knows (expected one of {', '.join(_KEYS)})")
    version = table.get("version", VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        check.fail("version", f"expected a positive integer, got {version!r}")
    if version > VERSION:
        check.fail("version", f"format {version} is newer than this opsweep understands "
                   f"(format {VERSION}); upgrade opsweep or lower the version")
    catalog = table.get("catalog", "builtin")
    if catalog not in ("builtin", "none", "used"):
        check.fail("catalog", f"expected \"builtin\", \"none\" or \"used\", got {catalog!r}")
    if catalog == "used" and not table.get("models"):
        check.fail("catalog", "\"used\" measures the built-in specs of the operators the "
                   "project's models use: list them in models (module:callable or a .pt2 file)")
    translations = tuple(check.strings("translations", table))
    for item in translations:
        path, sep, name = item.rpartition(":")
        if not sep or not path or not name.isidentifier():
            check.fail("translations", f"{item!r} is not 'path.py:NAME' or 'module:NAME'")
        if path.endswith(".py"):
            check.inside("translations", path)
    torchscript = table.get("torchscript", False)
    if not isinstance(torchscript, bool):
        check.fail("torchscript", f"expected true or false, got {torchscript!r}")
    opsets = _opsets(check, table.get("opsets", []))
    paths = {key: check.path(key, table[key]) for key in
             ("artifact", "pages-dir", "history-dir", "data-dir", "templates", "tolerance-policy")
             if key in table}
    return Config(
        version=version, pins=_pins(check, table.get("pins"), pyproject.name), catalog=catalog,
        specs=tuple(check.path("specs", s) for s in check.strings("specs", table)),
        translations=translations, torchscript=torchscript, opsets=opsets,
        artifact=paths.get("artifact", Config.artifact),
        pages_dir=paths.get("pages-dir", Config.pages_dir),
        history_dir=paths.get("history-dir", Config.history_dir),
        data_dir=paths.get("data-dir", Config.data_dir), templates=paths.get("templates", ""),
        source_url=check.url("source-url", table), repo_url=check.url("repo-url", table),
        models=_models(check, table), check_targets=_check_targets(check, table),
        pyproject=pyproject.name,
        tolerance_policy=paths.get("tolerance-policy", ""), keys=frozenset(table))


def _pins(check: _Checker, value: object, pyproject: str) -> PinSource:
    if value is None:
        return PinSource(pyproject=pyproject)
    expected = ('a table with one of tox-env = "ENV", requirements = "PATH" or '
                'dependencies = "project" | "optional:NAME" | "group:NAME"')
    if not isinstance(value, dict) or len(value) != 1:
        check.fail("pins", f"expected {expected}, got {value!r}")
    ((key, name),) = value.items()
    if key not in ("tox-env", "requirements", "dependencies") or not isinstance(name, str):
        check.fail("pins", f"expected {expected}, got {value!r}")
    if key == "tox-env" and not _NAME.match(name):
        check.fail("pins.tox-env", f"expected a tox env name, got {name!r}")
    if key == "requirements":
        return PinSource("requirements", check.path("pins.requirements", name), pyproject)
    if key == "dependencies":
        kind, sep, array = name.partition(":")
        if not (name == "project" or (sep and kind in ("optional", "group") and _NAME.match(array))):
            check.fail("pins.dependencies",
                       f"expected \"project\", \"optional:NAME\" or \"group:NAME\", got {name!r}")
        return PinSource("dependencies", name, pyproject)
    return PinSource("tox", name, pyproject)


def _opsets(check: _Checker, value: object) -> tuple[int, ...]:
    expected = f"a list of opsets, integers from {OPSETS.start} to {OPSETS.stop - 1}"
    if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        check.fail("opsets", f"expected {expected}, got {value!r}")
    outside = [v for v in value if v not in OPSETS]
    if outside:
        check.fail("opsets", f"expected {expected}, got {outside[0]!r}")
    if len(set(value)) != len(value):
        check.fail("opsets", "an opset is listed twice")
    return tuple(sorted(value))


def _check_targets(check: _Checker, table: dict) -> tuple[str, ...]:
    """``check-targets``: target names (``torchscript``, ``opsetN``, ``MODULE:TABLE``) or
    ``all``, each once."""
    value = tuple(check.strings("check-targets", table))
    for item in value:
        if item != "all" and of_name(item).kind is Kind.TABLE and ":" not in item:
            check.fail("check-targets", f"{item!r} is not a target (torchscript, opsetN, "
                       "MODULE:TABLE or all)")
    if len(set(value)) != len(value):
        check.fail("check-targets", "a target is listed twice")
    return value


def _models(check: _Checker, table: dict) -> tuple[str, ...]:
    value = tuple(check.strings("models", table))
    for item in value:
        if not (item.endswith(".pt2") or (":" in item and all(item.split(":", 1)))):
            check.fail("models", f"{item!r} is neither 'module:callable' nor a .pt2 file")
    if len(set(value)) != len(value):
        check.fail("models", "a model is listed twice")
    return value


@dataclass(frozen=True)
class _Checker:
    pyproject: Path

    def fail(self, key: str, message: str) -> NoReturn:
        raise UsageError(f"{self.pyproject}: {TABLE} {key}: {message}")

    def strings(self, key: str, table: dict) -> list[str]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail(key, f"expected a list of strings, got {value!r}")
        return value

    def path(self, key: str, value: object) -> str:
        """`value` as a relative path inside the repository (the pyproject's directory)."""
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"expected a path relative to the repository, got {value!r}")
        self.inside(key, value)
        return PurePosixPath(value).as_posix()

    def inside(self, key: str, value: str) -> None:
        root = self.pyproject.resolve().parent
        target = (root / value).resolve()
        if Path(value).is_absolute() or ".." in PurePosixPath(value).parts \
                or not target.is_relative_to(root):
            self.fail(key, f"{value!r} points outside the repository; expected a path inside it")

    def url(self, key: str, table: dict) -> str:
        value = table.get(key)
        if value is None:
            return ""
        parts = urlsplit(value) if isinstance(value, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc \
                or any(c.isspace() for c in value) or parts.query or parts.fragment:
            self.fail(key, f"{value!r} is not an http(s) URL (for example "
                      "https://github.com/OWNER/REPO/blob/main)")
        return value.rstrip("/")


def unmet(pins: list[str]) -> list[str]:
    """The `name==version` pins the running interpreter's environment does not hold
    (local version labels such as `+cpu` ignored), one 'name have, pinned want' each."""

    def key(name: str) -> str:
        return name.strip().lower().replace("_", "-")

    have = {key(d.metadata["Name"]): d.version.split("+")[0] for d in metadata.distributions()}
    wanted = [p.split("==", 1) for p in pins if "==" in p]
    return [f"{n.strip()} {have.get(key(n), chr(8709))}, pinned {w.strip()}"
            for n, w in wanted if have.get(key(n)) != w.strip()]


def _main(argv: list[str]) -> int:
    """``python -m opsweep.config install-args|pins|unmet|artifact|check PYPROJECT``: what
    the Action installs (one pip argument a line), the exact pins (``name==version`` a
    line), the pins this interpreter's environment does not hold (exit 1: a prepared
    OPSWEEP_PYTHON_ENV must hold every one), the configured artifact's path, or nothing
    (exit 2 and one line when the configuration is broken or newer than this opsweep
    understands)."""
    commands = ("install-args", "pins", "unmet", "artifact", "check")
    if len(argv) != 2 or argv[0] not in commands:
        print(f"usage: python -m opsweep.config {'|'.join(commands)} PYPROJECT", file=sys.stderr)
        return 2
    pyproject = Path(argv[1])
    try:
        config = load(pyproject)
        if argv[0] in ("artifact", "check"):
            if argv[0] == "artifact":
                print(config.artifact)
            return 0
        source = config.pins
        text_path = pyproject.parent / source.file
        if not text_path.is_file():
            raise UsageError(f"{pyproject}: {TABLE} pins: {source.file} does not exist")
        entries = source.entries(text_path.read_text("utf-8"), str(text_path))
    except UsageError as exc:
        print(f"opsweep: error: {exc}", file=sys.stderr)
        return 2
    if argv[0] == "unmet":
        off = unmet(entries)
        if off:
            print(f"::error::OPSWEEP_PYTHON_ENV does not hold the pins: {'; '.join(off)}")
        return 1 if off else 0
    if argv[0] == "install-args" and source.kind == "requirements":
        print(f"-r\n{text_path}")
    else:
        for entry in entries:
            if argv[0] == "install-args" or "==" in entry:
                print(entry)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

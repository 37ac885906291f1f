"""``opsweep init``: adopt opsweep in a repository. Writes the four caller workflows
(onnx-measure, onnx-command, onnx-publish, onnx-bump: configuration only, every step in
opsweep's action and its reusable onnx-sweep workflow), the ``[tool.opsweep]`` block of
pyproject.toml (the table is created when missing) and a Renovate rule, for the manager
that reads the configured pin source, that moves the exporter stack in one pull request. Nothing that exists is overwritten without
``--force``; the refusal names every file or block that exists. docs/adopting.md walks
through the result."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from opsweep import __version__, _release, config
from opsweep.bot.pins import WATCHED
from opsweep.errors import UsageError
from opsweep.files import write_atomic

#: where opsweep's action lives; an adopter may name a fork (--action OWNER/NAME@REF)
ACTION_REPOSITORY = "opsweep/opsweep"
DEFAULT_ACTION = f"{ACTION_REPOSITORY}@v{__version__.split('.')[0]}"
WORKFLOWS = ("onnx-measure.yml", "onnx-command.yml", "onnx-publish.yml", "onnx-bump.yml")
RENOVATE = ".github/renovate.json5"
RENOVATE_FILES = (RENOVATE, "renovate.json", "renovate.json5", ".github/renovate.json",
                  ".renovaterc", ".renovaterc.json")
_ACTION = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@([A-Za-z0-9_./-]+)$")
_HEADER = re.compile(r"^\s*\[", re.MULTILINE)


@dataclass(frozen=True)
class Plan:
    """What init writes: repository-relative path -> text, and the pyproject block."""

    files: dict[str, str]
    block: str
    replaces_block: bool  # --force over an existing [tool.opsweep]


def add_parser(sub) -> None:
    p = sub.add_parser("init", help="adopt opsweep in a repository: caller workflows, the "
                       "[tool.opsweep] block, the Renovate rule (docs/adopting.md)")
    p.add_argument("--repo-dir", type=Path, default=Path("."), help="the repository's root")
    p.add_argument("--action", default=DEFAULT_ACTION, metavar="OWNER/NAME@REF",
                   help=f"opsweep's action the workflows use (default {DEFAULT_ACTION})")
    p.add_argument("--action-sha", default="", metavar="SHA",
                   help="the full commit SHA of the action's release (the v" + __version__ +
                        " tag's commit) that the privileged callers (onnx-publish, onnx-bump) "
                        "pin (default: the commit a release build of opsweep recorded)")
    p.add_argument("--pins", default=None, metavar="KIND=VALUE",
                   help="where the exporter stack is pinned: requirements=PATH, tox-env=ENV or "
                        "dependencies=project|optional:NAME|group:NAME (default: found in the "
                        "repository)")
    p.add_argument("--catalog", choices=["builtin", "none", "used"], default="builtin",
                   help="measure opsweep's built-in catalog too, only --specs (none), or only "
                        "the built-in specs of the operators --models use (used)")
    p.add_argument("--models", action="append", default=[], metavar="MODULE:CALLABLE",
                   help="a model `opsweep check` checks after each sweep (repeat; module:callable "
                        "or a .pt2 file; what catalog \"used\" measures the operators of)")
    p.add_argument("--specs", action="append", default=[], metavar="DIR",
                   help="a directory of the project's own spec modules (repeat)")
    p.add_argument("--translations", action="append", default=[], metavar="PATH.py:TABLE",
                   help="a custom translation table measured as a further target (repeat)")
    p.add_argument("--pages-dir", default="docs/onnx", metavar="DIR",
                   help="where the artifact, the pages (an index.md among them), the history "
                        "and the data live (default docs/onnx: beside the project's own docs, "
                        "never over them)")
    p.add_argument("--shards", type=int, default=1, help="parallel sweep jobs (1 to 32)")
    p.add_argument("--branch", default="main", help="the default branch (push re-measures it)")
    p.add_argument("--force", action="store_true", help="overwrite what exists")
    p.set_defaults(run=cmd_init)


def cmd_init(args) -> int:
    root = args.repo_dir
    if not root.is_dir():
        raise UsageError(f"--repo-dir {root}: not a directory")
    plan = build(root, args)
    existing = [p for p in plan.files if Path(root, p).exists()]
    existing += [p for p in RENOVATE_FILES if p != RENOVATE and Path(root, p).exists()]
    if plan.replaces_block:
        existing.append("pyproject.toml [tool.opsweep]")
    if existing and not args.force:
        raise UsageError(f"{root}: already there: {', '.join(sorted(set(existing)))}; "
                         "nothing written (--force overwrites)")
    for relative, text in plan.files.items():
        write_atomic(Path(root, relative), text.encode("utf-8"))
    _write_block(Path(root, "pyproject.toml"), plan.block)
    config.load(Path(root, "pyproject.toml"))  # what was written reads back
    for relative in [*plan.files, "pyproject.toml [tool.opsweep]"]:
        print(f"opsweep: wrote {relative}")
    print("opsweep: next: commit these, then follow docs/adopting.md (the onnx-publish "
          "environment, the required check onnx-support)")
    return 0


def build(root: Path, args) -> Plan:
    """Everything init would write, validated (one UsageError line on bad input)."""
    match = _ACTION.match(args.action)
    if not match:
        raise UsageError(f"--action: expected OWNER/NAME@REF, got {args.action!r}")
    if not 1 <= args.shards <= 32:
        raise UsageError(f"--shards: expected 1 to 32, got {args.shards}")
    if not re.fullmatch(r"[A-Za-z0-9._/-]+", args.branch):
        raise UsageError(f"--branch: not a branch name: {args.branch!r}")
    pyproject = Path(root, "pyproject.toml")
    data = _read(pyproject)
    pins = _pins(root, data, args.pins)
    table = {"version": config.VERSION, "pins": dict([pins]), "catalog": args.catalog,
             "specs": args.specs, "translations": args.translations,
             "artifact": _join(args.pages_dir, "onnx_support_measured.json"),
             "pages-dir": args.pages_dir, "history-dir": _join(args.pages_dir, "history"),
             "data-dir": _join(args.pages_dir, "data"),
             **({"models": args.models} if args.models else {})}
    parsed = config.parse(table, pyproject)  # the same validation every command applies
    for spec_dir in parsed.specs:
        if not Path(root, spec_dir).is_dir():
            raise UsageError(f"--specs {spec_dir}: no such directory in {root}")
    repository, _ = match.groups()
    words = {"@ACTION@": args.action, "@PINNED@": pinned_action(args.action, args.action_sha),
             "@SHARDS@": str(args.shards), "@BRANCH@": args.branch,
             "@VERSION@": __version__,
             "@SWEEP@": f"{repository}/.github/workflows/onnx-sweep.yml@{match.group(2)}"}
    words["@WHERE@"] = parsed.pins.where
    files = {f".github/workflows/{name}": _fill(_template(name), words) for name in WORKFLOWS}
    files[RENOVATE] = _renovate(parsed.pins)
    return Plan(files, _block(table), config._get(data, ("tool", "opsweep")) is not None)


def pinned_action(action: str, sha: str = "") -> str:
    """What the privileged callers run: `action` when its ref is a full commit SHA already,
    else `OWNER/NAME@SHA # vX.Y.Z` -- `sha` (--action-sha), or the commit a release build of
    this opsweep recorded (for opsweep's own repository only: a fork has its own releases).
    A moving tag there would let whoever may move it run code with the App's key."""
    matched = _ACTION.match(action)
    if matched is None:
        raise UsageError(f"--action: expected OWNER/NAME@REF, got {action!r}")
    repository, ref = matched.groups()
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        return action
    if sha and not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise UsageError(f"--action-sha: expected a full 40-hex commit SHA, got {sha!r}")
    if not sha and repository == ACTION_REPOSITORY and _release.VERSION == __version__:
        sha = _release.COMMIT
    if not sha:
        raise UsageError(
            f"the privileged workflows (onnx-publish, onnx-bump) run {repository} by its full "
            f"commit SHA, and this opsweep {__version__} knows none for it (only a release "
            "build records its commit): pass --action-sha, the commit of its tag "
            f"v{__version__} (`git ls-remote https://github.com/{repository} "
            f"'refs/tags/v{__version__}*'`: the ^{{}} line for an annotated tag), or --action "
            f"{repository}@SHA")
    return f"{repository}@{sha} # v{__version__}"


def _read(pyproject: Path) -> dict:
    if not pyproject.is_file():
        return {}
    try:
        return tomllib.loads(pyproject.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{pyproject}: cannot read it: {str(exc).splitlines()[0]}") from None


def _pins(root: Path, data: dict, given: str | None) -> tuple[str, str]:
    """(key, value) of [tool.opsweep] pins: --pins, else where torch is pinned."""
    if given is not None:
        key, sep, value = given.partition("=")
        if not sep or key not in ("requirements", "tox-env", "dependencies"):
            raise UsageError(f"--pins: expected requirements=PATH, tox-env=ENV or "
                             f"dependencies=project|optional:NAME|group:NAME, got {given!r}")
        return key, value
    envs = config._get(data, ("tool", "tox", "env"))
    for env, body in (envs if isinstance(envs, dict) else {}).items():
        if _pins_torch(body.get("deps") if isinstance(body, dict) else None):
            return "tox-env", env
    if _pins_torch(config._get(data, ("project", "dependencies"))):
        return "dependencies", "project"
    for path in sorted(root.glob("**/*requirements*.txt")) + sorted(root.glob("requirements/*.txt")):
        relative = path.relative_to(root).as_posix()
        if ".git/" in relative or "/." in f"/{relative}":
            continue
        if _pins_torch(config._requirement_lines(path.read_text("utf-8", "replace"))):
            return "requirements", relative
    raise UsageError(f"{root}: no exact torch pin (torch==X.Y.Z) found in pyproject.toml or a "
                     "requirements file; pass --pins requirements=PATH (or tox-env=ENV, "
                     "dependencies=project)")


def _pins_torch(entries) -> bool:
    return isinstance(entries, list) and any(
        isinstance(e, str) and re.match(r"^\s*torch\s*==", e) for e in entries)


def _join(directory: str, name: str) -> str:
    return name if directory in ("", ".") else f"{directory.rstrip('/')}/{name}"


def _template(name: str) -> str:
    return resources.files("opsweep").joinpath("templates", "init", name).read_text("utf-8")


def _fill(text: str, words: dict[str, str]) -> str:
    for key, value in words.items():
        text = text.replace(key, value)
    return text


def _renovate(pins: config.PinSource) -> str:
    packages = ", ".join(f'"{p}"' for p in WATCHED)
    if pins.kind == "requirements":
        pattern = "/^" + re.escape(pins.name).replace("/", "\\\\/").replace("\\.", "\\\\.") + "$/"
        manager = f'  pip_requirements: {{ managerFilePatterns: ["{pattern}"] }},\n'
    elif pins.kind == "tox":
        env = re.escape(pins.name).replace("\\", "\\\\")
        manager = (
            "  customManagers: [\n    {\n      customType: \"regex\",\n"
            "      managerFilePatterns: [\"/(^|/)pyproject\\\\.toml$/\"],\n"
            "      matchStringsStrategy: \"recursive\",\n      matchStrings: [\n"
            f"        \"\\\\n\\\\[tool\\\\.tox\\\\.env\\\\.{env}\\\\][\\\\s\\\\S]*?\\\\ndeps\\\\s*=\\\\s*"
            "\\\\[[^\\\\]]*\\\\]\",\n"
            "        \"\\\"(?<depName>[A-Za-z0-9][A-Za-z0-9._-]*)\\\\s*==\\\\s*"
            "(?<currentValue>[^\\\"\\\\s;,]+)\\\"\",\n      ],\n"
            "      datasourceTemplate: \"pypi\",\n      versioningTemplate: \"pep440\",\n"
            "    },\n  ],\n")
    else:
        manager = ""  # Renovate's pep621 manager reads [project] arrays itself
    return _fill(_template("renovate.json5"), {"@MANAGER@": manager, "@PACKAGES@": packages,
                                               "@WHERE@": pins.where, "@VERSION@": __version__})


def _block(table: dict) -> str:
    lines = ["[tool.opsweep]  # written by `opsweep init` (docs/adopting.md)"]
    for key, value in table.items():
        if isinstance(value, dict):
            ((k, v),) = value.items()
            text = f'{{ {k} = "{_escape(v)}" }}'
        elif isinstance(value, list):
            text = "[" + ", ".join(f'"{_escape(v)}"' for v in value) + "]"
        elif isinstance(value, int):
            text = str(value)
        else:
            text = f'"{_escape(value)}"'
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _write_block(pyproject: Path, block: str) -> None:
    """`block` as the [tool.opsweep] table of `pyproject`: appended, or (--force) in place
    of the existing table's lines."""
    text = pyproject.read_text("utf-8") if pyproject.is_file() else ""
    start = re.search(r"^\[tool\.opsweep\][^\n]*\n?", text, re.MULTILINE)
    if start:
        following = _HEADER.search(text, start.end())
        end = following.start() if following else len(text)
        if re.search(r"^\[tool\.opsweep\.", text, re.MULTILINE):
            raise UsageError(f"{pyproject}: [tool.opsweep] has sub-tables; edit it by hand")
        text = text[:start.start()] + block + ("\n" if following else "") + text[end:]
    elif config._get(tomllib.loads(text) if text else {}, ("tool", "opsweep")) is not None:
        raise UsageError(f"{pyproject}: [tool.opsweep] is not a table header of its own "
                         "(a dotted key or an inline table); edit it by hand")
    else:
        text = text + ("\n" if text and not text.endswith("\n") else "") + \
            ("\n" if text else "") + block
    write_atomic(pyproject, text.encode("utf-8"))
    tomllib.loads(text)  # still TOML


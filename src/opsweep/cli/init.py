"""``opsweep init``: adopt opsweep in a repository. Writes the four caller workflows
(onnx-measure, onnx-command, onnx-publish, onnx-bump: configuration only, every step in
opsweep's action and its reusable onnx-sweep workflow), the ``[tool.opsweep]`` block of
pyproject.toml (the table is created when missing), a Renovate rule, for the manager that
reads the configured pin source, that moves the exporter stack in one pull request (added
to an existing Renovate configuration instead, which Renovate reads first), and the
.gitignore rules for what a local run leaves; then prints which pin source it chose and
why, and the steps left. Nothing that exists is overwritten without ``--force``; the
refusal names every file or block that exists. ``--upgrade`` rewrites the workflows and
keeps ``[tool.opsweep]``. docs/adopting.md walks through the result."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from opsweep import __version__, _release, config
from opsweep.bot.pins import choose_pins, pins_torch
from opsweep.cli import init_files, upgrade
from opsweep.cli.invocation import Invocation, Options
from opsweep.errors import UsageError
from opsweep.files import write_atomic

#: where opsweep's action lives; an adopter may name a fork (--action OWNER/NAME@REF)
ACTION_REPOSITORY = "opsweep/opsweep"
DEFAULT_ACTION = f"{ACTION_REPOSITORY}@v{__version__.split('.')[0]}"
WORKFLOWS = ("onnx-measure.yml", "onnx-command.yml", "onnx-publish.yml", "onnx-bump.yml")
_ACTION = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@([A-Za-z0-9_./-]+)$")
_HEADER = re.compile(r"^\s*\[", re.MULTILINE)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "init", help="adopt opsweep in a repository: caller workflows, the [tool.opsweep] "
        "block, the Renovate rule, the ignore rules (docs/adopting.md)",
        description="Write what a repository needs to run opsweep's bot: the four caller "
        "workflows (.github/workflows/onnx-*.yml), the [tool.opsweep] block of "
        "pyproject.toml, a Renovate rule (or one added to the existing Renovate "
        "configuration) and .gitignore rules; then print the steps left, in order. Nothing "
        "that exists is overwritten without --force; --upgrade rewrites the workflows of an "
        "earlier init and keeps [tool.opsweep] as it is. docs/adopting.md walks through it.")
    p.add_argument("--repo-dir", type=Path, default=Path("."), help="the repository's root")
    p.add_argument("--action", default=None, metavar="OWNER/NAME@REF",
                   help=f"opsweep's action the workflows use (default {DEFAULT_ACTION})")
    p.add_argument("--action-sha", default="", metavar="SHA",
                   help="the full commit SHA of the action's release (the v" + __version__ +
                        " tag's commit) that the privileged callers (onnx-publish, onnx-bump) "
                        "pin (default: the commit a release build of opsweep recorded)")
    p.add_argument("--pin-sha", action="store_true", default=None,
                   help="every caller runs that commit, not only the privileged ones: "
                        "`uses: OWNER/NAME@SHA # vX.Y.Z`, which Renovate moves")
    p.add_argument("--pins", default=None, metavar="FILE|KIND=VALUE",
                   help="where torch is pinned: a requirements or constraints FILE, or "
                        "tox-env=ENV, dependencies=project|optional:NAME|group:NAME (default: "
                        "found in the repository, and init says which and why)")
    p.add_argument("--install", default=None, metavar="PIP-ARGS",
                   help="what CI installs beside the pins so your models and specs import "
                        "(default '-e .' when the repository is a Python package, else "
                        "nothing; '' for nothing); never added to the watched pins")
    p.add_argument("--pip-args", default=None, metavar="PIP-ARGS",
                   help="extra pip arguments of the measuring jobs, e.g. a CPU-only torch "
                        "wheel index (default none)")
    p.add_argument("--catalog", choices=["builtin", "none", "used"], default=None,
                   help="measure opsweep's built-in catalog too, only --specs (none), or only "
                        "the built-in specs of the operators --models use (used); default: "
                        "used with --models, else builtin")
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
    p.add_argument("--shards", type=int, default=None,
                   help="parallel sweep jobs, 1 to 32 (default 2 for the built-in catalog, "
                        "else 1)")
    p.add_argument("--branch", default=None, help="the default branch (default main; push "
                   "re-measures it)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--force", action="store_true", help="overwrite what exists")
    group.add_argument("--upgrade", action="store_true",
                       help="rewrite the workflow files (and init's own Renovate rule) for "
                            "this opsweep, keeping [tool.opsweep] and the settings the "
                            "workflows carry (shards, branch, install, action)")
    p.set_defaults(run=cmd_init)


def cmd_init(invocation: Invocation) -> int:
    args = invocation.options
    root = args.repo_dir
    if not root.is_dir():
        raise UsageError(f"--repo-dir {root}: not a directory")
    if args.upgrade:  # the settings the workflows carry, where the command line gave none
        args = args.replace(**upgrade.carry(root, args))
    plan = build(root, args)
    existing = [p for p in plan.files if Path(root, p).exists() and p != ".gitignore"
                and p != plan.renovate]
    if plan.replaces_block and not args.upgrade:
        existing.append("pyproject.toml [tool.opsweep]")
    if existing and not (args.force or args.upgrade):
        raise UsageError(f"{root}: already there: {', '.join(sorted(set(existing)))}; "
                         "nothing written (--upgrade rewrites the workflows and keeps "
                         "[tool.opsweep]; --force overwrites everything)")
    for relative, text in plan.files.items():
        write_atomic(Path(root, relative), text.encode("utf-8"))
    written = list(plan.files)
    if not args.upgrade:
        _write_block(Path(root, "pyproject.toml"), plan.block)
        written.append("pyproject.toml [tool.opsweep]")
    config.load(Path(root, "pyproject.toml"))  # what was written reads back
    print(f"opsweep: {plan.why}")
    for relative in written:
        print(f"opsweep: wrote {relative}")
    for line in plan.notes:
        print(f"opsweep: {line}")
    for line in init_files.checklist(plan.parsed, plan.branch, plan.renovate, plan.install):
        print(line)
    return 0


@dataclass(frozen=True)
class Plan:
    """What init writes: repository-relative path -> text, and the pyproject block."""

    files: dict[str, str]
    block: str
    replaces_block: bool  # an existing [tool.opsweep]
    parsed: config.Config
    why: str  # which pin source, and why
    renovate: str = ""  # the Renovate file init wrote or extended ("" when it wrote its own)
    notes: tuple[str, ...] = ()
    install: str = ""  # what the measuring jobs install beside the pins
    branch: str = "main"  # the default branch the workflows name


def build(root: Path, args: Options) -> Plan:
    """Everything init would write, validated (one UsageError line on bad input)."""
    action = args.action or DEFAULT_ACTION
    branch = args.branch or "main"
    match = _ACTION.match(action)
    if not match:
        raise UsageError(f"--action: expected OWNER/NAME@REF, got {action!r}")
    catalog = args.catalog or ("used" if args.models else "builtin")
    shards = args.shards if args.shards is not None else (2 if catalog == "builtin" else 1)
    if not 1 <= shards <= 32:
        raise UsageError(f"--shards: expected 1 to 32, got {shards}")
    if not re.fullmatch(r"[A-Za-z0-9._/-]+", branch):
        raise UsageError(f"--branch: not a branch name: {branch!r}")
    pyproject = Path(root, "pyproject.toml")
    data = _read(pyproject)
    existing = config._get(data, ("tool", "opsweep"))
    if args.upgrade:
        if existing is None:
            raise UsageError(f"{pyproject}: no [tool.opsweep] to upgrade; run `opsweep init` "
                             "without --upgrade")
        parsed = config.load(pyproject)
        table: dict = {}
        why = f"pins: {parsed.pins.where} (kept from [tool.opsweep])"
    else:
        (key, value), why = _pins(root, data, args.pins)
        table = {"version": config.VERSION, "pins": {key: value}, "catalog": catalog,
                 "specs": args.specs, "translations": args.translations,
                 "artifact": _join(args.pages_dir, "onnx_support_measured.json"),
                 "pages-dir": args.pages_dir, "history-dir": _join(args.pages_dir, "history"),
                 "data-dir": _join(args.pages_dir, "data"),
                 **({"models": args.models} if args.models else {})}
        parsed = config.parse(table, pyproject)  # the same validation every command applies
    for spec_dir in parsed.specs:
        if not Path(root, spec_dir).is_dir():
            raise UsageError(f"--specs {spec_dir}: no such directory in {root}")
    repository, ref = match.groups()
    pinned = pinned_action(action, args.action_sha)
    every = pinned if args.pin_sha else action
    if args.pin_sha and not re.fullmatch(r"[0-9a-f]{40}", ref):
        ref = pinned.split("@", 1)[1]  # "SHA # vX.Y.Z"
    install = _install(root, data, args.install)
    extra = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in
                    (("install", install), ("pip-args", args.pip_args or "")) if v)
    words = {"@ACTION@": every, "@PINNED@": pinned, "@OPSWEEP@": every,
             "@SHARDS@": str(shards), "@BRANCH@": branch, "@EXTRA@": extra,
             "@VERSION@": __version__, "@WHERE@": parsed.pins.where,
             "@SWEEP@": f"{repository}/.github/workflows/onnx-sweep.yml@{ref}"}
    files = {f".github/workflows/{name}": init_files.fill(init_files.template(name), words)
             for name in WORKFLOWS}
    rule = init_files.renovate_json5(parsed.pins, repository if args.pin_sha else "")
    renovate, notes = init_files.place_renovate(root, rule, files)
    ignore = init_files.gitignore(root)
    if ignore is not None:
        files[".gitignore"] = ignore
    return Plan(files, _block(table), existing is not None, parsed, why,
                renovate, notes, install, branch)


def _install(root: Path, data: dict, given: str | None) -> str:
    """What the measuring jobs install beside the pins: --install, else the repository
    itself (editable) when it is a Python package."""
    if given is not None:
        if "\n" in given:
            raise UsageError(f"--install: one line of pip arguments, got {given!r}")
        return given.strip()
    package = config._get(data, ("project", "name")) is not None or any(
        Path(root, name).is_file() for name in ("setup.py", "setup.cfg"))
    return "-e ." if package else ""


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


def _pins(root: Path, data: dict, given: str | None) -> tuple[tuple[str, str], str]:
    """((key, value) of [tool.opsweep] pins, why): --pins, else where torch is pinned."""
    if given is None:
        chosen, why = choose_pins(root, data)
        return (chosen.key, chosen.value), why
    key, sep, value = given.partition("=")
    if not sep:
        key, value = "requirements", given  # a plain FILE
    if key not in ("requirements", "tox-env", "dependencies") or not value:
        raise UsageError(f"--pins: expected a FILE, requirements=PATH, tox-env=ENV or "
                         f"dependencies=project|optional:NAME|group:NAME, got {given!r}")
    source = config.PinSource("tox" if key == "tox-env" else key, value)
    path = Path(root, source.file)
    if not path.is_file():
        raise UsageError(f"--pins {given}: no such file {source.file} in {root}")
    if not pins_torch(source.entries(path.read_text("utf-8", "replace"), source.file)):
        raise UsageError(f"--pins {given}: {source.where} pins no torch (no torch==X.Y.Z "
                         "entry): opsweep measures the torch pinned there")
    return (key, value), f"pins: {source.where} (--pins)"


def _join(directory: str, name: str) -> str:
    return name if directory in ("", ".") else f"{directory.rstrip('/')}/{name}"


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


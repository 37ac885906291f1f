"""`opsweep check MODEL...`: your models against the measured table, before you bump.

Exit 0 when every model exports, runs and matches (with --no-export: when no use is
measured failing), 1 when one does not (or, with --jobs, its worker died: a machine
failure), 2 for bad input (a model that cannot be loaded
or run, no measured table, a bad artifact or setting), with one line naming it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from opsweep import config
from opsweep.artifact import data as art
from opsweep.artifact import tables
from opsweep.artifact.data import Artifact
from opsweep.artifact.checked import entries_by_source
from opsweep.artifact.records import public_version
from opsweep.cli.exits import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from opsweep.cli.invocation import Invocation
from opsweep.cli.settings import MODELS_SETTING, policy_file
from opsweep.errors import DataFileError, UsageError
from opsweep.files import DEFAULT, read_json, write_atomic
from opsweep.policy import builtin
from opsweep.policy import read as read_policy
from opsweep.targets import Kind, is_stock, of_name

#: with --jobs above 1, one model's check's deadline (seconds): check.isolate.TIMEOUT's
CHECK_TIMEOUT = 900.0
#: 2: each model's check_fingerprint, and lost models; 3: each model's other targets
RECORD_VERSION = 3
#: --targets' word for every target the table measures
ALL_TARGETS = "all"
#: what --against takes for a measured torch rather than a file
VERSION = re.compile(r"^\d+(\.\d+)+([a-z]+\d*)?(\+[\w.]+)?$")
ARTIFACT_SETTING = "[tool.opsweep] artifact"
#: where a measured table comes from, for the error that finds none
WHERE = ("pass --artifact FILE, the JSON artifact a sweep writes (opsweep's own, measured at "
         "its pinned torch, is docs/onnx_support_measured.json in opsweep's repository), or "
         f"set {ARTIFACT_SETTING} in your pyproject.toml")


DESCRIPTION = """\
Check your own models against opsweep's measured table, then export them for real.

The table: --artifact FILE, else your project's [tool.opsweep] artifact, else the table
opsweep ships for the installed torch (measured by opsweep's own sweep; when that torch
was not measured, the nearest measured one, said in the report). --against VERSION sets
the same models against the packaged table of another measured torch: what changes for
your models if you bump, before anything is installed.

For each MODEL it captures and decomposes the model as torch.onnx.export(dynamo=True)
does, looks every aten operator it uses up in the measured table at the dtype and rank
it is called with (tested and passing, tested and failing, untested), then exports the
model with the public call at the table's opset, runs onnx.checker and onnxruntime, and
compares the outputs with PyTorch's at the tolerance policy's tolerances. The report
names the torch that measured the table and the torch installed (loudly when they
differ), what fails and how, and a repro for each failing operator."""

EPILOG = f"""\
exit codes:
  {EXIT_OK}  every model exports, runs and matches PyTorch (with --no-export: no operator
     the models use is measured failing)
  {EXIT_ERROR}  a model does not (with --no-export: an operator it uses is measured failing,
     or it cannot be captured), or with --jobs above 1 a model's worker died or went
     past --timeout (a machine failure, named with its signal; the others are checked)
  {EXIT_USAGE}  bad input, one line naming it: a model that cannot be imported, built or run
     in eager PyTorch, no measured table, an unreadable artifact, a bad [tool.opsweep]

examples:
  opsweep check my_models.py:build_bert
  opsweep check my_models.py:build_bert --against 2.15.0
  opsweep check mypkg.models:build --artifact onnx_support_measured.json
  opsweep check my_models.py:build_bert --against new_torch_artifact.json --verbose
  opsweep check my_models.py:build_bert --targets torchscript,opset18
  opsweep check my_models.py:build_bert my_models.py:build_vit --jobs 2 --record checked.json
  opsweep check my_models.py:build_bert my_models.py:build_vit --reuse checked.json --json

docs/check.md has recipes for Hugging Face and torchvision models."""


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="check your models against the measured table, then "
                       "export them for real (exit 1 when one fails)",
                       description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", metavar="MODEL",
                   help="module:callable (a dotted module or a .py file; the callable takes "
                        "no argument and returns {'model': ..., 'inputs': ..., 'kwargs': ...}) "
                        f"or a .pt2 file (default: the project's {MODELS_SETTING})")
    p.add_argument("--artifact", type=Path, default=None, metavar="FILE",
                   help=f"the measured table to check against, an artifact or a cell table "
                        f"(.json.gz) (default: the project's {ARTIFACT_SETTING}, "
                        f"{DEFAULT.artifact} when it sets none and that file exists, else "
                        "the table opsweep ships for the installed torch or the nearest "
                        "measured one)")
    p.add_argument("--against", default=None, metavar="VERSION|FILE",
                   help="also show the uses whose verdict differs in another table: a "
                        "measured torch version whose table this opsweep ships (e.g. the "
                        "torch you mean to bump to), or an artifact or cell table measured "
                        "at other pins (not a history record; default: none)")
    p.add_argument("--targets", default="", metavar="NAMES",
                   help="also check each model with these targets of the sweep, comma-"
                        "separated: torchscript (torch.onnx.export(..., dynamo=False)), opsetN "
                        "(dynamo=True, opset_version=N), MODULE:TABLE (a custom translation "
                        "table), or 'all' (every target the table measures): per target a "
                        "real export, checker, onnxruntime run, numerics and dynamic verdict, "
                        "beside that target's table when the table measured it. Each target "
                        "costs one more real export of every model: torchscript tens of "
                        "milliseconds (a few percent more), each dynamo target (opsetN, "
                        "MODULE:TABLE) about as much as the stock check itself; 'all' with "
                        "the committed artifact's four other targets took 5-7x the stock-only "
                        "time on small models (docs/performance.md). The exit code stays the "
                        "stock exporter's (default: the project's [tool.opsweep] "
                        "check-targets, else the stock exporter only)")
    p.add_argument("--no-export", action="store_true",
                   help="the table lookup alone, no real export (default: export too)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also what a spec author would change so the table could say more "
                        "(default: off)")
    p.add_argument("--json", action="store_true",
                   help="JSON on stdout instead of the terminal report (default: off)")
    p.add_argument("--markdown", action="store_true",
                   help="markdown on stdout instead of the terminal report (default: off)")
    p.add_argument("--record", type=Path, default=None, metavar="FILE",
                   help="also write the JSON record here, what the bot diffs (default: none)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="check each model in a worker process of its own, N at a time: a "
                        "model whose check kills its process (an abort or a crash in the "
                        "exporter or onnxruntime, a hang past --timeout) is reported as a "
                        "machine failure and every other model is still checked (default: 1, "
                        "one after another in this process)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="with --jobs above 1, how long one model's check may take before "
                        "its worker is killed (default: %g)" % CHECK_TIMEOUT)
    p.add_argument("--reuse", type=Path, default=None, metavar="FILE",
                   help="a previous record (--record's, or the main command's "
                        "models_checked.json): a model whose entry there has the same check "
                        "fingerprint (the table's pins and opset, the model's source file, "
                        "opsweep, the tolerance policy) is taken from it, not checked again; "
                        "not with --against (default: none, every model is checked)")
    p.add_argument("--pyproject", type=Path, default=Path(DEFAULT.pyproject),
                   help="the project whose [tool.opsweep] gives the defaults "
                        f"(default: {DEFAULT.pyproject} in the current directory)")


def record_data(reports, table=None, keys=None) -> dict:
    """The JSON record: each model's report (a reused entry as it was; a lost model's
    machine failure), with the check fingerprint `keys` gives it by source."""
    # the check package: torch, the exporter
    from opsweep.check.fingerprint import KEY
    from opsweep.check.isolate import Lost
    from opsweep.check.report import to_data
    head = {} if table is None else {"table": table.to_data()}
    keys = keys or {}

    def entry(r) -> dict:
        if isinstance(r, dict):  # reused from the previous record, as it was
            return r
        data = r.to_data() if isinstance(r, Lost) else to_data(r)
        if r.source in keys:
            data[KEY] = dict(keys[r.source])
        return data
    models = [entry(r) for r in reports]
    # a record without other targets stays version 2, byte for byte what it was before them
    version = RECORD_VERSION if any(m.get("targets") for m in models) else RECORD_VERSION - 1
    return {"models_version": version, **head, "models": models}


def run_checks(sources, artifact, other=None, export: bool = True, policy=None, *,
               jobs: int = 1, timeout: float | None = None, targets: tuple[str, ...] = ()):
    """The reports of `sources`, in their order: checked here one after another (`jobs`
    1), or each in a worker process, `jobs` at a time (a model whose worker dies is a
    `Lost`, a machine failure, and the others are still checked)."""
    # the check package: torch, the exporter, onnxruntime
    from opsweep.catalog.load import exclusions
    from opsweep.check.isolate import Setup, check_isolated
    from opsweep.capture.cases import load_model
    from opsweep.check.run import check
    from opsweep.engine.adapter import quiet_exporter
    from opsweep.engine.runner import quiet_runtime
    quiet_exporter()
    quiet_runtime()
    excluded = exclusions()
    if jobs > 1 and sources:
        return check_isolated(sources, Setup(artifact, excluded, export, other, policy,
                                             targets), jobs, timeout or CHECK_TIMEOUT)
    cases = [load_model(s) for s in sources]  # every model loads before any is checked
    return [check(c, artifact, excluded, export=export, other=other, policy=policy,
                  targets=targets) for c in cases]


@dataclass(frozen=True)
class Checked:
    """A models run: what the record lists, in the order of the models given (a fresh
    report, a `Lost` model, or an entry reused from the previous record), each model's
    check fingerprint, and how many models were checked and reused."""

    items: list
    keys: dict
    checked: int
    reused: int
    #: of the reused, how many the table answered otherwise at their uses (re-measured at
    #: unchanged pins): joined with it again, their real export kept
    rejoined: int = 0


def check_or_reuse(sources, artifact, previous=None, *, other=None, export: bool = True,
                   policy=None, jobs: int = 1, timeout: float | None = None,
                   targets: tuple[str, ...] = ()) -> Checked:
    """`run_checks` of the models whose check fingerprint has no entry in `previous` (a
    record's entries by source); the others are that entry, not checked again, joined with
    `artifact`'s table again where it answers their uses otherwise (a table re-measured at
    unchanged pins: the capture and the real export stand, the table's verdicts are new)."""
    # the check package (its fingerprint: torch-free, beside the check that needs torch)
    from opsweep.check.fingerprint import fingerprint, reusable
    label = (policy or builtin()).label
    keys = {s: fingerprint(s, artifact, label, export, targets) for s in sources}
    reused = {s: e for s in sources if (e := reusable(previous, s, keys[s])) is not None}
    rejoined = 0
    if reused:
        # the catalog's exclusions and the uses' lookup (torch): joined again with the table
        from opsweep.catalog.load import exclusions
        from opsweep.check.report import rejoin
        excluded = exclusions()
        for s, e in reused.items():
            joined = rejoin(e, artifact, excluded, other)
            if _unlike(joined, e):  # the table answers its uses otherwise now
                rejoined += 1
            reused[s] = joined  # with `other`, its uses that change verdict against it too
    fresh = [s for s in sources if s not in reused]
    reports = iter(run_checks(fresh, artifact, other, export, policy, jobs=jobs, timeout=timeout,
                              targets=targets) if fresh else ())
    items = [reused[s] if s in reused else next(reports) for s in sources]
    return Checked(items, keys, len(fresh), len(reused), rejoined)


def _unlike(joined: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    """Whether a reused entry joined with the table again differs from the record's (the
    uses set against another table, `--against`, left aside: they are that table's)."""
    return any(joined.get(k) != entry.get(k) for k in {*joined, *entry} - {"against"})


def previous_entries(path: Path | None) -> dict | None:
    """A previous models record's entries by source, for reuse; None when there is no
    such file; a DataFileError naming the field when it is not a models record."""
    if path is None or not path.is_file():
        return None
    return entries_by_source(read_json(path), path)


@dataclass(frozen=True)
class Measured:
    """The measured table a check is set against: the artifact, where it is and why that
    one, and the opsweep that measured it and wrote it when the file says so."""

    artifact: Artifact
    path: Path
    why: str
    measured_by: str | None = None  # None: not said by the file (a history record may)
    written_by: str = ""  # the opsweep that wrote a packaged table


def artifact_path(explicit: Path | None, pyproject: Path) -> tuple[Path | None, str]:
    """The measured table to check against and why that one: --artifact, else the
    project's (its [tool.opsweep] artifact, relative to the pyproject's directory, or the
    default artifact when that file exists); (None, why) when the project names none, for
    the packaged table of the installed torch. A one-line UsageError when a file named
    is missing."""
    if explicit is not None:
        if not explicit.is_file():
            raise UsageError(f"--artifact {explicit}: no such file; {WHERE}")
        return explicit, "--artifact"
    project = config.load(pyproject)
    if project.keys is None:
        return None, (f"{pyproject} has no [tool.opsweep]" if pyproject.is_file() else
                      f"there is no {pyproject} here")
    path = pyproject.parent / project.artifact
    if "artifact" not in project.keys:
        if path.is_file():
            return path, f"the default artifact of a [tool.opsweep] project, {pyproject}"
        return None, f"{pyproject} sets no {ARTIFACT_SETTING}"
    why = f"{ARTIFACT_SETTING} in {pyproject}"
    if not path.is_file():
        raise UsageError(f"no measured table at {path} ({why}): measure it with `opsweep "
                         f"sweep` (docs/adopting.md), or pass --artifact FILE")
    return path, why


def load_table(path: Path, option: str, why: str = "") -> Measured:
    """The artifact or cell table (.json.gz) at `path`; one that cannot be read, or a
    history record given for one, is bad input (exit 2) in one line."""
    why = why or option
    try:
        if path.name.endswith(tables.SUFFIX):
            table = tables.load(path)
            return Measured(table.artifact, path, why, table.measured_by, table.opsweep)
        return Measured(art.load(path), path, why)
    except DataFileError as exc:
        if _is_history_record(path):
            raise UsageError(
                f"{option} {path}: a history record (grades per operator), not an artifact: "
                "check joins on the artifact's counts per dtype and rank; pass the artifact "
                "measured at those pins (onnx_support_measured.json, e.g. from the commit "
                "that measured them)") from None
        raise UsageError(f"{option}: {exc}") from None


def packaged_table(why_not: str) -> Measured:
    """The table opsweep ships for the installed torch, or the nearest measured one."""
    found = tables.packaged()
    try:
        from opsweep.check.stack import installed  # no torch: package metadata only
        choice = tables.choose(installed().get("torch", ""), found)
    except ValueError as exc:
        raise UsageError(f"no measured table to check against: {why_not}, and {exc}; "
                         f"{WHERE}") from None
    return _shown(load_table(found[choice.chosen], "the packaged table",
                             f"{choice.sentence()}; {why_not}"))


def _shown(measured: Measured) -> Measured:
    """A packaged table named as the file inside the installed opsweep, the same on every
    machine (opsweep/data/tables/torch-2.15.0.json.gz)."""
    return replace(measured, path=Path("opsweep", "data", "tables", measured.path.name))


def against_table(value: str) -> Measured:
    """--against: a file (an artifact or a cell table), else a measured torch version
    whose table this opsweep carries."""
    path = Path(value)
    if path.is_file():
        return load_table(path, "--against")
    found = tables.packaged()
    if not VERSION.match(value):
        raise UsageError(f"--against {value}: no such file, nor a torch version (measured, "
                         f"packaged with this opsweep: {', '.join(found) or 'none'})")
    try:
        chosen = tables.resolve(value, found)
    except ValueError as exc:
        raise UsageError(f"--against {value}: {exc}; or pass an artifact file") from None
    return _shown(load_table(chosen, "--against", f"opsweep's packaged table for torch "
                             f"{public_version(value)}"))


def _is_history_record(path: Path) -> bool:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "history_version" in data


def table_of(measured: Measured, pyproject: Path, policy, other: Measured | None = None):
    # the check package: torch (only once models are to be checked)
    from opsweep.check.stack import Table, measured_by
    artifact, path = measured.artifact, measured.path
    project = config.load(pyproject)
    records = [path.parent / "history"]
    if project.keys is not None:
        records.append(pyproject.parent / project.history_dir)
    by = measured.measured_by if measured.measured_by is not None else \
        measured_by(artifact, records)
    return Table(str(path), measured.why, dict(vars(artifact.fingerprint)), by,
                 artifact.policy, policy.label, written_by=measured.written_by,
                 against="" if other is None else _against_line(other))


def _against_line(other: Measured) -> str:
    fp = other.artifact.fingerprint
    return f"{other.path} ({other.why}): torch {fp.torch} at opset {fp.opset}"


def _options(args) -> None:
    if args.jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {args.jobs}")
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout must be > 0 seconds, got {args.timeout:g}")
    if args.reuse is not None and args.against:
        raise UsageError("--reuse with --against: a reused entry holds no comparison with "
                         "the other table; give one of them")
    if args.reuse is not None and not args.reuse.is_file():
        raise UsageError(f"--reuse {args.reuse}: no such file (a record --record or the main "
                         "command wrote)")


def targets_of(value: str, artifact: Artifact) -> tuple[str, ...]:
    """--targets: the other targets to check the models with, by name, in the order given
    (``all``: every target the table measures, the stock one left out: it is always
    checked); a name that is no target is a UsageError naming it."""
    # the engine's parser of MODULE:TABLE (torch-free, but of the engine stage)
    from opsweep.engine.translations import parse
    names = [n.strip() for n in value.split(",") if n.strip()]
    if ALL_TARGETS in names:
        names = [n for n in names if n != ALL_TARGETS] + list(artifact.target_names)
    for name in names:
        if of_name(name).kind is Kind.TABLE:
            try:
                parse(name)
            except UsageError:
                raise UsageError(f"--targets {name}: not a target (torchscript, opsetN, "
                                 f"MODULE:TABLE or {ALL_TARGETS}; the table measures "
                                 f"{', '.join(artifact.target_names)})") from None
    return tuple(n for n in dict.fromkeys(names) if not is_stock(n))


def _reused_from(path: Path | None) -> dict | None:
    try:
        return previous_entries(path)
    except DataFileError as exc:
        raise UsageError(f"--reuse: {exc}") from None


def cmd_check(invocation: Invocation) -> int:
    args = invocation.options
    _options(args)
    project = config.load(args.pyproject)
    sources = tuple(args.models) or project.models
    if not sources:
        raise UsageError(f"no MODEL given and no {MODELS_SETTING} in {args.pyproject}")
    path, why = artifact_path(args.artifact, args.pyproject)
    measured = load_table(path, "--artifact", why) if path else packaged_table(why)
    artifact = measured.artifact
    other = against_table(args.against) if args.against else None
    tolerance = project.tolerance_policy
    policy = read_policy(policy_file(str(args.pyproject.parent / tolerance)) if tolerance else "")
    done = check_or_reuse(sources, artifact, _reused_from(args.reuse),
                          other=other and other.artifact, export=not args.no_export,
                          policy=policy, jobs=args.jobs, timeout=args.timeout,
                          targets=targets_of(args.targets or ",".join(project.check_targets),
                                             artifact))
    if args.reuse is not None:
        again = f" ({done.rejoined} joined with this table again: it answers their uses " \
            "otherwise)" if done.rejoined else ""
        print(f"opsweep check: {done.checked} models checked, {done.reused} reused from "
              f"{args.reuse}{again}", file=sys.stderr)
    table = table_of(measured, args.pyproject, policy, other)
    data = record_data(done.items, table, done.keys)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.record:
        write_atomic(args.record, text.encode("utf-8"))
    if args.json:
        sys.stdout.write(text)
    elif args.markdown:
        from opsweep.check.report import to_markdown  # the check package: torch
        sys.stdout.write(to_markdown(done.items, table, verbose=args.verbose))
    else:
        from opsweep.cli.checkshow import show  # rich: the terminal display only
        show(done.items, table, verbose=args.verbose)
    from opsweep.check.report import failed  # the check package: torch (imported by now)
    return EXIT_ERROR if any(failed(r) for r in done.items) else EXIT_OK

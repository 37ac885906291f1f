"""The models' verdicts across pin sets: one slim record per pin set the models were checked
at (``docs/history/models/torch-2.15.0+onnx-1.23.2+...json``, the same name as that pin
set's operator history record, in a directory of its own), and the verdict transitions
between them.

A record is distilled from a models record (`opsweep check --json`,
``docs/models_checked.json``) whose entries were all checked at one pin set (their check
fingerprints' stack and opset): per model its name, source, verdict and prediction per
axis, the machine failure that lost it, and its first failing operator, node and error
line, by the same rules the models page shows them (`first_failure`, `first_error`). The
main command's models step writes (replaces) the record of the pin set it checked at and
never touches another; `opsweep history models` writes one from a record checked
elsewhere. Nothing here imports the check, nor torch.

The records are ordered as the operator history's points are (`opsweep.artifact.points`:
a chain in which no pin moves backwards, the other points beside it); a transition is a
model's verdict on one axis that differs between two points where both checked it."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from opsweep import files
from opsweep.artifact import checked
from opsweep.artifact.checked import AXES
from opsweep.artifact.data import PINS
from opsweep.artifact.points import order
from opsweep.artifact.records import in_order, pin_path, public_version
from opsweep.errors import DataFileError
from opsweep.files import write_atomic

#: 2: each model's verdicts and predictions with the other targets it was checked with
MODELS_HISTORY_VERSION = 2
#: the versions this opsweep reads (it writes the last)
READS = (1, 2)
#: a verdict's letter (the page's data-v and its history column): pass, fail, not reached, none
LETTERS = {"pass": "p", "fail": "f", "not reached": "n", None: "-"}


def first_failure(entry: Mapping[str, Any], failing: Sequence[str],
                  operators: Collection[str] | None = None) -> tuple[str, str]:
    """(operator, node) of the model's first failure: the aten operator the record names
    (the node the export failed on, or the first diverging one); when it names an ONNX node
    (``onnx::Conv``, from the checker) or none, the table's first use failing on the first
    failing axis (one in `operators` first: those with a page; None: the operators the
    record says the table measured), with that node."""
    reality = entry.get("reality") or {}
    op, node = str(reality.get("op") or ""), str(reality.get("node") or "")
    if not failing or (op and "::" not in op):
        return (op, node) if failing else ("", "")
    uses = list(entry.get("uses") or ())
    if operators is None:
        operators = {str(u["op"]) for u in uses if str(u.get("status", "")).startswith("measured")}
    blamed = [str(u["op"]) for u in uses
              if any(f.get("axis") == failing[0] for f in u.get("failures") or ())]
    if blamed:
        shown = next((b for b in blamed if b in operators), blamed[0])
        return shown, f"{node} ({op})" if op else node
    return op, node


def failing_axes(entry: Mapping[str, Any]) -> list[str]:
    verdict = entry.get("verdict") or {}
    return [a for a in AXES if verdict.get(a) == "fail"]


def first_error(entry: Mapping[str, Any]) -> str:
    """The first line of the model's failure (its dynamic-shape export's when that is the
    only failing axis), at most 300 characters; "" when it has none."""
    reality = entry.get("reality") or {}
    error = str(reality.get("dynamic_error" if failing_axes(entry) == ["dynamic"] else "error")
                or "")
    return error.splitlines()[0][:300] if error else ""


def codes(verdict: Mapping[str, str] | None) -> str:
    """The four verdict letters (LETTERS), export runtime numerics dynamic."""
    verdict = verdict or {}
    return "".join(LETTERS.get(verdict.get(a), "-") for a in AXES)


@dataclass(frozen=True)
class Verdicts:
    """One model at one pin set."""

    name: str
    source: str
    verdict: Mapping[str, str] | None  # axis -> pass | fail | not reached (None: no verdict)
    prediction: Mapping[str, str]  # axis -> fine | failing | unknown
    lost: str = ""  # the machine failure that stopped its check
    op: str = ""  # its first failing operator
    node: str = ""
    error: str = ""  # the first line of its failure
    #: per other target it was checked with (opsweep check --targets), by name: its
    #: "verdict" (axis -> verdict, or None) and its table's "prediction" (axis -> word)
    targets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def codes(self) -> str:
        return codes(self.verdict)


@dataclass(frozen=True)
class PinSet:
    """One pin set's models history record."""

    stack: Mapping[str, Any]  # the check fingerprint's stack (torch, onnx, ..., the exporter)
    opset: int
    export: bool  # False: checked with --no-export (no real verdicts)
    models: tuple[Verdicts, ...]
    #: how views name the point (set by load_all, as the operator history names its points)
    label: str = field(default="", compare=False)

    @property
    def version(self) -> str:
        return public_version(str(self.stack.get("torch", "")))

    @property
    def pins(self) -> tuple[tuple[str, str], ...]:
        return tuple((p, public_version(str(self.stack.get(p, "")))) for p in PINS)

    @property
    def name(self) -> str:
        return self.label or self.version

    def by_name(self) -> dict[str, Verdicts]:
        return {m.name: m for m in self.models}


def verdicts(entry: Mapping[str, Any], operators: Collection[str] | None = None) -> Verdicts:
    """One models-record entry, distilled."""
    op, node = first_failure(entry, failing_axes(entry), operators)
    others = {name: {"verdict": t.get("verdict"), "prediction": dict(t.get("prediction") or {})}
              for name, t in sorted((entry.get("targets") or {}).items())}
    return Verdicts(str(entry["name"]), str(entry.get("source", "")), entry.get("verdict"),
                    dict(entry.get("prediction") or {}), str(entry.get("lost") or ""), op,
                    node, first_error(entry), others)


def _check_key(entry: Mapping[str, Any]) -> tuple[dict[str, Any], int, bool] | None:
    """(stack, opset, real export) of the entry's check fingerprint (None: it has none, a
    version-1 record's entry)."""
    key = entry.get("check_fingerprint")
    if not isinstance(key, Mapping) or not (key.get("stack") or {}).get("torch"):
        return None
    return dict(key["stack"]), int(key.get("opset") or 0), bool(key.get("export"))


def _installed_as_measured(data: Mapping[str, Any], path: object) -> None:
    """`opsweep check --json` says what was installed beside the table it used: a record
    whose real export ran at other pins than the table's (its verdicts one pin set's, its
    predictions another's) belongs to neither."""
    table = data.get("table")
    moved = table.get("moved") if isinstance(table, Mapping) else None
    if not isinstance(moved, list) or not moved:
        return
    said = ", ".join(f"{m[0]} {m[2] or 'not installed'} installed, {m[1]} measured"
                     for m in moved if isinstance(m, list) and len(m) == 3)
    raise DataFileError(path, "table.moved", f"checked against a table of other pins ({said}): "
                        "check the models against the installed pins' table (--artifact, or "
                        "none: the packaged table of the installed torch)")


def _pin(exc: DataFileError) -> str:
    """The pin a refused file name names (records.pin_path's field: fingerprint.<pin>)."""
    return exc.field.rpartition(".")[2]


def _said(exc: DataFileError) -> str:
    return str(exc).split(": ", 1)[-1]


def from_models(data: Any, path: object = "<models>") -> PinSet:
    """The pin set record of a models record; a DataFileError when it is not one, when an
    entry says no pin set, when its entries were checked at more than one, or when the
    check ran at other pins than its table's."""
    checked.from_data(data, path)
    _installed_as_measured(data, path)
    keys: list[tuple[dict[str, Any], int, bool]] = []
    for i, entry in enumerate(data["models"]):
        key = _check_key(entry)
        if key is None:
            raise DataFileError(path, f"models[{i}].check_fingerprint", "no pin set recorded "
                                "for this model (a record from before check fingerprints): "
                                "check the models again")
        if key not in keys:
            keys.append(key)
    if len(keys) > 1:
        said = "; ".join(f"torch {k[0].get('torch')}, opset {k[1]}"
                         f"{'' if k[2] else ', --no-export'}" for k in keys[:4])
        raise DataFileError(path, "models", f"its entries were checked at {len(keys)} pin sets "
                            f"({said}): a models history record holds one; check them all at "
                            "one pin set")
    if not keys:
        raise DataFileError(path, "models", "no model: nothing to record")
    stack, opset, export = keys[0]
    try:
        pin_path(Path(), stack)  # every pin a version a file can be named after
    except DataFileError as exc:
        raise DataFileError(path, f"models[0].check_fingerprint.stack.{_pin(exc)}",
                            _said(exc)) from None
    return PinSet(stack, opset, export, tuple(verdicts(e) for e in data["models"]))


def to_data(r: PinSet) -> dict[str, Any]:
    def model(m: Verdicts) -> dict[str, Any]:
        out: dict[str, Any] = {"name": m.name, "source": m.source,
                               "verdict": None if m.verdict is None else dict(m.verdict)}
        if m.prediction:
            out["prediction"] = dict(m.prediction)
        out |= {k: getattr(m, k) for k in ("lost", "op", "node", "error") if getattr(m, k)}
        if m.targets:
            out["targets"] = {n: {"verdict": t.get("verdict"),
                                  **({"prediction": dict(t["prediction"])} if t.get("prediction")
                                     else {})} for n, t in m.targets.items()}
        return out
    # a record without other targets stays version 1, byte for byte what it was before them
    version = MODELS_HISTORY_VERSION if any(m.targets for m in r.models) else READS[0]
    return {"models_history_version": version, "stack": dict(r.stack),
            "opset": r.opset, "export": r.export, "models": [model(m) for m in r.models]}


def dumps(r: PinSet) -> str:
    """The record as JSON, one model a line (a re-check's diff is a line per model)."""
    data = to_data(r)
    head = json.dumps({k: v for k, v in data.items() if k != "models"}, sort_keys=True,
                      ensure_ascii=False)
    lines = ",\n".join(" " + json.dumps(m, sort_keys=True, ensure_ascii=False)
                       for m in data["models"])
    return f'{head[:-1]}, "models": [\n{lines}\n]}}\n'


def path_of(directory: Path, r: PinSet) -> Path:
    """Where a pin set's record lives: the operator history record's name for the pin set."""
    return pin_path(Path(directory), r.stack)


def write(r: PinSet, directory: Path) -> Path:
    """Write (replace) the pin set's record in `directory`; no other file is touched."""
    path = path_of(directory, r)
    write_atomic(path, dumps(r).encode("utf-8"))
    return path


def write_from_models(models: Path, directory: Path) -> Path:
    """The record of a models record checked elsewhere (another torch, another venv)."""
    return write(from_models(files.read_json(Path(models)), models), directory)


def _field(data: Any, path: Path) -> None:
    if not isinstance(data, dict) or data.get("models_history_version") not in READS:
        found = data.get("models_history_version") if isinstance(data, dict) else None
        kind = ("a models record: `opsweep history models --models` makes one of it"
                if isinstance(data, dict) and "models_version" in data else
                "an operator history record" if isinstance(data, dict) and "history_version"
                in data else "not a models history record")
        raise DataFileError(path, "models_history_version",
                            f"expected one of {READS}, found {found!r} ({kind})")


def load(path: Path) -> PinSet:
    """A record, validated against ``schema/models_history.schema.json``; its file name must
    be the one its stack's pins give, and no two of its models may share a name."""
    path = Path(path)
    data = files.read_json(path)
    _field(data, path)
    files.validate(data, "models_history", path)
    r = PinSet(data["stack"], data["opset"], data["export"],
               tuple(Verdicts(m["name"], m.get("source", ""), m.get("verdict"),
                              m.get("prediction", {}), m.get("lost", ""), m.get("op", ""),
                              m.get("node", ""), m.get("error", ""), m.get("targets", {}))
                     for m in data["models"]))
    try:
        named = path_of(path.parent, r).name
    except DataFileError as exc:  # a version string no file can be named after
        raise DataFileError(path, f"stack.{_pin(exc)}", _said(exc)) from None
    if path.name != named:
        raise DataFileError(path, "stack", f"its pins name the file {named}, not {path.name}")
    names = [m.name for m in r.models]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise DataFileError(path, "models", f"two models are named {twice!r}")
    return r


def load_all(directory: Path) -> list[PinSet]:
    """Every record in `directory` (none when it does not exist), oldest pin set first,
    each labelled as the operator history labels its point."""
    return in_order({p: load(p) for p in sorted(Path(directory).glob("torch-*.json"))}, "stack")


@dataclass(frozen=True)
class Transition:
    model: str
    axis: str
    old: str  # the verdict at the older point
    new: str
    before: str  # the older point's label
    after: str
    beside: bool = False  # `after` sits beside the chain, compared with `before`


@dataclass(frozen=True)
class Across:
    """The models' verdicts across the recorded pin sets."""

    points: tuple[PinSet, ...]  # display order: the chain, each point beside it after its own
    steps: tuple[tuple[PinSet, PinSet, bool], ...]  # (older, newer, beside) compared
    transitions: tuple[Transition, ...]

    def codes(self, name: str) -> tuple[str, ...]:
        """The model's four letters at each point ("not checked" where the record lacks
        it, "lost" where its check was lost)."""
        out = []
        for p in self.points:
            m = p.by_name().get(name)
            out.append("not checked" if m is None else "lost" if m.lost else m.codes)
        return tuple(out)

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.model for t in self.transitions))


def _compare(old: PinSet, new: PinSet, beside: bool) -> list[Transition]:
    before, after = old.by_name(), new.by_name()
    out = []
    for name, m in after.items():
        o = before.get(name)
        if o is None or o.verdict is None or m.verdict is None:
            continue  # not checked at one of them, or no verdict there: nothing to compare
        out += [Transition(name, a, o.verdict[a], m.verdict[a], old.name, new.name, beside)
                for a in AXES if a in o.verdict and a in m.verdict
                and o.verdict[a] != m.verdict[a]]
    return out


def across(points: Sequence[PinSet]) -> Across:
    """The transitions between consecutive points of the chain, and between each point
    beside it and its chain point (`load_all`'s records)."""
    found = order(list(points))
    steps = [(a, b, False) for a, b in pairwise(found.chain)]
    steps += [(at, side, True) for side, at in found.beside]
    moved = [t for old, new, beside in steps for t in _compare(old, new, beside)]
    return Across(found.points, tuple(steps), tuple(moved))

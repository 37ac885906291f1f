"""Two models records compared: the project's ``[tool.opsweep] models`` (opsweep's own
scoreboard, or an adopter's own models) as the base committed them and as the
regeneration checked them again. Per model and axis (export, runtime, numerics, dynamic)
the verdict transitions: pass → fail, fail → pass, a model added or removed, a model lost
to a machine failure (its worker died: no verdict) or checked again after one; each
failing axis with where the new record says the model fails (the node and operator the
exporter failed on, or the first diverging node for numerics, and the error line); and
the pin set the new record was checked at (its entries' check fingerprint).

Per target (a version-3 record's ``targets``, `checked.target_entry`): a target both
records checked gives each model's transitions with it, as the stock exporter's do; a
target only the new record checked is counted (`ModelsDiff.first`: its models, and how
many fail an axis), since there are no verdicts to move from; one only the base checked
is named (`ModelsDiff.dropped`). Models added, removed or lost are shown once, on the
stock target.

Torch-free: the bot reads both records as data (`opsweep.artifact.checked` validates
them; a record that is not one is a DataFileError naming the file and the field)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opsweep.artifact import checked
from opsweep.errors import DataFileError
from opsweep.targets import STOCK, is_stock

AXES = checked.AXES
PASS, FAIL, NOT_REACHED = "pass", "fail", "not reached"
#: the exporter's stack, as the pin set a record was checked at says it
PINS = ("torch", "onnx", "onnxruntime", "onnxscript")
#: the order transitions are listed in
STATUSES = ("regression", "lost", "improvement", "changed", "added", "removed")


@dataclass(frozen=True)
class Failure:
    """Where a record says a model fails an axis: the stage its pipeline ended at, the
    node and operator the exporter (or onnx.checker, or onnxruntime) failed on, or for
    numerics the first diverging node, and the error line ("" where the record has none)."""

    stage: str
    node: str = ""
    op: str = ""
    error: str = ""


@dataclass(frozen=True)
class AxisChange:
    """One axis of one model, old verdict → new. None: not judged (the model is not in
    that record, was lost there, was not exported for real, or has no dynamic shapes)."""

    axis: str
    old: str | None
    new: str | None
    where: Failure | None = None  # the new record's failure, when the new verdict is fail

    @property
    def kind(self) -> str:
        if self.old == PASS and self.new in (FAIL, NOT_REACHED):
            return "regression"
        if self.old in (FAIL, NOT_REACHED) and self.new == PASS:
            return "improvement"
        return "changed"


@dataclass(frozen=True)
class ModelTransition:
    """A model whose verdicts moved between the records, or that one of them lacks."""

    name: str
    axes: tuple[AxisChange, ...]  # the axes whose verdict differs (every judged one when added)
    added: bool = False  # not in the base record
    removed: bool = False  # not in the new record
    lost: str = ""  # the new record's machine failure (no verdict at these pins)
    was_lost: str = ""  # the base record's machine failure (checked again now)
    ops: frozenset[str] = frozenset()  # the aten operators the model uses (either record)
    target: str = STOCK  # the exporter these verdicts are of (opsweep.targets' name)

    @property
    def status(self) -> str:
        """regression (an axis that passed no longer does), lost, improvement (an axis
        passes that did not, none regressed), changed, added or removed."""
        if self.lost:
            return "lost"
        if self.added or self.removed:
            return "added" if self.added else "removed"
        kinds = {a.kind for a in self.axes}
        return "regression" if "regression" in kinds else \
            "improvement" if "improvement" in kinds else "changed"

    def failures(self) -> tuple[Failure, ...]:
        """Where the new record says the model fails, each failure once."""
        return tuple(dict.fromkeys(a.where for a in self.axes if a.where is not None))


@dataclass(frozen=True)
class ModelsDiff:
    transitions: tuple[ModelTransition, ...]  # by STATUSES, then by name
    unchanged: int  # models in both records with the same verdict on every axis
    pins: Mapping[str, str] = field(default_factory=dict)  # the new record's pin set
    old_pins: Mapping[str, str] = field(default_factory=dict)
    #: the targets only the new record checked: (name, models checked, failing an axis)
    first: tuple[tuple[str, int, int], ...] = ()
    #: the targets only the base record checked
    dropped: tuple[str, ...] = ()

    @property
    def moved_pins(self) -> tuple[str, ...]:
        """The pins whose version differs between the records: ("torch",)."""
        return tuple(p for p in PINS if p in self.pins and p in self.old_pins
                     and self.pins[p] != self.old_pins[p])

    @property
    def moved(self) -> tuple[str, ...]:
        """The pins that moved between the records: "torch 2.15.0 → 2.16.0"."""
        return tuple(f"{p} {self.old_pins[p]} → {self.pins[p]}" for p in self.moved_pins)

    @property
    def models(self) -> int:
        """How many models the new record holds."""
        return self.unchanged + len({t.name for t in self.transitions if not t.removed})

    def of_status(self, status: str) -> tuple[ModelTransition, ...]:
        return tuple(t for t in self.transitions if t.status == status)


@dataclass(frozen=True)
class _Entry:
    verdict: Mapping[str, str]  # {} when not judged (not exported for real, or lost)
    failure: Failure | None  # the static export's (export, runtime, numerics)
    dynamic: Failure | None  # the dynamic export's
    lost: str
    ops: frozenset[str]
    pins: Mapping[str, str]


def _text(path: object, where: str, value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DataFileError(path, where, f"expected a string, got {type(value).__name__}")
    return value


def _failures(path: object, where: str, raw: Any) -> tuple[Failure | None, Failure | None]:
    """(static, dynamic) failures of an entry's `reality` (the public export's record)."""
    if raw is None:
        return None, None
    if not isinstance(raw, dict):
        raise DataFileError(path, f"{where}.reality", "expected an object (the real export)")
    get = {k: _text(path, f"{where}.reality.{k}", raw.get(k))
           for k in ("stage", "node", "op", "error", "dynamic_stage", "dynamic_error")}
    static = Failure(get["stage"], get["node"], get["op"], get["error"]) \
        if get["stage"] not in ("", "ok") else None
    dynamic = Failure(get["dynamic_stage"], error=get["dynamic_error"]) \
        if get["dynamic_stage"] not in ("", "ok") else None
    return static, dynamic


def _pins(path: object, where: str, m: Mapping[str, Any]) -> dict[str, str]:
    """The pins an entry was checked at: its check fingerprint's stack (version 2), else
    the fingerprint of the table it was checked against (version 1)."""
    key = m.get("check_fingerprint")
    stack = key.get("stack") if isinstance(key, dict) else m.get("fingerprint")
    if stack is None:
        return {}
    if not isinstance(stack, dict):
        raise DataFileError(path, f"{where}.fingerprint", "expected an object of pins")
    return {p: str(stack[p]) for p in PINS if isinstance(stack.get(p), (str, int, float))}


def _entries(data: Any, path: object, target: str = STOCK,
             by_name: Mapping[str, checked.ModelEntry] | None = None) -> dict[str, _Entry]:
    """The record's entries as target `target` checked them, by model name (a model that
    target did not check is left out); `by_name`: the record already read
    (`checked.from_data`), else it is read here."""
    if by_name is None:
        by_name = checked.from_data(data, path)  # the record's shape, named where it is wrong
    out = {}
    for i, stock in enumerate(data["models"]):
        m = checked.target_entry(stock, target)
        if m is None:
            continue
        where = f"models[{i}]" + ("" if is_stock(target) else f".targets.{target}")
        static, dynamic = _failures(path, where, m.get("reality"))
        lost = _text(path, f"models[{i}].lost", m.get("lost"))
        out[m["name"]] = _Entry(dict(m.get("verdict") or {}), static, dynamic, lost,
                                by_name[m["name"]].ops, _pins(path, f"models[{i}]", stock))
    return out


def _record_pins(entries: Mapping[str, _Entry]) -> dict[str, str]:
    """The pin set of a record: each pin's value over its entries ("a / b" if they differ)."""
    out = {}
    for pin in PINS:
        values = sorted({e.pins[pin] for e in entries.values() if pin in e.pins})
        if values:
            out[pin] = " / ".join(values)
    return out


def _where(axis: str, verdict: str | None, e: _Entry) -> Failure | None:
    if verdict != FAIL:
        return None
    return e.dynamic if axis == "dynamic" else e.failure


def _transition(name: str, old: _Entry | None, new: _Entry | None,
                target: str = STOCK) -> ModelTransition | None:
    before = old.verdict if old else {}
    after = new.verdict if new else {}
    axes = tuple(AxisChange(a, before.get(a), after.get(a), _where(a, after.get(a), new)
                            if new else None)
                 for a in AXES if before.get(a) != after.get(a))
    lost = new.lost if new else ""
    was_lost = old.lost if old else ""
    if old is not None and new is not None and not axes and not lost and not was_lost:
        return None
    ops = (old.ops if old else frozenset()) | (new.ops if new else frozenset())
    return ModelTransition(name, axes, old is None, new is None, lost, was_lost, ops, target)


def _other_target(name: str, old: _Entry | None, new: _Entry | None,
                  target: str) -> ModelTransition | None:
    """A model's transition with a target other than the stock exporter: only between two
    verdicts (a model added, removed or lost is shown once, on the stock target)."""
    if old is None or new is None or old.lost or new.lost:
        return None
    return _transition(name, old, new, target)


def models_diff(old: Any, new: Any, *, old_path: object = "<base models>",
                new_path: object = "<new models>") -> ModelsDiff:
    """The transitions from the record `old` (data; None: the base has none) to `new`, per
    target the two records checked (the stock exporter's first)."""
    # each record read (and validated) once, then viewed per target
    old_read = checked.from_data(old, old_path) if old is not None else {}
    new_read = checked.from_data(new, new_path)
    before = _entries(old, old_path, STOCK, old_read) if old is not None else {}
    after = _entries(new, new_path, STOCK, new_read)
    names = sorted(set(before) | set(after))
    found = [_transition(n, before.get(n), after.get(n)) for n in names]
    old_targets = checked.target_names(old["models"]) if old is not None else (STOCK,)
    new_targets = checked.target_names(new["models"])
    others, first = [], []
    for target in new_targets[1:]:
        now = _entries(new, new_path, target, new_read)
        if target not in old_targets:
            judged = [e for e in now.values() if not e.lost]  # a lost model: no verdict
            first.append((target, len(judged), sum(FAIL in e.verdict.values()
                                                   for e in judged)))
            continue
        was = _entries(old, old_path, target, old_read)
        others += [_other_target(n, was.get(n), now.get(n), target) for n in names]
    moved = sorted((t for t in (*found, *others) if t is not None),
                   key=lambda t: (STATUSES.index(t.status), t.name, not is_stock(t.target),
                                  t.target))
    still = {t.name for t in moved}
    unchanged = sum(t is None and n not in still for n, t in zip(names, found))
    return ModelsDiff(tuple(moved), unchanged, _record_pins(after), _record_pins(before),
                      tuple(first), tuple(t for t in old_targets if t not in new_targets))


def read(path: str | Path) -> Any:
    """A models record's data (validated by models_diff)."""
    try:
        return json.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataFileError(path, "", f"cannot read the models record: {exc}") from None


def load_diff(old: str | Path | None, new: str | Path) -> ModelsDiff:
    """The transitions from the record at `old` (None: the base has none) to `new`."""
    return models_diff(None if old is None else read(old), read(new), old_path=old or "",
                       new_path=new)

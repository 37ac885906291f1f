"""The models page: the project's models record (``docs/models_checked.json``, `opsweep check
--json` of ``[tool.opsweep] models``) as a table, a row per model with its family, its dtype,
each axis's real verdict beside the table's prediction and the first failing operator
(linked to its operator page, with the repro the record has for it), then how well the table
predicts the models (`opsweep.artifact.scoring`), miss by miss.

Each model's verdicts across pin sets are read from the models history records (one per
pin set checked: `opsweep.artifact.models_history`), with the transitions between them;
nothing is shown that no record holds, and what the records lack (a pin set that did not
check a model, TorchScript verdicts) is said. Names reach the page escaped (the template)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from opsweep.artifact import checked as records
from opsweep.artifact.checked import AXES, Loss, losses, target_entry, target_names
from opsweep.artifact.models_history import (
    LETTERS,
    Across,
    PinSet,
    Transition,
    across,
    codes,
    failing_axes,
    first_error,
    first_failure,
)
from opsweep.artifact.scoring import Score, score
from opsweep.errors import DataFileError
from opsweep.page.templates import environment
from opsweep.targets import STOCK, TORCHSCRIPT, Kind, is_stock, label, of_name

FLOATING = ("float64", "float32", "float16", "bfloat16")


@dataclass(frozen=True)
class AxisCell:
    axis: str
    real: str  # pass, fail, not reached, or "" (not checked on this axis)
    predicted: str  # fine, failing, unknown, or ""
    #: (target's label, its verdict) of each other target whose verdict on this axis
    #: differs from the stock exporter's
    others: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ModelRow:
    name: str
    source: str
    family: str
    dtype: str
    cells: tuple[AxisCell, ...]
    #: the four verdict letters (LETTERS), export runtime numerics dynamic, per target of
    #: the view (space-separated, in ModelsView.targets' order; empty: not checked with it)
    codes: str
    lost: str  # the machine failure that stopped the check ("" when it was checked)
    op: str  # the first failing operator the record names ("" when none)
    node: str  # its node
    linked: bool  # op has an operator page
    repro: str  # the record's repro snippet of op's failing example ("" when it has none)
    error: str  # the first line of the failure
    #: the four verdict letters at each recorded pin set (ModelsView.points), "not checked"
    #: where that pin set's record lacks the model, "lost" where its check was lost
    across: tuple[str, ...] = ()
    #: the axes it passes with the TorchScript exporter and fails with dynamo, and back
    lose: tuple[Loss, ...] = ()


@dataclass(frozen=True)
class ModelsView:
    rows: tuple[ModelRow, ...]
    families: tuple[str, ...]
    dtypes: tuple[str, ...]
    targets: tuple[str, ...]  # the targets the record has verdicts for, the stock one first
    stack: str  # the pin set checked at, in words
    history: str  # one line: the record's history across pin sets
    torchscript: str  # one line: the record's TorchScript verdicts against dynamo's
    score: Score
    points: tuple[str, ...] = ()  # the recorded pin sets, in the across column's order
    transitions: tuple[Transition, ...] = ()  # verdicts that moved between two of them


def family_of(source: str) -> str:
    """The model's family: the file (or module) its callable is defined in, without its
    suffix (``examples/models/encoders.py:bert_f32`` -> ``encoders``); a saved program's
    is ``saved program``."""
    if source.endswith(".pt2"):
        return "saved program"
    module = source.rpartition(":")[0] or source
    return Path(module).stem.rpartition(".")[2] if module.endswith(".py") else \
        module.rpartition(".")[2] or module


def dtype_of(uses: list[Mapping[str, Any]]) -> str:
    """The floating dtype most of the model's operator calls compute in ("" when none)."""
    calls: Counter[str] = Counter()
    for u in uses:
        if u.get("dtype") in FLOATING:
            calls[str(u["dtype"])] += int(u.get("count", 1))
    return max(sorted(calls), key=lambda d: calls[d]) if calls else ""


def _repro(uses: list[Mapping[str, Any]], op: str, axes: Collection[str]) -> str:
    """The snippet of op's failing example on one of the axes the model fails, when the
    record has one (the table measured op failing there)."""
    for u in uses:
        if u.get("op") != op:
            continue
        for f in u.get("failures") or ():
            if f.get("axis") in axes and f.get("snippet"):
                return str(f["snippet"])
    return ""


def _codes(entry: Mapping[str, Any], targets: Sequence[str]) -> str:
    """The model's verdict letters per target, space-separated ("" where it was not checked
    with that target)."""
    seen = [target_entry(entry, t) for t in targets]
    return " ".join("" if e is None else codes(e.get("verdict")) for e in seen)


def _others(entry: Mapping[str, Any], axis: str, targets: Sequence[str]) -> tuple[tuple[str, str], ...]:
    mine = (entry.get("verdict") or {}).get(axis)
    out = []
    for t in targets[1:]:
        seen = (target_entry(entry, t) or {}).get("verdict") or {}
        if seen.get(axis) and seen.get(axis) != mine:
            out.append((label(t), str(seen[axis])))
    return tuple(out)


def row(entry: Mapping[str, Any], operators: Collection[str],
        targets: Sequence[str] = (STOCK,)) -> ModelRow:
    """`targets`: the record's (`target_names`), the stock exporter first."""
    verdict, said = entry.get("verdict") or {}, entry.get("prediction") or {}
    uses = list(entry.get("uses") or ())
    failing = failing_axes(entry)
    op, node = first_failure(entry, failing, operators)
    cells = tuple(AxisCell(a, str(verdict.get(a, "")), str(said.get(a, "")),
                           _others(entry, a, targets)) for a in AXES)
    return ModelRow(
        name=entry["name"], source=str(entry.get("source", "")),
        family=family_of(str(entry.get("source", ""))), dtype=dtype_of(uses), cells=cells,
        codes=_codes(entry, targets), lost=str(entry.get("lost") or ""), op=op, node=node,
        linked=bool(op) and op in operators, repro=_repro(uses, op, failing) if op else "",
        error=first_error(entry), lose=losses(entry, TORCHSCRIPT, STOCK))


def _torchscript(entries: Sequence[Mapping[str, Any]], rows: Sequence[ModelRow],
                 targets: Sequence[str]) -> str:
    """One line: whether the record has TorchScript verdicts, and what moving between the
    two exporters would lose, counted over the models checked with both."""
    if not any(of_name(t).kind is Kind.TORCHSCRIPT for t in targets):
        return ("No TorchScript verdicts in this record yet: every verdict is the dynamo "
                "exporter's (`torch.onnx.export(..., dynamo=True)`); `opsweep check --targets "
                "torchscript` adds them.")
    both = sum(isinstance((target_entry(e, TORCHSCRIPT) or {}).get("verdict"), dict)
               and isinstance(e.get("verdict"), dict) for e in entries)
    to_dynamo = sum(any(not is_stock(x.passes) for x in r.lose) for r in rows)
    back = sum(any(is_stock(x.passes) for x in r.lose) for r in rows)
    return (f"{both} model{' was' if both == 1 else 's were'} checked with the TorchScript "
            "exporter (`dynamo=False`) as "
            f"well as with dynamo: {to_dynamo} pass an axis with TorchScript that dynamo "
            f"fails (what moving to dynamo would lose), {back} the reverse"
            + ("; listed under *What would I lose*." if to_dynamo or back else "."))


def _stacks(entries: list[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """The distinct (torch, opset) the record's entries were checked at."""
    found = []
    for e in entries:
        key = e.get("check_fingerprint") or {}
        torch = str((key.get("stack") or {}).get("torch") or (e.get("fingerprint") or {})
                    .get("torch") or "")
        pair = (torch, int(key.get("opset") or (e.get("fingerprint") or {}).get("opset") or 0))
        if pair != ("", 0) and pair not in found:
            found.append(pair)
    return found


def _history(stacks: list[tuple[str, int]], stack: str, found: Across) -> str:
    """One line: the pin sets the verdicts were recorded at, and what changed between them."""
    if len(stacks) > 1:
        return (f"The record's models were checked at {len(stacks)} pin sets ({stack}); each row "
                "shows its own.")
    names = ", ".join(p.name for p in found.points)
    if not found.points:
        return ("No pin set's models history record yet: the verdicts above are this record's "
                "pin set only.")
    if len(found.points) == 1:
        return (f"Models history: one pin set recorded (torch {names}); the verdicts at another "
                "pin set are added when the models are checked there.")
    moved = Counter(t.axis for t in found.transitions)
    axes = ", ".join(f"{a} {moved[a]}" for a in AXES if moved[a])
    n, k = len(found.changed), len(found.transitions)
    what = (f"{n} model{'s' * (n != 1)} changed verdict between consecutive pin sets ({k} "
            f"transition{'s' * (k != 1)}: {axes}), listed below" if k
            else "no model changed verdict between consecutive pin sets")
    return (f"Models history: {len(found.points)} pin sets recorded (torch {names}); {what}. "
            "The column *Across pin sets* gives each one's four verdict letters, in that order.")


def build(data: Mapping[str, Any], operators: Collection[str],
          path: object = "<models>", history: Sequence[PinSet] = ()) -> ModelsView:
    """The page's view of a models record (validated: a DataFileError names what is wrong);
    `operators`: the operators that have a page (the first failing one links to it);
    `history`: the models history records (`models_history.load_all`), oldest first."""
    records.from_data(data, path)
    entries = list(data["models"])
    found = across(history)
    targets = target_names(entries)
    rows = tuple(row(e, operators, targets) for e in entries)
    if len(found.points) > 1:
        rows = tuple(replace(r, across=found.codes(r.name)) for r in rows)
    stacks = _stacks(entries)
    stack = "; ".join(f"torch {t or '?'}, opset {o}" for t, o in stacks) or "not recorded"
    return ModelsView(
        rows=rows, families=tuple(sorted({r.family for r in rows})),
        dtypes=tuple(sorted({r.dtype for r in rows if r.dtype})), targets=targets,
        stack=stack, history=_history(stacks, stack, found),
        torchscript=_torchscript(entries, rows, targets),
        score=score(entries), points=tuple(p.name for p in found.points) if
        len(found.points) > 1 else (), transitions=found.transitions)


def load(path: str | Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataFileError(path, "", f"cannot read the models record: {exc}") from None
    if not isinstance(data, dict):
        raise DataFileError(path, "", "expected a models record (an object)")
    return data


def render(view: ModelsView) -> str:
    return environment().get_template("models.md.j2").render(
        view=view, axes=AXES, letters=LETTERS)

"""How well the table predicts the models: scored from a models record (`opsweep check
--json`, ``docs/models_checked.json``) as data, torch-free, for the models page and
``scripts/score_models.py`` alike.

Over the models with a real verdict (or, in a record checked with ``--no-export``, over every
model checked: the shares need no export), `score` counts

- the operator uses measured at their (dtype, rank) cell: a use is one row of a model's
  ``uses``, measured when the table says ``measured fine`` or ``measured failing`` there;
- per axis, the models whose prediction is definite (``fine`` or ``failing``);
- per axis, the precision and recall of "the table predicts this model fails" against the
  real verdict: a model whose axis was ``not reached`` (an earlier axis failed) is not
  scored on it, and an ``unknown`` prediction of a model that fails is a miss (the table
  did not predict the failure);

and lists every miss, a false positive or a false negative, with its reason read from what
the record says: an unmeasured cell (the failing operator, or the uses the table could not
say about, or an operator that is not aten's, such as ``prims::lgamma``, which no cell holds), a value-dependent failure (the failing operator measured fine at its cell, or
failing only at examples this model does not give), or a failure arising between operators
(a numerics drift that accumulates through layers, a node no operator use names).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opsweep.artifact.checked import AXES

FINE, FAILING, NOT_MEASURED, UNATTRIBUTABLE = ("measured fine", "measured failing",
                                               "not measured", "unattributable")
MEASURED = (FINE, FAILING)
DEFINITE = ("fine", "failing")
#: the reasons a miss is put down to, in the words the page and the script print
UNMEASURED_CELL, VALUE_DEPENDENT, BETWEEN_OPERATORS = (
    "unmeasured cell", "value-dependent", "between operators")
FALSE_POSITIVE, FALSE_NEGATIVE = "false positive", "false negative"


@dataclass(frozen=True)
class Miss:
    """One model on one axis where the table's prediction and the real verdict disagree."""

    model: str
    axis: str
    kind: str  # FALSE_POSITIVE (predicted failing, passes) or FALSE_NEGATIVE (fails)
    predicted: str  # fine, failing or unknown
    reason: str  # UNMEASURED_CELL, VALUE_DEPENDENT or BETWEEN_OPERATORS
    detail: str  # one sentence, from the record
    op: str = ""  # the operator the record blames ("" when none)


@dataclass(frozen=True)
class AxisScore:
    axis: str
    predicted: int  # models with a prediction on this axis
    definite: int  # of them, fine or failing
    counts: Mapping[str, int]  # prediction -> models
    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int
    not_reached: int  # models with a prediction whose axis was not reached
    definite_real: int  # definite predictions of models that pass or fail the axis

    @property
    def precision(self) -> float | None:
        said = self.true_positive + self.false_positive
        return self.true_positive / said if said else None

    @property
    def recall(self) -> float | None:
        failing = self.true_positive + self.false_negative
        return self.true_positive / failing if failing else None

    @property
    def definite_right(self) -> int:
        return self.true_positive + self.true_negative


@dataclass(frozen=True)
class Score:
    exported: bool  # False: no model has a real verdict (--no-export): shares only
    models: int  # the models scored
    lost: tuple[str, ...]  # models without a report (a machine failure)
    uses: int
    measured: int
    calls: int
    measured_calls: int
    statuses: Mapping[str, int]  # status -> uses
    by_dtype: Mapping[str, tuple[int, int]]  # dtype -> (measured uses, uses)
    axes: tuple[AxisScore, ...]
    misses: tuple[Miss, ...]
    unmeasured: Mapping[tuple[str, str, int], int]  # (op, dtype, rank) -> models missing it

    def axis(self, name: str) -> AxisScore:
        return next(a for a in self.axes if a.axis == name)


def scored_models(models: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], bool]:
    """The entries scored, and whether they are the models with a real verdict (else every
    model checked: a record of ``--no-export``)."""
    checked = [m for m in models if not m.get("lost") and isinstance(m.get("prediction"), dict)]
    real = [m for m in checked if isinstance(m.get("verdict"), dict)]
    return (real, True) if real else (checked, False)


def score(models: Sequence[Mapping[str, Any]]) -> Score:
    """The score of a models record's entries (``record["models"]``)."""
    scored, exported = scored_models(models)
    uses = [u for m in scored for u in m.get("uses") or ()]
    measured = [u for u in uses if u.get("status") in MEASURED]
    dtypes = sorted({str(u.get("dtype")) for u in uses})
    by_dtype = {d: (sum(u.get("status") in MEASURED for u in uses if str(u.get("dtype")) == d),
                    sum(str(u.get("dtype")) == d for u in uses)) for d in dtypes}
    unmeasured = _unmeasured(scored)
    axes = tuple(_axis(scored, a, exported) for a in AXES)
    misses = tuple(miss for m in scored if exported for a in AXES
                   if (miss := _miss(m, a)) is not None)
    return Score(exported, len(scored), tuple(sorted(m["name"] for m in models if m.get("lost"))),
                 len(uses), len(measured), sum(int(u.get("count", 1)) for u in uses),
                 sum(int(u.get("count", 1)) for u in measured),
                 dict(Counter(str(u.get("status")) for u in uses)), by_dtype, axes, misses,
                 dict(unmeasured))


def _unmeasured(models: Sequence[Mapping[str, Any]]) -> Counter:
    """(op, dtype, rank) -> in how many models the cell is a use the table did not measure."""
    return Counter(cell for m in models for cell in {
        (u["op"], str(u.get("dtype")), int(u.get("rank", 0))) for u in m.get("uses") or ()
        if u.get("status") not in MEASURED})


def _axis(models: Sequence[Mapping[str, Any]], axis: str, exported: bool) -> AxisScore:
    said = [(m["prediction"][axis], (m.get("verdict") or {}).get(axis)) for m in models
            if axis in m["prediction"]]
    real = [(p, v) for p, v in said if exported and v in ("pass", "fail")]
    return AxisScore(
        axis, len(said), sum(p in DEFINITE for p, _ in said), dict(Counter(p for p, _ in said)),
        true_positive=sum(p == "failing" and v == "fail" for p, v in real),
        false_positive=sum(p == "failing" and v == "pass" for p, v in real),
        false_negative=sum(p != "failing" and v == "fail" for p, v in real),
        true_negative=sum(p == "fine" and v == "pass" for p, v in real),
        not_reached=sum(v == "not reached" for _, v in said) if exported else 0,
        definite_real=sum(p in DEFINITE for p, _ in real))


def _cell(u: Mapping[str, Any]) -> str:
    return f"{u['op']} {u.get('dtype')} rank {u.get('rank')}"


def _miss(m: Mapping[str, Any], axis: str) -> Miss | None:
    said, got = m["prediction"].get(axis), (m.get("verdict") or {}).get(axis)
    if said == "failing" and got == "pass":
        return _false_positive(m, axis)
    if said in ("fine", "unknown") and got == "fail":
        return _false_negative(m, axis, said)
    return None


def _false_positive(m: Mapping[str, Any], axis: str) -> Miss:
    failing = [(u, f) for u in m.get("uses") or () for f in u.get("failures") or ()
               if f.get("axis") == axis]
    name = m["name"]
    if not failing:  # a capture that failed, or a use failing without a recorded example
        return Miss(name, axis, FALSE_POSITIVE, "failing", VALUE_DEPENDENT,
                    f"the table predicted {axis} failing, but the model passes {axis}", "")
    shown = ", ".join(f"{_cell(u)} ({f.get('example', '')})" for u, f in failing[:3])
    return Miss(name, axis, FALSE_POSITIVE, "failing", VALUE_DEPENDENT,
                f"the table's failing examples ({shown}{', …' if len(failing) > 3 else ''}) "
                "are values this model does not give", failing[0][0]["op"])


def _false_negative(m: Mapping[str, Any], axis: str, said: str) -> Miss:
    reality = m.get("reality") or {}
    op, node = str(reality.get("op") or ""), str(reality.get("node") or "")
    if axis == "dynamic":
        op, node = "", ""  # the record names the static run's node, not the dynamic one's
    where = f" at node {node}" if node else ""
    uses = [u for u in m.get("uses") or () if u.get("op") == op]
    blamed = uses[0] if uses else None
    name = m["name"]

    def miss(reason: str, detail: str) -> Miss:
        return Miss(name, axis, FALSE_NEGATIVE, said, reason, detail, op)

    if blamed is not None and blamed.get("status") not in MEASURED:
        return miss(UNMEASURED_CELL, f"fails {axis}{where} (aten::{op}); the table never "
                    f"measured {_cell(blamed)}")
    if blamed is not None:
        measured = (f"aten::{op} {blamed.get('status')} at {blamed.get('dtype')} rank "
                    f"{blamed.get('rank')} ({blamed.get('passed', 0)}/"
                    f"{blamed.get('measured', 0)} passed)")
        if axis == "numerics":
            return miss(BETWEEN_OPERATORS, f"the first node beyond tolerance is {node} "
                        f"(aten::{op}), yet {measured}: the error accumulates through the "
                        "operators before it")
        return miss(VALUE_DEPENDENT, f"fails {axis}{where}, yet {measured}: this model "
                    "gives that operator values the table's examples do not")
    other = [o for o in (m.get("capture") or {}).get("other") or ()
             if op and str(o).rpartition("::")[2] == op]
    if other:
        return miss(UNMEASURED_CELL, f"fails {axis}{where}: the model calls {other[0]}, not an "
                    "aten operator, so the table has no cell for it")
    missing = [u for u in m.get("uses") or () if u.get("status") not in MEASURED]
    if said == "unknown" and missing:
        cells = ", ".join(_cell(u) for u in missing[:3]) + (", …" if len(missing) > 3 else "")
        return miss(UNMEASURED_CELL, f"fails {axis}{where}; {len(missing)} uses not measured "
                    f"({cells})")
    error = str(reality.get("dynamic_error" if axis == "dynamic" else "error") or "")
    first = error.splitlines()[0][:200] if error else ""
    return miss(BETWEEN_OPERATORS, f"fails {axis}{where}" + (f" ({op})" if op else "")
                + f" though no operator use fails there{': ' + first if first else ''}")

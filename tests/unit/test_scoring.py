"""The models record's score (opsweep.artifact.scoring) on records whose answers were counted
by hand: the shares, the precision and recall per axis, and every miss with its reason."""

import pytest

from opsweep.artifact import scoring
from opsweep.artifact.scoring import (
    BETWEEN_OPERATORS,
    FALSE_NEGATIVE,
    FALSE_POSITIVE,
    UNMEASURED_CELL,
    VALUE_DEPENDENT,
)

P3 = ("export", "runtime", "numerics")


def use(op, dtype="float32", rank=2, status="measured fine", count=1, failures=()):
    return {"op": op, "dtype": dtype, "rank": rank, "count": count, "status": status,
            "passed": 10 if status == "measured fine" else 0, "measured": 10,
            "failures": [{"axis": a, "example": f"{op}(x)", "snippet": "..."} for a in failures]}


def model(name, said, got, uses, op="", node="", **more):
    return {"name": name, "source": f"m.py:{name}", "prediction": dict(zip(P3, said)) | more.pop(
        "said_dynamic", {}), "verdict": None if got is None else dict(zip(P3, got)) | more.pop(
        "got_dynamic", {}), "uses": uses, "reality": {"op": op, "node": node, "error": "",
                                                       "dynamic_error": more.pop("dyn_error", "")}}


FAILING, FINE, UNKNOWN = "failing", "fine", "unknown"
NR = "not reached"
RECORD = [
    # predicted failing and failing: a true positive on export, runtime/numerics not reached
    model("a", (FAILING, UNKNOWN, UNKNOWN), ("fail", NR, NR),
          [use("x", status="measured failing", failures=("export",)),
           use("y", status="not measured")], op="x"),
    # every use fine, numerics diverges at add: between operators
    model("b", (FINE, FINE, FINE), ("pass", "pass", "fail"), [use("add", rank=4, count=3)],
          op="add", node="add_3"),
    # the table's failing example is not this model's: a false positive
    model("c", (FAILING, UNKNOWN, UNKNOWN), ("pass", "pass", "pass"),
          [use("z", "float16", status="measured failing", failures=("export",)),
           use("v", "float16", 1, status="not measured")]),
    # fails at an operator the table never measured there
    model("d", (UNKNOWN, UNKNOWN, UNKNOWN), ("fail", NR, NR),
          [use("w", "float16", 3, status="not measured", count=2)], op="w", node="w_1"),
    # fails in onnxruntime at an operator measured fine: value-dependent
    model("e", (FINE, FINE, FINE), ("pass", "fail", NR), [use("mm")], op="mm", node="mm"),
    # the dynamic export fails though every use is fine: between operators
    model("g", (FINE, FINE, FINE), ("pass", "pass", "pass"), [use("relu")],
          said_dynamic={"dynamic": FINE}, got_dynamic={"dynamic": "fail"},
          dyn_error="Constraints violated (batch)"),
    {"name": "lost", "source": "m.py:lost", "uses": [], "lost": "worker died (SIGKILL)"},
]


def test_shares_of_uses_over_the_models_with_a_verdict():
    s = scoring.score(RECORD)
    assert s.exported and s.models == 6 and s.lost == ("lost",)
    assert (s.uses, s.measured) == (8, 5)  # x add z mm relu of x y add z v w mm relu
    assert (s.calls, s.measured_calls) == (11, 7)
    assert s.by_dtype == {"float16": (1, 3), "float32": (4, 5)}
    assert s.statuses == {"measured failing": 2, "not measured": 3, "measured fine": 3}
    assert s.unmeasured == {("y", "float32", 2): 1, ("v", "float16", 1): 1,
                            ("w", "float16", 3): 1}


def test_precision_and_recall_per_axis():
    s = scoring.score(RECORD)
    export = s.axis("export")  # a TP, c FP, d FN (unknown), b e g TN
    assert (export.predicted, export.definite) == (6, 5)
    assert (export.true_positive, export.false_positive, export.false_negative,
            export.true_negative) == (1, 1, 1, 3)
    assert export.precision == 0.5 and export.recall == 0.5
    assert (export.definite_real, export.definite_right) == (5, 4)
    runtime = s.axis("runtime")  # e FN; b g TN; a d not reached; c unknown and passing
    assert (runtime.definite, runtime.not_reached) == (3, 2)
    assert (runtime.true_positive, runtime.false_positive, runtime.false_negative,
            runtime.true_negative) == (0, 0, 1, 2)
    assert runtime.precision is None and runtime.recall == 0.0
    numerics = s.axis("numerics")
    assert (numerics.false_negative, numerics.true_negative, numerics.not_reached) == (1, 1, 3)
    dynamic = s.axis("dynamic")  # only g is dynamic
    assert (dynamic.predicted, dynamic.definite, dynamic.false_negative) == (1, 1, 1)


def test_every_miss_with_its_reason():
    misses = [(m.model, m.axis, m.kind, m.predicted, m.reason, m.op)
              for m in scoring.score(RECORD).misses]
    assert misses == [("b", "numerics", FALSE_NEGATIVE, FINE, BETWEEN_OPERATORS, "add"),
                      ("c", "export", FALSE_POSITIVE, FAILING, VALUE_DEPENDENT, "z"),
                      ("d", "export", FALSE_NEGATIVE, UNKNOWN, UNMEASURED_CELL, "w"),
                      ("e", "runtime", FALSE_NEGATIVE, FINE, VALUE_DEPENDENT, "mm"),
                      ("g", "dynamic", FALSE_NEGATIVE, FINE, BETWEEN_OPERATORS, "")]
    said = {(m.model, m.axis): m.detail for m in scoring.score(RECORD).misses}
    assert "w float16 rank 3" in said["d", "export"] and "node w_1" in said["d", "export"]
    assert "z float16 rank 2 (z(x))" in said["c", "export"]
    assert "beyond tolerance is add_3" in said["b", "numerics"] and "accumulates" in said["b", "numerics"]
    assert "mm measured fine at float32 rank 2 (10/10 passed)" in said["e", "runtime"]
    assert "Constraints violated (batch)" in said["g", "dynamic"]


def test_a_failure_at_an_operator_outside_aten_is_an_unmeasured_cell():
    """The decomposition can call prims::lgamma, which no spec measures: the table never
    saw it, though every aten use is fine."""
    m = model("l", (FINE, FINE, FINE), ("fail", NR, NR), [use("abs")], op="lgamma",
              node="lgamma")
    m["capture"] = {"other": ["prims::lgamma"]}
    (miss,) = scoring.score([m]).misses
    assert (miss.kind, miss.reason, miss.op) == (FALSE_NEGATIVE, UNMEASURED_CELL, "lgamma")
    assert "prims::lgamma, not an aten operator" in miss.detail


def test_a_record_checked_without_export_scores_the_shares_alone():
    table_only = [dict(m, verdict=None) for m in RECORD]
    s = scoring.score(table_only)
    assert not s.exported and s.models == 6 and (s.uses, s.measured) == (8, 5)
    assert not s.misses and s.axis("export").definite == 5
    assert s.axis("export").precision is None and s.axis("export").recall is None


@pytest.mark.parametrize("got", [("fail", NR, NR), ("pass", "pass", "pass")])
def test_a_definite_right_prediction_is_no_miss(got):
    said = (FAILING, UNKNOWN, UNKNOWN) if got[0] == "fail" else (FINE, FINE, FINE)
    uses = [use("x", status="measured failing" if got[0] == "fail" else "measured fine",
                failures=("export",) if got[0] == "fail" else ())]
    assert scoring.score([model("m", said, got, uses, op="x")]).misses == ()

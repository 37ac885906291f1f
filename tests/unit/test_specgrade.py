"""Grading one spec: its outcomes to a SpecResult, and its known-gap note checked."""

import json
from dataclasses import replace
from importlib import resources

from opsweep.catalog.draw import PROFILES
from opsweep.catalog.families import unary
from opsweep.model import KnownGap, Outcome, Stage
from opsweep.artifact.specgrade import GapStatus, gap_check, spec_result

TABLE = "tables.py:TABLE"


def outcome(stage, dynamic=None, size=3):
    return Outcome(stage, f"f32[{size}]", "float32", 1, size, "" if stage is Stage.OK else "E: x",
                   dynamic, "" if dynamic in (None, Stage.OK) else "D: y")


def test_gap_check_statuses():
    assert gap_check("r", Stage.NO_TRANSLATION, {Stage.NO_TRANSLATION: 3}).status == "confirmed"
    assert gap_check("r", Stage.NO_TRANSLATION, {Stage.OK: 3}).status == "stale"
    moved = gap_check("r", Stage.NO_TRANSLATION, {Stage.CHECKER: 1, Stage.OK: 2})
    assert moved.status == "moved" and moved.measured == (Stage.CHECKER,)


def test_gap_closed_by_a_target():
    assert gap_check("r", Stage.NO_TRANSLATION, {Stage.OK: 3}, closing=True).status == "closed"
    assert gap_check("r", Stage.NO_TRANSLATION, {Stage.NO_TRANSLATION: 1, Stage.OK: 2},
                     closing=True).status == "open"
    assert gap_check("r", Stage.NO_TRANSLATION, {Stage.OK: 3}).status == "stale"


def test_the_artifact_schema_knows_exactly_the_gap_statuses():
    schema = json.loads(resources.files("opsweep").joinpath("schema/artifact.schema.json")
                        .read_text("utf-8"))
    found = []

    def walk(node):
        if isinstance(node, dict):
            if set(node.get("enum", ())) & {"confirmed", "closed"}:
                found.append(set(node["enum"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert found == [{s.value for s in GapStatus}]
    assert {s for s in GapStatus if s.holds} == {GapStatus.CONFIRMED, GapStatus.CLOSED}


def test_spec_result_counts_grades_and_checks_the_gap_for_its_target():
    spec = replace(unary("sin"), gap=KnownGap("no translation", Stage.NO_TRANSLATION,
                                              closed_by=(TABLE,)))
    outcomes = [outcome(Stage.OK, Stage.OK, 2), outcome(Stage.NO_TRANSLATION, size=3),
                outcome(Stage.OK, Stage.RUNTIME, 4)]
    stock = spec_result(spec, outcomes, PROFILES["ci"], "0123456789abcdef", 3)
    assert (stock.aten_ops, stock.profile, stock.examples, stock.signatures) == \
        (("sin",), "ci", 3, 3)
    assert stock.stages == {Stage.OK: 2, Stage.NO_TRANSLATION: 1}
    assert stock.dynamic_stages == {Stage.OK: 1, Stage.RUNTIME: 1}
    assert [g.stage for g in stock.failures] == [Stage.NO_TRANSLATION]
    assert [g.stage for g in stock.dynamic_failures] == [Stage.RUNTIME]
    assert stock.grades.export.value == "partial" and stock.digest == "0123456789abcdef"
    assert stock.gap.status == GapStatus.CONFIRMED
    assert sum(c.count for c in stock.outcomes) == 3
    closing = spec_result(spec, outcomes, PROFILES["ci"], "0123456789abcdef", 3, TABLE)
    assert closing.gap.status == GapStatus.OPEN

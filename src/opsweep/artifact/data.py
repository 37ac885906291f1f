"""The committed JSON artifact: the `Artifact` (every target's result alike, asked with
`Artifact.target`), its canonical bytes (the stock target's results at the top level, each
other target's under `targets` as what differs from them), atomic write, and validation on
load with errors naming the file and the field. The per-target result types live in
`opsweep.artifact.results`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opsweep.artifact.grade import FailureGroup, Grades, StageCount
from opsweep.artifact.migrations import MIGRATIONS as _MIGRATIONS
from opsweep.artifact.migrations import migrate
from opsweep.artifact.numerics import errors_from_data, errors_to_data
from opsweep.artifact.results import (  # noqa: F401  (re-exported: art.SpecResult, ...)
    ExporterEntry,
    GapCheck,
    OperatorResult,
    SpecResult,
    TargetEntry,
    TargetResult,
    build_operators,
    make_target,
)
from opsweep.errors import ArtifactError
from opsweep.files import read_json, validate, write_atomic
from opsweep.model import Grade, Stage, Translations  # noqa: F401  (re-exported)
from opsweep.targets import STOCK, TORCHSCRIPT, is_stock  # noqa: F401  (re-exported)

#: Since version 4 a custom target is written as what differs from the stock target:
#: `targets.<name>.specs` and `.operators` hold only the results that differ, `.absent`
#: the stock specs the target has no result for. Readers get complete results.
#: Since version 5 the fingerprint names the hypothesis release that drew the examples
#: and each spec keeps its `outcomes`: examples per dtype, rank and stage reached.
#: Since version 6 each spec keeps its observed error per (dtype, rank) cell (`errors`) and
#: the artifact names the tolerance policy that graded it (`policy`).
#: Since version 7 a spec drawn with the cell covering keeps its cells no example stands
#: for (`cells`: refused by eager, unsettled, outside its ranks, unreachable).
SCHEMA_VERSION = 7
#: Fields derived from the spec results that arrived in a later schema version than some
#: readable artifact has: the loader derives them for an older artifact instead of checking.
_DERIVED_SINCE = {"dynamic_counts": 3}
#: The header: what a regeneration changes even when no measurement does (the rotation's
#: counter). Everything else in an artifact is a measurement; one run's bookkeeping (why a
#: spec was reused, when the sweep ran) lives in the sweep's sidecar, never in the artifact.
HEADER_FIELDS = ("regen_index",)


@dataclass(frozen=True)
class Fingerprint:
    torch: str
    onnx: str
    onnxruntime: str
    onnxscript: str
    opset: int
    exporter: str
    dynamic: bool = True  # whether the dynamic axis was measured
    #: the release that drew the examples ("unknown" in artifacts from before schema 5)
    hypothesis: str = "unknown"


def moved_fields(old: Fingerprint, new: Fingerprint) -> list[str]:
    """The fingerprint's fields that differ, e.g. ['torch']."""
    return [field for field in Fingerprint.__dataclass_fields__
            if getattr(old, field) != getattr(new, field)]


def fingerprint_changes(old: Fingerprint, new: Fingerprint) -> list[str]:
    """Human-readable differences, e.g. ['torch 2.13.0 → 2.14.1']."""
    return [f"{field} {getattr(old, field)} → {getattr(new, field)}"
            for field in moved_fields(old, new)]


@dataclass(frozen=True)
class Breakage:
    """The pin set cannot export at all: the sweep's canary (``x + y``) did not get
    through `target`'s exporter. Such an artifact measures no operator."""

    target: str
    stage: str  # import, or the pipeline stage the canary reached
    error: str  # the first error line

    def headline(self, fingerprint: Fingerprint) -> str:
        return (f"this pin set ({', '.join(f'{n} {getattr(fingerprint, n)}' for n in PINS)}) "
                f"breaks the exporter: {self.error}; no operator could be measured")


#: The fingerprint fields that name the exporter stack's packages.
#: The packages whose exact versions make a measurement: the fingerprint names each, a
#: history record is keyed by them, a bump of any one re-measures.
PINS = ("torch", "onnx", "onnxruntime", "onnxscript", "hypothesis")


@dataclass(frozen=True)
class Artifact:
    fingerprint: Fingerprint
    profile: str
    examples: int
    regen_index: int
    #: every target's result by name, the stock target's alike (first, then the others by
    #: name); ask for one with `target`
    results: Mapping[str, TargetResult]
    shard: tuple[int, int] | None = None  # (index, count) of a shard artifact
    broken: Breakage | None = None  # the pin set could not export at all
    #: spec name -> why the measured torch does not have it (not measured, not graded)
    absent: Mapping[str, str] = field(default_factory=dict)
    #: the tolerance policy numerics were graded against (opsweep.policy.Policy.label);
    #: "": not recorded (an artifact from before schema 6)
    policy: str = ""

    def target(self, name: str = STOCK) -> TargetResult | None:
        """What the target called `name` measured; None when it was not measured."""
        return self.results.get(name)

    @property
    def target_names(self) -> tuple[str, ...]:
        """The measured targets' names, the stock target's first."""
        return tuple(self.results)

    @property
    def stock(self) -> TargetResult:
        """The stock target's result: every artifact has one (a broken one's is empty)."""
        return self.results[STOCK]

    @property
    def others(self) -> tuple[TargetResult, ...]:
        """The results of the targets besides the stock one, by name."""
        return tuple(t for n, t in self.results.items() if not is_stock(n))

    @property
    def specs(self) -> Mapping[str, SpecResult]:
        """The stock target's spec results."""
        return self.stock.specs

    @property
    def operators(self) -> Mapping[str, OperatorResult]:
        """The stock target's operator results."""
        return self.stock.operators

    def grades(self, operator: str, target: str = STOCK) -> Grades | None:
        """`operator`'s grades (export, runtime, numerics, dynamic) as `target` measured
        them; None when that target did not measure it."""
        measured = self.target(target)
        result = measured.operators.get(operator) if measured is not None else None
        return result.grades if result is not None else None


def make_artifact(fingerprint: Fingerprint, profile: str, examples: int, regen_index: int,
                  specs: Mapping[str, SpecResult],
                  shard: tuple[int, int] | None = None,
                  targets: Mapping[str, tuple[TargetEntry | None, Mapping[str, SpecResult]]]
                  | None = None,
                  broken: Breakage | None = None,
                  absent: Mapping[str, str] | None = None, policy: str = "") -> Artifact:
    """`specs`: the stock target's results; `targets`: name -> (fingerprint entry, spec
    results) of each other target."""
    results = {STOCK: make_target(None, specs)}
    others = targets or {}
    results.update({name: make_target(*others[name]) for name in sorted(others)})
    return Artifact(fingerprint, profile, examples, regen_index, results, shard, broken,
                    dict(sorted((absent or {}).items())), policy)


# --- to and from plain data --------------------------------------------------

def _grade_value(g: Grade | None) -> str | None:
    return None if g is None else g.value


def _failures_out(groups: Iterable[FailureGroup]) -> list[dict[str, Any]]:
    return [{"dtype": g.dtype, "rank": g.rank, "stage": g.stage.value, "error": g.error,
             "count": g.count, "example": g.example, "size": g.size,
             **({"only_with": list(g.only_with)} if g.only_with else {})} for g in groups]


def _grades_out(g: Grades) -> dict[str, Any]:
    return {"export": _grade_value(g.export), "runtime": _grade_value(g.runtime),
            "numerics": _grade_value(g.numerics), "dynamic": _grade_value(g.dynamic)}


def spec_to_data(r: SpecResult) -> dict[str, Any]:
    gap = None if r.gap is None else {
        "reason": r.gap.reason, "expected": r.gap.expected.value,
        "measured": [s.value for s in r.gap.measured], "status": r.gap.status}
    return {
        "aten_ops": list(r.aten_ops), "family": r.family, "profile": r.profile,
        "examples": r.examples, "stages": {s.value: n for s, n in r.stages.items()},
        "failures": _failures_out(r.failures), **_grades_out(r.grades),
        "nondeterministic": r.nondeterministic, "gap": gap, "digest": r.digest,
        "signatures": r.signatures, "dynamic_stages": {s.value: n for s, n in r.dynamic_stages.items()},
        "dynamic_regressed": r.dynamic_regressed,
        "dynamic_failures": _failures_out(r.dynamic_failures),
        **({} if r.outcomes is None else {"outcomes": [
            {"dtype": c.dtype, "rank": c.rank, "stage": c.stage.value, "count": c.count}
            for c in r.outcomes]}),
        **({} if r.arguments is None else {"arguments": {
            o: {a: {"type": e["type"], "classes": list(e["classes"])} for a, e in args.items()}
            for o, args in r.arguments.items()}}),
        **({} if r.errors is None else {"errors": errors_to_data(r.errors)}),
        **({"mode": r.mode} if r.mode else {}),
        **({} if r.cells is None else {"cells": dict(sorted(r.cells.items()))})}


def spec_from_data(d: dict[str, Any]) -> SpecResult:
    """A spec result from plain data that has already been validated."""
    gap = d["gap"] and GapCheck(d["gap"]["reason"], Stage(d["gap"]["expected"]),
                                tuple(Stage(s) for s in d["gap"]["measured"]), d["gap"]["status"])
    return SpecResult(
        tuple(d["aten_ops"]), d["family"], d["profile"], d["examples"],
        {Stage(s): n for s, n in d["stages"].items()}, _failures_in(d["failures"]),
        _grades_in(d), d["nondeterministic"], gap or None, d["digest"], d["signatures"],
        {Stage(s): n for s, n in d["dynamic_stages"].items()}, d["dynamic_regressed"],
        _failures_in(d["dynamic_failures"]),
        None if "outcomes" not in d else tuple(
            StageCount(c["dtype"], c["rank"], Stage(c["stage"]), c["count"]) for c in d["outcomes"]),
        d.get("arguments"), None if "errors" not in d else errors_from_data(d["errors"]),
        d.get("mode", ""), d.get("cells"))


def _operators_out(operators: Mapping[str, OperatorResult]) -> dict[str, Any]:
    return {op: {**_grades_out(r.grades), "specs": list(r.specs),
                 "failures": _failures_out(r.failures),
                 "dynamic_failures": _failures_out(r.dynamic_failures),
                 "dynamic_counts": {"reexported": r.dynamic_tally.reexported,
                                    "unchanged": r.dynamic_tally.unchanged,
                                    "passed": r.dynamic_tally.passed}}
            for op, r in operators.items()}


def _entry_out(t: TargetEntry) -> dict[str, Any]:
    if isinstance(t, ExporterEntry):
        return {"exporter": t.exporter, "torch": t.torch, "opset": t.opset,
                **({"absent": t.absent} if t.absent else {})}
    return {"module": t.module, "table": t.table, "digest": t.digest,
            "overrides": list(t.overrides)}


def _target_out(artifact: Artifact, t: TargetResult, stock_specs: Mapping[str, Any],
                stock_ops: Mapping[str, Any]) -> dict[str, Any]:
    """A target other than the stock one as what differs from the stock target's results,
    `stock_specs` and `stock_ops` as `to_data` spells them (an absent exporter: nothing)."""
    assert t.entry is not None  # only the stock target has none
    if t.absent:
        return {"fingerprint": _entry_out(t.entry), "specs": {}, "operators": {}}
    specs = {n: d for n, d in ((n, spec_to_data(r)) for n, r in t.specs.items())
             if stock_specs.get(n) != d}
    absent = sorted(set(artifact.specs) - set(t.specs))
    return {"fingerprint": _entry_out(t.entry), "specs": specs,
            "operators": _target_operators_out(t, stock_ops),
            **({"absent": absent} if absent else {})}


def _target_operators_out(t: TargetResult, stock_ops: Mapping[str, Any]) -> dict[str, Any]:
    """A target's operators tables where they differ from the stock target's, `stock_ops`
    (an absent exporter: none)."""
    if t.absent:
        return {}
    return {op: d for op, d in _operators_out(t.operators).items() if stock_ops.get(op) != d}


def _target_in(stock: Mapping[str, SpecResult], data: dict[str, Any]) -> dict[str, SpecResult]:
    """A custom target's complete spec results from its difference to the stock target."""
    if "absent" in data["fingerprint"]:  # an exporter this pin set does not have
        return {}
    absent = set(data.get("absent", ()))
    specs = {n: r for n, r in stock.items() if n not in absent}
    specs.update({n: spec_from_data(d) for n, d in data["specs"].items()})
    return specs


def to_data(artifact: Artifact) -> dict[str, Any]:
    specs = {name: spec_to_data(r) for name, r in artifact.specs.items()}
    operators = _operators_out(artifact.operators)
    targets = {t.name: _target_out(artifact, t, specs, operators) for t in artifact.others}
    fp = artifact.fingerprint
    return {
        "schema_version": SCHEMA_VERSION,
        "fingerprint": {"torch": fp.torch, "onnx": fp.onnx, "onnxruntime": fp.onnxruntime,
                        "onnxscript": fp.onnxscript, "hypothesis": fp.hypothesis,
                        "opset": fp.opset, "exporter": fp.exporter, "dynamic": fp.dynamic},
        "profile": artifact.profile, "examples": artifact.examples,
        "regen_index": artifact.regen_index, "specs": specs, "operators": operators,
        "targets": targets, **({"shard": {"index": artifact.shard[0], "count": artifact.shard[1]}}
           if artifact.shard else {}),
        **({"broken": {"target": artifact.broken.target, "stage": artifact.broken.stage,
                       "error": artifact.broken.error}} if artifact.broken else {}),
        **({"absent": dict(artifact.absent)} if artifact.absent else {}),
        **({"policy": artifact.policy} if artifact.policy else {})}


def measurements(artifact: Artifact) -> dict[str, Any]:
    """The artifact's data without its header: what a reviewer has to read."""
    data = to_data(artifact)
    for key in (*HEADER_FIELDS, "shard"):
        data.pop(key, None)
    return data


def same_measurements(a: Artifact, b: Artifact) -> bool:
    """True when two artifacts differ at most in their header (and shard)."""
    return measurements(a) == measurements(b)


def canonical_bytes(artifact: Artifact) -> bytes:
    return (json.dumps(to_data(artifact), sort_keys=True, indent=1, ensure_ascii=False)
            + "\n").encode("utf-8")


def _grade_in(value: str | None) -> Grade | None:
    return None if value is None else Grade(value)


def _failures_in(items: list[dict[str, Any]]) -> tuple[FailureGroup, ...]:
    return tuple(FailureGroup(f["dtype"], f["rank"], Stage(f["stage"]), f["error"], f["count"],
                              f["example"], f["size"], tuple(f.get("only_with", ())))
                 for f in items)


def _grades_in(d: dict[str, Any]) -> Grades:
    return Grades(_grade_in(d["export"]), _grade_in(d["runtime"]), _grade_in(d["numerics"]),
                  _grade_in(d["dynamic"]))


def from_data(data: dict[str, Any], path: object = "<artifact>") -> Artifact:
    """An artifact from plain data; an older readable schema is migrated on load."""
    recorded = data.get("schema_version") if isinstance(data, dict) else None
    data = migrate(data)
    if isinstance(data, dict) and data.get("schema_version") not in (None, SCHEMA_VERSION):
        raise ArtifactError(path, "schema_version", f"{data['schema_version']!r}: this opsweep "
                            f"reads schema version {SCHEMA_VERSION} (and migrates "
                            f"{', '.join(map(str, sorted(_MIGRATIONS)))}); sweep again with "
                            "--no-reuse to measure the current axes")
    validate_data(data, path)
    specs = {name: spec_from_data(d) for name, d in data["specs"].items()}
    targets = {}
    for name, t in data["targets"].items():
        entry = _entry_in(t["fingerprint"])
        if entry.name != name:
            raise ArtifactError(path, f"targets.{name}.fingerprint",
                                f"names {entry.name!r}, not the target it is filed under")
        for spec in t.get("absent", ()):
            if spec not in specs:
                raise ArtifactError(path, f"targets.{name}.absent",
                                    f"{spec!r} is not a spec of the stock target")
        targets[name] = (entry, _target_in(specs, t))
    shard, broken = data.get("shard"), data.get("broken")
    artifact = make_artifact(Fingerprint(**data["fingerprint"]), data["profile"],
                             data["examples"], data["regen_index"], specs,
                             (shard["index"], shard["count"]) if shard else None, targets,
                             Breakage(**broken) if broken else None, data.get("absent"),
                             data.get("policy", ""))
    both = sorted(set(artifact.absent) & set(specs))
    if both:
        raise ArtifactError(path, f"absent.{both[0]}", "a spec recorded as absent is also measured")
    if broken and (specs or targets):
        raise ArtifactError(path, "broken", "an artifact of a pin set that breaks the exporter "
                            "measures no spec")
    _check_derived(artifact, data, path, recorded if isinstance(recorded, int) else SCHEMA_VERSION)
    return artifact


def _entry_in(d: dict[str, Any]) -> TargetEntry:
    if "exporter" in d:
        return ExporterEntry(d["exporter"], d["torch"], d["opset"], d.get("absent", ""))
    return Translations(d["module"], d["table"], d["digest"], tuple(d["overrides"]))


def validate_data(data: Any, path: object = "<artifact>", definition: str | None = None) -> None:
    """Validate a whole artifact, or one `$defs` entry of its schema (e.g. spec_result)."""
    validate(data, "artifact", path, error=ArtifactError, definition=definition)


def _check_derived(artifact: Artifact, data: dict[str, Any], path: object,
                   recorded: int = SCHEMA_VERSION) -> None:
    """The operators tables must be what the specs say: a hand edit shows up here.
    `recorded`: the schema version the file was written in."""
    for where, specs in [("specs", artifact.specs)] + [
            (f"targets.{t.name}.specs", t.specs) for t in artifact.others]:
        for name, result in specs.items():
            _check_outcomes(result, path, f"{where}.{name}.outcomes")
    # the operators tables alone, as to_data spells them (not the specs: they are the data)
    stock_ops = _operators_out(artifact.operators)
    absent = frozenset(k for k, since in _DERIVED_SINCE.items() if recorded < since)
    _check_operators(stock_ops, data["operators"], path, "operators", absent)
    for t in artifact.others:
        _check_operators(_target_operators_out(t, stock_ops), data["targets"][t.name]["operators"],
                         path, f"targets.{t.name}.operators", absent)


def _check_outcomes(r: SpecResult, path: object, where: str) -> None:
    """A spec's outcome counts must add up to its stage counts and failure groups."""
    if r.outcomes is None:
        return
    stages: dict[Stage, int] = {}
    failing: dict[tuple, int] = {}
    for c in r.outcomes:
        stages[c.stage] = stages.get(c.stage, 0) + c.count
        if c.stage is not Stage.OK:
            failing[c.dtype, c.rank, c.stage] = failing.get((c.dtype, c.rank, c.stage), 0) + c.count
    if stages != dict(r.stages):
        raise ArtifactError(path, where, "do not add up to the spec's stage counts")
    groups: dict[tuple, int] = {}
    for g in r.failures:
        groups[g.dtype, g.rank, g.stage] = groups.get((g.dtype, g.rank, g.stage), 0) + g.count
    if groups != failing:
        raise ArtifactError(path, where, "do not add up to the spec's failure groups")


def _check_operators(derived: dict[str, Any], recorded: dict[str, Any], path: object,
                     where: str, absent: frozenset[str]) -> None:
    """`absent`: derived fields the recorded schema version does not have yet."""
    for op in sorted(set(derived) | set(recorded)):
        if op not in recorded:
            raise ArtifactError(path, f"{where}.{op}", "missing, but declared by a spec")
        if op not in derived:
            raise ArtifactError(path, f"{where}.{op}", "no spec in the artifact declares it")
        for key, value in derived[op].items():
            if key not in recorded[op] and key in absent:
                continue
            if key not in recorded[op]:
                raise ArtifactError(path, f"{where}.{op}.{key}", "missing")
            if recorded[op][key] != value:
                raise ArtifactError(path, f"{where}.{op}.{key}",
                                    f"recorded {recorded[op][key]!r} does not follow "
                                    f"from the spec results ({value!r})")


def load(path: str | os.PathLike) -> Artifact:
    path = Path(path)
    data = read_json(path, error=ArtifactError)
    try:
        return from_data(data, path)
    except RecursionError:
        raise ArtifactError(path, "", "not an artifact: nested too deeply") from None


def save(path: str | os.PathLike, artifact: Artifact) -> None:
    payload = canonical_bytes(artifact)
    validate_data(json.loads(payload), path)  # never write what we would refuse to load
    write_atomic(path, payload)

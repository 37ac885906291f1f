"""The committed JSON artifact: dataclasses, canonical bytes, atomic write,
and validation on load with errors naming the file and the field."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opsweep.artifact.grade import (
    Counts,
    DynamicTally,
    FailureGroup,
    Grades,
    StageCount,
    dynamic_tally,
    grade,
    merge_failures,
)
from opsweep.artifact.migrations import MIGRATIONS as _MIGRATIONS
from opsweep.artifact.migrations import migrate
from opsweep.errors import ArtifactError
from opsweep.files import read_json, validate, write_atomic
from opsweep.model import Grade, Stage, Translations  # noqa: F401  (re-exported)
from opsweep.targets import STOCK, TORCHSCRIPT, is_stock  # noqa: F401  (re-exported)

#: Since version 4 a custom target is written as what differs from the stock target:
#: `targets.<name>.specs` and `.operators` hold only the results that differ, `.absent`
#: the stock specs the target has no result for. Readers get complete results.
#: Since version 5 the fingerprint names the hypothesis release that drew the examples
#: and each spec keeps its `outcomes`: examples per dtype, rank and stage reached.
SCHEMA_VERSION = 5
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
class GapCheck:
    reason: str
    expected: Stage
    measured: tuple[Stage, ...]
    status: str  # a specgrade.GapStatus value


@dataclass(frozen=True)
class SpecResult:
    aten_ops: tuple[str, ...]
    family: str
    profile: str
    examples: int
    stages: Mapping[Stage, int]
    failures: tuple[FailureGroup, ...]
    grades: Grades
    nondeterministic: bool
    gap: GapCheck | None
    digest: str  # of the spec as measured: a changed spec is never reused
    signatures: int  # distinct example signatures, i.e. exports: the spec's cost
    dynamic_stages: Mapping[Stage, int] = field(default_factory=dict)
    dynamic_regressed: int = 0
    dynamic_failures: tuple[FailureGroup, ...] = ()
    #: examples per (dtype, rank, stage reached), ok included; None: not recorded (an
    #: artifact from before schema 5)
    outcomes: tuple[StageCount, ...] | None = None
    #: the arguments the spec's draws reached, read from torch's schema of each overload it
    #: traces: overload -> argument -> {"type", "classes"} (opsweep.coverage.coverage); None:
    #: not recorded (measured by an engine before arguments were)
    arguments: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None

    @property
    def counts(self) -> Counts:
        return Counts(self.stages, self.nondeterministic, self.dynamic_stages,
                      self.dynamic_regressed)


@dataclass(frozen=True)
class OperatorResult:
    grades: Grades
    specs: tuple[str, ...]
    failures: tuple[FailureGroup, ...]
    dynamic_failures: tuple[FailureGroup, ...] = ()
    dynamic_tally: DynamicTally = DynamicTally()




@dataclass(frozen=True)
class ExporterEntry:
    """A target that is another exporter, not a translation table (``torchscript``: the
    TorchScript exporter, ``dynamo=False``). It lives in torch, so torch's release is its
    fingerprint part, with the opset it exported at; `absent`: why this pin set does not
    have it (the canary could not get ``x + y`` through), and then it measures no spec."""

    exporter: str
    torch: str
    opset: int
    absent: str = ""

    @property
    def name(self) -> str:
        return self.exporter

    @property
    def digest(self) -> str:
        """What a change of it is reported as (the diff's "target changed" line)."""
        return f"torch {self.torch} opset {self.opset}" + (" absent" if self.absent else "")

    @property
    def overrides(self) -> tuple[str, ...]:
        return ()


#: What a target other than the stock one is: a translation table or another exporter.
TargetEntry = Translations | ExporterEntry


@dataclass(frozen=True)
class TargetResult:
    """The catalog measured a second time: with a custom translation table, or with
    another exporter (ExporterEntry)."""

    translations: TargetEntry
    specs: Mapping[str, SpecResult]
    operators: Mapping[str, OperatorResult]


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
    specs: Mapping[str, SpecResult]  # the stock target
    operators: Mapping[str, OperatorResult]
    shard: tuple[int, int] | None = None  # (index, count) of a shard artifact
    targets: Mapping[str, TargetResult] = field(default_factory=dict)  # by Translations.name
    broken: Breakage | None = None  # the pin set could not export at all
    #: spec name -> why the measured torch does not have it (not measured, not graded)
    absent: Mapping[str, str] = field(default_factory=dict)

    def view(self, target: str = STOCK) -> Artifact | None:
        """The artifact as seen by one target (its specs and operators), or None
        when the target was not measured. The stock view is the artifact itself."""
        if is_stock(target):
            return self
        if target not in self.targets:
            return None
        t = self.targets[target]
        return Artifact(self.fingerprint, self.profile, self.examples, self.regen_index,
                        t.specs, t.operators, self.shard, absent=self.absent)

    @property
    def target_names(self) -> tuple[str, ...]:
        return (STOCK, *sorted(self.targets))

    def grades(self, operator: str, target: str = STOCK) -> Grades | None:
        """`operator`'s grades (export, runtime, numerics, dynamic) as `target` measured
        them; None when that target did not measure it."""
        view = self.view(target)
        result = view.operators.get(operator) if view is not None else None
        return result.grades if result is not None else None


def build_operators(specs: Mapping[str, SpecResult]) -> dict[str, OperatorResult]:
    """The per-operator table is derived from the per-spec results, never kept by hand."""
    members: dict[str, list[str]] = {}
    for name in sorted(specs):
        for op in specs[name].aten_ops:
            members.setdefault(op, []).append(name)
    table = {}
    for op in sorted(members):
        names = members[op]
        grades = grade(specs[n].counts for n in names)
        failures = merge_failures(g for n in names for g in specs[n].failures)
        dynamic = merge_failures(g for n in names for g in specs[n].dynamic_failures)
        table[op] = OperatorResult(grades, tuple(names), failures, dynamic,
                                   dynamic_tally(specs[n].counts for n in names))
    return table


def make_target(translations: TargetEntry, specs: Mapping[str, SpecResult]) -> TargetResult:
    if isinstance(translations, ExporterEntry) and translations.absent:
        specs = {}  # an exporter this pin set does not have measures nothing
    specs = {k: specs[k] for k in sorted(specs)}
    return TargetResult(translations, specs, build_operators(specs))


def make_artifact(fingerprint: Fingerprint, profile: str, examples: int, regen_index: int,
                  specs: Mapping[str, SpecResult],
                  shard: tuple[int, int] | None = None,
                  targets: Mapping[str, tuple[TargetEntry, Mapping[str, SpecResult]]] | None = None,
                  broken: Breakage | None = None,
                  absent: Mapping[str, str] | None = None) -> Artifact:
    """`targets`: name -> (translations, spec results) of each custom-translation target."""
    specs = {k: specs[k] for k in sorted(specs)}
    built = {name: make_target(*targets[name]) for name in sorted(targets or {})}
    return Artifact(fingerprint, profile, examples, regen_index, specs,
                    build_operators(specs), shard, built, broken,
                    dict(sorted((absent or {}).items())))


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
            for o, args in r.arguments.items()}})}


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
        d.get("arguments"))


def _operators_out(operators: Mapping[str, OperatorResult]) -> dict[str, Any]:
    return {op: {**_grades_out(r.grades), "specs": list(r.specs),
                 "failures": _failures_out(r.failures),
                 "dynamic_failures": _failures_out(r.dynamic_failures),
                 "dynamic_counts": {"reexported": r.dynamic_tally.reexported,
                                    "unchanged": r.dynamic_tally.unchanged,
                                    "passed": r.dynamic_tally.passed}}
            for op, r in operators.items()}


def _translations_out(t: TargetEntry) -> dict[str, Any]:
    if isinstance(t, ExporterEntry):
        return {"exporter": t.exporter, "torch": t.torch, "opset": t.opset,
                **({"absent": t.absent} if t.absent else {})}
    return {"module": t.module, "table": t.table, "digest": t.digest,
            "overrides": list(t.overrides)}


def _target_out(artifact: Artifact, t: TargetResult) -> dict[str, Any]:
    """A custom target as what differs from the stock target (an absent exporter: nothing)."""
    if isinstance(t.translations, ExporterEntry) and t.translations.absent:
        return {"fingerprint": _translations_out(t.translations), "specs": {}, "operators": {}}
    stock_specs = {n: spec_to_data(r) for n, r in artifact.specs.items()}
    stock_ops = _operators_out(artifact.operators)
    specs = {n: d for n, d in ((n, spec_to_data(r)) for n, r in t.specs.items())
             if stock_specs.get(n) != d}
    operators = {op: d for op, d in _operators_out(t.operators).items() if stock_ops.get(op) != d}
    absent = sorted(set(artifact.specs) - set(t.specs))
    return {"fingerprint": _translations_out(t.translations), "specs": specs,
            "operators": operators, **({"absent": absent} if absent else {})}


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
    targets = {name: _target_out(artifact, t) for name, t in artifact.targets.items()}
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
        **({"absent": dict(artifact.absent)} if artifact.absent else {})}


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
        translations = _entry_in(t["fingerprint"])
        if translations.name != name:
            raise ArtifactError(path, f"targets.{name}.fingerprint",
                                f"names {translations.name!r}, not the target it is filed under")
        for spec in t.get("absent", ()):
            if spec not in specs:
                raise ArtifactError(path, f"targets.{name}.absent",
                                    f"{spec!r} is not a spec of the stock target")
        targets[name] = (translations, _target_in(specs, t))
    shard, broken = data.get("shard"), data.get("broken")
    artifact = make_artifact(Fingerprint(**data["fingerprint"]), data["profile"],
                             data["examples"], data["regen_index"], specs,
                             (shard["index"], shard["count"]) if shard else None, targets,
                             Breakage(**broken) if broken else None, data.get("absent"))
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
            (f"targets.{n}.specs", t.specs) for n, t in artifact.targets.items()]:
        for name, result in specs.items():
            _check_outcomes(result, path, f"{where}.{name}.outcomes")
    derived = to_data(artifact)
    absent = frozenset(k for k, since in _DERIVED_SINCE.items() if recorded < since)
    _check_operators(derived["operators"], data["operators"], path, "operators", absent)
    for name in derived["targets"]:
        _check_operators(derived["targets"][name]["operators"],
                         data["targets"][name]["operators"], path, f"targets.{name}.operators",
                         absent)


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

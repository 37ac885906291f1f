"""The committed JSON artifact: dataclasses, canonical bytes, atomic write,
and validation on load with errors naming the file and the field."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from .errors import ArtifactError
from .grade import FailureGroup, Grades, grade, merge_failures
from .model import Grade, Stage

SCHEMA_VERSION = 1
#: Fields that may differ between two sweeps of the same specs in the same environment.
VOLATILE_FIELDS = ("generated_at",)


@dataclass(frozen=True)
class Fingerprint:
    torch: str
    onnx: str
    onnxruntime: str
    onnxscript: str
    opset: int
    exporter: str


def fingerprint_changes(old: Fingerprint, new: Fingerprint) -> list[str]:
    """Human-readable differences, e.g. ['torch 2.13.0 → 2.14.1']."""
    return [f"{field} {getattr(old, field)} → {getattr(new, field)}"
            for field in Fingerprint.__dataclass_fields__
            if getattr(old, field) != getattr(new, field)]


@dataclass(frozen=True)
class GapCheck:
    reason: str
    expected: Stage
    measured: tuple[Stage, ...]
    status: str  # confirmed | stale | moved


@dataclass(frozen=True)
class Reuse:
    reused: bool
    reason: str


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
    reuse: Reuse
    digest: str  # of the spec as measured: a changed spec is never reused
    signatures: int  # distinct example signatures, i.e. exports: the spec's cost


@dataclass(frozen=True)
class OperatorResult:
    grades: Grades
    specs: tuple[str, ...]
    failures: tuple[FailureGroup, ...]


@dataclass(frozen=True)
class Artifact:
    fingerprint: Fingerprint
    profile: str
    examples: int
    regen_index: int
    specs: Mapping[str, SpecResult]
    operators: Mapping[str, OperatorResult]
    generated_at: str = ""
    shard: tuple[int, int] | None = None  # (index, count) of a shard artifact


def gap_check(reason: str, expected: Stage, stages: Mapping[Stage, int]) -> GapCheck:
    failing = tuple(sorted((s for s, n in stages.items() if n and s not in (Stage.OK, Stage.INVALID)),
                           key=lambda s: s.value))
    if not failing:
        status = "stale"
    elif failing == (expected,):
        status = "confirmed"
    else:
        status = "moved"
    return GapCheck(reason, expected, failing, status)


def build_operators(specs: Mapping[str, SpecResult]) -> dict[str, OperatorResult]:
    """The per-operator table is derived from the per-spec results, never kept by hand."""
    members: dict[str, list[str]] = {}
    for name in sorted(specs):
        for op in specs[name].aten_ops:
            members.setdefault(op, []).append(name)
    table = {}
    for op in sorted(members):
        names = members[op]
        grades = grade((specs[n].stages, specs[n].nondeterministic) for n in names)
        failures = merge_failures(g for n in names for g in specs[n].failures)
        table[op] = OperatorResult(grades, tuple(names), failures)
    return table


def make_artifact(fingerprint: Fingerprint, profile: str, examples: int, regen_index: int,
                  specs: Mapping[str, SpecResult], generated_at: str = "",
                  shard: tuple[int, int] | None = None) -> Artifact:
    specs = {k: specs[k] for k in sorted(specs)}
    return Artifact(fingerprint, profile, examples, regen_index, specs,
                    build_operators(specs), generated_at, shard)


# --- to and from plain data --------------------------------------------------

def _grade_value(g: Grade | None) -> str | None:
    return None if g is None else g.value


def _failures_out(groups: Iterable[FailureGroup]) -> list[dict[str, Any]]:
    return [{"dtype": g.dtype, "rank": g.rank, "stage": g.stage.value, "error": g.error,
             "count": g.count, "example": g.example, "size": g.size} for g in groups]


def _grades_out(g: Grades) -> dict[str, Any]:
    return {"export": _grade_value(g.export), "runtime": _grade_value(g.runtime),
            "numerics": _grade_value(g.numerics)}


def spec_to_data(r: SpecResult) -> dict[str, Any]:
    gap = None if r.gap is None else {
        "reason": r.gap.reason, "expected": r.gap.expected.value,
        "measured": [s.value for s in r.gap.measured], "status": r.gap.status}
    return {
        "aten_ops": list(r.aten_ops), "family": r.family, "profile": r.profile,
        "examples": r.examples, "stages": {s.value: n for s, n in r.stages.items()},
        "failures": _failures_out(r.failures), **_grades_out(r.grades),
        "nondeterministic": r.nondeterministic, "gap": gap,
        "reuse": {"reused": r.reuse.reused, "reason": r.reuse.reason}, "digest": r.digest,
        "signatures": r.signatures}


def spec_from_data(d: dict[str, Any]) -> SpecResult:
    """A spec result from plain data that has already been validated."""
    gap = d["gap"] and GapCheck(d["gap"]["reason"], Stage(d["gap"]["expected"]),
                                tuple(Stage(s) for s in d["gap"]["measured"]), d["gap"]["status"])
    return SpecResult(
        tuple(d["aten_ops"]), d["family"], d["profile"], d["examples"],
        {Stage(s): n for s, n in d["stages"].items()}, _failures_in(d["failures"]),
        _grades_in(d), d["nondeterministic"], gap or None,
        Reuse(d["reuse"]["reused"], d["reuse"]["reason"]), d["digest"], d["signatures"])


def to_data(artifact: Artifact) -> dict[str, Any]:
    specs = {name: spec_to_data(r) for name, r in artifact.specs.items()}
    operators = {op: {**_grades_out(r.grades), "specs": list(r.specs),
                      "failures": _failures_out(r.failures)}
                 for op, r in artifact.operators.items()}
    fp = artifact.fingerprint
    return {
        "schema_version": SCHEMA_VERSION, "generated_at": artifact.generated_at,
        "fingerprint": {"torch": fp.torch, "onnx": fp.onnx, "onnxruntime": fp.onnxruntime,
                        "onnxscript": fp.onnxscript, "opset": fp.opset, "exporter": fp.exporter},
        "profile": artifact.profile, "examples": artifact.examples,
        "regen_index": artifact.regen_index, "specs": specs, "operators": operators,
        **({"shard": {"index": artifact.shard[0], "count": artifact.shard[1]}}
           if artifact.shard else {})}


def canonical_bytes(artifact: Artifact) -> bytes:
    return (json.dumps(to_data(artifact), sort_keys=True, indent=1, ensure_ascii=False)
            + "\n").encode("utf-8")


def _grade_in(value: str | None) -> Grade | None:
    return None if value is None else Grade(value)


def _failures_in(items: list[dict[str, Any]]) -> tuple[FailureGroup, ...]:
    return tuple(FailureGroup(f["dtype"], f["rank"], Stage(f["stage"]), f["error"], f["count"],
                              f["example"], f["size"]) for f in items)


def _grades_in(d: dict[str, Any]) -> Grades:
    return Grades(_grade_in(d["export"]), _grade_in(d["runtime"]), _grade_in(d["numerics"]))


def from_data(data: dict[str, Any], path: object = "<artifact>") -> Artifact:
    validate_data(data, path)
    specs = {name: spec_from_data(d) for name, d in data["specs"].items()}
    shard = data.get("shard")
    artifact = make_artifact(Fingerprint(**data["fingerprint"]), data["profile"],
                             data["examples"], data["regen_index"], specs, data["generated_at"],
                             (shard["index"], shard["count"]) if shard else None)
    _check_derived(artifact, data, path)
    return artifact


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    text = resources.files("opsweep").joinpath("schema/artifact.schema.json").read_text("utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


def _field(path: Iterable[Any]) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def validate_data(data: Any, path: object = "<artifact>", definition: str | None = None) -> None:
    """Validate a whole artifact, or one `$defs` entry of its schema (e.g. spec_result)."""
    validator = _validator()
    if definition is not None:
        validator = validator.evolve(schema={"$ref": f"#/$defs/{definition}",
                                             "$defs": validator.schema["$defs"]})
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ArtifactError(path, _field(first.absolute_path), first.message[:300] + more)


def _check_derived(artifact: Artifact, data: dict[str, Any], path: object) -> None:
    """The operators table must be what the specs say: a hand edit shows up here."""
    derived = to_data(artifact)["operators"]
    for op in sorted(set(derived) | set(data["operators"])):
        if op not in data["operators"]:
            raise ArtifactError(path, f"operators.{op}", "missing, but declared by a spec")
        if op not in derived:
            raise ArtifactError(path, f"operators.{op}", "no spec in the artifact declares it")
        for key, value in derived[op].items():
            if data["operators"][op][key] != value:
                raise ArtifactError(path, f"operators.{op}.{key}",
                                    f"recorded {data['operators'][op][key]!r} does not follow "
                                    f"from the spec results ({value!r})")


def load(path: str | os.PathLike) -> Artifact:
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise ArtifactError(path, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ArtifactError(path, "", f"cannot be read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArtifactError(path, f"line {exc.lineno} column {exc.colno}",
                            f"not valid JSON: {exc.msg}") from None
    return from_data(data, path)


def write_atomic(path: str | os.PathLike, payload: bytes) -> None:
    """Write to a temporary file beside `path`, fsync, then os.replace: a reader
    (or a crash) sees either the old file or the new one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; the result is an ordinary file
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def save(path: str | os.PathLike, artifact: Artifact) -> None:
    payload = canonical_bytes(artifact)
    validate_data(json.loads(payload), path)  # never write what we would refuse to load
    write_atomic(path, payload)

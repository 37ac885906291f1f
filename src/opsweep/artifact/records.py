"""History across pin sets: one compact record per measured pin set (torch,
onnx, onnxruntime, onnxscript: ``docs/history/torch-2.13.0+onnx-1.23.2+...json``;
records named ``torch-<version>.json`` by earlier opsweep are read as they are),
written when the bot commits, and a rendered view: each operator's grades per
point, and the grade transitions each bump brought, per target, with the pins
that moved and each transition's smallest failing example.

A bump of onnxscript alone is a point of its own: records are keyed by the
whole pin set, never by the torch version alone.

A record keeps, per target and operator, one letter per axis (export,
runtime, numerics, dynamic): ``f`` full, ``p`` partial, ``n`` none,
``b`` blocked, ``s`` skipped, ``-`` not reached. Measuring the same torch
version again replaces its record; a record's ``generated_at`` is when its content
last changed: measuring again with the same grades leaves the file untouched, so a
regeneration that changes nothing changes nothing here either.

A record also says what measured it: per stock operator, a short digest of the digests
of the specs measuring it (``measured_by``: each spec digest covers the spec's catalog
entry and the engine's shared source), and the opsweep version. Two points' grades of an
operator are compared as a transition only when the same specs measured both
(`opsweep.artifact.diff.comparable`); otherwise the step shows it *measured anew*, and
"full since" does not walk back across it. A record from before this field names nothing:
comparable only with another such record.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar, cast

import opsweep
from opsweep import files
from opsweep.artifact.data import PINS, Artifact
from opsweep.artifact.diff import (
    KINDS_ORDER,
    _axis_failures,
    comparable_in,
    grade_changes,
    measured_by,
)
from opsweep.artifact.grade import AXES, Grades
from opsweep.artifact.points import Record as Point
from opsweep.artifact.points import order, version_key
from opsweep.artifact.results import TargetResult
from opsweep.errors import ArtifactError, DataFileError, UsageError
from opsweep.files import write_atomic
from opsweep.model import Grade
from opsweep.targets import STOCK, is_stock, stock_first

HISTORY_VERSION = 1
#: a history record of either kind, as `in_order` orders and labels it
L = TypeVar("L", bound=Point)
CODES = {Grade.FULL: "f", Grade.PARTIAL: "p", Grade.NONE: "n", Grade.BLOCKED: "b",
         Grade.SKIPPED: "s", None: "-"}
GRADES = {v: k for k, v in CODES.items()}


@dataclass(frozen=True)
class Record:
    torch: str  # as measured, e.g. 2.13.0+cpu
    fingerprint: Mapping[str, Any]
    profile: str
    examples: int
    generated_at: str  # when the record's content last changed (UTC, ISO 8601)
    #: target -> operator -> four grade letters
    targets: Mapping[str, Mapping[str, str]]
    translations: Mapping[str, Mapping[str, Any]]  # custom target -> its fingerprint entry
    #: stock operator -> axis -> its smallest failing example, "<example> (<stage>)"
    failing: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: spec -> why this pin set's torch does not have it (not measured)
    absent: Mapping[str, str] = field(default_factory=dict)
    #: stock operator -> the short digest of the specs that measured it (diff.measured_by);
    #: None: a record from before records named it (an unnamed catalog and engine)
    measured_by: Mapping[str, str] | None = None
    #: the opsweep version that wrote its content ("" when the record does not say); not
    #: compared: a newer opsweep measuring the same leaves the record as it is (what
    #: measured an operator is `measured_by`, whose spec digests cover the engine)
    opsweep: str = field(default="", compare=False)
    #: how views name the point: the torch version, and the pins that tell it apart from
    #: other points of the same torch (set by load_all; "" for a lone record)
    label: str = field(default="", compare=False)

    @property
    def version(self) -> str:
        return public_version(self.torch)

    @property
    def name(self) -> str:
        return self.label or self.version

    @property
    def catalog(self) -> str:
        """A short name of what measured the whole point (every operator's measuring digest;
        "" for an unnamed record), for the reader to tell points measured alike."""
        if self.measured_by is None:
            return ""
        text = "".join(f"{op}\0{d}\n" for op, d in sorted(self.measured_by.items()))
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    @property
    def pins(self) -> tuple[tuple[str, str], ...]:
        """The pin set the record is keyed by: (package, public version) per pin."""
        return tuple((p, public_version(str(self.fingerprint.get(p, "")))) for p in PINS)


def public_version(torch_version: str) -> str:
    return torch_version.split("+", 1)[0]


def letters(grades: Grades | None) -> str:
    """An operator's four grades as the records keep them ("" when not measured)."""
    return "" if grades is None else "".join(CODES[getattr(grades, axis)] for axis in AXES)


def _codes(target: TargetResult) -> dict[str, str]:
    return {op: letters(r.grades) for op, r in target.operators.items()}


def record(artifact: Artifact, generated_at: str = "") -> Record:
    if artifact.shard is not None:
        raise ArtifactError("<history>", "shard", "a shard artifact is not a whole measurement; "
                            "merge the shards first")
    targets = {n: _codes(t) for n, t in artifact.results.items()}
    translations = {t.name: asdict(t.entry) for t in artifact.others if t.entry is not None}
    for entry in translations.values():
        if "overrides" in entry:  # a table's (an exporter target has none)
            entry["overrides"] = list(entry["overrides"])
    return Record(artifact.fingerprint.torch, asdict(artifact.fingerprint), artifact.profile,
                  artifact.examples, generated_at, targets, translations,
                  _smallest_failures(artifact), dict(artifact.absent), measured_by(artifact),
                  opsweep.__version__)


def _smallest_failures(artifact: Artifact) -> dict[str, dict[str, str]]:
    """Per stock operator and failing axis, its smallest failing example."""
    out: dict[str, dict[str, str]] = {}
    for op, result in artifact.operators.items():
        for axis in AXES:
            groups = _axis_failures(result, axis)
            if groups:
                g = min(groups, key=lambda g: (g.size, g.example, g.stage.value, g.error))
                out.setdefault(op, {})[axis] = f"{g.example} ({g.stage.value})"
    return out


#: a public version as a file-name component: digits, letters, dots, no path separators
_VERSION = re.compile(r"^[0-9]+(?:\.[0-9A-Za-z]+)*(?:[-_]?[A-Za-z0-9]+)*$")


def _checked(name: str, version: str) -> str:
    """A version as a file-name component; one that is not a plain version string
    (`../../x`, a slash, a NUL) is refused before any path is built."""
    public = public_version(str(version))
    if len(public) > 60 or not _VERSION.match(public):
        raise ArtifactError("<history>", f"fingerprint.{name}",
                            f"{version!r} is not a version string a record can be named after")
    return public


def path_for(directory: Path, torch_version: str) -> Path:
    """The name earlier opsweep gave a torch version's record (still read as it is)."""
    return Path(directory) / f"torch-{_checked('torch', torch_version)}.json"


def pin_path(directory: Path, fingerprint: Mapping[str, Any]) -> Path:
    """Where a pin set's record lives: every pin's name and version in the file name."""
    # a pin an older record's fingerprint does not name (hypothesis before schema 5) is left out
    parts = [f"{p}-{_checked(p, fingerprint[p])}" for p in PINS
             if fingerprint.get(p, "unknown") != "unknown"]
    return Path(directory) / f"{'+'.join(parts)}.json"


def _names_ok(path: Path, data: Mapping[str, Any]) -> bool:
    if public_version(str(data["fingerprint"].get("torch", ""))) != public_version(data["torch"]):
        return False
    names = {pin_path(path.parent, data["fingerprint"]).name}
    names.add(path_for(path.parent, data["torch"]).name)
    return Path(path).name in names


def to_data(r: Record) -> dict[str, Any]:
    return {"history_version": HISTORY_VERSION, "torch": r.torch, "fingerprint": dict(r.fingerprint),
            "profile": r.profile, "examples": r.examples, "generated_at": r.generated_at,
            "axes": list(AXES), "targets": {t: dict(ops) for t, ops in r.targets.items()},
            "translations": {t: dict(v) for t, v in r.translations.items()},
            "failing": {op: dict(axes) for op, axes in r.failing.items()},
            **({"absent": dict(r.absent)} if r.absent else {}),
            **({"measured_by": dict(r.measured_by)} if r.measured_by is not None else {}),
            **({"opsweep": r.opsweep} if r.opsweep else {})}


def write(artifact: Artifact, directory: Path, now: datetime | None = None) -> Path:
    """Write (or replace) the record of the artifact's torch version; when the record
    there already says the same (apart from its date), leave it as it is."""
    if artifact.broken is not None:
        raise UsageError(f"not recorded: {artifact.broken.headline(artifact.fingerprint)}")
    stamp = (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat()
    r = record(artifact, stamp)
    path = _existing(directory, r) or pin_path(directory, r.fingerprint)
    if path.exists():
        try:
            before = load(path)
        except DataFileError:
            before = None  # an unreadable record is replaced
        if before is not None and replace(before, generated_at=stamp) == r:
            return path
    text = json.dumps(to_data(r), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    write_atomic(path, text.encode("utf-8"))
    return path


def _existing(directory: Path, r: Record) -> Path | None:
    """The file already holding this pin set's record (a legacy name included)."""
    for path in sorted(Path(directory).glob("torch-*.json")):
        try:
            if load(path).pins == r.pins:
                return path
        except DataFileError:
            continue  # an unreadable record is not this pin set's
    return None


def load(path: Path) -> Record:
    """A record, validated against ``schema/history.schema.json``; its file name must
    be the one its pins give (or the legacy ``torch-<version>.json``)."""
    data = files.load(path, "history")
    if not _names_ok(Path(path), data):
        raise DataFileError(path, "torch", f"{data['torch']!r} and its pins do not match the "
                            "file name")
    return Record(data["torch"], data["fingerprint"], data["profile"], data["examples"],
                  data["generated_at"], data["targets"], data["translations"],
                  data.get("failing", {}), data.get("absent", {}), data.get("measured_by"),
                  data.get("opsweep", ""))


def load_all(directory: Path) -> list[Record]:
    """Every record in the directory, oldest pin set first (torch, then the others);
    two records of one pin set are an error naming both files."""
    return in_order({p: load(p) for p in sorted(Path(directory).glob("torch-*.json"))})


def in_order(loaded: Mapping[Path, L], where: str = "fingerprint") -> list[L]:
    """History records (the operators' or the models') as loaded from their files: oldest
    pin set first (torch, then the others), each labelled as views name its point; two of
    one pin set are an error naming both files (at `where`, the field holding the pins)."""
    seen: dict[tuple, Path] = {}
    for path, r in loaded.items():
        if r.pins in seen:
            raise DataFileError(path, where, f"the same pin set as {seen[r.pins].name}")
        seen[r.pins] = path
    records = sorted(loaded.values(), key=lambda r: tuple(version_key(v) for _, v in r.pins))
    return [cast(L, replace(cast(Any, r), label=point_label(r, records))) for r in records]


def point_label(r: Point, records: Sequence[Point]) -> str:
    """The torch version, plus the pins in which records of the same torch differ (the
    models history names its points the same way)."""
    same = [o for o in records if o.version == r.version]
    if len(same) < 2:
        return r.version
    differ = [(p, v) for i, (p, v) in enumerate(r.pins)
              if i and len({o.pins[i][1] for o in same}) > 1]
    return f"{r.version} ({', '.join(f'{p} {v}' for p, v in differ)})"


def removed_in(records: Sequence[Record], spec: str) -> str:
    """The point from which `spec` has been absent, when an earlier point had it ("")."""
    line, since = chain(records), ""
    for i in range(len(line) - 1, -1, -1):
        if spec not in line[i].absent:
            return since
        since = line[i].name if i else ""
    return ""


def moved_pins(old: Record, new: Record) -> tuple[str, ...]:
    """The pins that moved between two points, e.g. ('onnxscript 0.7.1 → 0.7.2',)."""
    return tuple(f"{p} {a} → {b}" + (" (backwards)" if version_key(b) < version_key(a) else "")
                 for (p, a), (_, b) in zip(old.pins, new.pins) if a != b)


@dataclass(frozen=True)
class Change:
    op: str
    axis: str
    old: str
    new: str
    kind: str
    #: the smallest failing example behind it: the new point's (the old one's for an
    #: improvement, where it is what stopped failing); "" when the record keeps none
    example: str = ""


@dataclass(frozen=True)
class Bump:
    old: Record
    new: Record
    changes: Mapping[str, tuple[Change, ...]]  # target -> transitions, stock first
    #: True: `new` is off the chain, compared with the chain point `old` it sits beside
    beside: bool = False

    @property
    def moved(self) -> tuple[str, ...]:
        """The pins that moved at this step, e.g. ('onnxscript 0.7.1 → 0.7.2',)."""
        return moved_pins(self.old, self.new)

    @property
    def removed(self) -> tuple[tuple[str, str], ...]:
        """(spec, why) of the specs the new point's torch no longer has."""
        return tuple((n, why) for n, why in sorted(self.new.absent.items())
                     if n not in self.old.absent)

    def count(self, target: str, kind: str) -> int:
        return sum(c.kind == kind for c in self.changes.get(target, ()))

    @property
    def anew(self) -> tuple[int, int]:
        """(operators measured by different specs at this step, operators both points
        measured with the stock exporter): a changed catalog or engine, not torch."""
        both = set(self.old.targets.get(STOCK, {})) & set(self.new.targets.get(STOCK, {}))
        return sum(not same_specs(self.old, self.new, op) for op in both), len(both)


def grades(code: str | None) -> Grades | None:
    """Four grade letters back to grades (None: not measured in that version)."""
    return None if code is None else Grades(*(GRADES[c] for c in code))


def same_specs(old: Record, new: Record, op: str) -> bool:
    """The one rule (diff.comparable) over two points: the same specs measured `op` in both
    (or neither point names what measured it)."""
    return comparable_in(old.measured_by, new.measured_by, op)


def transitions(old: Mapping[str, str], new: Mapping[str, str],
                failing: tuple[Mapping[str, Mapping[str, str]], Mapping[str, Mapping[str, str]]]
                = ({}, {}),
                measured: tuple[Mapping[str, str] | None, Mapping[str, str] | None]
                = (None, None)) -> tuple[Change, ...]:
    """The same classification as `opsweep diff` (`grade_changes`), over compact records;
    `failing`: the old and new points' smallest failing examples, per operator and axis;
    `measured`: the points' measuring digests (Record.measured_by): a moved grade of an
    operator measured by different specs is measured anew, never a regression."""
    def label(code: str | None, grade: Grade | None) -> str:
        return "unmeasured" if code is None else grade.value if grade is not None else "n/a"

    def example(op: str, axis: str, kind: str) -> str:
        side = failing[0] if kind == "improvement" else failing[1]
        return side.get(op, {}).get(axis, "")

    changes = [Change(op, axis, label(old.get(op), before), label(new.get(op), after), kind,
                      example(op, axis, kind))
               for op in sorted(set(old) | set(new))
               for axis, before, after, kind in grade_changes(
                   grades(old.get(op)), grades(new.get(op)), comparable_in(*measured, op))]
    return tuple(sorted(changes, key=lambda c: (KINDS_ORDER.index(c.kind), c.op, c.axis)))


def compare(old: Record, new: Record, *, beside: bool = False) -> Bump:
    """The transitions from one point to another, per target both measured (whether the
    same specs measured an operator is the stock target's measuring digest, for every
    target)."""
    shared = [t for t in new.targets if t in old.targets]
    shared.sort(key=stock_first)
    examples = {t: (old.failing, new.failing) if is_stock(t) else ({}, {}) for t in shared}
    measured = (old.measured_by, new.measured_by)
    return Bump(old, new, {t: transitions(old.targets[t], new.targets[t], examples[t], measured)
                           for t in shared}, beside)


def bumps(records: Sequence[Record]) -> list[Bump]:
    """The steps of the points' chain (no pin moves backwards), then each point off the
    chain against the chain point it sits beside (:mod:`opsweep.artifact.points`)."""
    found = order(records)
    out = [compare(old, new) for old, new in pairwise(found.chain)]
    return out + [compare(at, side, beside=True) for side, at in found.beside]


def chain(records: Sequence[Record]) -> tuple[Record, ...]:
    """The points in an order where no step moves a pin backwards (the newest last)."""
    return order(records).chain

"""Reuse: when a spec's previous result may be carried over instead of re-measured.

The rules (seed 000, made exact):

* Nothing is reused across a fingerprint change (torch, onnx, onnxruntime, hypothesis,
  onnxscript, opset, exporter path): the 2.8 -> 2.9 exporter swap regressed
  every operator at once, and only a version comparison catches that.
* Nothing is reused when the spec itself changed (its digest).
* A result drawn with a larger budget supersedes a smaller one: a nightly
  result is kept in a ci run whatever its grades (more examples is strictly
  more evidence, and a ci run never replaces it); a ci result never counts
  for a nightly run.
* Otherwise a result is carried over only when every operator the spec
  declares was graded full (export, runtime, numerics full or skipped, and
  dynamic full or not applicable)
  and the spec is not in this regeneration's rotating tenth. partial and
  none are always re-measured: none -> full is where the value is.
"""

from __future__ import annotations

import hashlib
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

from opsweep.artifact.data import Artifact, Fingerprint, fingerprint_changes
from opsweep.catalog.draw import PROFILES, Profile
from opsweep.model import Grade, OpSpec

ROTATION = 10


@dataclass(frozen=True)
class Decision:
    reuse: bool
    why: str  # what a summary counts: "rotation", "fingerprint changed", ...
    detail: str = ""  # the rest of the reason: " (regen_index 3)", ": sin export partial"

    @property
    def reason(self) -> str:
        """The whole reason, as the run log records it."""
        return self.why + self.detail


def in_rotation(name: str, regen_index: int) -> bool:
    """The rotating tenth: each regeneration force-re-measures one tenth of the
    specs, chosen by a stable hash of the name, so no full grade is carried forever."""
    return zlib.crc32(name.encode()) % ROTATION == regen_index % ROTATION


_SHARED_SOURCES = ("catalog/families.py", "catalog/strategies.py", "model.py", "catalog/draw.py")


def spec_digest(spec: OpSpec) -> str:
    """Changes when the spec's module or the code that draws examples changes."""
    h = hashlib.sha256(spec.name.encode())
    module = sys.modules.get(spec.source)
    here = Path(__file__).parents[1]
    for path in [Path(getattr(module, "__file__", "") or "")] + [here / n for n in _SHARED_SOURCES]:
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _all_full(previous: Artifact, spec: OpSpec) -> str:
    """Empty when every declared operator is full; else the first that is not."""
    for op in spec.aten_ops:
        r = previous.operators.get(op)
        if r is None:
            return f"{op} was not measured"
        g = r.grades
        if g.export is not Grade.FULL or g.runtime is not Grade.FULL:
            return f"{op} export {g.export and g.export.value}, runtime {g.runtime and g.runtime.value}"
        if g.numerics not in (Grade.FULL, Grade.SKIPPED):
            return f"{op} numerics {g.numerics and g.numerics.value}"
        if g.dynamic not in (Grade.FULL, None):  # None: no example has a leading dimension
            return f"{op} dynamic {g.dynamic.value}"
    return ""


def decide(spec: OpSpec, digest: str, previous: Artifact | None, fingerprint: Fingerprint,
           profile: Profile, regen_index: int, no_reuse: bool = False) -> Decision:
    if no_reuse:
        return Decision(False, "--no-reuse")
    if previous is None:
        return Decision(False, "no previous artifact")
    prior = previous.specs.get(spec.name)
    if prior is None:
        return Decision(False, "new spec")
    if previous.fingerprint != fingerprint:
        changes = ", ".join(fingerprint_changes(previous.fingerprint, fingerprint))
        return Decision(False, "fingerprint changed", f" ({changes})")
    if prior.digest != digest:
        return Decision(False, "spec changed")
    had, wants = PROFILES[prior.profile].max_examples, profile.max_examples
    if had < wants:
        return Decision(False, f"previous {prior.profile} result drew fewer examples than {profile.name}")
    if had > wants:
        return Decision(True, f"{prior.profile} result supersedes {profile.name}")
    if in_rotation(spec.name, regen_index):
        return Decision(False, "rotation", f" (regen_index {regen_index})")
    not_full = _all_full(previous, spec)
    if not_full:
        return Decision(False, "not full", f": {not_full}")
    return Decision(True, "full under the same fingerprint")

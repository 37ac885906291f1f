"""Reuse: when a spec's previous result may be carried over instead of re-measured.

The rules (seed 000, restated for an unchanged stack):

* Nothing is reused across a fingerprint change (torch, onnx, onnxruntime, hypothesis,
  onnxscript, opset, exporter path): the 2.8 -> 2.9 exporter swap regressed
  every operator at once, and only a version comparison catches that.
* Nothing is reused across a change of the tolerance policy (its name and version: the
  numerics verdicts and the recorded error's excess depend on it; an artifact from before
  schema 6 names none, so its results are measured again and gain their observed error).
  ``opsweep regrade`` re-grades an artifact at another policy without measuring.
* Nothing is reused when the spec itself changed (its digest: the spec's module and
  the code that draws examples).
* A result drawn with a larger budget supersedes a smaller one: a nightly
  result is kept in a ci run whatever its grades (more examples is strictly
  more evidence, and a ci run never replaces it); a ci result never counts
  for a nightly run.
* Otherwise -- same fingerprint, same digest, same budget -- a result is carried over
  whatever its grades: the draws depend only on the spec, the profile and the
  hypothesis version (catalog.draw.source_independent), so the same examples would go
  through the same versions and a re-measure could not turn ``none`` into ``full``
  (checked: a fresh clone's main command at the committed pins re-measured 1206 of 1536
  results and wrote the committed artifact again, byte for byte bar ``regen_index``).
  Two exceptions are re-measured: the spec's rotating tenth (every result is measured
  again every ten regenerations), and a result any of whose failures came from the
  machine rather than the exporter stack (a worker lost to a signal, memory or
  ``--timeout``; an example lost before it reached the exporter), which another run
  may not repeat.
"""

from __future__ import annotations

import hashlib
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

from opsweep.artifact.account import UNCHANGED
from opsweep.artifact.data import Artifact, Fingerprint, fingerprint_changes
from opsweep.artifact.results import SpecResult
from opsweep.catalog.draw import PROFILES, Profile
from opsweep.errors import WORKER_LOST
from opsweep.model import OpSpec, Stage
from opsweep.targets import STOCK

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


#: the code every spec's draws and recorded arguments depend on (coverage.py: the draw's
#: covering step and the value classes; engine/arguments.py: what a sweep records of them)
_SHARED_SOURCES = ("catalog/families.py", "catalog/strategies.py", "model.py", "catalog/draw.py",
                   "catalog/cells.py", "catalog/eager.py", "coverage.py", "engine/arguments.py")


def spec_digest(spec: OpSpec) -> str:
    """Changes when the spec's module or the code that draws examples changes."""
    h = hashlib.sha256(spec.name.encode())
    module = sys.modules.get(spec.source)
    here = Path(__file__).parents[1]
    for path in [Path(getattr(module, "__file__", "") or "")] + [here / n for n in _SHARED_SOURCES]:
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


#: Error lines of failures that the machine caused, not the stack: a lost worker, or a
#: process that ran out of memory.
_MACHINE_ERRORS = (f"{WORKER_LOST}:", "MemoryError")


def machine_failure(r: SpecResult) -> str:
    """Empty when every failure of a spec's previous result `r` is the stack's own verdict;
    else the first that the machine caused (what another run may not repeat)."""
    if Stage.LOST in r.stages or Stage.LOST in r.dynamic_stages:
        return "examples were lost before reaching the exporter"
    for g in (*r.failures, *r.dynamic_failures):
        if g.error.startswith(_MACHINE_ERRORS):
            return f"{g.dtype} rank {g.rank} {g.stage.value}: {g.error}"
    return ""


def decide(spec: OpSpec, digest: str, previous: Artifact | None, fingerprint: Fingerprint,
           profile: Profile, regen_index: int, no_reuse: bool = False,
           target: str = STOCK, policy: str = "") -> Decision:
    """Whether `target`'s previous result of `spec` is reused, and why. `policy`: the label
    of the tolerance policy this sweep grades against ("": do not compare)."""
    if no_reuse:
        return Decision(False, "--no-reuse")
    if previous is None:
        return Decision(False, "no previous artifact")
    measured = previous.target(target)
    prior = measured.specs.get(spec.name) if measured is not None else None
    if prior is None:
        return Decision(False, "new spec")
    if previous.fingerprint != fingerprint:
        changes = ", ".join(fingerprint_changes(previous.fingerprint, fingerprint))
        return Decision(False, "fingerprint changed", f" ({changes})")
    if policy and previous.policy != policy:
        return Decision(False, "tolerance policy changed",
                        f" ({previous.policy or 'none recorded'} → {policy})")
    if prior.digest != digest:
        return Decision(False, "spec changed")
    had, wants = PROFILES[prior.profile].max_examples, profile.max_examples
    if had < wants:
        return Decision(False, f"previous {prior.profile} result drew fewer examples than {profile.name}")
    if had > wants:
        return Decision(True, f"{prior.profile} result supersedes {profile.name}")
    if in_rotation(spec.name, regen_index):
        return Decision(False, "rotation", f" (regen_index {regen_index})")
    machine = machine_failure(prior)
    if machine:
        return Decision(False, "machine failure", f": {machine}")
    return Decision(True, UNCHANGED)

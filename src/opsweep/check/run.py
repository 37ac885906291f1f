"""`opsweep check` as a library call: capture, look up, export for real, compare."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict

from opsweep.artifact.data import Artifact
from opsweep.capture.cases import ModelCase
from opsweep.check.real import reality
from opsweep.check.report import Report, against
from opsweep.check.table import lookup
from opsweep.capture.uses import capture, from_export
from opsweep.policy import Policy


def check(case: ModelCase, artifact: Artifact, excluded: Mapping[str, str], *,
          export: bool = True, other: Artifact | None = None, search: bool = True,
          policy: Policy | None = None) -> Report:
    """One model against the artifact (and `other`, for --against); `export`: also the
    real public export (steps 3 and 4), at the artifact's opset (so that the export and
    the table it is set against compare), its outputs compared at `policy`'s tolerances
    (the built-in policy's when None)."""
    opset = artifact.fingerprint.opset
    real, program = reality(case, opset, search, policy) if export else (None, None)
    # a public export that got through translation already holds the decomposed program
    captured = from_export(program) if program is not None else capture(case, opset)
    dynamic = case.dynamic_shapes is not None
    verdicts = lookup(artifact, captured.uses, excluded, dynamic)
    changes = None if other is None else against(verdicts, lookup(other, captured.uses, excluded,
                                                                  dynamic))
    return Report(case.name, case.source, captured, verdicts, dynamic, real, changes,
                  asdict(artifact.fingerprint))

"""`opsweep check` as a library call: capture, look up, export for real, compare; with
`targets`, the same per target the table's sweep measures (`opsweep.check.exporters`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace

from opsweep.artifact.data import Artifact
from opsweep.capture.cases import ModelCase
from opsweep.capture.uses import Capture, capture, from_export
from opsweep.check.exporters import for_target
from opsweep.check.real import reality
from opsweep.check.report import Report, against, target_view
from opsweep.check.table import lookup
from opsweep.policy import Policy
from opsweep.targets import is_stock


def check(case: ModelCase, artifact: Artifact, excluded: Mapping[str, str], *,
          export: bool = True, other: Artifact | None = None, search: bool = True,
          policy: Policy | None = None, targets: Sequence[str] = ()) -> Report:
    """One model against the artifact (and `other`, for --against); `export`: also the
    real public export (steps 3 and 4), at the artifact's opset (so that the export and
    the table it is set against compare), its outputs compared at `policy`'s tolerances
    (the built-in policy's when None); `targets`: the other targets (by name) to check it
    with as well, each its own real export beside that target's table."""
    opset = artifact.fingerprint.opset
    real, program = reality(case, opset, search, policy) if export else (None, None)
    # a public export that got through translation already holds the decomposed program
    captured = from_export(program) if program is not None else capture(case, opset)
    dynamic = case.dynamic_shapes is not None
    verdicts = lookup(artifact, captured.uses, excluded, dynamic)
    changes = None if other is None else against(verdicts, lookup(other, captured.uses, excluded,
                                                                  dynamic))
    report = Report(case.name, case.source, captured, verdicts, dynamic, real, changes,
                    asdict(artifact.fingerprint))
    others = tuple(check_target(report, case, artifact, excluded, name, export=export,
                                search=search, policy=policy)
                   for name in dict.fromkeys(targets) if not is_stock(name))
    return replace(report, targets=others)


def check_target(stock: Report, case: ModelCase, artifact: Artifact,
                 excluded: Mapping[str, str], name: str, *, export: bool = True,
                 search: bool = True, policy: Policy | None = None) -> Report:
    """The model checked with the target called `name`: its real export with that target's
    exporter, and the stock check's uses joined with that target's table (when the artifact
    measured it)."""
    opset = artifact.fingerprint.opset
    exporter = for_target(name, opset)
    real = reality(case, opset, search, policy, exporter)[0] if export else None
    view = target_view(artifact, name)
    uses = stock.capture.uses
    verdicts = () if view is None else lookup(view, uses, excluded, stock.dynamic)
    return Report(stock.name, stock.source, _slim(stock.capture), verdicts, stock.dynamic, real,
                  None, stock.fingerprint, target=name, measured=view is not None)


def _slim(c: Capture) -> Capture:
    return replace(c, program=None)

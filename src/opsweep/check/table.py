"""What the measured table says about each use: the artifact joined with a model's uses at
(operator, dtype, rank).

A use is *measured fine* only when the artifact's specs drew that operator at that dtype and
rank and every such example went all the way; *measured failing* when any of them failed
(with the stage, the error line, the smallest failing example and its repro snippet);
*not measured* when no spec covers the operator, or none drew that dtype and rank (an
artifact from before outcome counts cannot tell, so its uses are never taken for fine);
*unattributable* when the catalog excludes the operator (no spec can measure it), with the
reason. Never silently fine.

A verdict's `why` says it in the model owner's words ("untested: the table never measured
add at bfloat16 rank 4"); its `hint` is what a spec author would change to measure it
("widen add's ranks"), shown with ``--verbose``; `errors` are the error the artifact
recorded at the use's cell (schema 6), with the tolerance each was graded at. A cell the
cell covering could not measure (schema 7: refused by eager PyTorch, unsettled, below the
spec's ranks) says so, with eager's error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from opsweep.artifact.data import Artifact
from opsweep.artifact.grade import FAILS, FailureGroup
from opsweep.artifact.numerics import CellError
from opsweep.artifact.results import SpecResult
from opsweep.capture.uses import Use
from opsweep.model import DTYPE_TAGS, UNGRADED, Stage

FINE, FAILING, NOT_MEASURED, UNATTRIBUTABLE = ("measured fine", "measured failing",
                                               "not measured", "unattributable")
STATUSES = (FAILING, NOT_MEASURED, UNATTRIBUTABLE, FINE)  # most urgent first


@dataclass(frozen=True)
class Failure:
    """One way the table says a use fails: the smallest failing example of its group."""

    axis: str  # export, runtime, numerics or dynamic
    stage: str
    error: str
    spec: str
    example: str
    count: int  # failing examples of that group at the use's dtype and rank
    dynamic: bool = False


@dataclass(frozen=True)
class Verdict:
    """The table's answer for one use."""

    use: Use
    status: str
    why: str  # one line: what was measured, or why nothing was
    specs: tuple[str, ...]
    passed: int = 0  # examples of the specs at this dtype and rank that went all the way
    measured: int = 0  # graded examples at this dtype and rank
    failures: tuple[Failure, ...] = ()
    #: what a spec author would change so the table says more ("" when nothing)
    hint: str = ""
    #: the error the artifact recorded at this use's (dtype, rank) per spec: (spec, cell)
    errors: tuple[tuple[str, CellError], ...] = ()


def axis_of(stage: Stage) -> str:
    return next((axis for axis, stages in FAILS.items() if stage in stages), "numerics")


def _tag(dtype: str) -> str:
    return DTYPE_TAGS.get(dtype, dtype)


def _not_drawn(results: Sequence[SpecResult], use: Use, names: Sequence[str]) -> tuple[str, str]:
    """(why, hint) of a use that is not measured though specs cover its operator: which
    ranks its dtype was drawn at, or that the dtype never was (and what to widen)."""
    ranks = sorted({c.rank for r in results for c in r.outcomes or ()
                    if c.dtype == use.dtype and c.stage not in UNGRADED})
    here = f"the table never measured {use.op} at {use.dtype} rank {use.rank}"
    cell = f"{use.dtype} {use.rank}"
    for name, r in zip(names, results):  # the cell covering said why (schema 7)
        status, _, error = (r.cells or {}).get(cell, "").partition(": ")
        if status == "refused":
            return (f"{here}: eager PyTorch refused {name}'s example there ({error})",
                    f"{name}'s strategy draws {cell} only in a way eager refuses: draw the "
                    "arguments a model uses there")
        if status == "unsettled":
            return (f"{here}: {name}'s example rewritten to that cell was refused by eager "
                    f"PyTorch ({error})", f"let {name}'s strategy draw {_tag(use.dtype)} at "
                    f"rank {use.rank} itself")
        if status == "outside":
            return (f"{here}: rank {use.rank} is below {name}'s declared ranks, though eager "
                    "PyTorch runs it", f"widen {name}'s ranks down to {use.rank}")
    if ranks:
        at = ", ".join(map(str, ranks))
        return (f"{here} ({use.dtype} at rank {at} only)",
                f"widen {names[0]}'s ranks ({_tag(use.dtype)} drawn at rank {at})")
    return (f"{here} (never at {use.dtype})",
            f"widen the dtypes of {', '.join(names)} ({_tag(use.dtype)} never drawn)")


def _errors(results: Sequence[SpecResult], names: Sequence[str],
            use: Use) -> tuple[tuple[str, CellError], ...]:
    return tuple((name, c) for name, r in zip(names, results) for c in r.errors or ()
                 if c.dtype == use.dtype and c.rank == use.rank)


_OVERLOAD = re.compile(r"OpOverload\(op='aten\.(\w+)', overload='(\w+)'\)")


def other_overload(g: FailureGroup, use: Use) -> bool:
    """The group's error names an overload of the operator other than the one the model
    calls (a missing translation is one overload's: ``view.dtype`` is not ``view.default``).
    The artifact files results by operator, so this is the one overload-level evidence."""
    named = _OVERLOAD.search(g.error)
    # a use names a default overload without its suffix ("aten::kthvalue"), an error with it
    called = use.overload.removeprefix(f"aten::{use.op}").removeprefix(".") or "default"
    return named is not None and named.group(1) == use.op and named.group(2) != called


def _groups(result: SpecResult, use: Use, dynamic: bool) -> list[FailureGroup]:
    groups = result.dynamic_failures if dynamic else result.failures
    return [g for g in groups if g.dtype == use.dtype and g.rank == use.rank
            and g.stage is not Stage.OK and g.stage not in UNGRADED
            and not other_overload(g, use)]


def _failures(artifact: Artifact, names: Sequence[str], use: Use, dynamic: bool) -> list[Failure]:
    out = []
    for kind in (False, True) if dynamic else (False,):
        found: dict[str, tuple[FailureGroup, str]] = {}
        for name in names:
            for g in _groups(artifact.specs[name], use, kind):
                old = found.get(g.stage.value)
                if old is None or (g.size, g.example) < (old[0].size, old[0].example):
                    found[g.stage.value] = (g, name)
        for stage in sorted(found, key=lambda s: Stage(s).depth):
            g, name = found[stage]
            out.append(Failure("dynamic" if kind else axis_of(g.stage), stage, g.error, name,
                               g.example, g.count, kind))
    return out


def measuring(artifact: Artifact, op: str) -> tuple[str, ...]:
    """The specs that measure aten packet `op`: its listing row's, or (a packet the listing
    has no row for, ``_to_copy``, ``_native_batch_norm_legit_no_training``) the specs whose
    recorded arguments show they called one of its overloads as a declared packet (the
    spec's ``traces``; an overload reached only on the way, marked ``~``, is not one)."""
    result = artifact.operators.get(op)
    if result is not None:
        return tuple(result.specs)
    return tuple(sorted(name for name, r in artifact.specs.items()
                        if any(key.split(".", 1)[0] == op for key in r.arguments or ())))


def verdict(artifact: Artifact, use: Use, excluded: Mapping[str, str], dynamic: bool) -> Verdict:
    """`dynamic`: the model is exported with dynamic shapes, so the dynamic axis counts."""
    if use.op in excluded:
        return Verdict(use, UNATTRIBUTABLE,
                       f"no spec can measure it on its own: {excluded[use.op]}", ())
    names = measuring(artifact, use.op)
    if not names:
        return Verdict(use, NOT_MEASURED, f"the table measures no aten::{use.op} at all", (),
                       hint=f"add a spec of aten::{use.op} to the catalog "
                       "(docs/adding_specs.md)")
    results = [artifact.specs[n] for n in names]
    if any(r.outcomes is None for r in results):
        return Verdict(use, NOT_MEASURED, "the table predates counts per dtype and rank "
                       "(schema 5): it cannot tell", names, hint="measure again to tell drawn from "
                       "not drawn")
    graded = [c for r in results for c in r.outcomes or ()
              if c.dtype == use.dtype and c.rank == use.rank and c.stage not in UNGRADED]
    # failing examples of another overload (named by their error) are not this use's
    elsewhere = sum(g.count for r in results for g in r.failures if g.dtype == use.dtype
                    and g.rank == use.rank and other_overload(g, use))
    measured = sum(c.count for c in graded) - elsewhere
    passed = sum(c.count for c in graded if c.stage is Stage.OK)
    if not measured:
        why, hint = _not_drawn(results, use, names)
        return Verdict(use, NOT_MEASURED, why, names, hint=hint)
    failures = tuple(_failures(artifact, names, use, dynamic))
    status = FAILING if passed < measured or failures else FINE
    where = f"{passed}/{measured} examples of {use.op} at {use.dtype} rank {use.rank} passed"
    return Verdict(use, status, where, names, passed, measured, failures,
                   errors=_errors(results, names, use))


def lookup(artifact: Artifact, uses: Iterable[Use], excluded: Mapping[str, str],
           dynamic: bool = False) -> tuple[Verdict, ...]:
    return tuple(verdict(artifact, u, excluded, dynamic) for u in uses)

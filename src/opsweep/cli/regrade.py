"""`opsweep regrade --policy FILE`: an artifact re-graded at another tolerance policy from
its recorded error, without measuring (no export, no worker, no torch import), and what
moved said per spec and target.

Exit 0 when the re-graded artifact was written, 2 for bad input (an artifact or policy
file that is not one, an artifact measured before the error was recorded, or graded under
a policy neither given nor known), with one line naming the file and the field.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from opsweep.artifact import data as art
from opsweep.artifact.regrading import regrade_artifact
from opsweep.cli.exits import EXIT_OK
from opsweep.cli.invocation import Invocation
from opsweep.cli.settings import policy_file, project
from opsweep.errors import DataFileError, UsageError
from opsweep.files import DEFAULT, Layout
from opsweep.policy import Policy, builtin
from opsweep.policy import read as read_policy

HELP = """\
Re-grade every numerics result of an artifact at another tolerance policy from the error
the sweep recorded per (dtype, rank) cell, without measuring again, and say what moved:
  `softmax` stock numerics full -> partial (float16 rank 3: 1/5 examples fail at
  rtol=0.01 atol=0.0005 (were 0); max error 0.0012, 9 ULP)
The artifact must name the policy that graded it (schema 6 and later) and that policy must
be opsweep's own, the project's [tool.opsweep] tolerance-policy, or --measured-with FILE.
Examples the record cannot decide (a smaller rtol) keep their verdict and are counted.
docs/tolerances.md describes the policy, the recorded error and re-grading."""


def add_parser(sub) -> None:
    p = sub.add_parser("regrade", help="re-grade an artifact's numerics at another tolerance "
                       "policy from the recorded error, without measuring",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--policy", type=Path, required=True, metavar="FILE",
                   help="the tolerance policy to grade at (docs/tolerances.md)")
    p.add_argument("--artifact", type=Path, default=None,
                   help=f"the measured artifact (default: [tool.opsweep] artifact, else "
                        f"{DEFAULT.artifact})")
    p.add_argument("--out", type=Path, default=None,
                   help="where the re-graded artifact goes (default: over --artifact)")
    p.add_argument("--measured-with", type=Path, default=None, metavar="FILE",
                   help="the policy file that graded the artifact, when it is neither "
                        "opsweep's own nor the project's")
    p.add_argument("--pyproject", type=Path, default=Path(DEFAULT.pyproject),
                   help="where [tool.opsweep] is read from")


def _known(args) -> dict[str, Policy]:
    """The policies an artifact may have been graded under, by label."""
    configured = project(args.pyproject.parent).tolerance_policy
    known = [builtin()]
    for path in (policy_file(configured), str(args.measured_with or "")):
        if path:
            known.append(read_policy(str(Path(path).resolve())))
    return {p.label: p for p in known}


def cmd_regrade(invocation: Invocation) -> int:
    args = invocation.options
    try:
        return _regrade(args)
    except DataFileError as exc:  # a file that is not what it should be: bad input
        raise UsageError(str(exc)) from None


def _regrade(args) -> int:
    policy = read_policy(str(args.policy.resolve()))
    path = args.artifact or Path(args.pyproject.parent,
                                 Layout.of(project(args.pyproject.parent)).artifact)
    artifact = art.load(path)
    if not artifact.policy:
        raise DataFileError(path, "policy", "names no tolerance policy: measured before the "
                            "error was recorded (schema 6); re-measure it (opsweep sweep) "
                            "before re-grading")
    known = _known(args)
    measured = known.get(artifact.policy)
    if measured is None:
        raise UsageError(f"{path} at policy: graded under {artifact.policy!r}, which is "
                         f"neither opsweep's own nor the project's: give its file with "
                         "--measured-with FILE")
    done = regrade_artifact(artifact, measured, policy)
    out = args.out or path
    art.save(out, done.artifact)
    for move in done.moves:
        print(move.line())
    print(f"opsweep: re-graded {path} from {measured.label} to {policy.label} without "
          f"measuring: {len(done.grade_moves)} numerics grades moved, "
          f"{len(done.moves) - len(done.grade_moves)} specs' failing examples changed "
          f"beside; wrote {out}")
    if done.unsure:
        print(f"opsweep: {done.unsure} examples cannot be decided from the recorded error "
              "(a smaller rtol): they keep their verdict; measure again to decide them")
    if done.unrecorded:
        print(f"opsweep: {done.unrecorded} numerics results carry no recorded error: "
              "kept as graded")
    return EXIT_OK

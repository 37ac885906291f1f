"""`opsweep tables`: write the cell table `opsweep check` ships with, from an artifact.

Exit 0 when the table was written (and reads back as the same join), 2 for bad input (an
artifact that cannot be read, a shard's, one of a pin set that broke the exporter), with
one line naming it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import opsweep
from opsweep import config
from opsweep.artifact import data as art
from opsweep.artifact import tables
from opsweep.cli.exits import EXIT_OK
from opsweep.cli.invocation import Invocation
from opsweep.errors import DataFileError, UsageError
from opsweep.files import DEFAULT

HELP = """\
Write the cell table of an artifact: what `opsweep check` joins a model's operators on
(per spec its counts per dtype, rank and stage, its failure groups with their smallest
example, its cells and recorded error; the fingerprint and the tolerance policy), without
what the check never reads (the other targets, the arguments the draws reached),
gzip-compressed, as OUT/torch-<version>.json.gz. In opsweep's checkout OUT defaults to
src/opsweep/data/tables, which the wheel ships: `opsweep check` with no artifact of the
project's own then uses the table of the installed torch (or the nearest measured one),
and `--against VERSION` any packaged one. The same artifact always gives the same bytes.

example (after a re-measure, in opsweep's checkout):
  opsweep tables docs/onnx_support_measured.json"""


def add_parser(sub) -> None:
    p = sub.add_parser("tables", help="write the compact cell table `opsweep check` ships "
                       "with, from an artifact", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("artifact", type=Path, nargs="?", default=None, metavar="ARTIFACT",
                   help=f"the measured artifact (default: [tool.opsweep] artifact, else "
                        f"{DEFAULT.artifact})")
    p.add_argument("--out", type=Path, default=tables.PACKAGED, metavar="DIR",
                   help="the directory the table is written into (default: this opsweep's "
                        "packaged tables, src/opsweep/data/tables in a checkout)")
    p.add_argument("--history", type=Path, default=None, metavar="DIR",
                   help="where the history records are, to name the opsweep that measured "
                        "the artifact (default: [tool.opsweep] history-dir, and the "
                        "artifact's sibling history/)")
    p.add_argument("--pyproject", type=Path, default=Path(DEFAULT.pyproject),
                   help="where [tool.opsweep] is read from")


def cmd_tables(invocation: Invocation) -> int:
    from opsweep.check.stack import measured_by  # names the opsweep from a history record
    args = invocation.options
    project = config.load(args.pyproject)
    path = args.artifact or args.pyproject.parent / project.artifact
    try:
        artifact = art.load(path)
    except DataFileError as exc:
        raise UsageError(f"opsweep tables: {exc}") from None
    records = [args.history] if args.history else [
        args.pyproject.parent / project.history_dir, Path(path).parent / "history"]
    try:
        written = tables.write(artifact, args.out, opsweep.__version__,
                               measured_by(artifact, records))
    except ValueError as exc:
        raise UsageError(f"opsweep tables {path}: {exc}") from None
    table = tables.load(written)  # what the check will read: it must read back
    about = tables.summary(table)
    print(f"wrote {written}: torch {about['torch']}, {about['specs']} specs, "
          f"{about['operators']} operators, {written.stat().st_size} bytes (the artifact: "
          f"{Path(path).stat().st_size} bytes); measured by opsweep "
          f"{about['measured_by'] or '(not recorded)'}, written by opsweep {about['opsweep']}")
    return EXIT_OK

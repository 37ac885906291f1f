"""`python -m opsweep`: the command line."""

from opsweep.cli import run

run()

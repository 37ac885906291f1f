"""`python -m opsweep`: the command line."""

import sys

from opsweep.cli import main

sys.exit(main())

"""The commit this opsweep was released from, recorded by the release workflow in the
source tree it builds the wheel and the sdist from (``python -m opsweep._release SHA``, run
at the root of the checkout of the release's tag): ``opsweep init`` pins the privileged
callers (onnx-publish, onnx-bump) to it. A commit cannot hold its own SHA, so the record
exists only in a release's built files; a checkout and any other build record nothing
(init then asks for ``--action-sha``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

COMMIT = ""  # the release tag's 40-hex commit
VERSION = ""  # the opsweep version it was recorded for (a record of another one is stale)


def record(path: Path, commit: str, version: str) -> None:
    """Write `commit` and `version` into the module file at `path` (this file's copy in the
    tree a release is built from)."""
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ValueError(f"expected a full 40-hex commit SHA, got {commit!r}")
    text = Path(path).read_text("utf-8")
    text = re.sub(r'^COMMIT = "[^"]*"', f'COMMIT = "{commit}"', text, count=1, flags=re.M)
    text = re.sub(r'^VERSION = "[^"]*"', f'VERSION = "{version}"', text, count=1, flags=re.M)
    Path(path).write_text(text, "utf-8")


if __name__ == "__main__":  # python -m opsweep._release SHA (from the checkout's root)
    from opsweep import __version__
    record(Path("src/opsweep/_release.py"), sys.argv[1], __version__)

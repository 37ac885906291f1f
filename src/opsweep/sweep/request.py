"""What to regenerate, and from what."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opsweep.files import DEFAULT


@dataclass(frozen=True)
class Request:
    """What to regenerate, and from what."""

    only: tuple[str, ...] = ()
    out: Path = Path(DEFAULT.artifact)
    previous: Path | None = None  # default: the artifact at `out`, if any
    no_reuse: bool = False
    shard: tuple[int, int] | None = None

    @property
    def previous_path(self) -> Path:
        """Where the previous artifact is read from."""
        return self.previous or self.out

"""The phase protocol: where a worker is in a group, written as it goes and read back
when the worker dies or times out, so the group's unfinished examples are filed at the
stage the worker had reached.

The measuring code (:mod:`opsweep.engine.runner`, :mod:`opsweep.engine.group`) says each step
as a :class:`Reached`; :mod:`opsweep.engine.pool` writes it to the group's phase file
and parses it back. The text form, ``target|step`` with ``dynamic-`` before the
step of the re-export with the leading dimension dynamic, exists only here.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from opsweep.model import Stage

#: What the text form puts before a step of the dynamic re-export.
DYNAMIC_PREFIX = "dynamic-"
_SEPARATOR = "|"


class Step(str, enum.Enum):
    """One step of measuring a group, in order."""

    REFERENCE = "reference"  # PyTorch's own outputs
    EXPORT = "export"
    CHECKER = "checker"
    RUNTIME = "runtime"  # loading the session, or running it
    NUMERICS = "numerics"

    @property
    def crash_stage(self) -> Stage:
        """Where an example lands when its worker is lost during this step."""
        return _CRASH_STAGE[self]


_CRASH_STAGE = {Step.REFERENCE: Stage.LOST, Step.EXPORT: Stage.RAW_ERROR,
                Step.CHECKER: Stage.CHECKER, Step.RUNTIME: Stage.RUNTIME,
                Step.NUMERICS: Stage.NUMERICS}


@dataclass(frozen=True)
class Reached:
    """A step of one target's static export or of its dynamic re-export."""

    step: Step
    dynamic: bool = False
    target: str = ""  # set by engine.group, which knows whose exporter is running

    @property
    def label(self) -> str:
        """As an error line says it: ``export``, ``dynamic-export``."""
        return (DYNAMIC_PREFIX if self.dynamic else "") + self.step.value

    def encode(self) -> str:
        return f"{self.target}{_SEPARATOR}{self.label}"

    @classmethod
    def decode(cls, text: str) -> Reached:
        """The inverse of :meth:`encode`; an empty text (nothing written yet) is the start.
        Raises ValueError for a text no worker writes."""
        target, _, label = text.strip().rpartition(_SEPARATOR)
        if not label:  # the file is truncated when a worker opens it to write
            return START
        dynamic = label.startswith(DYNAMIC_PREFIX)
        return cls(Step(label.removeprefix(DYNAMIC_PREFIX)), dynamic, target)


def label_of(text: str) -> str:
    """The step's label in a phase text, even one :meth:`Reached.decode` refuses."""
    return text.strip().rpartition(_SEPARATOR)[2]


#: Where a group starts: a worker lost before writing any phase was computing references.
START = Reached(Step.REFERENCE)

#: What the measuring code calls before each step.
Phase = Callable[[Reached], None]


def ignore(_reached: Reached) -> None:
    """A phase callback for measuring in this process, where nothing reads it back."""


#: Beside a group's phase file: the outcomes of the targets that had finished (`static_file`).
_STATIC_SUFFIX = ".static"


def static_file(phase_file: Path) -> Path:
    """Where a worker saves the outcomes of the targets it had finished, beside its phase
    file (read back by the pool when the worker is lost)."""
    return phase_file.with_name(phase_file.name + _STATIC_SUFFIX)

"""What a command receives: its parsed options, read-only, and the environment it runs in.

`opsweep.cli.main` parses the command line once into `Options`, which refuse assignment,
reads the environment once (`Settings`) and hands each command one `Invocation`. A value a
command derives from its options (a default taken from the project or the environment) is
its own local value, passed on explicitly; it is never written back into the options.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opsweep.cli.settings import Settings


class ReadOnlyOptions(AttributeError):
    """A step tried to assign to (or delete) a parsed option."""


class Options(argparse.Namespace):
    """The parsed command line, as argparse's namespace reads (``options.out``), sealed
    when made: assigning or deleting an attribute raises `ReadOnlyOptions`. Its attributes
    are the command's argparse destinations (``Any`` to the type checker)."""

    __slots__ = ("_sealed",)

    def __init__(self, **values: Any) -> None:
        super().__init__(**values)
        object.__setattr__(self, "_sealed", True)

    def replace(self, **changes: Any) -> Options:
        """New options: these, with `changes` (names argparse parsed) in place."""
        unknown = sorted(set(changes) - set(vars(self)))
        if unknown:
            raise TypeError(f"no such option to replace: {', '.join(unknown)}")
        return Options(**{**vars(self), **changes})

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False):
            raise ReadOnlyOptions(
                f"the parsed options are read-only: cannot set {name!r}; a command keeps a "
                "value it derives as its own (opsweep.cli.invocation)")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        raise ReadOnlyOptions(f"the parsed options are read-only: cannot delete {name!r}")


@dataclass(frozen=True)
class Invocation:
    """One run of one command: what the command line said, the environment it runs in
    (read once), and the entry point a step uses to run another command (``bot sweep``
    runs ``opsweep sweep`` so, not by importing the command line's main module)."""

    options: Options
    settings: Settings
    main: Callable[[list[str]], int]


#: what every command (a ``cmd_*`` function, or the ``run`` a subcommand's parser sets) is
Command = Callable[[Invocation], int]

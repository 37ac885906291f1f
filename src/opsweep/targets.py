"""Targets: what a sweep measures with, one `Target` value each, and the one table of what
each kind of target does (`KINDS`).

A target is the stock dynamo exporter, the dynamo exporter with one custom translation
table (``--translations MODULE:TABLE``), the TorchScript exporter (``--torchscript``:
``torch.onnx.export(..., dynamo=False)``), or the dynamo exporter at another opset than the
sweep's (``--opset N``: ``opset_version=N``). Everywhere results are stored (the artifact,
the journal, the run log) a target is written by its name: `STOCK`, the table's
``MODULE:TABLE``, `TORCHSCRIPT`, or ``opsetN``; `of_name` reads one back.

This module is the only one that decides anything by a target's name (the layout test
holds every other one to it): the others ask the target's kind, or its row of `KINDS`.
It is torch-free and imports only the standard library and `opsweep.model` (itself
stdlib-only), so every stage can use it.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

# the names of the stock target and the TorchScript exporter's: defined in opsweep.model,
# whose bytes are part of every spec's digest (sweep.reuse.spec_digest: moving them would
# re-measure the whole catalog), and decided by here only
from opsweep.model import STOCK, TORCHSCRIPT


class Kind(str, enum.Enum):
    """What a target measures with."""

    STOCK = "stock"  # the dynamo exporter as it ships
    TABLE = "table"  # the dynamo exporter with a custom translation table
    TORCHSCRIPT = "torchscript"  # the TorchScript exporter (dynamo=False)
    OPSET = "opset"  # the dynamo exporter at another opset (opset_version=N)


@dataclass(frozen=True)
class Behaviour:
    """What a kind of target does, where the stages differ by kind."""

    #: a release may not have it: the canary failing through it records the target absent
    #: for the pin set instead of breaking the sweep
    optional: bool
    #: which exporter's packages key its entries in the export cache (engine.cache)
    exporter: str
    #: the reproduction snippets' call: ``dynamo=True`` or ``dynamo=False``
    dynamo: bool
    #: how a page's column and a note name the target ("" : by its name; ``{opset}`` stands
    #: for the target's opset)
    label: str
    #: whether results are stored as what differs from the stock target's
    stock: bool = False


#: Each kind's behaviour: the one place a stage learns how targets differ.
KINDS: Mapping[Kind, Behaviour] = MappingProxyType({
    Kind.STOCK: Behaviour(optional=False, exporter="dynamo", dynamo=True,
                          label="stock exporter", stock=True),
    Kind.TABLE: Behaviour(optional=False, exporter="dynamo", dynamo=True, label=""),
    Kind.TORCHSCRIPT: Behaviour(optional=True, exporter="torchscript", dynamo=False, label=""),
    # optional: a pin set whose exporter cannot reach the opset (the canary's x + y does not
    # come out at it) records the target absent
    Kind.OPSET: Behaviour(optional=True, exporter="dynamo", dynamo=True, label="opset {opset}"),
})

#: how an opset target's name is written: ``opset`` and the opset
_OPSET_NAME = re.compile(r"opset([1-9][0-9]{0,2})")


@dataclass(frozen=True)
class Target:
    """One target: its kind and its parameters (the table's ``MODULE:TABLE`` for a table
    target; the opset: an opset target's, None for the sweep's)."""

    kind: Kind = Kind.STOCK
    table: str = ""
    opset: int | None = None

    @property
    def name(self) -> str:
        """How results name it: `STOCK`, ``MODULE:TABLE``, `TORCHSCRIPT` or ``opsetN``."""
        if self.kind is Kind.TABLE:
            return self.table
        if self.kind is Kind.OPSET:
            return f"opset{self.opset}"
        return STOCK if self.kind is Kind.STOCK else TORCHSCRIPT

    @property
    def behaviour(self) -> Behaviour:
        return KINDS[self.kind]

    @property
    def is_stock(self) -> bool:
        return self.kind is Kind.STOCK

    @property
    def label(self) -> str:
        """How a page names it: the kind's label, else its name."""
        return self.behaviour.label.format(opset=self.opset) or self.name

    @property
    def short(self) -> str:
        """How progress lines name it: `""` for the stock exporter, else the table's name
        without its module (``torchscript`` for the TorchScript exporter, ``opsetN`` for an
        opset target)."""
        return "" if self.is_stock else self.name.rpartition(":")[2]


STOCK_TARGET = Target()
TORCHSCRIPT_TARGET = Target(Kind.TORCHSCRIPT)


def of_name(name: str) -> Target:
    """The target a stored name stands for (a name neither `STOCK`, `TORCHSCRIPT` nor
    ``opsetN`` is a table's ``MODULE:TABLE``, which always holds a colon)."""
    if name == STOCK:
        return STOCK_TARGET
    if name == TORCHSCRIPT:
        return TORCHSCRIPT_TARGET
    opset = _OPSET_NAME.fullmatch(name)
    if opset is not None:
        return Target(Kind.OPSET, opset=int(opset.group(1)))
    return Target(Kind.TABLE, name)


def is_stock(name: str) -> bool:
    """Whether `name` names the stock target."""
    return of_name(name).is_stock


def behaviour(name: str) -> Behaviour:
    """The behaviour of the target called `name`."""
    return of_name(name).behaviour


def label(name: str) -> str:
    """How a page names the target called `name`."""
    return of_name(name).label


def short(name: str) -> str:
    """How progress lines name the target called `name`."""
    return of_name(name).short


def unless_stock(name: str) -> str:
    """How snippets and notes name a target: `""` for the stock one, else its name."""
    return "" if is_stock(name) else name


def stock_first(name: str) -> tuple[bool, str]:
    """Sort key: the stock target first, then the others by name."""
    return (not is_stock(name), name)


def opset_of(name: str) -> int | None:
    """The opset the target called `name` exports at, when it is an opset target."""
    target = of_name(name)
    return target.opset if target.kind is Kind.OPSET else None


def reached_check(opset: int, model: str) -> tuple[str, str]:
    """Python checking that the model `model` (an expression) is at `opset`, as an opset
    target's exporter checks it (engine.opsets.reached: the exporter keeps its own opset
    where it cannot convert): two statements, for the snippets."""
    return (f"opset = next(o.version for o in {model}.opset_import if o.domain in ('', 'ai.onnx'))",
            f"assert opset == {opset}, f'the model stayed at opset {{opset}}, not converted to {opset}'")


def configured(translations: Iterable[str] = (), torchscript: bool = False,
               opsets: Iterable[int] = ()) -> tuple[Target, ...]:
    """A sweep's targets, from its configuration: the stock one, one per translation table
    (each ``MODULE:TABLE`` once, in order), with `torchscript` the TorchScript one, then one
    per opset of `opsets` (each once, lowest first)."""
    tables = tuple(dict.fromkeys(translations))
    return (STOCK_TARGET, *(Target(Kind.TABLE, t) for t in tables),
            *((TORCHSCRIPT_TARGET,) if torchscript else ()),
            *(Target(Kind.OPSET, opset=n) for n in sorted(set(opsets))))

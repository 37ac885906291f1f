"""The view models the page templates see: never raw JSON, always these frozen rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from opsweep.artifact.data import STOCK
from opsweep.page.detail import OperatorDetail
from opsweep.page.dtypes import STAGE_LEGEND, MatrixRow
from opsweep.page.glyphs import LEGEND
from opsweep.page.grid import LEGEND as GRID_LEGEND


@dataclass(frozen=True)
class Bar:
    label: str
    numerator: int
    denominator: int

    @property
    def percent(self) -> float:
        return round(100.0 * self.numerator / self.denominator, 1) if self.denominator else 0.0


@dataclass(frozen=True)
class RowView:
    name: str
    url: str
    aliases: tuple[str, ...]
    alias_of: str
    inplace: bool
    core: bool
    export: str
    runtime: str
    numerics: str
    dynamic: str
    documented: str
    registered: str
    coverage: str
    failures: tuple[str, ...]
    confirmed: bool  # measured full
    targets: tuple[str, ...] = ()  # one cell per custom-translation target
    #: four grade letters per target (stock first), "" where not measured: the filters' data
    codes: tuple[str, ...] = ()
    changed: tuple[bool, ...] = ()  # per target: grades differ across the last recorded bump
    failing_classes: tuple[str, ...] = ()  # dtype classes with a failing example (stock)
    #: per dtype class with a failing example (stock, static), the ranks it fails at
    #: (view.failing_at): the "Failing at" filter's rank data
    failing_ranks: tuple[tuple[str, tuple[int, ...]], ...] = ()
    #: the first recorded point from which export (stock) has stayed full; "" when not full
    full_since: str = ""
    #: that point's torch release alone ("" when not full)
    full_since_torch: str = ""
    #: the largest error in ULP among its stock cells within tolerance (None: none counted)
    ulp: int | None = None


@dataclass(frozen=True)
class AbsentRow:
    """A spec the measured torch does not have: listed with why, never graded."""

    spec: str
    ops: tuple[str, ...]
    reason: str
    removed_in: str  # the first recorded point without it, "" when no record says


@dataclass(frozen=True)
class ChangedRow:
    name: str
    stock: str  # the four glyphs, export/runtime/numerics/dynamic
    target: str


@dataclass(frozen=True)
class TargetView:
    """A custom-translation target, beside the stock exporter."""

    name: str
    label: str  # the table's name, for column headers
    module: str
    digest: str
    overrides: tuple[str, ...]
    bar: Bar  # listing rows measured full with the table
    changed: tuple[ChangedRow, ...]  # rows whose grades differ from the stock exporter's
    closed_gaps: tuple[str, ...]  # known-gap notes the table closes, as measured
    #: another exporter's target (torchscript, an opset): what it is, instead of a table's source
    exporter: str = ""
    kind: str = "table"  # its opsweep.targets.Kind: "table", "torchscript" or "opset"

    @property
    def called(self) -> str:
        """How the support page's introduction names it."""
        if self.kind == "opset":
            return f"the dynamo exporter at {self.label}"
        return "the TorchScript exporter" if self.exporter else f"the translation table `{self.label}`"


@dataclass(frozen=True)
class PageView:
    torch_version: str
    listing_version: str
    report: bool
    fingerprint: Mapping[str, str]
    profile: str
    examples: int
    documented_source: str
    bars: tuple[Bar, Bar]
    measured: int
    measured_full: int
    rows: tuple[RowView, ...]
    excluded: tuple[tuple[str, str], ...]
    claimed_unconfirmed: tuple[RowView, ...]
    confirmed_unclaimed: tuple[RowView, ...]
    targets: tuple[TargetView, ...] = ()
    legend: tuple[tuple[str, str, str], ...] = LEGEND
    target_names: tuple[str, ...] = (STOCK,)
    bump: tuple[str, str] | None = None  # (old, new) torch versions of the last recorded bump
    absent: tuple[AbsentRow, ...] = ()  # specs the measured torch does not have
    dtype_rows: tuple[MatrixRow, ...] = ()
    rank_rows: tuple[MatrixRow, ...] = ()
    details: tuple[OperatorDetail, ...] = ()
    stages: tuple[tuple[str, str, str], ...] = STAGE_LEGEND  # the dtype matrix's legend
    #: the ranks the "Failing at" filter offers: every rank some operator fails at (stock)
    ranks: tuple[int, ...] = ()
    #: the dtype × rank grid's legend beyond the stages: (state, its text, what it means)
    grid_legend: tuple[tuple[str, str, str], ...] = GRID_LEGEND

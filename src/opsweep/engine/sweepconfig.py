"""How a sweep measures: the user's settings (`SweepConfig`) and the engine's shortcuts
(`Tuning`), which only the benchmarks switch off to rebuild older engines side by side."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from opsweep.targets import STOCK_TARGET, Target

if TYPE_CHECKING:
    from opsweep.catalog.draw import Profile


#: `SweepConfig.recycle`'s default (measured side by side in benchmarks/bench_workers.py;
#: docs/performance.md)
RECYCLE = 250


@dataclass(frozen=True)
class Tuning:
    """The engine's shortcuts, each proven to give the outcomes of the route it avoids. All
    are on in every sweep; `benchmarks/` turns them off to measure the engines before them.

    `shortcut`: a custom target takes the stock outcome wherever its table cannot change it
    (engine.group.run_targets). `skip`: the fast path skips a decomposition that must give
    back the program it was given (fastpath.decomposes_to_itself). `single`: it traces a
    module once, straight to the decomposed graph, where the last export of its kind was
    re-traced (fastpath.FastExporter.export). `traces`: record a Python stack trace per
    traced node, as the public call does (only the model's metadata holds them).
    `phases_in_memory`: workers write their phase files under a memory-backed directory
    where the system has one (engine.pool.phase_root). `arguments`: record the schema
    arguments each group reaches (engine.arguments; not a shortcut: off, the artifact
    loses its argument columns, so only benchmarks/bench_torchscript.py turns it off to
    price it)."""

    shortcut: bool = True
    skip: bool = True
    single: bool = True
    traces: bool = False
    phases_in_memory: bool = True
    arguments: bool = True


@dataclass(frozen=True)
class SweepConfig:
    """How to measure, as the user chose it."""

    profile: Profile
    jobs: int = 2  # 0: run in this process (no isolation; for debugging)
    timeout: float = 180.0  # seconds for one export (plus pool.PER_RUN_SECONDS per example)
    spec_dirs: tuple[Path, ...] = ()
    #: the built-in catalog: all of it (True), none (False), or the specs of these
    #: operators ([tool.opsweep] catalog = "used"); the workers load the same
    builtin: bool | tuple[str, ...] = True
    fast: bool = True  # use the fast path when this torch has the internals it needs
    #: what the sweep measures with, the stock target first (opsweep.targets.configured)
    targets: tuple[Target, ...] = (STOCK_TARGET,)
    dynamic: bool = True  # re-export what exported with the leading dimension dynamic
    verbose: bool = False  # let the exporter's and onnxruntime's own logging through
    #: groups a worker measures before a fresh one replaces it (0: never). torch keeps
    #: something of every export alive (generated code, shape environments), so a worker
    #: grows and its garbage collections slow down; a fresh one starts from its set-up.
    recycle: int = RECYCLE
    #: workers are forks of one process that made their set-up once (engine.forkserver,
    #: where the platform has it); False: each worker is spawned and sets itself up
    preload: bool = True
    tuning: Tuning = field(default_factory=Tuning)
    #: the export cache's directory (engine.cache): exports, and their outcomes up to the
    #: checker, are looked up there and kept; None: every group is exported
    cache: Path | None = None
    #: the tolerance policy's file numerics are compared at (opsweep.policy; "": the
    #: built-in one, opsweep/data/tolerance_policy.json)
    policy: str = ""

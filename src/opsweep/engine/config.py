"""A sweep's inputs: how to measure (`SweepConfig`) and what to regenerate (`Request`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opsweep.catalog.draw import Profile


#: `SweepConfig.recycle`'s default (benchmarks/bench_workers.py --stride 12 --rounds 2
#: --settings fork:1000 fork:250, torch 2.15.0: 81.4/91.0 s against 78.2/84.4 s, the largest
#: worker 645 against 600 MiB resident; torch 2.13.0 CPU build: 500 against 449 MiB)
RECYCLE = 250


@dataclass(frozen=True)
class FastOptions:
    """Which of the fast path's shortcuts an exporter (fastpath.FastExporter) takes, as
    SweepConfig asks for them (`SweepConfig.fast_options`): `skip` a decomposition that must
    give back the program it was given (fastpath.decomposes_to_itself;
    SweepConfig.skip_decomposition), trace a module a `single` time where the last export of
    its kind was re-traced (fastpath._traced_once; SweepConfig.single_trace), record stack
    `traces` per traced node (fastpath._stack_traces; SweepConfig.stack_traces). The
    defaults are the sweep's."""

    skip: bool = True
    single: bool = True
    traces: bool = False


@dataclass(frozen=True)
class SweepConfig:
    profile: Profile
    jobs: int = 2  # 0: run in this process (no isolation; for debugging)
    timeout: float = 180.0  # seconds for one export (plus isolation.PER_RUN_SECONDS per example)
    spec_dirs: tuple[Path, ...] = ()
    fast: bool = True  # use the fast path when this torch has the internals it needs
    translations: tuple[str, ...] = ()  # MODULE:TABLE of each custom-translation target
    dynamic: bool = True  # re-export what exported with the leading dimension dynamic
    verbose: bool = False  # let the exporter's and onnxruntime's own logging through
    #: a custom target takes the stock outcome wherever its table cannot change it
    #: (False: every target measured in full, the previous engine)
    shortcut: bool = True
    #: the fast path skips a decomposition that must give back the program it was given
    #: (fastpath.decomposes_to_itself; False: every program decomposed, the previous engine)
    skip_decomposition: bool = True
    #: the fast path traces a module once, straight to the decomposed graph, where the last
    #: export of its kind was re-traced by the decomposition (FastExporter.export; False:
    #: every module captured, then decomposed, the previous engine)
    single_trace: bool = True
    #: the fast path's traces record no Python stack trace per graph node (torch's own
    #: ``torch.fx.config.do_not_emit_stack_traces``): the exporter copies them only into
    #: the model's ``pkg.torch.onnx.stack_trace`` metadata, which no check reads, and taking
    #: them was ~5% of a worker's profile (1.02x side by side in bench_sweep); True: recorded
    #: as the public call does (the previous engine)
    stack_traces: bool = False
    #: groups a worker measures before a fresh one replaces it (0: never). torch keeps
    #: something of every export alive (generated code, shape environments), so a worker
    #: grows and its garbage collections slow down; a fresh one starts from its set-up.
    recycle: int = RECYCLE
    #: workers are forks of one process that made their set-up once (opsweep.engine.forkserver,
    #: where the platform has it); False: each worker is spawned and sets itself up
    preload: bool = True
    #: workers write where they are in a group (the phase protocol, opsweep.engine.phase) under a
    #: memory-backed directory where the system has one (isolation.phase_root): a phase
    #: file is rewritten some twenty times a group, and on a disk file system each rewrite
    #: cost ~0.35 ms of wall time here (~0.02 ms in memory); False: the system's temporary
    #: directory (the previous engine)
    phases_in_memory: bool = True

    @property
    def fast_options(self) -> FastOptions:
        """The fast path's shortcuts this sweep takes, as its exporters receive them."""
        return FastOptions(self.skip_decomposition, self.single_trace, self.stack_traces)

    @property
    def exporter_path(self) -> str:
        from opsweep.engine.adapter import PUBLIC_PATH
        from opsweep.engine.fastpath import FAST_PATH, fast_path_available
        return FAST_PATH if self.fast and fast_path_available() else PUBLIC_PATH


@dataclass(frozen=True)
class Request:
    """What to regenerate, and from what."""

    only: tuple[str, ...] = ()
    out: Path = Path("docs/onnx_support_measured.json")
    previous: Path | None = None  # default: the artifact at `out`, if any
    no_reuse: bool = False
    shard: tuple[int, int] | None = None

    @property
    def previous_path(self) -> Path:
        """Where the previous artifact is read from."""
        return self.previous or self.out

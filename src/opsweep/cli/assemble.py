"""The post-sweep sequence as both commands run it (`opsweep assemble`, `opsweep bot
assemble`): the library's `page.site.regenerate`, handed what it needs from the installed
stack. Imported where those commands run, beside torch; the bot's own job never does."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opsweep.artifact import models_history
from opsweep.artifact.checked import part_name, shard_models
from opsweep.artifact.data import Artifact
from opsweep.catalog.installed import gather
from opsweep.catalog.load import load_catalog
from opsweep.cli.settings import check_targets, models, repo_url, source_url
from opsweep.engine.standalone import Scripts
from opsweep.errors import DataFileError, UsageError
from opsweep.files import Layout, write_atomic
from opsweep.policy import builtin
from opsweep.page.site import Regenerated, regenerate, render_models


def page_draws(cache: Path | None):
    """What the pages' snippets draw a spec's examples with: the sweep's draws kept in the
    export cache at `cache` (drawing the whole catalog anew was most of a render), or None
    (drawn anew) without one: a render never creates a cache."""
    if cache is None or not cache.is_dir():
        return None
    from opsweep.sweep.driver import cached_draws  # hypothesis, the engine
    from opsweep.sweep.reuse import spec_digest  # (its digest: the spec's source)
    return lambda spec, profile: cached_draws(spec, spec_digest(spec), profile, cache)


def regenerate_site(root: Path, layout: Layout, new: Artifact,
                    specs: Sequence[Path] = (), *,
                    builtin: bool | tuple[str, ...] = True,
                    cache: Path | None = None) -> Regenerated:
    """The post-sweep sequence (page.site.regenerate) with what it needs from the installed
    stack: the catalog (with the spec directories `specs`), the listing, the registry, the
    documentation links; the snippets' examples from the export cache at `cache`."""
    here = layout.under(root)
    installed = gather(Path(here.data_dir), new.fingerprint.opset)
    catalog = load_catalog(specs, check_draws=False, builtin=builtin)
    return regenerate(root, layout, new, catalog, installed,
                      source_url=source_url(None, Path(here.pyproject)),
                      repo_url=repo_url(Path(here.pyproject)),
                      scripts=Scripts(catalog, new.profile, page_draws(cache)).for_example)


@dataclass(frozen=True)
class ModelsChecked:
    """The main command's models step: the record written (relative to the project's
    root), how many models were checked and how many reused from the committed record."""

    path: str
    checked: int
    reused: int
    rejoined: int = 0  # of the reused: joined with a table re-measured at unchanged pins
    history: str = ""  # the pin set's models history record written (relative to the root)
    sharded: int = 0  # of the reused: checked by the run's shard jobs (bot sweep)

    def line(self) -> str:
        again = f", {self.rejoined} of them joined with the re-measured table again" \
            if self.rejoined else ""
        shards = f", {self.sharded} of them checked by the shard jobs" if self.sharded else ""
        kept = f"; its pin set's verdicts in {self.history}" if self.history else ""
        return (f"wrote {self.path} ([tool.opsweep] models against the artifact: "
                f"{self.checked} checked, {self.reused} reused by fingerprint{shards}{again}"
                f"{kept})")


def _workers(jobs: int | None) -> int:
    """How many models are checked at a time: `jobs`, else the CPU count, at least two."""
    return max(2, os.cpu_count() or 1) if jobs is None else jobs


def _targets(root: Path, layout: Layout, artifact: Artifact) -> tuple[str, ...]:
    """The other targets the project's models are checked with ([tool.opsweep]
    check-targets; "all": every target `artifact` measures)."""
    from opsweep.cli.check import targets_of  # the check's command module (torch-free here)
    return targets_of(",".join(check_targets(Path(root, layout.pyproject))), artifact)


def _committed(root: Path, layout: Layout) -> dict | None:
    """The committed models record's entries by source (None: there is none); one that
    cannot be read stops the step in one line, and is never rewritten unread."""
    from opsweep.cli.check import previous_entries  # the check: torch
    try:
        return previous_entries(Path(root, layout.models))
    except DataFileError as exc:
        raise UsageError(f"{exc}; the models record is kept as it is: fix it, or delete it "
                         "to check every model again") from None


def _checked_in_shards(parts: Sequence[Path]) -> dict:
    """The entries the run's shard jobs checked (`check_shard`'s records), by source; a
    record that is not one stops the step in one line naming it."""
    from opsweep.cli.check import previous_entries  # the check: torch
    entries: dict = {}
    for part in parts:
        try:
            entries.update(previous_entries(part) or {})
        except DataFileError as exc:
            raise UsageError(f"a shard job's models record: {exc}") from None
    return entries


def check_shard(root: Path, layout: Layout, part: Artifact, shard: int, shards: int,
                out_dir: Path, *, jobs: int | None = None) -> Path | None:
    """A shard job's models half (`bot sweep`): the shard's share of the project's models
    (`checked.shard_models`) that the committed record cannot answer (no entry with their
    check fingerprint), each checked for real in a worker of its own against the shard's
    artifact, into a record beside it (`checked.part_name`). The shard's table is a part
    of the whole, so their verdicts are provisional: the assemble job joins each entry
    with the merged table again (`check_models`), keeping its capture and its real
    export, which are what costs. None (no file) when nothing is left to check here."""
    sources = shard_models(models(Path(root, layout.pyproject)), shard, shards)
    if not sources or part.broken is not None:
        return None
    from opsweep.check.fingerprint import fingerprint, reusable  # torch-free
    from opsweep.cli.check import record_data, run_checks  # the check: torch
    previous = _committed(root, layout)
    label = builtin().label
    targets = _targets(root, layout, part)
    keys = {s: fingerprint(s, part, label, targets=targets) for s in sources}
    fresh = [s for s in sources if reusable(previous, s, keys[s]) is None]
    if not fresh:
        return None
    reports = run_checks(fresh, part, jobs=_workers(jobs), targets=targets)
    text = json.dumps(record_data(reports, keys=keys), indent=1, sort_keys=True) + "\n"
    path = Path(out_dir, part_name(shard, shards))
    write_atomic(path, text.encode("utf-8"))
    return path


def check_models(root: Path, layout: Layout, new: Artifact, *,
                 jobs: int | None = None, parts: Sequence[Path] = ()) -> ModelsChecked | None:
    """When the project lists [tool.opsweep] models: `opsweep check --json` of each against
    the new artifact, written to the layout's models record; a model whose entry in the
    record already there (the committed one), or in a shard job's record of this run
    (`parts`, from `check_shard`), has the same check fingerprint is that entry, joined
    with the new table again where it answers otherwise, not checked again
    (opsweep.check.fingerprint); then the pin set's models history record
    (opsweep.artifact.models_history) and the models page from them. Each model
    is checked in a worker of its own, `jobs` at a time (default: the CPU count, at least
    two: `opsweep check --jobs`), so that a model which kills its process (a crash in
    onnxruntime or torch) is that model's machine failure and the command goes on. None
    (and no time spent) when the project lists no model."""
    sources = models(Path(root, layout.pyproject))
    if not sources or new.broken is not None:
        return None
    # the check: torch, the exporter, onnxruntime (only when models are configured)
    from opsweep.cli.check import check_or_reuse, record_data
    record = Path(root, layout.models)
    previous = _committed(root, layout)
    sharded = _checked_in_shards(parts)
    if sharded:  # the run's own checks come before the committed record's
        previous = {**(previous or {}), **sharded}
    done = check_or_reuse(sources, new, previous, jobs=_workers(jobs),
                          targets=_targets(root, layout, new))
    data = record_data(done.items, keys=done.keys)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    write_atomic(record, text.encode("utf-8"))
    # this pin set's models history record (replaced; another pin set's is never touched)
    history = models_history.write(models_history.from_models(data, record),
                                   Path(root, layout.models_history))
    render_models(layout.under(root))  # the models page, from the record just written
    from_shards = sum(1 for s, item in zip(sources, done.items)
                      if s in sharded and isinstance(item, dict))  # reused, not checked here
    return ModelsChecked(layout.models, done.checked, done.reused, done.rejoined,
                         f"{layout.models_history}/{history.name}", from_shards)

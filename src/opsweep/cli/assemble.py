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
from opsweep.artifact.data import Artifact
from opsweep.catalog.installed import gather
from opsweep.catalog.load import load_catalog
from opsweep.cli.settings import check_targets, models, repo_url, source_url
from opsweep.engine.standalone import Scripts
from opsweep.errors import DataFileError, UsageError
from opsweep.files import Layout, write_atomic
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

    def line(self) -> str:
        again = f", {self.rejoined} of them joined with the re-measured table again" \
            if self.rejoined else ""
        kept = f"; its pin set's verdicts in {self.history}" if self.history else ""
        return (f"wrote {self.path} ([tool.opsweep] models against the artifact: "
                f"{self.checked} checked, {self.reused} reused by fingerprint{again}{kept})")


def check_models(root: Path, layout: Layout, new: Artifact, *,
                 jobs: int | None = None) -> ModelsChecked | None:
    """When the project lists [tool.opsweep] models: `opsweep check --json` of each against
    the new artifact, written to the layout's models record; a model whose entry in the
    record already there (the committed one) has the same check fingerprint is that entry,
    not checked again (opsweep.check.fingerprint); then the pin set's models history record
    (opsweep.artifact.models_history) and the models page from them. Each model
    is checked in a worker of its own, `jobs` at a time (default: the CPU count, at least
    two: `opsweep check --jobs`), so that a model which kills its process (a crash in
    onnxruntime or torch) is that model's machine failure and the command goes on. None
    (and no time spent) when the project lists no model."""
    sources = models(Path(root, layout.pyproject))
    if not sources or new.broken is not None:
        return None
    # the check: torch, the exporter, onnxruntime (only when models are configured)
    from opsweep.cli.check import check_or_reuse, previous_entries, record_data, targets_of
    record = Path(root, layout.models)
    try:
        previous = previous_entries(record)
    except DataFileError as exc:  # never rewritten unread: the committed record is kept
        raise UsageError(f"{exc}; the models record is kept as it is: fix it, or delete it "
                         "to check every model again") from None
    workers = max(2, os.cpu_count() or 1) if jobs is None else jobs
    targets = targets_of(",".join(check_targets(Path(root, layout.pyproject))), new)
    done = check_or_reuse(sources, new, previous, jobs=workers, targets=targets)
    data = record_data(done.items, keys=done.keys)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    write_atomic(record, text.encode("utf-8"))
    # this pin set's models history record (replaced; another pin set's is never touched)
    history = models_history.write(models_history.from_models(data, record),
                                   Path(root, layout.models_history))
    render_models(layout.under(root))  # the models page, from the record just written
    return ModelsChecked(layout.models, done.checked, done.reused, done.rejoined,
                         f"{layout.models_history}/{history.name}")

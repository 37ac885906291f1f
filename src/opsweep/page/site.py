"""The support site from a measured artifact: what follows every sweep, in one place.

`regenerate` is the post-sweep sequence that the main command (``opsweep assemble`` in
tox's commands) and the Action's unprivileged job (``opsweep bot assemble``) both run:
refuse a partial sweep, keep the artifact (an unchanged measurement leaves the committed
file as it is), record this pin set in the history, then render the history view, the
support page, the dtype matrix, the migration page, the operators' pages, the spec
sources pages and, when the project has a models record, the models page. `render` is the pages
alone (``opsweep render``). Both take the installed stack's facts as data
(:class:`opsweep.catalog.installed.Installed`): nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from opsweep.artifact import data as art
from opsweep.artifact import models_history, records
from opsweep.artifact.shard import partial_reason
from opsweep.errors import UsageError
from opsweep.files import RENDERED_MARK, Layout, write_atomic
from opsweep.page import documented, migration, opsets, sources
from opsweep.page import models as models_page
from opsweep.page.history import render as render_history
from opsweep.page.support import (
    build_view,
    check_versions,
    render_details,
    render_dtypes,
    render_home,
    render_migration,
    render_page,
)
from opsweep.page.snippets import Scripts
from opsweep.page.templates import overriding
from opsweep.page.viewmodel import PageView

if TYPE_CHECKING:
    from opsweep.artifact.data import Artifact
    from opsweep.catalog.installed import Installed
    from opsweep.catalog.load import Catalog


@dataclass(frozen=True)
class Regenerated:
    """What `regenerate` wrote, relative to the checkout it was given."""

    view: PageView
    record: str  # the history record of this pin set
    artifact_changed: bool  # False: the committed artifact already held these measurements


def render(layout: Layout, artifact: Artifact | None, catalog: Catalog, installed: Installed,
           *, torch_version: str | None = None, source_url: str = "", repo_url: str = "",
           documented_path: Path | None = None, scripts: Scripts | None = None) -> PageView:
    """The home page, the support page, the dtype matrix, the migration page, the operators'
    pages and the spec sources pages of `layout`, from `artifact` (None: only the claims),
    written once all are rendered (stale rendered pages removed: `write_pages`);
    `documented_path`: the retired listing's claims (default: the layout's)."""
    with overriding(layout.templates):  # [tool.opsweep] templates first, then opsweep's
        return _render(layout, artifact, catalog, installed, torch_version=torch_version,
                       source_url=source_url, repo_url=repo_url,
                       documented_path=documented_path, scripts=scripts)


def _render(layout: Layout, artifact: Artifact | None, catalog: Catalog, installed: Installed,
            *, torch_version: str | None, source_url: str, repo_url: str,
            documented_path: Path | None, scripts: Scripts | None) -> PageView:
    version = check_versions(artifact, installed.torch_version, torch_version)
    claims = documented.load(documented_path or documented.find(Path(layout.documented)))
    view = build_view(installed.listing, catalog, artifact, claims, installed.registered,
                      installed.links, version,
                      records=records.load_all(Path(layout.history_dir)), source_url=source_url,
                      scripts=scripts)
    spec_page = sources.build(catalog, {d.name for d in view.details}, source_url, version)
    listed = [r.name for r in view.rows]
    mig = migration.build(artifact, claims[1], scripts=scripts, listed=listed)
    steps = opsets.build(artifact, scripts=scripts, listed=listed)
    pages = {layout.home: render_home(view, repo_url), layout.page: render_page(view),
             layout.dtypes: render_dtypes(view), layout.migrating: render_migration(mig, steps)}
    pages |= {f"{layout.details}/{name}": text
              for name, text in render_details(view, mig, steps).items()}
    pages |= {f"{layout.specs}/{name}": text for name, text in sources.render(spec_page).items()}
    write_pages(pages, layout.page_dirs, layout.superseded)
    render_models(layout)
    return view


def render_models(layout: Layout) -> bool:
    """The models page from the layout's models record, when the project has one (True
    when it was written); a rendered models page without a record is removed. The first
    failing operators link to the operators' pages already written; the verdicts across
    pin sets are the models history records' (Layout.models_history)."""
    record, page = Path(layout.models), Path(layout.models_page)
    if not record.is_file():
        if page.is_file() and _rendered(page):
            page.unlink()
        return False
    operators = {p.stem for p in Path(layout.details).glob("*.md")} - {"index"}
    with overriding(layout.templates):
        history = models_history.load_all(Path(layout.models_history))
        view = models_page.build(models_page.load(record), operators, record, history)
        write_atomic(page, models_page.render(view).encode("utf-8"))
    return True


def write_pages(pages: Mapping[str, str], directories: Sequence[str],
                superseded: Sequence[str] = ()) -> list[Path]:
    """Write every page atomically, then remove what an older render left behind: a page
    in one of `directories` this render did not write (an operator or a spec file that is
    gone) and a page of an older layout (`superseded`). Only a file carrying the rendered
    mark is removed: a hand-written page stays. Returns the removed files."""
    for page, text in pages.items():
        write_atomic(page, text.encode("utf-8"))
    written = {Path(p).resolve() for p in pages}
    candidates = [Path(p) for p in superseded]
    for directory in directories:
        candidates += sorted(Path(directory).glob("*.md"))
    removed: list[Path] = []
    for path in candidates:
        if path.resolve() not in written and path.is_file() and _rendered(path):
            path.unlink()
            removed.append(path)
    return removed


def _rendered(path: Path) -> bool:
    with path.open("rb") as handle:
        return RENDERED_MARK.encode() in handle.read(4096)


def render_history_page(layout: Layout) -> Sequence[records.Record]:
    """The history view of every record in the layout's history directory."""
    found = records.load_all(Path(layout.history_dir))
    with overriding(layout.templates):
        text = render_history(found)
    write_atomic(layout.history_page, text.encode("utf-8"))
    return found


def regenerate(root: Path, layout: Layout, new: Artifact, catalog: Catalog,
               installed: Installed, *, source_url: str = "", repo_url: str = "",
               scripts: Scripts | None = None) -> Regenerated:
    """After a sweep (its shards merged): `new` becomes the artifact of the checkout at
    `root`, unless it is partial against the one committed there; then the history record,
    the history view and the pages. Raises UsageError for a partial sweep, touching nothing."""
    here = layout.under(root)
    target = Path(here.artifact)
    old = art.load(target) if target.exists() else None
    reason = partial_reason(old, new, frozenset(catalog.specs))
    if reason:
        raise UsageError(f"not publishing a partial sweep: {reason}")
    changed = old is None or not art.same_measurements(old, new) \
        or target.read_bytes() != art.canonical_bytes(old)
    if changed:
        art.save(target, new)
    record = records.write(new, Path(here.history_dir))  # first: the pages show each release
    render_history_page(here)
    view = render(here, new if changed else old, catalog, installed, source_url=source_url,
                  repo_url=repo_url, scripts=scripts)
    return Regenerated(view, Path(record).relative_to(root).as_posix(), changed)

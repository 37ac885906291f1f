"""mkdocs plugin ``opsweep-nav``: the rendered directories of pages in the site's navigation.

``opsweep render`` writes a page per operator (``operators/``) and a page per file of specs
(``specs/``), each directory with an ``index.md``; which pages exist changes with the
catalog, so ``mkdocs.yml`` names only the index (``- Operators in detail: operators/index.md``)
and this hook expands that entry into a section: the index, then every page of the
directory, grouped by the ``family`` its front matter names (the operators' pages) or flat.
With ``navigation.prune`` each page carries only its own group's entries, so the sidebar
stays small on every page.

The models page (``models.md``) is rendered only when the project has a models record, so
its entry (``- Models: models.md``) is left out of the navigation while the page does not
exist: a strict build passes before the first record as after it.

Installed with opsweep (the ``mkdocs.plugins`` entry point), so a project that renders
opsweep's pages into its own site lists it in its ``mkdocs.yml`` as opsweep's does::

    plugins:
      - search
      - opsweep-nav

mkdocs alone imports this module (the page stage never does).
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import BasePlugin

from opsweep.files import MODELS_NAME

INDEX = "/index.md"
#: pages rendered only for some projects: their nav entry is dropped while they are absent
OPTIONAL = (MODELS_NAME,)


class NavPlugin(BasePlugin):
    """Expands each nav entry naming a rendered directory's ``index.md`` (see above)."""

    def on_config(self, config):
        docs = Path(config["docs_dir"])
        if config["nav"]:
            config["nav"] = [_expand(item, docs) for item in config["nav"]
                             if not _absent(item, docs)]
        return config


def _absent(item, docs: Path) -> bool:
    """An entry naming an optional page (OPTIONAL) that the docs do not hold."""
    value = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else item
    return isinstance(value, str) and Path(value).name in OPTIONAL and \
        not (docs / value).is_file()


def _expand(item, docs: Path):
    if not isinstance(item, dict) or len(item) != 1:
        return item
    ((title, value),) = item.items()
    if isinstance(value, list):
        return {title: [_expand(i, docs) for i in value]}
    if not (isinstance(value, str) and value.endswith(INDEX)):
        return item
    pages = sorted(p for p in (docs / value[: -len(INDEX)]).glob("*.md") if p.name != "index.md")
    groups: dict[str, list[str]] = {}
    for page in pages:
        groups.setdefault(_family(page), []).append(page.relative_to(docs).as_posix())
    if list(groups) == [""]:
        return {title: [value, *groups[""]]}
    ordered = sorted(groups.items(), key=lambda g: (g[0] in ("", "not measured"), g[0]))
    return {title: [value, *({family or "other": found} for family, found in ordered)]}


def _family(page: Path) -> str:
    """The ``family:`` line of the page's front matter ("" when it has none)."""
    with page.open(encoding="utf-8") as handle:
        if handle.readline().strip() != "---":
            return ""
        for line in handle:
            if line.strip() == "---":
                break
            key, _, rest = line.partition(":")
            if key.strip() == "family":
                return rest.strip()
    return ""

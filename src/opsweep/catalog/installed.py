"""What the installed stack says about the operators, gathered where torch is: the
torch version, its dispatcher's operator listing, the rows the exporter's registry
translates and their documentation links. The page is rendered from an `Installed` as
data (:mod:`opsweep.page.site`), so rendering itself needs no torch."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from opsweep.catalog.links import Link, cached
from opsweep.catalog.listing import Listing, installed_listing
from opsweep.catalog.registry import registered_rows


@dataclass(frozen=True)
class Installed:
    torch_version: str
    listing: Listing
    registered: frozenset[str]  # listing rows the exporter's registry translates
    links: Mapping[str, Link]  # documentation link (and alias) per listing row


def gather(data_dir: Path, opset: int | None = None, version: str | None = None) -> Installed:
    """The installed stack's facts: the links of `version` (default: the installed torch's)
    from the cache in `data_dir` (computed and written when absent); `opset`: the registry
    the measured artifact's exporter built (default: the public call's)."""
    listing = installed_listing()
    return Installed(torch.__version__, listing, registered_rows(opset),
                     cached(listing.rows, version or torch.__version__, data_dir))

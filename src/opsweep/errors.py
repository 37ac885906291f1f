"""Typed errors. The library raises these; only the CLI prints and exits."""

from __future__ import annotations


class OpsweepError(Exception):
    """Base of every error opsweep raises on purpose."""


class SpecError(OpsweepError):
    """A spec (or the catalog as a whole) is malformed."""

    def __init__(self, spec: str, message: str, *, source: str = "") -> None:
        where = f" (in {source})" if source else ""
        super().__init__(f"spec {spec!r}{where}: {message}")
        self.spec = spec


class ArtifactError(OpsweepError):
    """An artifact file is missing, unreadable or fails validation."""

    def __init__(self, path: object, field: str, message: str) -> None:
        where = f" at {field}" if field else ""
        super().__init__(f"{path}{where}: {message}")
        self.path = path
        self.field = field


class ExporterUnavailable(OpsweepError):
    """The installed torch cannot run the dynamo exporter."""


class UsageError(OpsweepError):
    """Bad command-line or configuration input."""

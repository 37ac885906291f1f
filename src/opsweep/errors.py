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


class DataFileError(OpsweepError):
    """A file opsweep reads as data (an artifact, a history record, the documented
    claims, the link cache) is missing, unreadable or fails validation. The message
    names the file and, where one is to blame, the field."""

    def __init__(self, path: object, field: str, message: str) -> None:
        where = f" at {field}" if field else ""
        super().__init__(f"{path}{where}: {message}")
        self.path = path
        self.field = field


class ArtifactError(DataFileError):
    """A measured artifact (or a shard of one, or its run log) is missing, unreadable
    or fails validation."""


class ExporterUnavailable(OpsweepError):
    """The installed torch cannot run the dynamo exporter."""


class UsageError(OpsweepError):
    """Bad command-line or configuration input."""


class ExporterBroken(OpsweepError):
    """The exporter stack cannot export at all: a result of its own, not a spec bug.

    Raised by the sweep's canary before anything is measured; `target` is the
    translation target the canary failed for, `stage` how far it got and `error`
    the first error line."""

    def __init__(self, target: str, stage: str, error: str) -> None:
        super().__init__(f"the exporter stack breaks ({target} target, at {stage}): {error}")
        self.target, self.stage, self.error = target, stage, error

    def __reduce__(self):  # crosses the process boundary from a worker
        return type(self), (self.target, self.stage, self.error)


class PoolBroken(OpsweepError):
    """The worker pool failed as a whole mid-sweep (not one group's worker)."""


#: How an example's error line starts when its worker was lost (killed by a signal, out of
#: memory, or past ``--timeout``): the machine's failure, not the exporter stack's verdict.
#: (Here, not in ``model``: ``model`` is one of the files every spec's digest hashes.)
WORKER_LOST = "WorkerLost"


class ModelError(UsageError):
    """A model given to `opsweep check` cannot be checked: its callable raised, returned
    something that is not a model and its inputs, or eager PyTorch cannot run it. The
    message names the model."""

    def __init__(self, model: str, message: str) -> None:
        super().__init__(f"model {model}: {message}")
        self.model = model


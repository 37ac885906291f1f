"""opsweep's own files: where they live by default, written so that a reader (or a crash)
never sees half of one, and read back validated.

Every JSON file opsweep keeps as data (the artifact, history records, the documented
claims, the documentation-link cache) has a JSON Schema in ``schema/``; one error type
(`DataFileError`, `ArtifactError` for an artifact) names the file and the field.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

try:  # compiled (Rust) validation: the same verdicts, some 300 times faster on an artifact
    import jsonschema_rs
except ImportError:  # the bot's hash-pinned install (requirements/bot.txt) goes without it
    jsonschema_rs = None  # type: ignore[assignment]

from opsweep.config import Config, PinSource
from opsweep.errors import DataFileError


@dataclass(frozen=True)
class Layout:
    """Where the main job keeps what it writes, relative to the measured checkout: the
    artifact, the support page (the operators and spec sources pages are written beside
    it), the history records and their view, the data the page is built with (the retired
    listing's claims, the documentation-link cache) and the file holding the pins."""

    artifact: str = "docs/onnx_support_measured.json"
    page: str = "docs/supported_operators.md"
    history_dir: str = "docs/history"
    history_page: str = "docs/history.md"
    data_dir: str = "docs/data"
    pyproject: str = "pyproject.toml"
    #: `opsweep check --json` of the project's [tool.opsweep] models against the artifact,
    #: written by the main command only when models are configured; the bot diffs it
    models: str = "docs/models_checked.json"
    #: where the watched pins live (``[tool.opsweep] pins``); its paths are repository paths
    pins: PinSource = field(default_factory=PinSource)
    #: a directory of templates overriding the built-in ones ('' for none)
    templates: str = ""

    @classmethod
    def of(cls, config: Config) -> Layout:
        """The layout a project's ``[tool.opsweep]`` configures."""
        return cls(artifact=config.artifact, page=config.page, history_dir=config.history_dir,
                   history_page=config.history_page, data_dir=config.data_dir,
                   pyproject=config.pyproject, models=config.models_checked, pins=config.pins,
                   templates=config.templates)

    @property
    def details(self) -> str:
        """The operators' pages (a directory: an index and one page per operator), beside
        the support page."""
        return _beside(self.page, DETAILS_NAME)

    @property
    def specs(self) -> str:
        """The spec sources pages (a directory: an index and one page per spec file),
        beside the support page."""
        return _beside(self.page, SPECS_NAME)

    @property
    def home(self) -> str:
        """The site's home page (``index.md``), beside the support page."""
        return _beside(self.page, HOME_NAME)

    @property
    def migrating(self) -> str:
        """The migration view (TorchScript exporter beside dynamo), beside the support page."""
        return _beside(self.page, MIGRATING_NAME)

    @property
    def dtypes(self) -> str:
        """The dtype matrix (dtypes at a glance), beside the support page."""
        return _beside(self.page, DTYPES_NAME)

    @property
    def models_page(self) -> str:
        """The models page, beside the support page: rendered from the models record, and
        only when the project has one."""
        return _beside(self.page, MODELS_NAME)

    @property
    def models_history(self) -> str:
        """The models history records (one per pin set the models were checked at), in a
        directory of their own under the history directory."""
        return f"{self.history_dir}/{MODELS_HISTORY_NAME}"

    @property
    def documented(self) -> str:
        """The retired TorchScript listing's claims (scripts/recompute_documented.py)."""
        return f"{self.data_dir}/documented.json"

    @property
    def pages(self) -> tuple[str, ...]:
        """Every single page the main job renders (the directories of pages apart; the
        models page only when the project has a models record)."""
        return (self.home, self.page, self.dtypes, self.migrating, self.history_page,
                self.models_page)

    @property
    def page_dirs(self) -> tuple[str, ...]:
        """The directories whose every ``.md`` page the main job renders (and prunes)."""
        return (self.details, self.specs)

    @property
    def superseded(self) -> tuple[str, ...]:
        """Pages an older layout rendered in their place (one page for every operator, one
        for every spec): removed by the next render when they carry its mark."""
        return tuple(f"{d}.md" for d in self.page_dirs)

    def rendered(self, root: str | os.PathLike = ".") -> list[str]:
        """Every page of the layout as it stands under `root`, relative to it."""
        found = [p for p in self.pages if p != self.models_page or Path(root, p).is_file()]
        for directory in self.page_dirs:
            found += sorted(p.relative_to(root).as_posix()
                            for p in Path(root, directory).glob("*.md"))
        return found

    def under(self, root: str | os.PathLike) -> Layout:
        """The same layout, every path under `root`."""
        moved: dict[str, Any] = {f.name: str(Path(root, getattr(self, f.name)))
                                 for f in fields(self) if f.name not in ("pins", "templates")}
        return replace(self, **moved,
                       templates=str(Path(root, self.templates)) if self.templates else "")


DETAILS_NAME = "operators"
SPECS_NAME = "specs"
DTYPES_NAME = "dtypes.md"
HOME_NAME = "index.md"
MIGRATING_NAME = "migrating.md"
MODELS_NAME = "models.md"
MODELS_HISTORY_NAME = "models"
DEFAULT = Layout()
#: how every page the renderer writes begins its mark (its "Generated by" comment): the
#: renderer and the bot remove a stale page only when it carries this, never a hand-written one
RENDERED_MARK = "<!-- Generated by `opsweep "


def _beside(page: str, name: str) -> str:
    parent = Path(page).parent
    return name if str(parent) == "." else f"{Path(page).parent.as_posix()}/{name}"


def write_atomic(path: str | os.PathLike, payload: bytes) -> None:
    """Write to a temporary file beside `path`, fsync, then os.replace: a reader
    (or a crash) sees either the old file or the new one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; the result is an ordinary file
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def read_json(path: Path, *, error: type[DataFileError] = DataFileError,
              missing: str = "no such file") -> Any:
    """The parsed contents of `path`; a missing, unreadable or hostile file (absurd
    nesting, a huge integer literal) is an `error` naming it."""
    try:
        text = Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise error(path, "", missing) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(path, "", f"cannot be read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(path, f"line {exc.lineno} column {exc.colno}",
                    f"not valid JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise error(path, "", f"not readable JSON: {str(exc)[:200] or 'nested too deeply'}"
                    ) from None


def _schema(schema: str, definition: str | None) -> dict[str, Any]:
    text = resources.files("opsweep").joinpath(f"schema/{schema}.schema.json").read_text("utf-8")
    whole = json.loads(text)
    if definition is None:
        return whole
    return {"$schema": whole["$schema"], "$ref": f"#/$defs/{definition}", "$defs": whole["$defs"]}


@cache
def validator(schema: str, definition: str | None = None) -> jsonschema.Draft202012Validator:
    """The validator of ``schema/<schema>.schema.json``, or of one of its `$defs` entries:
    the reference implementation, which names every problem."""
    return jsonschema.Draft202012Validator(_schema(schema, definition))


@cache
def fast_validator(schema: str, definition: str | None = None) -> Any:
    """The same schema compiled by jsonschema-rs (None where it is not installed): it only
    says whether a document is valid; `validate` asks `validator` what is wrong."""
    if jsonschema_rs is None:
        return None
    return jsonschema_rs.Draft202012Validator(_schema(schema, definition))


def _valid_fast(data: Any, schema: str, definition: str | None) -> bool:
    """True only when the compiled validator accepts `data`; anything else (rejected, not
    installed, or data it cannot take, such as nesting past its depth) goes the slow way."""
    fast = fast_validator(schema, definition)
    try:
        return fast is not None and fast.is_valid(data)
    except Exception:  # noqa: BLE001 - the reference implementation gives the verdict
        return False


def field_name(path: Iterable[Any]) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def validate(data: Any, schema: str, path: object, *,
             error: type[DataFileError] = DataFileError, definition: str | None = None) -> None:
    """`data` read from `path` against its schema (or one `$defs` entry of it): the first
    problem (in field order) is an `error` naming the field, with a count of the others.
    A document the compiled validator accepts is not walked again (the committed
    artifact: 0.01 s instead of about 2.6 s); one it rejects is, so the error is the reference implementation's."""
    if _valid_fast(data, schema, definition):
        return
    try:
        problems = sorted(validator(schema, definition).iter_errors(data),
                          key=lambda e: list(map(str, e.absolute_path)))
    except RecursionError:
        raise error(path, "", "nested too deeply") from None
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise error(path, field_name(first.absolute_path), first.message[:300] + more)


def load(path: Path, schema: str, *, missing: str = "no such file") -> Any:
    """Read and validate: what every reader of a data file but the artifact's calls."""
    data = read_json(path, missing=missing)
    validate(data, schema, path)
    return data

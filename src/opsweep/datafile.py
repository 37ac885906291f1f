"""Reading the JSON files opsweep keeps as data: the artifact, history records,
the documented claims and the documentation-link cache. One error type
(`DataFileError`, `ArtifactError` for an artifact) names the file and the field;
one validation style: each kind of file has a JSON Schema in ``schema/``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from opsweep.errors import DataFileError


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


@cache
def validator(schema: str) -> jsonschema.Draft202012Validator:
    """The validator of ``schema/<schema>.schema.json``."""
    text = resources.files("opsweep").joinpath(f"schema/{schema}.schema.json").read_text("utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


def field_name(path: Iterable[Any]) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def validate(data: Any, schema: str, path: object, *,
             error: type[DataFileError] = DataFileError) -> None:
    """`data` read from `path` against its schema: the first problem (in field
    order) is an `error` naming the field, with a count of the others."""
    try:
        problems = sorted(validator(schema).iter_errors(data),
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

"""GitHub Actions' files, written by the CLI alone: a step's outputs (``$GITHUB_OUTPUT``)
and the job summary (``$GITHUB_STEP_SUMMARY``). Outside Actions both are simply absent."""

from __future__ import annotations


def append_summary(text: str, path: str | None) -> None:
    """Append to the job summary at `path` (nothing outside Actions)."""
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def output_lines(values: dict[str, object]) -> str:
    return "".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}\n"
                   for k, v in values.items())


def write_outputs(values: dict[str, object], target: str | None) -> str:
    """Append `key=value` lines to `target` (the outputs file, when there is one); return them."""
    lines = output_lines(values)
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(lines)
    return lines

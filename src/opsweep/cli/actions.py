"""GitHub Actions' files, written by the CLI alone: a step's outputs (``$GITHUB_OUTPUT``)
and the job summary (``$GITHUB_STEP_SUMMARY``). Outside Actions both are simply absent.

Outputs carry strings that a pull request chose (a fingerprint version, a reason quoting
one, a branch name): each value is checked against its key's strict pattern, or, for free
text, has its control characters replaced and is capped; and the file is written in the
delimiter syntax (``key<<ghadelimiter_RANDOM``) GitHub's own toolkit uses, so no value can
add a line that reads as another output. Stdout keeps one ``key=value`` line per output,
for people and for scripts that read it."""

from __future__ import annotations

import re
import secrets

from opsweep.errors import UsageError

#: GitHub refuses a step summary over 1 MiB; this leaves room for the pointer.
SUMMARY_LIMIT = 1024 * 1024 - 4096
SUMMARY_CUT = ("\n\n*Cut at GitHub's 1 MiB job-summary limit. The whole table: `opsweep diff` "
               "of the committed artifact and the one in this run's `onnx-result` artifact "
               "(`docs/onnx_support_measured.json`).*\n")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_BOOLEAN = r"^(true|false)$"
_NUMBER = r"^[0-9]{0,20}$"
#: strict patterns of the outputs that steps compare or pass on; others are free text
STRICT = {
    **dict.fromkeys(("sha", "head_sha", "expected_sha"), r"^([0-9a-f]{40})?$"),
    **dict.fromkeys(("pr", "comment_id", "specs", "regressions", "improvements",
                     "newly_measured", "no_longer_measured"), _NUMBER),
    **dict.fromkeys(("run", "accepted", "publish", "same_repo", "changed", "broken",
                     "created"), _BOOLEAN),
    "profile": r"^(ci|nightly)?$",
    "outcome": r"^(done|nothing|failed)?$",
}
FREE_TEXT_LIMIT = 4096


def append_summary(text: str, path: str | None) -> None:
    """Append to the job summary at `path` (nothing outside Actions), keeping the file
    under GitHub's 1 MiB limit: a longer text is cut and says where the rest is."""
    if not path:
        return
    try:
        with open(path, "rb") as handle:
            used = len(handle.read())
    except FileNotFoundError:
        used = 0
    room = SUMMARY_LIMIT - used
    data = text.encode("utf-8")
    if len(data) > room:
        cut = data[: max(0, room - len(SUMMARY_CUT.encode("utf-8")))]
        text = cut.decode("utf-8", errors="ignore") + SUMMARY_CUT
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def _value(key: str, value: object) -> str:
    if not _KEY.match(key):
        raise UsageError(f"output {key!r}: not a valid output name")
    text = str(value).lower() if isinstance(value, bool) else str(value)
    pattern = STRICT.get(key)
    if pattern is not None:
        if not re.match(pattern, text):
            raise UsageError(f"output {key}: {text[:60]!r} does not match {pattern}")
        return text
    return re.sub(r"[\x00-\x1f\x7f\u2028\u2029]", " ", text)[:FREE_TEXT_LIMIT]


def output_lines(values: dict[str, object]) -> str:
    """One `key=value` line per output, every value checked (see the module)."""
    return "".join(f"{k}={_value(k, v)}\n" for k, v in values.items())


def write_outputs(values: dict[str, object], target: str | None) -> str:
    """Append the outputs to `target` (the outputs file, when there is one) in the
    delimiter syntax; return them as `key=value` lines."""
    checked = {k: _value(k, v) for k, v in values.items()}
    if target:
        blocks = []
        for key, value in checked.items():
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            blocks.append(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")
        with open(target, "a", encoding="utf-8") as handle:
            handle.write("".join(blocks))
    return "".join(f"{k}={v}\n" for k, v in checked.items())

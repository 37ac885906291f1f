"""Moving pins where the project keeps them: the text of the file ``[tool.opsweep] pins``
names -- a tox env's deps, a requirements or constraints file, or a dependency array of
pyproject.toml (``[project] dependencies``, ``[project.optional-dependencies] NAME``,
``[dependency-groups] NAME``) -- with every move applied to its exact pins and nothing
else changed: the other lines, the comments, the quoting and the layout stay as written.

A result is read back before it is returned: its pins must be exactly the old ones with
the moves applied, and every other entry (and, in pyproject.toml, every other value of the
file) must be unchanged, else the rewrite is refused with one line naming the file.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable

from opsweep.bot.pins import WATCHED, PinMove, is_pin, normalize, read_pins
from opsweep.config import PinSource
from opsweep.errors import UsageError

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_SPEC = re.compile(r"^\s*(?P<name>" + _NAME + r")\s*(?:\[[^\]]*\])?\s*(?P<rest>.*)$", re.DOTALL)


def check_exact(text: str, source: PinSource, where: str, watched: Iterable[str] = WATCHED):
    """Refuse a watched package the source constrains without pinning it exactly
    (``torch>=2.6``, ``torch~=2.13.0``, ``torch==2.13.*``, a marker): the bump moves exact
    ``name==X.Y.Z`` pins only, and would otherwise silently leave it behind."""
    watched = {normalize(n) for n in watched}
    for entry in source.entries(text, where):
        m = _SPEC.match(entry)
        if m is None or normalize(m.group("name")) not in watched \
                or (is_pin(entry) and "*" not in entry):
            continue
        if m.group("rest").strip():  # a bare name is unpinned: nothing to move
            raise UsageError(
                f"{where}: {source.where} has {entry.strip()!r}, not an exact pin: `bot bump` "
                f"moves exact pins only ({m.group('name')}==X.Y.Z); pin it exactly, or move it "
                "by hand or with Renovate")


def rewrite(text: str, source: PinSource, moves: list[PinMove], where: str) -> str:
    """`text` (the source's file) with every move applied to its exact pins."""
    if source.kind == "requirements":
        new = _requirements(text, moves, where)
    else:
        start, end = _array_span(text, source, where)
        body = text[start:end]
        for move in moves:
            body = _replace(body, move, where, source, _quoted(move))
        new = text[:start] + body + text[end:]
    _read_back(text, new, source, moves, where)
    return new


def _quoted(move: PinMove) -> re.Pattern:
    """A TOML string (either quote) holding exactly the pin `move` moves."""
    return re.compile(r"(?P<q>[\"'])(?P<head>\s*(?P<name>" + _NAME + r")\s*==\s*)"
                      + re.escape(move.old or "") + r"(?P<tail>\s*)(?P=q)")


def _line_pin(move: PinMove) -> re.Pattern:
    """A requirements line starting with exactly the pin `move` moves."""
    return re.compile(r"^(?P<head>\s*(?P<name>" + _NAME + r")\s*==\s*)"
                      + re.escape(move.old or "") + r"(?P<tail>)(?=[ \t]*(?:(?:#|\\|--).*)?$)",
                      re.MULTILINE)


def _replace(body: str, move: PinMove, where: str, source: PinSource, pattern) -> str:
    def one(m: re.Match) -> str:
        if normalize(m.group("name")) != move.name:
            return m.group(0)
        found.append(m)
        quote = m.groupdict().get("q") or ""
        return f"{quote}{m.group('head')}{move.new}{m.group('tail')}{quote}"

    found: list[re.Match] = []
    body = pattern.sub(one, body)
    if len(found) != 1:
        raise UsageError(f"{where}: {source.where}: found the pin {move.name}=={move.old} "
                         f"{len(found)} times; expected it once")
    return body


def _requirements(text: str, moves: list[PinMove], where: str) -> str:
    source = PinSource("requirements", where)
    for move in moves:
        text = _replace(text, move, where, source, _line_pin(move))
    for line in text.replace("\\\n", " ").splitlines():
        m = _SPEC.match(re.sub(r"(^|\s)#.*$", "", line))
        if m and "--hash" in line and normalize(m.group("name")) in {x.name for x in moves}:
            raise UsageError(f"{where}: {m.group('name')} is hash-pinned (--hash): its hashes "
                             "would not match the new version; regenerate the file with the "
                             "tool that wrote it instead of `bot bump`")
    return text


def _table_path(source: PinSource) -> tuple[tuple[str, ...], str]:
    if source.kind == "tox":
        return ("tool", "tox", "env", source.name), "deps"
    if source.name == "project":
        return ("project",), "dependencies"
    kind, _, name = source.name.partition(":")
    return (("project", "optional-dependencies") if kind == "optional"
            else ("dependency-groups",)), name


def _key(part: str) -> str:
    """A TOML key, bare or quoted."""
    return "(?:" + "|".join((re.escape(part), f'"{re.escape(part)}"',
                             f"'{re.escape(part)}'")) + ")"


def _array_span(text: str, source: PinSource, where: str) -> tuple[int, int]:
    """(start, end) of the array's inside, as written under its own table header."""
    table, key = _table_path(source)
    header = re.compile(r"^\[\s*" + r"\s*\.\s*".join(map(_key, table))
                        + r"\s*\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
    found = header.search(text)
    following = re.compile(r"^\[", re.MULTILINE).search(text, found.end()) if found else None
    body_end = following.start() if following else len(text)
    assign = re.compile(r"^[ \t]*" + _key(key) + r"[ \t]*=[ \t]*\[", re.MULTILINE)
    m = assign.search(text, found.end(), body_end) if found else None
    if m is None:
        raise UsageError(f"{where}: cannot find {source.where} written as `{key} = [...]` "
                         f"under a [{'.'.join(table)}] header; `bot bump` rewrites that form "
                         "only (move the pins by hand, or write the array that way)")
    return m.end(), _closing(text, m.end(), where)


def _closing(text: str, start: int, where: str) -> int:
    """The index of the `]` closing the array whose inside starts at `start` (strings and
    comments skipped)."""
    depth, i = 1, start
    while i < len(text):
        c = text[i]
        if c == "#":
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
        elif c in "\"'":
            m = re.compile(r'"(?:[^"\\\n]|\\.)*"' if c == '"' else r"'[^'\n]*'").match(text, i)
            if m is None:
                break
            i = m.end() - 1
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise UsageError(f"{where}: an array that never closes")


def _read_back(old: str, new: str, source: PinSource, moves: list[PinMove], where: str):
    expected = {**read_pins(old, where, source), **{m.name: m.new for m in moves}}
    others = [[e for e in source.entries(t, where) if not is_pin(e)] for t in (old, new)]
    same_rest = others[0] == others[1]
    if same_rest and source.kind != "requirements":
        table, key = _table_path(source)
        data = [tomllib.loads(t) for t in (old, new)]
        for d in data:
            for part in table:
                d = d[part]
            d.pop(key)
        same_rest = data[0] == data[1]
    if read_pins(new, where, source) != expected or not same_rest:
        raise UsageError(f"{where}: the bump would not move exactly "
                         f"{', '.join(map(str, moves))}; nothing written")

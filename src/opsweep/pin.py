"""The torch pin: the `torch==` entry of [tool.tox.env.proptest_onnx] deps in
pyproject.toml, read at two git revisions. Only a change of that pin (not any
edit of the file) triggers the automatic re-measurement."""

from __future__ import annotations

import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

PIN_TABLE = ("tool", "tox", "env", "proptest_onnx")
_PIN = re.compile(r"^\s*torch\s*==\s*([^\s;,]+)\s*$")


@dataclass(frozen=True)
class PinChange:
    old: str | None
    new: str | None

    @property
    def changed(self) -> bool:
        return self.old != self.new


def read_pin(text: str, where: str = "pyproject.toml") -> str | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: not valid TOML ({exc})") from None
    table = data
    for key in PIN_TABLE:
        table = table.get(key, {}) if isinstance(table, dict) else {}
    deps = table.get("deps", []) if isinstance(table, dict) else []
    pins = [m.group(1) for d in deps if isinstance(d, str) and (m := _PIN.match(d))]
    if len(pins) > 1:
        raise UsageError(f"{where}: [{'.'.join(PIN_TABLE)}] pins torch {len(pins)} times")
    return pins[0] if pins else None


def file_at(revision: str, path: str = "pyproject.toml", repo: Path = Path(".")) -> str | None:
    """The file's text at a git revision ('' rev = the working tree); None if absent there."""
    if not revision:
        p = repo / path
        return p.read_text("utf-8") if p.exists() else None
    result = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=repo, capture_output=True,
                            text=True)
    if result.returncode != 0:
        if "exists on disk, but not in" in result.stderr or "does not exist in" in result.stderr:
            return None
        raise UsageError(f"git show {revision}:{path} failed: {result.stderr.strip()}")
    return result.stdout


def pin_change(base: str, head: str = "HEAD", path: str = "pyproject.toml",
               repo: Path = Path(".")) -> PinChange:
    old_text, new_text = file_at(base, path, repo), file_at(head, path, repo)
    old = read_pin(old_text, f"{path}@{base}") if old_text is not None else None
    new = read_pin(new_text, f"{path}@{head or 'worktree'}") if new_text is not None else None
    return PinChange(old, new)

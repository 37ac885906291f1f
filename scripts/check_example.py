"""Write the sample report of docs/check.md: the real terminal output of `opsweep check` on
the page's own Hugging Face recipe, run as a newcomer runs it (the recipe written to
my_models.py in an empty directory outside any project, nothing else beside it: the check
uses the table packaged with opsweep for the installed torch), between the page's markers.

    HF_HUB_OFFLINE=1 python scripts/check_example.py

`recipe(page, name)` is the page's Python block that starts with ``# NAME``; `structure`
is what a test compares between the page's sample and a fresh run (the words and table
rules, every number and version made one placeholder: errors and timings vary by machine).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "check.md"
COMMAND = ["check", "my_models.py:bert", "my_models.py:resnet_bf16"]
START, END = "<!-- check-example:start -->", "<!-- check-example:end -->"
WIDTH = 120


def recipe(page: str, name: str) -> str:
    """The page's Python block whose first line is ``# name``."""
    for block in re.findall(r"```python\n(.*?)```", page, re.S):
        if block.startswith(f"# {name}\n"):
            return block
    raise SystemExit(f"docs/check.md has no Python block starting with '# {name}'")


def run(directory: Path, command: list[str]) -> subprocess.CompletedProcess:
    """`opsweep COMMAND` in `directory`, as a terminal of WIDTH columns would show it."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": str(WIDTH), "NO_COLOR": "1",
           "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "opsweep", *command], cwd=directory, text=True,
                          capture_output=True, check=False, env=env, timeout=900)


def output(page: str | None = None) -> str:
    page = PAGE.read_text("utf-8") if page is None else page
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        (here / "my_models.py").write_text(recipe(page, "my_models.py"), "utf-8")
        done = run(here, COMMAND)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    return "```console\n$ opsweep " + " ".join(COMMAND) + "\n" + "\n".join(lines).strip() + "\n```\n"


def structure(text: str) -> list[str]:
    """The sample's words in order, every number (and so every version) one placeholder."""
    return re.sub(r"\d+(?:\.\d+)*(?:e[-+]?\d+)?(?:\+\w+)?", "N", text).split()


def spliced(text: str, example: str) -> str:
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{example}{END}{tail}"


def sample(text: str) -> str:
    """What the page shows between its markers."""
    return text.partition(START)[2].partition(END)[0]


if __name__ == "__main__":
    PAGE.write_text(spliced(PAGE.read_text("utf-8"), output()), "utf-8")
    print(f"wrote the sample report into {PAGE.relative_to(ROOT)}")

"""Write the worked example of docs/check.md: the real `opsweep check --markdown` output of
one test model against the committed artifact, between the page's markers.

    HF_HUB_OFFLINE=1 python scripts/check_example.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "check.md"
COMMAND = ["check", "examples/tiny_models.py:resnet_half", "--markdown"]
START, END = "<!-- check-example:start -->", "<!-- check-example:end -->"


def output() -> str:
    done = subprocess.run([sys.executable, "-m", "opsweep", *COMMAND], cwd=ROOT, text=True,
                          capture_output=True, check=False, env={**os.environ, "HF_HUB_OFFLINE": "1"},
                          timeout=600)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    # the page's own headings are level 2: the report's go one level down
    return "\n".join("#" + line if line.startswith("## ") else line
                     for line in done.stdout.splitlines()).strip() + "\n"


def spliced(text: str, example: str) -> str:
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{example}{END}{tail}"


if __name__ == "__main__":
    PAGE.write_text(spliced(PAGE.read_text("utf-8"), output()), "utf-8")
    print(f"wrote the worked example into {PAGE.relative_to(ROOT)}")

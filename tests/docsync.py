"""Generated blocks of the docs: the text between `<!-- generated: NAME -->` and
`<!-- end: NAME -->` is what a test computes. The test fails when they differ; run it with
OPSWEEP_UPDATE_DOCS=1 to write the computed text into the page instead."""

import os
import re
from pathlib import Path


def check(page: Path, name: str, text: str) -> None:
    source = page.read_text("utf-8")
    start, end = f"<!-- generated: {name} -->\n", f"<!-- end: {name} -->"
    found = re.search(re.escape(start) + r"(.*?)" + re.escape(end), source, re.DOTALL)
    assert found, f"{page.name} has no {start.strip()} ... {end} block"
    if found.group(1) == text:
        return
    if os.environ.get("OPSWEEP_UPDATE_DOCS") == "1":
        page.write_text(source[:found.start(1)] + text + source[found.end(1):], "utf-8")
        return
    raise AssertionError(f"{page.name}'s {name} block is stale: run this test with "
                         "OPSWEEP_UPDATE_DOCS=1 to regenerate it")

"""The catalog's bar for arguments (issue 32): every argument a spec's calls reach, read
from torch's own schema of the overloads it traces, is varied over two value classes at
least under the ci profile, or the spec says why in `fixed=`; and each keyword class a
spec reaches is reached at every dtype class it draws (the covering step of the draw)."""

import re
from pathlib import Path

import pytest

from opsweep import coverage as C
from opsweep.catalog.draw import PROFILES
from opsweep.catalog.load import load_catalog
from opsweep.coverage import dtype_class
from opsweep.engine import arguments as A

CATALOG = load_catalog(check_draws=False)


@pytest.fixture(scope="module")
def measured(drawn_once):
    return {name: A.live_features(spec, PROFILES["ci"]) for name, spec in CATALOG.specs.items()}


#: The catalog's way still to go, one "spec argument" a line: arguments no spec varies yet
#: and that have no reason. It only shrinks: an argument short of the bar and not listed
#: fails, and so does a listed one that now meets it (take its line out).
BACKLOG = Path(__file__).with_name("unvaried.txt")
_NEVER = re.compile(r"^(\S+): argument '(\w+)' is never varied")


def backlog() -> set[tuple[str, str]]:
    lines = [line.split("#")[0].split() for line in BACKLOG.read_text().splitlines()]
    return {(parts[0], parts[1]) for parts in lines if parts}


def test_every_argument_is_varied_or_the_spec_says_why(measured):
    problems = [line for name, groups in sorted(measured.items())
                for line in C.bar(CATALOG.specs[name], C.coverage(fs for _, fs in groups))]
    listed = backlog()
    short = {m.groups(): line for line in problems if (m := _NEVER.match(line))}
    new = [line for key, line in short.items() if key not in listed]
    other = [line for line in problems if not _NEVER.match(line)]  # stale or wrong reasons
    met = sorted(f"{spec} {arg}" for spec, arg in listed - set(short))
    assert not new and not other, "short of the bar (vary the argument, or say why in " \
        "fixed=):\n" + "\n".join(new + other)
    assert not met, f"these now meet the bar: remove them from {BACKLOG.name}:\n" + "\n".join(met)


def test_choice_keywords_are_covered_at_every_dtype_class(measured):
    """A boolean, string or None keyword class reached at one dtype class is reached at
    each (where the strategy draws that keyword set at all)."""
    short = []
    for name, groups in sorted(measured.items()):
        by_class: dict[str, set] = {}
        for dtype, features in groups:
            by_class.setdefault(dtype_class(dtype), set()).update(
                (a, c) for o, a, t, c in features
                if o == C.CALL and t in ("bool", "str", "NoneType"))
        every = set().union(*by_class.values()) if by_class else set()
        for cls, have in by_class.items():
            if every - have:
                short.append(f"{name} at {cls}: {sorted(every - have)}")
    # the covering step builds only copies whose keyword set the strategy draws: a class
    # that needs a keyword set a dtype class never draws stays uncovered there
    assert len(short) <= len(measured) // 10, "\n".join(short)


def test_the_covering_step_keeps_the_budget(drawn_once):
    """The argument covering adds at most 4 beyond the budget and each cell the draws
    missed (opsweep.catalog.cells) one: nothing multiplies. The cells are those the run's
    one drawing added (its own plan_for, counted: tests/conftest.py), not planned again."""
    over = {}
    for name, spec in list(CATALOG.specs.items())[::7]:
        size = len(drawn_once(spec, PROFILES["ci"]))
        cells = drawn_once.cells_added[name]
        if size > PROFILES["ci"].max_examples + 4 + cells:
            over[name] = (size, cells)
    assert not over, over

"""The suite's own scheduling (tests/conftest.py): the files it starts first exist, so a
renamed or removed file cannot silently fall back to the end of the run."""

from pathlib import Path

from ..conftest import SLOWEST_FIRST

ROOT = Path(__file__).resolve().parents[2]


def test_every_file_scheduled_first_exists_once():
    assert len(set(SLOWEST_FIRST)) == len(SLOWEST_FIRST)
    assert [p for p in SLOWEST_FIRST if not (ROOT / p).is_file()] == []

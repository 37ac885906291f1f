"""Targets and result keys: the names results are stored under."""

from opsweep.artifact.data import STOCK, Translations
from opsweep.sweep.targets import Key, Target, short_label

TABLE = Translations("examples/custom_translations.py", "TABLE", "0123456789abcdef", ("prims::fmax",))


def test_a_target_is_named_by_its_table():
    assert Target().name == STOCK and Target().is_stock
    assert Target(TABLE).name == "examples/custom_translations.py:TABLE"
    assert not Target(TABLE).is_stock


def test_keys_name_journal_entries_and_sort_by_target_then_spec():
    assert Key(STOCK, "sin").journal == "sin"
    assert Key(TABLE.name, "sin").journal == "sin@examples/custom_translations.py:TABLE"
    keys = [Key(STOCK, "sin"), Key(TABLE.name, "abs"), Key(STOCK, "abs")]
    assert sorted(keys) == [Key(TABLE.name, "abs"), Key(STOCK, "abs"), Key(STOCK, "sin")]


def test_progress_names_a_table_without_its_module():
    assert short_label(STOCK) == ""
    assert short_label(TABLE.name) == "TABLE"
    assert short_label("pkg.tables:EXTRA") == "EXTRA"

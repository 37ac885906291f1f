"""Targets and result keys: the names results are stored under, the kinds' behaviour, and
the targets a configuration gives."""

from pathlib import Path

import pytest

from opsweep import config as cfg
from opsweep import targets as tg
from opsweep.artifact.data import STOCK, Translations
from opsweep.sweep.targets import Key, Planned
from opsweep.targets import KINDS, STOCK_TARGET, TORCHSCRIPT, Kind, Target

TABLE = Translations("examples/custom_translations.py", "TABLE", "0123456789abcdef", ("prims::fmax",))


def test_a_target_is_named_by_its_kind_and_table():
    assert Target().name == STOCK and Target().is_stock
    table = Target(Kind.TABLE, TABLE.name)
    assert table.name == "examples/custom_translations.py:TABLE" and not table.is_stock
    assert Target(Kind.TORCHSCRIPT).name == TORCHSCRIPT
    assert Planned(table, TABLE).name == TABLE.name and not Planned(table, TABLE).is_stock
    assert Planned().is_stock and Planned().entry is None


@pytest.mark.parametrize("target", [Target(), Target(Kind.TABLE, "pkg.tables:EXTRA"),
                                    Target(Kind.TORCHSCRIPT), Target(Kind.OPSET, opset=18),
                                    Target(Kind.OPSET, opset=9)])
def test_a_stored_name_reads_back_as_its_target(target):
    assert tg.of_name(target.name) == target


def test_each_kind_has_one_row_of_behaviour():
    assert set(KINDS) == set(Kind)
    assert [k for k in Kind if KINDS[k].optional] == [Kind.TORCHSCRIPT, Kind.OPSET]
    assert [k for k in Kind if not KINDS[k].dynamo] == [Kind.TORCHSCRIPT]
    assert {KINDS[k].exporter for k in Kind} == {"dynamo", "torchscript"}
    assert tg.label(STOCK) == "stock exporter" and tg.label(TABLE.name) == TABLE.name
    assert tg.unless_stock(STOCK) == "" and tg.unless_stock(TORCHSCRIPT) == TORCHSCRIPT
    assert sorted(["b:T", TORCHSCRIPT, STOCK, "a:T"], key=tg.stock_first) == [
        STOCK, "a:T", "b:T", TORCHSCRIPT]


def test_keys_name_journal_entries_and_sort_by_target_then_spec():
    assert Key(STOCK, "sin").journal == "sin"
    assert Key(TABLE.name, "sin").journal == "sin@examples/custom_translations.py:TABLE"
    keys = [Key(STOCK, "sin"), Key(TABLE.name, "abs"), Key(STOCK, "abs")]
    assert sorted(keys) == [Key(TABLE.name, "abs"), Key(STOCK, "abs"), Key(STOCK, "sin")]


def test_progress_names_a_table_without_its_module():
    assert tg.short(STOCK) == ""
    assert tg.short(TABLE.name) == "TABLE"
    assert tg.short("pkg.tables:EXTRA") == "EXTRA"
    assert tg.short(TORCHSCRIPT) == TORCHSCRIPT


def test_the_configuration_gives_the_targets_once_with_the_command_lines_added(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.opsweep]\ntranslations = ["a.py:T"]\ntorchscript = false\n')
    configured = cfg.load(tmp_path / "pyproject.toml")
    assert configured.targets() == (STOCK_TARGET, Target(Kind.TABLE, "a.py:T"))
    assert configured.targets(["b:U", "a.py:T"], torchscript=True) == (
        STOCK_TARGET, Target(Kind.TABLE, "a.py:T"), Target(Kind.TABLE, "b:U"),
        Target(Kind.TORCHSCRIPT))


def test_an_opset_target_is_named_and_labelled_by_its_opset():
    at18 = Target(Kind.OPSET, opset=18)
    assert at18.name == "opset18" and not at18.is_stock and at18.table == ""
    assert tg.label("opset18") == "opset 18" and tg.short("opset18") == "opset18"
    assert tg.opset_of("opset28") == 28 and tg.opset_of(STOCK) is None
    assert tg.opset_of(TORCHSCRIPT) is None and tg.opset_of("pkg:opset18") is None
    assert KINDS[Kind.OPSET].dynamo and KINDS[Kind.OPSET].exporter == "dynamo"
    # a name only an opset target has: a table's always holds a colon, and no opset is 0
    assert tg.of_name("opset018").kind is Kind.TABLE and tg.of_name("opset0").kind is Kind.TABLE
    assert sorted(["opset28", TORCHSCRIPT, STOCK, "a:T", "opset18"], key=tg.stock_first) == [
        STOCK, "a:T", "opset18", "opset28", TORCHSCRIPT]


def test_opset_targets_come_last_each_once_lowest_first():
    assert tg.configured(["a:T"], True, [28, 18, 28]) == (
        STOCK_TARGET, Target(Kind.TABLE, "a:T"), Target(Kind.TORCHSCRIPT),
        Target(Kind.OPSET, opset=18), Target(Kind.OPSET, opset=28))


def test_the_snippets_check_of_the_opset_reached_runs_and_fails_as_the_exporter_does():
    class Model:
        opset_import = [type("Opset", (), {"domain": "", "version": 18})()]
    found, check = tg.reached_check(28, "model")
    scope = {"model": Model()}
    exec(found, scope)
    with pytest.raises(AssertionError, match="the model stayed at opset 18, not converted to 28"):
        exec(check, scope)
    exec(tg.reached_check(18, "model")[1], scope)

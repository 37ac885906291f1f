"""Drift in review (issue 51): the diff reports, after the grade transitions, every cell
whose largest error grew by more than 2x, or by more than 4 ULP at float16/bfloat16, even
within tolerance, largest growth first, naming the pin that moved; a cell whose numbers
are the same says nothing. (A real onnxruntime move: tests/integration/test_drift_pins.py;
the bot's comment: tests/github/test_publish.py.)"""

import json
from dataclasses import replace

from opsweep.artifact import data as art
from opsweep.artifact.diff import diff
from opsweep.artifact.drift import drift
from opsweep.bot.comment import to_json, to_markdown
from opsweep.cli.main import main
from opsweep.model import Stage

from ..factories import FP, cell, errored, result, with_target

MOVED = replace(FP, onnxruntime="1.33.0")


def _pair(old_cells, new_cells, new_fp=MOVED, digest="0123456789abcdef"):
    old = art.make_artifact(FP, "ci", 25, 0, {"softmax": errored(["softmax"], *old_cells),
                                              "sin": result(["sin"], Stage.OK)})
    new = art.make_artifact(new_fp, "ci", 25, 0, {
        "softmax": errored(["softmax"], *new_cells, digest=digest),
        "sin": result(["sin"], Stage.NO_TRANSLATION)})
    return old, new


def test_a_half_precision_cell_that_grew_by_more_than_4_ulp_is_reported_with_the_pin():
    old, new = _pair([cell(ulp=2, max_abs=0.0009766)], [cell(ulp=9, max_abs=0.001466)])
    d = diff(old, new)
    (x,) = d.drift
    assert (x.spec, x.new.key, x.old.ulp, x.new.ulp, x.pins) == (
        "softmax", "float16 3", 2, 9, "onnxruntime 1.33.0")
    text = to_markdown(d, new)
    line = ("- `softmax` float16 rank 3: max error 2 → 9 ULP (0.000977 → 0.00147) with "
            "`onnxruntime 1.33.0`")
    assert line in text
    # after the grade transitions
    assert text.index("### Regressions") < text.index("### Numerics drift") < text.index(line)
    (item,) = to_json(d)["drift"]
    assert (item["old"]["ulp"], item["new"]["ulp"], item["pins"]) == (2, 9, "onnxruntime 1.33.0")


def test_identical_or_small_changes_say_nothing():
    same = [cell(), cell("float32", 2, 1e-6), cell("bfloat16", 1, 0.01, ulp=1)]
    old, new = _pair(same, same)
    assert diff(old, new).drift == ()
    assert "Numerics drift" not in to_markdown(diff(old, new), new)
    # +3 ULP with the error under 2x; 1.9x at float32: within the thresholds
    old, new = _pair([cell(ulp=2, max_abs=0.001), cell("float32", 2, 1e-6)],
                     [cell(ulp=5, max_abs=0.0019), cell("float32", 2, 1.9e-6)])
    assert diff(old, new).drift == ()
    # smaller errors never drift
    old, new = _pair([cell(ulp=9, max_abs=0.004)], [cell(ulp=2, max_abs=0.001)])
    assert diff(old, new).drift == ()


def test_drift_is_ordered_by_growth_and_counts_either_rule():
    old, new = _pair(
        [cell("float32", 2, 1e-6), cell("float32", 3, 0.0), cell(ulp=10, max_abs=0.01),
         cell("bfloat16", 1, 0.01, ulp=1)],
        [cell("float32", 2, 2.5e-6), cell("float32", 3, 1e-7), cell(ulp=16, max_abs=0.015),
         cell("bfloat16", 1, 0.05, ulp=5)])
    found = [(x.new.key, round(x.growth, 6)) for x in drift(old, new)]
    assert found == [("float32 3", float("inf")), ("bfloat16 1", 5.0), ("float32 2", 2.5),
                     ("float16 3", 1.5)]  # the last by ULP alone: +6


def test_a_changed_spec_or_a_cell_one_side_lacks_is_not_drift():
    old, new = _pair([cell(ulp=2)], [cell(ulp=40, max_abs=0.1)], digest="fedcba9876543210")
    assert diff(old, new).drift == ()  # other draws: measured anew
    old, new = _pair([cell(rank=2)], [cell(rank=3, ulp=40, max_abs=0.1)])
    assert diff(old, new).drift == ()


def test_unchanged_pins_say_so_and_a_custom_targets_cells_are_named(tmp_path):
    stock = {"softmax": errored(["softmax"], cell())}
    old = with_target(stock, {"softmax": errored(["softmax"], cell("float32", 2, 1e-6))})
    new = with_target(stock, {"softmax": errored(["softmax"], cell("float32", 2, 3e-6))})
    text = to_markdown(diff(old, new), new)
    assert ("- `softmax` (with `examples/custom_translations.py:TABLE`) float32 rank 2: max error 1e-06 → 3e-06 "
            "at unchanged pins") in text


def test_opsweep_diff_prints_the_drift_section(tmp_path, capsys):
    old, new = _pair([cell(ulp=2, max_abs=0.0009766)], [cell(ulp=9, max_abs=0.001466)])
    paths = [tmp_path / "old.json", tmp_path / "new.json"]
    for path, artifact in zip(paths, (old, new)):
        art.save(path, artifact)
    assert main(["diff", *map(str, paths)]) == 1  # sin regressed
    assert "`softmax` float16 rank 3: max error 2 → 9 ULP" in capsys.readouterr().out
    assert main(["diff", *map(str, paths), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["drift"][0]["spec"] == "softmax"


def test_names_from_the_artifact_reach_the_comment_only_in_code_spans():
    hostile = "1.0 @admin [x](http://e.invalid) <b>"
    old, new = _pair([cell(ulp=2)], [cell(ulp=9)], new_fp=replace(FP, onnxruntime=hostile))
    text = to_markdown(diff(old, new), new)
    (line,) = [x for x in text.splitlines() if "max error 2 → 9 ULP" in x]
    assert line.endswith(f" with `onnxruntime {hostile}`")
    assert line.startswith("- `softmax` float16 rank 3")

"""The reuse account: what a regeneration measured again and why, from the sweeps' run logs
to the review bot's comment, checked as data a pull request chose."""

import json

import pytest

from opsweep.artifact import account
from opsweep.artifact import data as art
from opsweep.artifact.account import UNCHANGED
from opsweep.artifact.diff import diff
from opsweep.bot.comment import account_lines, to_markdown
from opsweep.errors import ArtifactError
from opsweep.model import Stage
from opsweep.sweep.journal import write_run
from opsweep.sweep.reuse import Decision

from ..factories import FP, result


def line(spec, reused, why, target="stock"):
    return {"target": target, "spec": spec, "reused": reused, "why": why, "reason": why + ": x"}


def test_the_account_counts_each_reason_per_target_and_names_changed_specs():
    lines = [line("roll", False, "spec changed"), line("sin", False, "rotation"),
             line("cos", False, "rotation"), line("lstm", False, "machine failure"),
             line("tan", True, UNCHANGED), line("abs", True, UNCHANGED),
             line("roll", False, "spec changed", target="t.py:TABLE"),
             line("sin", False, "rotation")]  # a spec two shards name counts once
    a = account.from_run_logs(lines)
    stock = a.targets["stock"]
    assert stock.remeasured == {"spec changed": 1, "rotation": 2, "machine failure": 1}
    assert stock.reused == {UNCHANGED: 2} and stock.changed == ("roll",)
    assert a.targets["t.py:TABLE"].measured == 1
    (text, _) = account_lines(a)
    assert text == ("- `stock` re-measured 4: 2 `rotation`; 1 `machine failure`; 1 `spec changed` "
                    "(`roll`); reused 2: 2 because nothing that could change them moved.")


def test_the_account_travels_as_a_file_and_comes_back_equal(tmp_path):
    a = account.from_run_logs([line(f"s{i}", False, "new spec") for i in range(14)]
                              + [line("t", True, "nightly result supersedes ci"),
                                 line("t", False, "rotation",
                                      target="examples/custom_translations.py:TABLE")])
    path = tmp_path / account.ACCOUNT_FILE
    account.save(path, a)
    back = account.load(path)
    assert back == a and back.targets["stock"].changed_count == 14
    assert len(back.targets["stock"].changed) == account.MAX_NAMED
    stock = account_lines(back)[1]
    assert "(`s0`, `s1`" in stock and "and 4 more)" in stock


@pytest.mark.parametrize("field, value, where", [
    ("changed", ["[x](https://evil.example)"], "targets.'stock'.changed"),
    ("changed", ["a"] * 11, "targets.'stock'.changed"),
    ("remeasured", {"<script>": 1}, "targets.'stock'.remeasured"),
    ("remeasured", {"rotation": -1}, "targets.'stock'.remeasured"),
    ("reused", {"rotation": True}, "targets.'stock'.reused"),
])
def test_a_forged_account_is_refused_naming_the_field(tmp_path, field, value, where):
    path = tmp_path / account.ACCOUNT_FILE
    account.save(path, account.from_run_logs([line("roll", False, "spec changed")]))
    data = json.loads(path.read_text())
    data["targets"]["stock"][field] = value
    path.write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match=rf"{account.ACCOUNT_FILE}.*{where}"):
        account.load(path)


def test_an_oversized_account_is_refused_unread(tmp_path):
    path = tmp_path / account.ACCOUNT_FILE
    path.write_text(" " * (account.MAX_BYTES + 1))
    with pytest.raises(ArtifactError, match="over 65536 bytes"):
        account.load(path)


def test_the_run_log_beside_an_artifact_is_its_account_only_when_it_wrote_it(tmp_path):
    out = tmp_path / "a.json"
    decisions = {"stock": {"roll": Decision(False, "spec changed"), "sin": Decision(True, UNCHANGED)}}
    write_run(account.run_path(out), {"artifact": "a.json", "regen_index": 3}, decisions)
    assert account.beside([(out, 3)]).targets["stock"].remeasured == {"spec changed": 1}
    assert account.beside([(out, 4)]) is None  # an earlier sweep's log
    assert account.beside([(tmp_path / "b.json", 3)]) is None  # no log at all


def test_the_comment_says_what_was_measured_again_under_the_environment():
    old = art.make_artifact(FP, "ci", 25, 0, {"sin": result(["sin"], Stage.OK)})
    new = art.make_artifact(FP, "ci", 25, 1, {"sin": result(["sin"], Stage.OK)})
    a = account.from_run_logs([line("sin", True, UNCHANGED)])
    text = to_markdown(diff(old, new), new, account=a)
    assert "Environment unchanged" in text
    assert "What this run measured:\n\n- `stock` re-measured 0; reused 1: 1 because nothing " \
           "that could change them moved." in text
    assert "What this run measured" not in to_markdown(diff(old, new), new)


def moved_line(spec, target="stock"):
    return {"target": target, "spec": spec, "reused": False, "why": "fingerprint changed",
            "reason": "fingerprint changed (onnxruntime 1.31.1 → 1.32.0)"}


def test_the_export_cache_s_counts_travel_from_the_run_logs_to_the_comment(tmp_path):
    """The shards' run-log headers carry what their groups did with the export cache; the
    account adds them up per target and names the fingerprint's moved fields, and the
    comment says which stages were measured again and from how many cached models."""
    outs = [tmp_path / "one.json", tmp_path / "two.json"]
    for k, out in enumerate(outs):
        write_run(account.run_path(out), {"artifact": out.name, "regen_index": 0,
                                         "cache": {"stock": {"loaded": 15500 + k}},
                                         "moved": ["onnxruntime"]},
                  {"stock": {f"s{k}": Decision(False, "fingerprint changed",
                                               " (onnxruntime 1.31.1 → 1.32.0)")}})
    a = account.beside([(o, 0) for o in outs])
    assert a.moved == ("onnxruntime",) and a.targets["stock"].cache == {"loaded": 31001}
    path = tmp_path / account.ACCOUNT_FILE
    account.save(path, a)
    assert account.load(path) == a
    lines = account_lines(account.load(path))
    assert lines[0] == ("- `onnxruntime` moved: runtime and numerics re-measured from 31,001 "
                        "cached models (no export depends on what moved).")
    assert lines[1].endswith("; exports: 31,001 from the export cache, 0 made anew.")
    fresh = account.from_run_logs([moved_line("a")], {"stock": {"exported": 40}}, ["onnxruntime"])
    assert account_lines(fresh)[0] == \
        "- `onnxruntime` moved: every stage re-measured (40 exports made)."
    assert account_lines(account.from_run_logs([line("a", False, "rotation")]))[0].startswith(
        "- `stock` re-measured 1")  # nothing moved: no headline


@pytest.mark.parametrize("field, value, where", [
    ("cache", {"loaded": "31000"}, "targets.'stock'.cache"),
    ("cache", {"`](https://evil.example)": 1}, "targets.'stock'.cache"),
    ("cache", {"stolen": 1}, "targets.'stock'.cache"),
])
def test_a_forged_cache_count_is_refused_naming_the_field(tmp_path, field, value, where):
    path = tmp_path / account.ACCOUNT_FILE
    account.save(path, account.from_run_logs([moved_line("roll")], {"stock": {"loaded": 1}},
                                             ["onnxruntime"]))
    data = json.loads(path.read_text())
    data["targets"]["stock"][field] = value
    path.write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match=rf"{account.ACCOUNT_FILE}.*{where}"):
        account.load(path)
    data["targets"]["stock"][field] = {"loaded": 1}
    data["moved"] = ["<img src=x onerror=alert(1)>"]
    path.write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match="moved"):
        account.load(path)

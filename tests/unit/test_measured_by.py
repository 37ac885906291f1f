"""Points and diffs compare only what the same specs measured (issue 32): a record names,
per operator, the specs that measured it; a grade that moved while they changed (a catalog
entry or the engine: both in a spec's digest) is *measured anew*, never a regression, in
`opsweep diff`, the bot's comment and the history view, and "full since" stops there."""

import json
import re
from dataclasses import replace

import opsweep
from opsweep.artifact import data as art
from opsweep.artifact import records as history
from opsweep.artifact.diff import Kind, comparable, diff, measured_by
from opsweep.bot.comment import to_json, to_markdown
from opsweep.cli.main import main
from opsweep.model import Stage
from opsweep.page.detail import releases
from opsweep.page.history import render as render_history

from ..factories import FP, result

NEW_FP = replace(FP, torch="2.14.1")
NEW_DIGEST = "fedcba9876543210"  # the factories' spec digest is 0123456789abcdef


def measured(fingerprint, sin=(Stage.OK,), cos=(Stage.OK,), sin_digest=""):
    """`sin` and `cos`, each by one spec; `sin_digest`: the sin spec's digest if changed."""
    sin_spec = result(["sin"], *sin)
    if sin_digest:
        sin_spec = replace(sin_spec, digest=sin_digest)
    return art.make_artifact(fingerprint, "ci", 25, 0, {"sin": sin_spec,
                                                        "cos": result(["cos"], *cos)})


def both_regress(**new):
    """Old: both full. New: both full → partial; `new` changes the sin spec's digest."""
    failing = (Stage.OK, Stage.NO_TRANSLATION)
    return measured(FP), measured(NEW_FP, failing, failing, **new)


def test_a_changed_spec_digest_moves_its_operator_to_measured_anew_not_regression(tmp_path):
    old, new = both_regress(sin_digest=NEW_DIGEST)
    d = diff(old, new)
    assert [(t.op, t.axis, t.kind) for t in d.transitions] == [
        ("cos", "export", Kind.REGRESSION), ("sin", "export", Kind.MEASURED_ANEW)]
    (anew,) = d.measured_anew
    assert [g.stage for g in anew.failures] == [Stage.NO_TRANSLATION]  # what it now shows
    assert to_json(d)["counts"]["measured anew"] == 1 and to_json(d)["counts"]["regression"] == 1
    text = to_markdown(d, new)
    regressions, anew_section = text.split("### Regressions")[1].split("### Measured anew")
    assert "<code>cos</code>" in regressions and "sin" not in regressions
    assert "`sin` export: full → partial (now failing: `float32 rank 1: no-translation" \
        in anew_section
    # only cos regressed: the same artifacts with cos unchanged exit 0
    calm = measured(NEW_FP, (Stage.OK, Stage.NO_TRANSLATION), sin_digest=NEW_DIGEST)
    a, b = tmp_path / "old.json", tmp_path / "new.json"
    art.save(a, old)
    art.save(b, calm)
    assert main(["diff", str(a), str(b)]) == 0
    assert "### Regressions" not in to_markdown(diff(old, calm), calm)


def test_an_unchanged_digest_keeps_the_regression():
    d = diff(*both_regress())
    assert {t.kind for t in d.transitions} == {Kind.REGRESSION} and d.failed


def test_the_measuring_digest_names_the_specs_and_their_digests():
    old, new = both_regress(sin_digest=NEW_DIGEST)
    a, b = measured_by(old), measured_by(new)
    assert set(a) == {"sin", "cos"} and all(re.fullmatch(r"[0-9a-f]{8}", v) for v in a.values())
    assert a["cos"] == b["cos"] and a["sin"] != b["sin"]
    assert comparable(None, None) and not comparable(None, a["sin"])


def test_the_record_names_what_measured_it_and_a_rewrite_is_byte_identical(tmp_path):
    from datetime import UTC, datetime
    first = datetime(2026, 1, 1, tzinfo=UTC)
    path = history.write(measured(FP), tmp_path, now=first)
    before = path.read_bytes()
    data = json.loads(before)
    assert data["opsweep"] == opsweep.__version__
    assert data["measured_by"] == measured_by(measured(FP))
    assert history.write(measured(FP), tmp_path, now=datetime(2026, 2, 1, tzinfo=UTC))
    assert path.read_bytes() == before  # same content: same bytes, date included
    # a spec digest alone changes the record's content, so its date moves
    history.write(measured(FP, sin_digest=NEW_DIGEST), tmp_path,
                  now=datetime(2026, 3, 1, tzinfo=UTC))
    assert json.loads(path.read_text())["generated_at"].startswith("2026-03-01")


def _unnamed(path):
    """The record as opsweep wrote it before records named what measured them."""
    data = json.loads(path.read_text())
    del data["measured_by"], data["opsweep"]
    path.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n")


def test_records_without_the_field_compare_only_with_each_other(tmp_path):
    old, new = both_regress()
    a, b = history.write(old, tmp_path), history.write(new, tmp_path)
    _unnamed(a)
    unnamed, named = history.load_all(tmp_path)
    assert unnamed.measured_by is None and unnamed.opsweep == "" and unnamed.catalog == ""
    [bump] = history.bumps([unnamed, named])
    assert {c.kind for c in bump.changes["stock"]} == {Kind.MEASURED_ANEW}
    assert bump.anew == (2, 2)
    _unnamed(b)
    [bump] = history.bumps(history.load_all(tmp_path))
    assert {c.kind for c in bump.changes["stock"]} == {Kind.REGRESSION}  # unnamed == unnamed
    assert bump.anew == (0, 2)


def test_the_history_view_lists_a_changed_catalog_apart_from_torch_transitions(tmp_path):
    old, new = both_regress(sin_digest=NEW_DIGEST)
    history.write(old, tmp_path)
    history.write(new, tmp_path)
    records = history.load_all(tmp_path)
    [bump] = history.bumps(records)
    assert [(c.op, c.kind) for c in bump.changes["stock"]] == [("cos", "regression"),
                                                                ("sin", "measured anew")]
    page = render_history(records)
    step = page.split("### torch 2.13.0 → 2.14.1")[1]
    assert ("Measured anew by a changed catalog or engine: 1 of the 2 operators both points "
            "measured were measured by different specs.") in step
    def section(kind):
        return step.split(f'<details class="opsweep-kind" data-kind="{kind}"')[1].split(
            "</details>")[0]
    regression, rest = section("regression"), section("measured anew")
    assert 'data-op="cos"' in regression and 'data-op="sin"' not in regression
    assert "<summary>Measured anew by a changed catalog or engine (1)</summary>" in rest
    assert "<a href=\"../operators/sin/\">sin</a> (export full→partial)" in rest
    assert f"catalog `{records[1].catalog}`, opsweep {opsweep.__version__}" in page
    assert records[0].catalog != records[1].catalog


def test_full_since_does_not_walk_back_across_a_changed_catalog(tmp_path):
    history.write(measured(FP), tmp_path)
    history.write(measured(replace(FP, torch="2.14.0")), tmp_path)
    history.write(measured(NEW_FP, sin_digest=NEW_DIGEST), tmp_path)
    records = history.load_all(tmp_path)
    assert releases(records, "cos")[1].version == "2.13.0"  # the same specs throughout
    assert releases(records, "sin")[1].version == "2.14.1"  # measured anew there


def test_the_support_pages_changed_filter_leaves_out_an_operator_measured_anew(tmp_path):
    from opsweep.page.view import last_bump
    history.write(measured(FP), tmp_path)
    failing = (Stage.OK, Stage.NO_TRANSLATION)
    history.write(measured(NEW_FP, failing, failing, sin_digest=NEW_DIGEST), tmp_path)
    bump, changed = last_bump(history.load_all(tmp_path))
    assert bump == ("2.13.0", "2.14.1") and changed["stock"] == frozenset({"cos"})


def test_a_newer_opsweep_measuring_the_same_leaves_the_record_as_it_is(tmp_path, monkeypatch):
    path = history.write(measured(FP), tmp_path)
    before = path.read_bytes()
    monkeypatch.setattr(opsweep, "__version__", "9.9.9")
    history.write(measured(FP), tmp_path)
    assert path.read_bytes() == before
    history.write(measured(FP, sin_digest=NEW_DIGEST), tmp_path)  # content moved: it says so
    assert json.loads(path.read_text())["opsweep"] == "9.9.9"


def test_measured_anew_is_kept_within_the_comment_limit():
    from opsweep.bot.comment import GITHUB_COMMENT_LIMIT
    old, new = both_regress(sin_digest=NEW_DIGEST)
    d = diff(old, new)
    many = replace(d, transitions=d.transitions * 1500)
    text = to_markdown(many, new)
    assert len(text) <= GITHUB_COMMENT_LIMIT and "### Measured anew" in text

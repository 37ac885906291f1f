"""The opset targets (``opsetN``: the dynamo exporter at opset N) in the artifact, the diff,
the bot's comment, the history, the support page, each operator's page and the migration
page's opsets view: an exporter target like the TorchScript one, its torch release and its
opset its fingerprint part (issue 49)."""

import ast
import json
import re
from dataclasses import replace

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.diff import diff
from opsweep.artifact.records import record
from opsweep.bot.comment import to_markdown
from opsweep.errors import ArtifactError
from opsweep.model import Stage
from opsweep.page import opsets
from opsweep.page.migration import build as build_migration
from opsweep.page.support import build_view, render_details, render_migration, render_page
from opsweep.page.snippets import snippet

from ..factories import DOCUMENTED, FP, LINKS, LISTING, result

AT18 = art.ExporterEntry("opset18", "2.13.0", 18)
AT28 = art.ExporterEntry("opset28", "2.13.0", 28)
NOT_REACHED = "OpsetNotReached: the model stayed at opset 18, not converted to 28"


def _artifact(sin28=Stage.TRANSLATION_ERROR, cos18=Stage.RUNTIME, at28=AT28, fp=FP):
    """sin: full at opsets 18 and 20, none at 28; cos: fails to run at 18 only."""
    stock = {"sin": result(["sin"], Stage.OK, Stage.OK), "cos": result(["cos"], Stage.OK)}
    at18 = {"sin": stock["sin"], "cos": result(["cos"], cos18)}
    high = {"sin": result(["sin"], sin28, sin28), "cos": stock["cos"]}
    return art.make_artifact(fp, "ci", 25, 0, stock, targets={
        "opset18": (AT18, at18), "opset28": (at28, high)})


@pytest.fixture(scope="module")
def catalog():
    from opsweep.catalog.load import load_catalog
    return load_catalog(check_draws=False)


def test_round_trip_through_canonical_bytes(tmp_path):
    artifact = _artifact()
    path = tmp_path / "a.json"
    art.save(path, artifact)  # validated against the schema on the way
    data = json.loads(path.read_text())
    assert data["targets"]["opset28"]["fingerprint"] == {
        "exporter": "opset28", "torch": "2.13.0", "opset": 28}
    assert "cos" not in data["targets"]["opset28"]["specs"]  # same as stock: not written
    loaded = art.load(path)
    assert loaded == artifact and loaded.target_names == ("stock", "opset18", "opset28")
    assert loaded.grades("sin", "opset28").export.value == "none"


def test_an_opset_target_filed_under_another_name_is_refused():
    data = art.to_data(_artifact())
    data["targets"]["opset18"]["fingerprint"]["exporter"] = "opset19"
    with pytest.raises(ArtifactError, match="names 'opset19', not the target it is filed under"):
        art.from_data(json.loads(json.dumps(data)))
    data = art.to_data(_artifact())
    data["targets"]["opset"] = data["targets"].pop("opset18")
    with pytest.raises(ArtifactError, match="targets"):
        art.from_data(data)


def test_transitions_of_an_opset_target_are_reported_with_its_own_call():
    old, new = _artifact(sin28=Stage.OK), _artifact()
    d = diff(old, new)
    assert [(t.target, t.op, t.axis, t.kind.value) for t in d.regressions] == [
        ("opset28", "sin", "export", "regression")]
    text = to_markdown(d, new)
    assert "<code>sin</code> export (with <code>opset28</code>): full → none" in text
    assert "opset_version=28" in text and "not converted to 28" in text  # its repro checks
    gone = _artifact(at28=replace(AT28, absent="the canary (x + y) stopped at translation-error"))
    assert "target opset28 absent from the new pin set" in diff(old, gone).target_changes[0]


@pytest.mark.parametrize("dynamic", [False, True])
def test_its_snippet_is_the_public_call_at_its_opset(dynamic):
    text = snippet("sin", "f32[2]", translations="opset28", dynamic=dynamic)
    ast.parse(text)
    assert "dynamo=True" in text and "opset_version=28" in text
    assert "load_translations" not in text and ("dynamic_shapes=shapes" in text) is dynamic


def test_the_history_records_it():
    rec = record(_artifact())
    assert rec.translations["opset28"] == {"exporter": "opset28", "torch": "2.13.0", "opset": 28,
                                           "absent": ""}
    assert rec.targets["opset28"]["sin"].startswith("n")


def test_the_support_page_has_its_column_filter_and_section(catalog):
    view = build_view(LISTING, catalog, _artifact(), DOCUMENTED, frozenset(), LINKS, "2.13.0")
    page = render_page(view)
    assert 'data-targets="stock|opset18|opset28"' in page  # the filters' target box
    assert '<tr data-op="sin" data-core="1" data-g="fff- fff- n---"' in page
    assert "with\nthe dynamo exporter at opset 18 and the dynamo exporter at opset 28 (see" in page
    assert "### `opset28`\n\nThe dynamo exporter of torch 2.13.0 at opset 28, " in page
    assert "opset_version=28)`, beside the stock exporter's opset 20" in page
    assert "**full aten listing at opset 28**: 1 of 5 measured full" in page
    # the operators it grades otherwise are counted here, shown on the migration page's
    # opsets view (each with its smallest example telling the opsets apart)
    assert "Its 1 operator graded otherwise than with the stock exporter, each\nwith the " \
           "smallest example that tells the opsets apart: [Moving between opsets]" \
           "(migrating.md#opsets)." in page
    assert "| Operator | Stock exporter | At opset 28 |" not in page


def test_each_operator_page_says_where_it_fails_with_both_calls(catalog):
    artifact = _artifact()
    view = build_view(LISTING, catalog, artifact, DOCUMENTED, frozenset(), LINKS, "2.13.0")
    steps = opsets.build(artifact, listed=[r.name for r in view.rows])
    pages = render_details(view, None, steps)
    sin = pages["sin.md"]
    assert "## Across opsets { #opsets }" in sin
    assert re.search(r"\nopset 18: <b class=\"g-f\">.* · opset 20 \(stock\): <b class=\"g-f\">"
                     r".* · opset 28: <b class=\"g-n\">n<i>one</i></b>", sin)
    assert "Fails at opset 28 only (export): translation-error, `E: x`." in sin
    assert "<p>opset_version=28: f32[0] (spec sin); fails at translation-error</p>" in sin
    assert "opset_version=28)" in sin and "&#39;opset18&#39;" not in sin
    assert "<td class=\"wrap\">opset28</td><td>static</td><td>translation-error</td>" in sin
    cos = pages["cos.md"]
    assert "Fails at opset 18 only (runtime): runtime, `E: x`." in cos
    assert "## Across opsets" not in render_details(view)["sin.md"]  # only with the view


def test_the_migration_page_gains_the_view_between_the_two_ends(catalog):
    artifact = _artifact()
    steps = opsets.build(artifact)
    assert [p.label for p in steps.points] == ["opset 18", "opset 20 (stock)", "opset 28"]
    assert {r.name: r.kind for r in steps.rows} == {"sin": "lose", "cos": "runs"}
    assert (steps.counts["lose"], steps.counts["runs"], steps.counts["operators"]) == (1, 1, 2)
    (sin,) = [r for r in steps.rows if r.name == "sin"]
    assert sin.pair is not None and sin.pair.worse == "opset 28" and sin.pair.axis == "export"
    text = render_migration(build_migration(artifact, {}), steps)
    assert "## Moving between opsets: 18 to 28 { #opsets }" in text
    assert "drawn examples at\nopset 18, opset 20 (stock) and opset 28.\n" in text
    assert "### What you lose moving up (1) { #opsets-lose }" in text
    assert "Opset 18 exports it; at opset 28 none of its examples export." in text
    assert "<td class=\"wrap\">opset 28: translation-error — E: x</td>" in text
    assert "<td class=\"wrap\">opset 18: runtime — E: x</td>" in text  # cos runs at 28 only


def test_without_opset_targets_nothing_changes():
    from ..factories import with_target
    plain = with_target({"sin": result(["sin"], Stage.OK)}, {"sin": result(["sin"], Stage.OK)})
    steps = opsets.build(plain)
    assert not steps.measured and steps.rows == ()
    assert render_migration(build_migration(plain, {})) == render_migration(
        build_migration(plain, {}), steps)
    assert "#opsets" not in render_migration(build_migration(plain, {}), steps)


def test_one_opset_target_is_set_against_the_stock_opset_and_an_absent_one_said():
    artifact = _artifact(at28=replace(AT28, absent="gone"))
    steps = opsets.build(artifact)
    assert [p.opset for p in steps.points] == [18, 20] and steps.absent == (("opset28", "gone"),)
    assert "Absent from this pin set: `opset28` (gone)." in render_migration(
        build_migration(artifact, {}), steps)

"""Opset targets with real torch, onnx and onnxruntime (issue 49): the fast path's opset
exporter, which takes the stock export's capture and decomposition, gives the outcomes of
the public call ``torch.onnx.export(..., dynamo=True, opset_version=N)`` at each opset,
static and dynamic, and the same models; a model the exporter leaves at another opset is
a failed export, as the public call's own model shows; and a real sweep records the
targets, keeps them apart in the export cache and measures them anew when the artifact it
builds on has none."""

import contextlib
import json

import onnx
import pytest
import torch

from opsweep.artifact import data as art
from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.cli.main import main
from opsweep.engine.sweepconfig import Tuning
from opsweep.engine.exporters import exporters_for
from opsweep.engine.group import run_targets
from opsweep.engine.opsets import OpsetExporter, PublicOpsetExporter, model_opset
from opsweep.engine.runner import build_call
from opsweep.model import Grade, Stage
from opsweep.targets import STOCK, STOCK_TARGET, Kind, Target

from ..factories import recording

pytestmark = pytest.mark.integration

#: ok, capture, no-translation, translation-error at 28 only (Gelu: no adapter from its
#: opset), runtime at 18 and 20 only (GroupNormalization from opset 21), numerics
CASES = ["sin", "equal", "cdist", "gelu", "group_norm", "atan2"]
OPSETS = (18, 28)


def _targets(*opsets: int) -> tuple[Target, ...]:
    return (STOCK_TARGET, *(Target(Kind.OPSET, opset=n) for n in opsets))


@pytest.fixture(scope="module")
def both():
    """The fast path's exporters and the public call's, for the stock target and each opset."""
    return exporters_for(_targets(*OPSETS), True), exporters_for(_targets(*OPSETS), False)


def _groups(spec, count=2):
    return group_by_signature(draw_examples(spec, PROFILES["ci"]))[:count]


@pytest.fixture(scope="module")
def fast_runs(specs, both):
    """A case's groups, each with the fast path's outcomes at every target (static and
    dynamic), measured once for the module's tests that read them."""
    fast, _ = both
    done: dict = {}

    def get(name: str):
        if name not in done:
            done[name] = [(group, run_targets(specs[name], group, fast, dynamic=True))
                          for group in _groups(specs[name])]
        return done[name]
    return get


@pytest.fixture(scope="module")
def public_runs(specs, both, fast_runs):
    """A case's groups (those of `fast_runs`), each with the public call's outcomes at every
    target (static and dynamic), and the public call's static model (or what it raised) of
    each group's exported example by target: measured once for the module's tests that read
    them (a public export costs some 0.7 s of CPU; the models are read, never changed)."""
    _, public = both
    done: dict = {}

    def get(name: str):
        if name not in done:
            runs = []
            for group, _ in fast_runs(name):
                with contextlib.ExitStack() as stack:
                    made = {target: stack.enter_context(recording(exporter))
                            for target, exporter in public.items()}
                    outcomes = run_targets(specs[name], group, public, dynamic=True)
                models = {}
                if outcomes[STOCK][0].stage is not Stage.INVALID:  # group[0] was exported
                    for target, exports in made.items():
                        (models[target],) = [r for _, shapes, r in exports if shapes is None]
                runs.append((group, outcomes, models))
            done[name] = runs
        return done[name]
    return get


@pytest.mark.parametrize("name", CASES)
def test_the_same_outcomes_as_the_public_call_at_each_opset(both, fast_runs, public_runs, name):
    _, public = both
    assert {type(e) for n, e in public.items() if n != STOCK} == {PublicOpsetExporter}
    for (group, got), (same, want, _) in zip(fast_runs(name), public_runs(name), strict=True):
        assert group is same
        assert got == want


def test_the_opsets_take_the_stock_export_and_reach_every_stage(both, fast_runs):
    fast, _ = both
    stages = {n: set() for n in fast}
    for name in CASES:
        for _, runs in fast_runs(name):
            for target, outcomes in runs.items():
                stages[target] |= {o.stage for o in outcomes}
    for n in OPSETS:
        exporter = fast[f"opset{n}"]
        assert isinstance(exporter, OpsetExporter) and exporter.taken > 0
    assert Stage.TRANSLATION_ERROR in stages["opset28"] - stages[STOCK]  # gelu's conversion
    assert Stage.RUNTIME in stages["opset18"]
    assert {Stage.OK, Stage.CAPTURE, Stage.NO_TRANSLATION, Stage.NUMERICS} <= stages["opset18"]


def test_the_same_models_as_the_public_call(specs, both, public_runs):
    """Where the export passes, the opset target's model is the public call's, node for node,
    and at its opset. (The public call's model is the one the public run of the group made:
    the same export of the same example.)"""
    fast, public = both
    for name in ("sin", "group_norm", "atan2"):
        for group, _, made in public_runs(name)[:1]:
            call = build_call(specs[name], group[0])
            fast[STOCK].export(call, tuple(t.clone() for t in call.inputs))  # what the opsets take
            for n in OPSETS:
                got = fast[f"opset{n}"].export(call, tuple(t.clone() for t in call.inputs))
                want = made.get(f"opset{n}")
                if want is None:  # the run exported another example: the public call now
                    want = public[f"opset{n}"].export(call, tuple(t.clone() for t in call.inputs))
                if isinstance(want, Exception):
                    raise want
                assert model_opset(got) == n
                assert [(x.op_type, x.domain) for x in got.graph.node] == \
                    [(x.op_type, x.domain) for x in want.graph.node]
                assert got.opset_import == want.opset_import and got.graph.input == want.graph.input


def test_a_registry_that_decomposes_otherwise_exports_in_full(specs):
    """From opset 23 the registry translates aten.rms_norm, which the stock opset's
    decomposes: the stock export's trace shows it, so the opset target does not take that
    decomposition; its outcomes are still the public call's."""
    fast = exporters_for(_targets(23), True)
    public = exporters_for(_targets(23), False)
    exporter = fast["opset23"]
    assert "aten::rms_norm" in exporter.shares
    for group in _groups(specs["rms_norm"]):
        assert run_targets(specs["rms_norm"], group, fast, dynamic=True) == \
            run_targets(specs["rms_norm"], group, public, dynamic=True)
    assert exporter.taken == 0 and exporter.retraced + exporter.skipped + exporter.traced_once > 0


def test_a_model_left_at_another_opset_fails_its_export(specs, public_runs):
    """The public call itself hands back gelu's model at opset 18 when asked for 28 (the
    version converter has no adapter for Gelu): measured as a failed export, with why (the
    outcome of the group's first example in its public run, which exports that example
    as a run of it alone does)."""
    group, outcomes, _ = public_runs("gelu")[0]
    call = build_call(specs["gelu"], group[0])
    program = torch.onnx.export(call, tuple(call.inputs), dynamo=True, opset_version=28,
                                verbose=False)
    assert model_opset(program.model_proto) == 18
    outcome = outcomes["opset28"][0]
    assert outcome.stage is Stage.TRANSLATION_ERROR
    assert outcome.error.startswith("OpsetNotReached: the model stayed at opset 18, not "
                                    "converted to 28: ") and "Gelu" in outcome.error


def test_the_export_cache_keeps_each_opset_apart():
    made = exporters_for(_targets(*OPSETS), True, Tuning())
    identities = {name: e.identity for name, e in made.items()}
    assert len(set(identities.values())) == 3
    assert "opset 18" in identities["opset18"] and "opset 28" in identities["opset28"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory, outside_project):
    out = tmp_path_factory.mktemp("opsets") / "a.json"
    assert main(["sweep", "--only", "gelu", "cdist", "--opset", "18", "--opset", "28",
                 "--jobs", "0", "--quiet", "--no-reuse", "--no-cache", "--out", str(out)]) == 0
    return out


def test_a_sweep_records_each_opset_as_a_target(swept):
    artifact = art.load(swept)
    assert artifact.target_names == ("stock", "opset18", "opset28")
    version = torch.__version__.split("+")[0]
    assert artifact.target("opset28").entry == art.ExporterEntry("opset28", version, 28)
    assert artifact.grades("gelu", "opset18").export is Grade.FULL
    assert artifact.grades("gelu", "opset28").export is Grade.NONE
    assert artifact.grades("cdist", "opset18") == artifact.grades("cdist")
    data = json.loads(swept.read_text())
    assert data["targets"]["opset28"]["fingerprint"]["opset"] == 28


def test_an_artifact_without_them_is_built_on_and_they_are_measured(swept, tmp_path):
    """A rerun at unchanged pins whose configuration now asks for opset targets: the
    previous artifact has none, so the stock results are reused and the opsets measured."""
    before = tmp_path / "before.json"
    assert main(["sweep", "--only", "gelu", "cdist", "--jobs", "0", "--quiet", "--no-cache",
                 "--out", str(before)]) == 0
    assert art.load(before).target_names == ("stock",)
    after = tmp_path / "after.json"
    assert main(["sweep", "--only", "gelu", "cdist", "--opset", "18", "--opset", "28",
                 "--jobs", "0", "--quiet", "--no-cache", "--previous", str(before),
                 "--out", str(after)]) == 0
    again = art.load(after)
    assert again.target_names == ("stock", "opset18", "opset28")
    assert again.target("opset28") == art.load(swept).target("opset28")
    log = [json.loads(line) for line in after.with_name(after.name + ".run.jsonl").open()]
    why = {(e.get("target"), e.get("reason")) for e in log if "reason" in e}
    assert ("opset28", "target not measured before") in why, sorted(why)[:10]


def test_an_opset_the_exporter_cannot_reach_is_absent_not_a_failure(tmp_path, outside_project):
    out = tmp_path / "a.json"
    assert main(["sweep", "--only", "sin", "--opset", "40", "--no-dynamic", "--jobs", "0",
                 "--quiet", "--no-reuse", "--no-cache", "--out", str(out)]) == 0
    entry = art.load(out).target("opset40").entry
    assert entry.absent.startswith("the canary (x + y) stopped at translation-error: "
                                   "OpsetNotReached: the model stayed at opset")
    assert art.load(out).target("opset40").specs == {}
    assert onnx.defs.onnx_opset_version() < 40  # why: onnx defines no such opset


def test_the_sweeps_own_opset_is_refused_in_one_line():
    from opsweep.catalog.registry import default_opset
    from opsweep.errors import UsageError
    from opsweep.sweep.planning import planned
    with pytest.raises(UsageError, match=rf"^opsets: {default_opset()} is the sweep's own opset"):
        planned(Target(Kind.OPSET, opset=default_opset()))
    assert planned(Target(Kind.OPSET, opset=18)).entry.opset == 18

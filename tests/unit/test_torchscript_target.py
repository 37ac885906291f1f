"""The `torchscript` target in the artifact, the diff, the bot's comment, the page and the
history: recorded as an exporter target (torch's release and the opset its fingerprint
part), absent with its reason when the pin set has no TorchScript exporter, and read back
from canonical bytes; the committed artifact still loads unchanged."""

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest

from opsweep.artifact import data as art
from opsweep.artifact.diff import diff
from opsweep.artifact.records import record
from opsweep.bot.comment import to_markdown
from opsweep.errors import ArtifactError
from opsweep.model import Stage
from opsweep.page.snippets import snippet

from ..factories import FP, result

ROOT = Path(__file__).resolve().parents[2]
ENTRY = art.ExporterEntry("torchscript", "2.15.0", 20)


def _artifact(ts_stage=Stage.OK, entry=ENTRY, fp=FP):
    stock = {"sin": result(["sin"], Stage.OK), "cdist": result(["cdist"], Stage.NO_TRANSLATION)}
    ts = {"sin": result(["sin"], Stage.OK), "cdist": result(["cdist"], ts_stage)}
    return art.make_artifact(fp, "ci", 25, 0, stock, targets={"torchscript": (entry, ts)})


def test_round_trip_through_canonical_bytes(tmp_path):
    artifact = _artifact()
    path = tmp_path / "a.json"
    art.save(path, artifact)
    data = json.loads(path.read_text())
    assert data["targets"]["torchscript"]["fingerprint"] == {
        "exporter": "torchscript", "torch": "2.15.0", "opset": 20}
    assert "sin" not in data["targets"]["torchscript"]["specs"]  # same as stock: not written
    loaded = art.load(path)
    assert loaded == artifact
    assert loaded.target_names == ("stock", "torchscript")
    assert loaded.grades("cdist", "torchscript").export.value == "full"


def test_an_absent_exporter_keeps_its_reason_and_no_result(tmp_path):
    entry = replace(ENTRY, absent="the canary (x + y) stopped at raw-error: RuntimeError: gone")
    artifact = _artifact(entry=entry)
    assert artifact.target("torchscript").specs == {}
    path = tmp_path / "a.json"
    art.save(path, artifact)
    data = json.loads(path.read_text())["targets"]["torchscript"]
    assert data == {"fingerprint": {**data["fingerprint"], "absent": entry.absent},
                    "specs": {}, "operators": {}}
    assert art.load(path).target("torchscript").entry == entry


def test_a_misnamed_or_misspelt_exporter_target_is_refused(tmp_path):
    data = art.to_data(_artifact())
    data["targets"]["torchscript"]["fingerprint"]["exporter"] = "onnxruntime"
    with pytest.raises(ArtifactError, match="targets"):
        art.from_data(json.loads(json.dumps(data)))
    data = art.to_data(_artifact())
    data["targets"]["script"] = data["targets"].pop("torchscript")
    with pytest.raises(ArtifactError, match="targets"):
        art.from_data(data)


def test_the_committed_artifact_loads_and_writes_unchanged():
    path = ROOT / "docs" / "onnx_support_measured.json"
    assert art.canonical_bytes(art.load(path)) == path.read_bytes()


def test_transitions_of_the_torchscript_target_are_reported_like_the_others():
    old, new = _artifact(Stage.OK), _artifact(Stage.NO_TRANSLATION)
    d = diff(old, new)
    (reg,) = d.regressions
    assert (reg.target, reg.op, reg.axis) == ("torchscript", "cdist", "export")
    text = to_markdown(d, new)
    assert "torchscript" in text and "dynamo=False" in text  # its repro is its own call


def test_a_changed_torch_or_an_absent_exporter_is_one_line():
    old = _artifact()
    moved = _artifact(entry=replace(ENTRY, torch="2.16.0"), fp=replace(FP, torch="2.16.0"))
    assert "target torchscript: exporter changed (torch 2.15.0 opset 20 → torch 2.16.0 opset 20)" \
        in diff(old, moved).target_changes
    gone = _artifact(Stage.NO_TRANSLATION, entry=replace(ENTRY, absent="removed"))
    d = diff(old, gone)
    assert d.target_changes == ("target torchscript absent from the new pin set: removed",)
    assert not [t for t in d.transitions if t.target == "torchscript"]


@pytest.mark.parametrize("dynamic", [False, True])
def test_its_snippet_is_the_public_torchscript_call(dynamic):
    text = snippet("cdist", "f32[2,3], f32[4,3]", translations="torchscript", dynamic=dynamic)
    ast.parse(text)
    assert "dynamo=False" in text and "load_translations" not in text
    assert ("dynamic_axes=axes" in text) is dynamic


def test_the_history_records_it():
    rec = record(_artifact())
    assert rec.translations["torchscript"] == {"exporter": "torchscript", "torch": "2.15.0",
                                               "opset": 20, "absent": ""}
    assert "torchscript" in rec.targets


def test_the_page_says_what_the_exporter_target_is():
    from opsweep.page.support import _exporter_line
    assert _exporter_line(ENTRY).startswith("The TorchScript exporter, `torch.onnx.export(..., "
                                            "dynamo=False)` of torch 2.15.0, at opset 20")
    assert _exporter_line(replace(ENTRY, absent="gone")).endswith("Absent from this pin set: gone.")

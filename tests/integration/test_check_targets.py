"""`opsweep check --targets`: each model checked with every target a sweep measures, with
real torch, onnx and onnxruntime, on two tiny modules of this test's own: one that the
TorchScript exporter exports and the dynamo exporter does not (`torch.cdist`: no ONNX
function for ``aten._cdist_forward``), one the reverse (`torch.erfc`: no TorchScript
symbolic), each confirmed here by the public call alone. The per-target verdicts reach the
JSON, the record, the models page (its target select and its "what would I lose" table),
the models history record and the score."""

import io
import json
import textwrap
from pathlib import Path

import onnx
import pytest
import torch

from opsweep.artifact import checked
from opsweep.artifact import models_history as mh
from opsweep.artifact import scoring
from opsweep.catalog.load import exclusions
from opsweep.capture.cases import load_model
from opsweep.check.report import to_data, to_markdown
from opsweep.check.run import check
from opsweep.cli import main
from opsweep.errors import UsageError
from opsweep.page import models as page
from opsweep.targets import STOCK, TORCHSCRIPT

ROOT = Path(__file__).parents[2]

SOURCE = textwrap.dedent('''
    import torch

    class Cdist(torch.nn.Module):
        def forward(self, x, y):
            return torch.cdist(x, y)

    class Erfc(torch.nn.Module):
        def forward(self, x):
            return torch.erfc(x) + 1

    def cdist():
        return {"model": Cdist(), "inputs": (torch.randn(3, 4), torch.randn(5, 4)),
                "name": "cdist"}

    def erfc():
        batch = torch.export.Dim("batch", min=2, max=16)
        return {"model": Erfc(), "inputs": (torch.randn(3, 4),), "dynamic_shapes": ({0: batch},),
                "dynamic_inputs": (torch.randn(6, 4),), "name": "erfc"}

    class Freq(torch.nn.Module):
        def forward(self, x):
            return x * torch.fft.fftfreq(x.shape[-1])

    def freq():
        return {"model": Freq(), "inputs": (torch.randn(3, 8),), "name": "freq"}

    class Two(torch.nn.Module):
        def forward(self, a, scale=None, b=None):
            return a * scale + b.sum(0)  # b keeps its batch when a takes another

    def two():
        batch = torch.export.Dim("batch", min=2, max=16)
        return {"model": Two(), "inputs": (torch.randn(3, 4), 2.0),
                "kwargs": {"b": torch.randn(3, 4)},
                "dynamic_shapes": {"a": {0: batch}, "scale": None, "b": {0: batch}},
                "dynamic_inputs": (torch.randn(5, 4), 2.0), "name": "two"}
''')


@pytest.fixture(scope="module")
def artifact(committed_artifact):
    return committed_artifact  # loaded once per worker (conftest.py)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "two_exporters.py"
    path.write_text(SOURCE, "utf-8")
    return path


def _public(case, dynamo: bool) -> str:
    """The public call alone, at the table's opset: "ok" or the exception's type."""
    try:
        if dynamo:
            torch.onnx.export(case.model, case.inputs, dynamo=True, opset_version=20)
        else:
            torch.onnx.export(case.model, case.inputs, io.BytesIO(), dynamo=False,
                              opset_version=20)
    except Exception as exc:
        return type(exc).__name__
    return "ok"


def test_each_target_is_checked_for_real_beside_its_table(models, artifact):
    cdist, erfc = (load_model(f"{models}:{n}") for n in ("cdist", "erfc"))
    assert _public(cdist, True) != "ok"
    assert _public(cdist, False) == "ok" and _public(erfc, True) == "ok"
    assert _public(erfc, False) == "UnsupportedOperatorError"
    a = check(cdist, artifact, exclusions(), targets=(TORCHSCRIPT,))
    b = check(erfc, artifact, exclusions(), targets=(TORCHSCRIPT, STOCK))  # stock: once
    assert a.reality.export == "fail" and b.reality.export == "pass"
    (ts_a,), (ts_b,) = a.targets, b.targets
    assert ts_a.target == ts_b.target == TORCHSCRIPT and ts_a.measured
    assert (ts_a.reality.export, ts_a.reality.runtime, ts_a.reality.numerics) == ("pass",) * 3
    assert ts_b.reality.export == "fail" and ts_b.reality.stage == "no-translation"
    assert "aten::erfc" in ts_b.reality.error and ts_b.reality.opset == 20
    # the table's TorchScript target measured erfc failing at float32: it predicted this
    assert ts_b.prediction["export"] == "failing" and b.prediction["export"] == "fine"
    data = to_data(b)
    assert set(data["targets"]) == {TORCHSCRIPT}
    got = data["targets"][TORCHSCRIPT]
    assert got["verdict"]["export"] == "fail" and got["prediction"]["export"] == "failing"
    assert {u["op"] for u in got["uses"]} == {u["op"] for u in data["uses"]}
    assert data["verdict"]["export"] == "pass" and "targets" not in to_data(
        check(erfc, artifact, exclusions(), export=False))
    text = to_markdown([a])
    assert "| `torchscript` | pass (table: unknown) |" in text
    assert "| `stock` | fail (table: unknown) |" in text
    assert ("From TorchScript to dynamo: export lost (passes with TorchScript only), nothing "
            "gained (passes with dynamo only).") in text
    assert "From TorchScript to dynamo: nothing lost (passes with TorchScript only), export " \
        "gained" in to_markdown([b])


def test_the_record_page_history_and_score_show_each_target(models, artifact, tmp_path,
                                                              capsys):
    record = tmp_path / "models_checked.json"
    code = main(["check", f"{models}:cdist", f"{models}:erfc", "--targets", TORCHSCRIPT,
                 "--artifact", str(ROOT / "docs" / "onnx_support_measured.json"), "--json",
                 "--record", str(record)])
    data = json.loads(capsys.readouterr().out)
    assert code == 1  # cdist fails with the stock exporter: the exit code is stock's
    assert data["models_version"] == 3 and json.loads(record.read_text()) == data
    assert set(checked.load(record)) == {"cdist", "erfc"}  # validated against the schema
    by = {m["name"]: m for m in data["models"]}
    assert by["cdist"]["check_fingerprint"]["targets"] == [TORCHSCRIPT]
    assert by["cdist"]["targets"][TORCHSCRIPT]["verdict"]["export"] == "pass"
    assert by["erfc"]["targets"][TORCHSCRIPT]["verdict"]["export"] == "fail"
    # the page: its select lists the targets, and what moving between them would lose
    view = page.build(data, set(artifact.operators))
    assert view.targets == (STOCK, TORCHSCRIPT)
    rows = {r.name: r for r in view.rows}
    assert rows["cdist"].codes.split(" ") == ["fnn-", "ppp-"]
    # an axis the failing exporter never reached is not one more loss
    assert [(x.axis, x.passes, x.fails) for x in rows["cdist"].lose] == [
        ("export", TORCHSCRIPT, STOCK)]
    assert [(x.axis, x.passes) for x in rows["erfc"].lose] == [("export", STOCK)]
    html = page.render(view)
    assert f'data-targets="{STOCK}|{TORCHSCRIPT}"' in html
    assert "## What would I lose: TorchScript and dynamo" in html
    assert "| cdist | export | torchscript (TorchScript only) | stock exporter |" in html
    assert "| erfc | export | stock exporter (dynamo only) | torchscript |" in html
    assert "2 models were checked with the TorchScript exporter" in view.torchscript
    # the models history record keeps each target's verdicts, and reads back
    written = mh.load(mh.write(mh.from_models(data), tmp_path / "history"))
    saved = written.by_name()["erfc"].targets[TORCHSCRIPT]
    assert saved["verdict"]["export"] == "fail" and saved["prediction"]["export"] == "failing"
    # the score per target: the TorchScript table predicted erfc's export failing, rightly
    seen = [checked.target_entry(m, TORCHSCRIPT) for m in data["models"]]
    export = scoring.score(seen).axis("export")
    assert export.true_positive >= 1 and export.false_positive == 0


def test_targets_are_named_or_refused_in_one_line(artifact):
    from opsweep.cli.check import targets_of
    assert targets_of("all", artifact) == tuple(n for n in artifact.target_names if n != STOCK)
    assert targets_of(f" {TORCHSCRIPT}, opset18,{TORCHSCRIPT}", artifact) == (TORCHSCRIPT,
                                                                               "opset18")
    assert targets_of("", artifact) == ()
    with pytest.raises(UsageError, match=r"^--targets bogus: not a target") as exc:
        targets_of("bogus", artifact)
    assert "\n" not in str(exc.value)


def test_an_opset_target_is_the_public_call_at_that_opset(models, artifact):
    case = load_model(f"{models}:erfc")
    report = check(case, artifact, exclusions(), targets=("opset18",))
    (at18,) = report.targets
    assert at18.reality.opset == 18 and at18.reality.export == "pass"
    program = torch.onnx.export(case.model, case.inputs, dynamo=True, opset_version=18)
    assert next(o.version for o in program.model_proto.opset_import if o.domain == "") == 18
    onnx.checker.check_model(program.model_proto, full_check=True)


def test_a_check_with_targets_is_reused_only_for_the_same_targets(models, artifact):
    """A stock-only check keeps the key it had before targets (a committed record is still
    reused at unchanged pins); a check with other targets has a key of its own, so an entry
    checked without them is not taken for one checked with them, nor back."""
    from opsweep.check.fingerprint import fingerprint, reusable
    source = f"{models}:erfc"
    stock = fingerprint(source, artifact, "builtin")
    assert set(stock) == {"stack", "opset", "model", "opsweep", "tolerance_policy", "export"}
    with_ts = fingerprint(source, artifact, "builtin", targets=(TORCHSCRIPT,))
    assert with_ts == {**stock, "targets": [TORCHSCRIPT]}
    entry = {"name": "erfc", "source": source, "uses": [], "check_fingerprint": stock}
    assert reusable({source: entry}, source, stock) == entry
    assert reusable({source: entry}, source, with_ts) is None


def test_workers_check_each_target_against_a_table_without_it(tmp_path, capsys):
    """With --jobs the workers check the other targets too; a packaged cell table keeps
    the stock target only, so the TorchScript verdicts are real and unpredicted."""
    from opsweep.artifact import tables
    models = Path(__file__).parent / "models" / "crashing.py"
    record = tmp_path / "record.json"
    code = main(["check", f"{models}:good_one", f"{models}:good_two", "--jobs", "2",
                 "--targets", "all,torchscript", "--artifact",
                 str(sorted(tables.packaged().values())[-1]), "--record", str(record)])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(record.read_text())
    for m in data["models"]:
        (ts,) = m["targets"].values()  # 'all' of a cell table: no other target
        assert ts["measured"] is False and ts["prediction"] == {} and ts["uses"] == []
        assert ts["verdict"] == {"export": "pass", "runtime": "pass", "numerics": "pass"}
    assert checked.target_names(data["models"]) == (STOCK, TORCHSCRIPT)
    assert "with each target" in out and "pass (table: not measured)" in out


def test_a_reused_entrys_targets_are_joined_with_the_table_again(models, artifact):
    """A reused entry's other targets read the table again as its stock uses do: where the
    record's TorchScript uses no longer read as the table answers them (a re-measure at
    unchanged pins), the entry is joined again, its real TorchScript export kept."""
    from opsweep.check.report import rejoin
    case = load_model(f"{models}:erfc")
    entry = json.loads(json.dumps(to_data(check(case, artifact, exclusions(),
                                                targets=(TORCHSCRIPT,)))))
    assert rejoin(entry, artifact, exclusions()) == entry  # it reads as the table answers
    stale = json.loads(json.dumps(entry))
    ts = stale["targets"][TORCHSCRIPT]
    ts["prediction"] = {a: "fine" for a in ts["prediction"]}
    for u in ts["uses"]:
        u.update(status="measured fine", failures=[])
    again = rejoin(stale, artifact, exclusions())
    assert again != stale
    assert again["targets"][TORCHSCRIPT] == entry["targets"][TORCHSCRIPT]
    assert again["targets"][TORCHSCRIPT]["prediction"]["export"] == "failing"


def test_a_translation_table_target_exports_with_its_table(models, artifact):
    """examples/custom_translations.py:TABLE (the committed artifact's table target)
    translates aten::fft_fftfreq, which the stock exporter has no function for: the model
    fails with the stock exporter and passes with the table, each by its public call."""
    table = "examples/custom_translations.py:TABLE"
    report = check(load_model(f"{models}:freq"), artifact, exclusions(), targets=(table,))
    assert report.reality.export == "fail" and "fft_fftfreq" in report.reality.error
    (with_table,) = report.targets
    assert with_table.target == table and with_table.measured
    assert (with_table.reality.export, with_table.reality.numerics) == ("pass", "pass")


def test_torchscript_gets_dynamic_axes_for_the_models_dynamic_shapes(models, artifact):
    """dynamic_shapes by the forward's parameter names, with a non-tensor positional input
    and a keyword tensor: the TorchScript export makes the same axes dynamic, and runs at the
    model's other batch size."""
    from opsweep.check.exporters import dynamic_axes, torchscript_export
    case = load_model(f"{models}:two")
    assert dynamic_axes(case) == {"inputs_0": {0: "batch"}, "inputs_2": {0: "batch"}}
    proto = torchscript_export(case, 20, True)
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in proto.graph.input]
    assert dims == [["batch", 4], [], ["batch", 4]]  # the number: an input of its own
    report = check(case, artifact, exclusions(), targets=(TORCHSCRIPT,))
    assert report.targets[0].reality.dynamic == "pass"
    assert report.targets[0].reality.numerics == "pass"


def test_the_score_script_scores_each_target():
    import importlib.util
    spec = importlib.util.spec_from_file_location("score_models", ROOT / "scripts" /
                                                  "score_models.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    entry = {"name": "m", "source": "a.py:m", "verdict": {"export": "pass"},
             "prediction": {"export": "fine"}, "uses": [], "failed": False,
             "targets": {TORCHSCRIPT: {"measured": True, "verdict": {"export": "fail"},
                                       "prediction": {"export": "failing"}, "uses": [],
                                       "failed": True},
                         "opset18": {"measured": False, "verdict": {"export": "pass"},
                                     "prediction": {}, "uses": [], "failed": False}}}
    text = script.score([entry], {})
    assert "with target opset18: 1 models checked; the table does not measure this target" in text
    ts = text.split(f"with target {TORCHSCRIPT} (1 models):")[1]
    assert "precision 100.0%, recall 100.0% (1 predicted and failing" in ts



def test_the_main_commands_models_step_checks_the_configured_targets(tmp_path):
    """[tool.opsweep] check-targets: the models step checks each model with them too, the
    record and its models history keep their verdicts, and a second run at unchanged pins
    reuses every entry (its key names the targets) instead of re-checking without them."""
    from opsweep.artifact import tables
    from opsweep.cli.assemble import check_models
    from opsweep.files import Layout
    model = tmp_path / "one.py"
    model.write_text("import torch\n\n\ndef build():\n"
                     "    return {'model': torch.nn.Sequential(torch.nn.Linear(4, 3)),\n"
                     "            'inputs': (torch.randn(2, 4),), 'name': 'one'}\n")
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.opsweep]\nmodels = ["{model.as_posix()}:build"]\ncheck-targets = ["torchscript"]\n')
    artifact = tables.load(sorted(tables.packaged().values())[-1]).artifact
    layout = Layout()
    first = check_models(tmp_path, layout, artifact, jobs=1)
    data = json.loads((tmp_path / layout.models).read_text())
    (entry,) = data["models"]
    assert data["models_version"] == 3 and first.checked == 1
    assert entry["targets"][TORCHSCRIPT]["verdict"]["export"] == "pass"
    assert entry["check_fingerprint"]["targets"] == [TORCHSCRIPT]
    (history,) = (tmp_path / layout.models_history).glob("*.json")
    assert json.loads(history.read_text())["models_history_version"] == 2
    again = check_models(tmp_path, layout, artifact, jobs=1)
    assert (again.checked, again.reused) == (0, 1)

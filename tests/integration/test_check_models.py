"""`opsweep check` on real architectures (transformers configurations, randomly
initialised, nothing downloaded), each compared in the same test with an independent
public-API export: torch.onnx.export(dynamo=True), onnx.checker, an onnxruntime session
of its own and a numpy comparison at the sweep's tolerances."""

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
import torch

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing fetched at run time

from opsweep.artifact import data as art  # noqa: E402
from opsweep.catalog.load import exclusions  # noqa: E402
from opsweep.capture.cases import load_model  # noqa: E402
from opsweep.check.run import check  # noqa: E402
from opsweep.check.table import FAILING, FINE, NOT_MEASURED, UNATTRIBUTABLE  # noqa: E402
from opsweep.cli import main  # noqa: E402
from opsweep.model import Stage  # noqa: E402
from opsweep.policy import builtin  # noqa: E402

ROOT = Path(__file__).parents[2]
MODELS = ROOT / "examples" / "tiny_models.py"
sys.path.insert(0, str(MODELS.parent))
tiny = pytest.importorskip("tiny_models")


@pytest.fixture(scope="module")
def artifact(committed_artifact):
    return committed_artifact  # loaded once per worker (conftest.py)


@pytest.fixture(scope="module")
def checked(artifact):
    """(case, its check against the table) of a tiny model, checked once for the module's
    tests that read the same check (resnet_half's real export is the costliest)."""
    done: dict = {}

    def get(name: str):
        if name not in done:
            case = load_model(f"{MODELS}:{name}")
            done[name] = case, check(case, artifact, exclusions())
        return done[name]
    return get


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()


def independent(case) -> str:
    """The public API alone: where the model's pipeline ends (ok or the failing stage)."""
    try:
        program = torch.onnx.export(case.model, case.inputs, dynamo=True)
    except Exception:
        return "export"
    try:
        onnx.checker.check_model(program.model_proto, full_check=True)
    except Exception:
        return "checker"
    try:
        session = onnxruntime.InferenceSession(program.model_proto.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        feeds = {i.name: _numpy(t) for i, t in zip(session.get_inputs(), case.inputs)}
        got = session.run(None, feeds)
    except Exception:
        return "runtime"
    with torch.no_grad():
        want = [t for t in torch.utils._pytree.tree_leaves(case.model(*case.inputs))
                if isinstance(t, torch.Tensor)]
    for w, g in zip(want, got, strict=True):
        tol = builtin().defaults[str(w.dtype).removeprefix("torch.")]
        if not np.allclose(g.astype(np.float64), _numpy(w).astype(np.float64), rtol=tol.rtol,
                           atol=tol.atol):
            return "numerics"
    return "ok"


@pytest.mark.parametrize("name", tiny.ALL)
def test_the_check_agrees_with_an_independent_public_export(name, checked):
    case, report = checked(name)
    real = independent(case)
    stage = report.reality.stage
    assert (stage if stage in ("checker", "runtime", "numerics", "ok") else "export") == real
    assert report.failed == (real != "ok" or report.reality.dynamic == "fail")
    # every use gets a verdict of the table, and fine only when measured and all passed
    assert report.verdicts
    for v in report.verdicts:
        assert v.status in (FINE, FAILING, NOT_MEASURED, UNATTRIBUTABLE)
        if v.status == FINE:
            assert v.measured and v.passed == v.measured and not v.failures
        if v.status == FAILING:
            assert v.failures or v.passed < v.measured
    used = {v.use.op for v in report.verdicts}
    assert "linear" in used or "conv2d" in used
    # a failing real outcome is named, and a disagreement with the table is said plainly
    if real == "checker":
        assert report.reality.node
    said = report.prediction
    if real == "ok" and "failing" in said.values():
        assert any("but the model passes" in g for g in report.gaps)


def test_a_bfloat16_convolution_the_table_predicts_failing_fails_for_real(checked):
    _, report = checked("resnet_half")
    conv = [v for v in report.verdicts if v.use.op == "conv2d"]
    assert conv and all(v.use.dtype == "bfloat16" for v in conv)
    assert report.reality.stage == "checker" and report.reality.op == "onnx::Conv"
    assert report.prediction["runtime"] == "failing"


def test_the_command_json_and_exit_codes(tmp_path, capsys, artifact):
    out = tmp_path / "record.json"
    code = main(["check", f"{MODELS}:resnet_half", "--json", "--record", str(out)])
    data = json.loads(capsys.readouterr().out)
    assert code == 1  # resnet at bfloat16 does not run
    assert json.loads(out.read_text()) == data
    (resnet,) = data["models"]
    assert resnet["verdict"]["runtime"] == "fail" and resnet["failed"]
    failing = [u for u in resnet["uses"] if u["status"] == FAILING]
    assert failing and all(f["snippet"].startswith("import torch") for u in failing
                           for f in u["failures"])
    # the bot's diff reads this real record: against a base where the model ran, the runtime
    # regression with the node onnx.checker named, at the pins of the table checked against
    from opsweep.artifact.models_diff import models_diff
    base = json.loads(json.dumps(data))
    base["models"][0]["verdict"] = {a: "pass" for a in resnet["verdict"]}
    (moved,) = models_diff(base, data).transitions
    assert moved.status == "regression" and moved.name == resnet["name"]
    (where,) = moved.failures()
    assert (where.stage, where.op) == ("checker", "onnx::Conv") and where.node
    assert models_diff(base, data).pins["torch"] == artifact.fingerprint.torch
    # --no-export: the table alone; exit 1 as a use is measured failing
    assert main(["check", f"{MODELS}:resnet_half", "--no-export", "--markdown"]) == 1
    text = capsys.readouterr().out
    # every use is measured now (max_pool2d at bfloat16 too): a definite export prediction
    assert "| export | fine | not run |" in text and "tested, fails" in text


def test_against_another_artifact_shows_the_uses_that_change(artifact):
    # the other pin set: the same measurement with the conv2d spec's failures gone
    specs = dict(artifact.specs)
    for name in artifact.operators["conv2d"].specs:
        r = specs[name]
        specs[name] = replace(r, stages={Stage.OK: r.examples}, failures=(), outcomes=tuple(
            replace(c, stage=Stage.OK) for c in r.outcomes))
    other = art.make_artifact(artifact.fingerprint, artifact.profile, artifact.examples,
                              artifact.regen_index, specs)
    case = load_model(f"{MODELS}:resnet_half")
    changes = check(case, artifact, exclusions(), export=False, other=other).against
    assert [c.op for c in changes] == ["conv2d"]
    assert changes[0].old == FINE and changes[0].new.startswith(FAILING)


def test_a_diverging_model_names_its_first_diverging_node(artifact):
    case = load_model(f"{Path(__file__).parent / 'models' / 'diverging.py'}:diverging")
    report = check(case, artifact, exclusions())
    assert independent(case) == "numerics"
    assert report.reality.stage == "numerics"
    assert (report.reality.node, report.reality.op) == ("avg_pool3d", "avg_pool3d")
    assert any("aten::avg_pool3d" in g for g in report.gaps)


@pytest.mark.parametrize("name", ["llama", "resnet_half"])
def test_uses_read_from_the_public_export_equal_an_own_capture(name):
    """The full check reads the uses from the public export's decomposed program; the
    table lookup alone (--no-export) captures and decomposes itself: the same uses."""
    from opsweep.check.real import export
    from opsweep.capture.uses import capture, from_export
    case = load_model(f"{MODELS}:{name}")
    own, read = capture(case), from_export(export(case, 20))
    assert own.uses and own.uses == read.uses and own.other == read.other


def test_a_missing_translation_of_another_overload_is_not_this_uses_failure(artifact):
    """The artifact files view.dtype's missing translation under `view`; the model's
    view.default is not failing because of it."""
    case = load_model(f"{MODELS}:vit")
    views = [v for v in check(case, artifact, exclusions(), export=False).verdicts
             if v.use.op == "view"]
    assert views and all(v.use.overload == "aten::view" for v in views)
    assert all(v.status != FAILING for v in views)
    assert any("view.dtype" in g.error or "overload='dtype'" in g.error
               for g in artifact.operators["view"].failures)


def test_the_main_command_records_the_models_only_when_some_are_configured(tmp_path, artifact):
    from opsweep.artifact import checked
    from opsweep.cli.assemble import check_models
    from opsweep.files import Layout
    layout = Layout()
    (tmp_path / "pyproject.toml").write_text("[tool.opsweep]\n")
    assert check_models(tmp_path, layout, artifact) is None
    assert not (tmp_path / layout.models).exists()
    assert not (tmp_path / layout.history_dir).exists()  # no models history either
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.opsweep]\nmodels = ["{MODELS.as_posix()}:vit_half"]\n')
    done = check_models(tmp_path, layout, artifact, jobs=1)  # its workers: test_check_jobs
    assert (done.path, done.checked, done.reused) == (layout.models, 1, 0)
    record = checked.load(tmp_path / layout.models)  # what the bot reads
    assert record["vit float16"].verdict == {"export": "pass", "runtime": "pass",
                                             "numerics": "pass"}
    assert "scaled_dot_product_attention" in record["vit float16"].ops


def test_a_saved_exported_program_is_a_model(tmp_path, artifact):
    module = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU()).eval()
    path = tmp_path / "tiny.pt2"
    torch.export.save(torch.export.export(module, (torch.randn(2, 3),)), path)
    case = load_model(str(path))
    assert case.name == "tiny" and case.exported
    report = check(case, artifact, exclusions())
    assert {v.use.op for v in report.verdicts} >= {"linear", "relu"}
    assert report.reality.stage == "ok" and not report.failed

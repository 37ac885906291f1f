"""`opsweep check` as a model's owner meets it outside opsweep's checkout (issue 53): where
the measured table comes from (the project's `[tool.opsweep] artifact`, else one line
saying what to pass), the report's head (which torch measured the table, which is
installed, loudly when they differ; the opset and why), advice in the owner's words with
repros that fail where they say, the observed error against the tolerance (and at the
first diverging node, against an independent onnxruntime run), and `--help`.
Real torch, onnx, onnxruntime and transformers models; nothing downloaded."""

import json
import os
import re
import shutil
import traceback
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
import torch

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing fetched at run time

from opsweep.artifact import data as art  # noqa: E402
from opsweep.artifact import tables  # noqa: E402
from opsweep.artifact.numerics import errors_from_data  # noqa: E402
from opsweep.catalog.load import exclusions  # noqa: E402
from opsweep.check.advice import advice  # noqa: E402
from opsweep.capture.cases import load_model  # noqa: E402
from opsweep.check.real import reality  # noqa: E402
from opsweep.check.run import check  # noqa: E402
from opsweep.cli import main  # noqa: E402
from opsweep.cli.exits import EXIT_ERROR, EXIT_OK, EXIT_USAGE  # noqa: E402
from opsweep.policy import builtin  # noqa: E402

ROOT = Path(__file__).parents[2]
ARTIFACT = ROOT / "docs" / "onnx_support_measured.json"
MODELS = ROOT / "examples" / "tiny_models.py"
DIVERGING = Path(__file__).parent / "models" / "diverging.py"
TINY = '''\
import torch


def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    return {"model": model, "inputs": (torch.randn(3, 8),), "name": "tiny"}
'''
TORCH = metadata.version("torch")


@pytest.fixture(scope="module")
def artifact(committed_artifact):
    return committed_artifact  # loaded once per worker (conftest.py)


@pytest.fixture
def outside(tmp_path, monkeypatch):
    """An empty directory outside the checkout, the current one, with a tiny model file."""
    (tmp_path / "models.py").write_text(TINY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _flat(text: str) -> str:
    return " ".join(text.split())  # the terminal report wraps long lines


def test_the_projects_artifact_is_the_default_outside_opsweeps_checkout(tmp_path, monkeypatch,
                                                                         capsys):
    """A project whose [tool.opsweep] artifact points elsewhere, run as its owner runs it
    (the command, in the project's directory): the table is that file."""
    (tmp_path / "tables").mkdir()
    shutil.copyfile(ARTIFACT, tmp_path / "tables" / "measured.json")
    (tmp_path / "pyproject.toml").write_text('[tool.opsweep]\nartifact = "tables/measured.json"\n')
    (tmp_path / "models.py").write_text(TINY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    code = main(["check", "models.py:build"])
    done = capsys.readouterr()
    assert code == EXIT_OK, done.err
    text = _flat(done.out)
    assert "tables/measured.json ([tool.opsweep] artifact in pyproject.toml)" in text
    assert "Your model exports, runs and matches PyTorch" in text


@pytest.mark.parametrize("case", ["no project", "no [tool.opsweep]", "configured, missing",
                                  "--artifact missing", "--artifact not an artifact",
                                  "--against a history record", "--against no table"])
def test_no_table_is_one_line_saying_what_to_pass(case, outside, capsys, monkeypatch):
    argv = ["check", "models.py:build"]
    monkeypatch.setattr(tables, "PACKAGED", outside / "no tables")  # an opsweep with none
    if case == "no [tool.opsweep]":
        (outside / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    if case == "configured, missing":
        (outside / "pyproject.toml").write_text('[tool.opsweep]\nartifact = "t/measured.json"\n')
    if case == "--artifact missing":
        argv += ["--artifact", "measured.json"]
    if case == "--artifact not an artifact":
        (outside / "measured.json").write_text('{"hello": 1}')
        argv += ["--artifact", "measured.json"]
    if case == "--against no table":
        argv += ["--artifact", str(ARTIFACT), "--against", "1.0.0"]
    if case == "--against a history record":
        record = next((ROOT / "docs" / "history").glob("torch-2.15.0+*.json"))
        shutil.copyfile(record, outside / "record.json")
        argv += ["--artifact", str(ARTIFACT), "--against", "record.json"]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("opsweep: error: "), err
    said = {
        "no project": ["there is no pyproject.toml here", "carries no measured table",
                       "--artifact FILE", "docs/onnx_support_measured.json"],
        "no [tool.opsweep]": ["pyproject.toml has no [tool.opsweep]", "--artifact FILE"],
        "configured, missing": ["t/measured.json", "[tool.opsweep] artifact in pyproject.toml",
                                "opsweep sweep", "--artifact FILE"],
        "--artifact missing": ["--artifact measured.json: no such file", "the JSON artifact"],
        "--artifact not an artifact": ["--artifact: ", "measured.json"],
        "--against a history record": ["a history record", "not an artifact",
                                       "onnx_support_measured.json"],
        "--against no table": ["--against 1.0.0: torch 1.0.0 has no packaged table (measured: ",
                               "or pass an artifact file"],
    }[case]
    assert all(words in err for words in said), err


@pytest.mark.parametrize("project", ["none", "[tool.opsweep] without an artifact"])
def test_without_a_table_of_ones_own_the_packaged_one_of_the_installed_torch_is_used(
        project, outside, capsys):
    if project != "none":
        (outside / "pyproject.toml").write_text('[tool.opsweep]\nversion = 1\n')
    assert main(["check", "models.py:build", "--no-export", "--json"]) == EXIT_OK
    table = json.loads(capsys.readouterr().out)["table"]
    choice = tables.choose(TORCH, tables.packaged())
    assert table["path"] == f"opsweep/data/tables/torch-{choice.chosen}.json.gz"
    assert table["why"].startswith(choice.sentence() + "; ")
    assert table["written_by"] == tables.load(tables.packaged()[choice.chosen]).opsweep
    assert table["fingerprint"]["torch"].split("+")[0] == choice.chosen


def test_a_table_of_another_torch_is_said_loudly(outside, artifact, capsys):
    """The head names the torch that measured the table and the one installed; a WARNING
    comes first when they differ. opsweep's version comes from a history record of the
    same pins beside the table (the artifact does not name it)."""
    assert main(["check", "models.py:build", "--artifact", str(ARTIFACT), "--no-export"]) == 0
    same = _flat(capsys.readouterr().out)
    assert "WARNING" not in same
    assert f"torch {artifact.fingerprint.torch}, onnx" in same
    assert f"installed torch {TORCH}" in same
    record = json.loads(next((ROOT / "docs" / "history").glob(
        f"torch-{artifact.fingerprint.torch}+*.json")).read_text())
    assert f"opsweep {record['opsweep']}" in same
    older = replace(artifact, fingerprint=replace(artifact.fingerprint, torch="2.14.1"))
    art.save(outside / "older.json", older)
    assert main(["check", "models.py:build", "--artifact", "older.json", "--no-export"]) == 0
    text = _flat(capsys.readouterr().out)
    assert text.startswith(f"WARNING: the table was measured with torch 2.14.1, but torch "
                           f"{TORCH} is installed")
    assert "the opsweep that measured it is not recorded" in text  # no record beside it
    main(["check", "models.py:build", "--artifact", "older.json", "--no-export", "--json"])
    table = json.loads(capsys.readouterr().out)["table"]
    assert table["moved"] == [["torch", "2.14.1", TORCH]]


def test_the_real_export_runs_at_the_tables_opset_and_says_why(outside, artifact, capsys):
    at18 = replace(artifact, fingerprint=replace(artifact.fingerprint, opset=18))
    case = load_model("models.py:build")
    report = check(case, at18, exclusions())
    assert report.reality.opset == 18
    _, program = reality(case, 18)
    assert {o.domain: o.version for o in program.model_proto.opset_import}[""] == 18
    art.save(outside / "at18.json", at18)
    assert main(["check", "models.py:build", "--artifact", "at18.json"]) == 0
    text = _flat(capsys.readouterr().out)
    assert "opset_version=18): the opset the table was measured at" in text


def test_advice_speaks_to_the_models_owner_and_its_repros_fail_where_they_say(capsys, tmp_path):
    """resnet at bfloat16: the table's failing operators in the owner's words (the axis,
    then the stage: never 'runtime fails at checker'), the spec author's hint only with
    --verbose, and each repro failing at the line it marks."""
    model = f"{MODELS}:resnet_half"
    assert main(["check", model, "--no-export", "--markdown"]) == EXIT_ERROR
    text = capsys.readouterr().out
    assert "conv2d at bfloat16 rank 4 does not run: the exported model fails onnx.checker" in text
    assert "relu at bfloat16 rank 4 does not run: onnxruntime cannot load or run" in text
    assert "fails at checker" not in text and "runtime fails" not in text
    assert "widen" not in text
    # a use the table cannot answer for: sin at rank 5, above its spec's ranks (0 to 4)
    wide = tmp_path / "wide.py"
    wide.write_text("import torch\n\nclass M(torch.nn.Module):\n"
                    "    def forward(self, x):\n        return torch.sin(x)\n\n"
                    "def build():\n"
                    "    return {'model': M(), 'inputs': (torch.rand(2, 2, 2, 2, 2),)}\n")
    main(["check", f"{wide}:build", "--no-export", "--markdown"])
    text = capsys.readouterr().out
    assert "the table never measured sin at float32 rank 5" in text and "widen" not in text
    main(["check", f"{wide}:build", "--no-export", "--markdown", "--verbose"])
    assert "widen sin's ranks" in capsys.readouterr().out
    main(["check", model, "--no-export", "--json"])
    (resnet,) = json.loads(capsys.readouterr().out)["models"]
    failures = {f["stage"]: f for u in resnet["uses"] for f in u["failures"]}
    assert {"checker", "runtime"} <= set(failures)
    for stage in ("checker", "runtime"):
        code = failures[stage]["snippet"]
        with pytest.raises(Exception) as raised:
            exec(compile(code, "<repro>", "exec"), {})  # noqa: S102 -- our own snippet
        line = [f for f in traceback.extract_tb(raised.tb) if f.filename == "<repro>"][-1].lineno
        assert f"# fails here: {'onnx.checker' if stage == 'checker' else 'onnxruntime'}" in \
            code.splitlines()[line - 1]


def _independent_error(case) -> float:
    """The largest |onnxruntime - PyTorch| of the model's output: a public export, an
    onnxruntime session of its own, numpy."""
    program = torch.onnx.export(case.model, case.inputs, kwargs=case.kwargs or None, dynamo=True)
    session = onnxruntime.InferenceSession(program.model_proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    feeds = [t.numpy() for t in (*case.inputs, *case.kwargs.values())]
    got = session.run(None, {i.name: f for i, f in zip(session.get_inputs(), feeds)})
    with torch.no_grad():
        want = torch.utils._pytree.tree_leaves(case.model(*case.inputs, **case.kwargs))
    return max(float(np.abs(g.astype(np.float64) - w.double().numpy()).max())
               for g, w in zip(got, want, strict=True))


def test_numerics_says_the_error_against_the_tolerance_and_the_first_diverging_node_by_how_much(
        artifact):
    case = load_model(f"{DIVERGING}:diverging")
    real = check(case, artifact, exclusions()).reality
    tolerance = builtin().defaults["float32"]
    assert real.stage == "numerics" and real.policy == builtin().label
    assert real.agreement.tolerances == (("float32", tolerance.rtol, tolerance.atol),)
    seen = _independent_error(case)
    assert seen > tolerance.atol and real.agreement.max_abs == pytest.approx(seen, rel=1e-6)
    # the first diverging node: avg_pool3d, whose output is the model's output less 1
    assert real.node == "avg_pool3d" and real.divergence is not None
    assert real.divergence.max_abs == pytest.approx(seen, abs=1e-5)
    from opsweep.check.advice import outcome
    said = outcome(real)
    assert said[0].startswith("Your model exports and runs, but its outputs differ from PyTorch's:"
                              f" largest error {seen:.3g} absolute")
    assert f"beyond the tolerance (float32: rtol {tolerance.rtol:g}, atol {tolerance.atol:g}; " \
           f"policy {builtin().label})" in said[0]
    assert said[1].startswith(f"First diverging node: avg_pool3d (aten::avg_pool3d): largest "
                              f"error {real.divergence.max_abs:.3g} absolute")


def test_a_passing_model_says_its_error_within_the_tolerance(artifact):
    case = load_model(f"{MODELS}:llama")
    real = check(case, artifact, exclusions()).reality
    assert real.stage == "ok" and real.agreement.within
    assert real.agreement.max_abs == pytest.approx(_independent_error(case), rel=1e-3, abs=1e-9)


def test_the_tables_recorded_error_is_named_with_the_use(artifact):
    """An artifact that records the observed error per cell (schema 6): a use measured at
    that cell names it, with the tolerance it was graded at."""
    case = load_model(f"{DIVERGING}:diverging")
    name = artifact.operators["avg_pool3d"].specs[0]
    cells = errors_from_data({"float32 5": "n=5 abs=2.5e-07 med=1e-08 rel=3e-06 tol=0.0001/1e-05"})
    specs = dict(artifact.specs)
    specs[name] = replace(specs[name], errors=cells)
    recorded = art.make_artifact(artifact.fingerprint, artifact.profile, artifact.examples,
                                 artifact.regen_index, specs)
    (pool,) = [v for v in check(case, recorded, exclusions(), export=False).verdicts
               if v.use.op == "avg_pool3d"]
    assert "recorded error up to 2.5e-07 absolute (rtol 0.0001, atol 1e-05)" in advice(pool)


def test_help_says_what_it_does_every_default_the_exit_codes_and_an_example(capsys):
    with pytest.raises(SystemExit) as done:
        main(["check", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "Check your own models against opsweep's measured table" in text
    options = re.findall(r"^  (-[-\w]+(?:, --[-\w]+)?)", text, re.M)
    assert {"--artifact", "--against", "--no-export", "-v, --verbose", "--json", "--markdown",
            "--record", "--pyproject"} <= set(options)
    for option in options:
        if option in ("-h, --help",):
            continue
        block = text.split(option, 1)[1].split("\n  -", 1)[0]
        assert "default" in block, f"{option} names no default"
    codes = re.findall(r"^  (\d)  ", text.split("exit codes:", 1)[1], re.M)
    assert sorted(map(int, codes)) == sorted({EXIT_OK, EXIT_ERROR, EXIT_USAGE})
    assert re.search(r"^examples:\n  opsweep check \S+:\S+", text, re.M)


def test_the_projects_tolerance_policy_grades_the_real_export(outside, capsys):
    """A project's [tool.opsweep] tolerance-policy is what the model's outputs are compared
    at, and the head and the verdict name it: the diverging model, beyond opsweep's own
    float32 tolerance, is within a lenient policy's."""
    shutil.copyfile(ARTIFACT, outside / "measured.json")
    shutil.copyfile(DIVERGING, outside / "diverging.py")
    (outside / "lenient.json").write_text(json.dumps({
        "name": "lenient", "version": 3, "overrides": [],
        "defaults": {"float32": {"rtol": 0.0, "atol": 10.0}}}))
    (outside / "pyproject.toml").write_text('[tool.opsweep]\nartifact = "measured.json"\n'
                                            'tolerance-policy = "lenient.json"\n')
    assert main(["check", "diverging.py:diverging"]) == EXIT_OK
    text = _flat(capsys.readouterr().out)
    assert "outputs compared at the tolerance policy lenient v3" in text
    assert "within the tolerance (float32: rtol 0, atol 10; policy lenient v3)" in text
    (outside / "pyproject.toml").write_text('[tool.opsweep]\nartifact = "measured.json"\n')
    assert main(["check", "diverging.py:diverging"]) == EXIT_ERROR
    assert f"policy {builtin().label})" in _flat(capsys.readouterr().out)

"""`opsweep sweep --torchscript`: a small real sweep records the `torchscript` target
beside the stock one, its export verdicts are those of direct public calls
``torch.onnx.export(..., dynamo=False)`` on the very examples drawn, it is reused like
the other targets, and a torch without the TorchScript exporter records it absent with
the reason (one line), never as failures.
"""

import io
import os
import subprocess
import sys
import warnings
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from opsweep.artifact import data as art
from opsweep.artifact.diff import diff
from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.cli.main import main
from opsweep.engine.runner import build_call
from opsweep.engine.torchscript import opset_for
from opsweep.model import Grade, Stage

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
#: cdist: the dynamo exporter has no translation for aten::_cdist_forward, TorchScript
#: exports it; sin: TorchScript fails complex64 with an error that is not its own (raw)
SPECS = ["sin", "relu", "cdist"]
EXPORT_FAILS = {Stage.NO_TRANSLATION, Stage.TRANSLATION_ERROR, Stage.CAPTURE, Stage.RAW_ERROR}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("ts") / "a.json"
    assert main(["sweep", "--only", *SPECS, "--torchscript", "--jobs", "0", "--quiet",
                 "--no-reuse", "--out", str(out)]) == 0
    return out


def _public_raises(spec, example) -> bool | None:
    """Whether the public call raises on this example (None: eager PyTorch refuses it)."""
    call = build_call(spec, example)
    try:
        call(*[t.clone() for t in call.inputs])
    except Exception:  # noqa: BLE001 - eager refusing it, whatever the type
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(call, tuple(call.inputs), io.BytesIO(), dynamo=False,
                              opset_version=opset_for())
        except Exception:  # noqa: BLE001 - any raise is an export failure
            return True
    return False


def test_the_target_is_recorded_beside_the_stock_one(swept):
    artifact = art.load(swept)
    # opsweep's own [tool.opsweep] adds its opset targets, if it names any (the sweep runs
    # in this checkout)
    from opsweep import config
    opsets = config.load(ROOT / "pyproject.toml").opsets
    assert artifact.target_names == ("stock", *(f"opset{n}" for n in sorted(opsets)),
                                     "torchscript")
    entry = artifact.target("torchscript").entry
    assert entry == art.ExporterEntry("torchscript", torch.__version__.split("+")[0], 20)
    assert artifact.grades("cdist").export is Grade.NONE
    assert artifact.grades("cdist", "torchscript").export is Grade.FULL
    ts = artifact.target("torchscript")
    assert ts.specs["sin"].gap is None  # a known-gap note speaks of the dynamo exporter


@pytest.mark.parametrize("name", SPECS)
def test_export_verdicts_are_the_public_calls(swept, specs, name):
    recorded = art.load(swept).target("torchscript").specs[name]
    spec = specs[name]
    expected: Counter = Counter()
    for group in group_by_signature(draw_examples(spec, PROFILES["ci"])):
        for example in group:
            raised = _public_raises(spec, example)
            if raised is not None:
                expected[example.dtype, example.rank, raised] += 1
    got: Counter = Counter()
    for c in recorded.outcomes:
        if c.stage is not Stage.INVALID:
            got[c.dtype, c.rank, c.stage in EXPORT_FAILS] += c.count
    assert got == expected


def test_reused_like_the_other_targets_and_diffed(swept, tmp_path, monkeypatch):
    out = tmp_path / "b.json"
    assert main(["sweep", "--only", *SPECS, "--torchscript", "--jobs", "0", "--quiet",
                 "--previous", str(swept), "--out", str(out)]) == 0
    again = art.load(out)
    assert again.target("torchscript") == art.load(swept).target("torchscript")
    lines = out.with_name(out.name + ".run.jsonl").read_text()
    assert '"torchscript"' in lines
    # opsweep's own [tool.opsweep] says torchscript = true: measured without the flag
    configured = tmp_path / "configured.json"
    assert main(["sweep", "--only", *SPECS, "--jobs", "0", "--quiet", "--previous",
                 str(swept), "--out", str(configured)]) == 0
    assert art.load(configured).target("torchscript") == art.load(swept).target("torchscript")
    # a project that does not ask for it: the target is not measured, and the diff says it went
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.opsweep]\ntorchscript = false\n")
    monkeypatch.chdir(project)
    plain = tmp_path / "c.json"
    assert main(["sweep", "--only", *SPECS, "--jobs", "0", "--quiet", "--previous",
                 str(swept), "--out", str(plain)]) == 0
    assert art.load(plain).target("torchscript") is None
    assert "target torchscript removed" in diff(art.load(swept), art.load(plain)).target_changes


#: A torch release whose torch.onnx.export no longer has the TorchScript exporter, as a
#: future one will not: dynamo=False refused, everything else untouched.
REMOVED = '''
import torch.onnx

_export = torch.onnx.export


def export(*args, dynamo=True, **kwargs):
    if not dynamo:
        raise RuntimeError("the TorchScript exporter was removed in this release (simulated)")
    return _export(*args, dynamo=dynamo, **kwargs)


torch.onnx.export = export
'''


@pytest.mark.parametrize("jobs", ["1"])  # the pool: the main command's path
def test_a_torch_without_the_torchscript_exporter_records_it_absent(tmp_path, jobs):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(REMOVED)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(shim)  # opsweep itself as installed (a wheel under tox)
    out = tmp_path / "a.json"
    done = subprocess.run([sys.executable, "-m", "opsweep", "sweep", "--only", "sin",
                           "--torchscript", "--no-dynamic", "--jobs", jobs, "--no-reuse",
                           "--out", str(out)], check=False, cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    artifact = art.load(out)
    entry = artifact.target("torchscript").entry
    assert "removed in this release (simulated)" in entry.absent
    assert entry.absent.startswith("the canary (x + y) stopped at raw-error")
    assert artifact.target("torchscript").specs == {}  # not hundreds of failures
    assert artifact.grades("sin").export is not None  # the stock target measured as ever
    said = done.stdout + done.stderr
    assert said.count("removed in this release") == 1  # one line of the summary
    assert " target torchscript: absent from this pin set (the canary (x + y)" in said


def test_the_migration_view_pairs_both_calls_on_the_smallest_example(swept, tmp_path):
    """cdist is what a team loses by switching: the view lists it with the smallest example
    dynamo fails, and of its two snippets (written as the page writes them) the dynamo one
    fails at its export step and the TorchScript one runs every step."""
    from opsweep.catalog.load import load_catalog
    from opsweep.engine.standalone import Scripts
    from opsweep.page import migration

    artifact = art.load(swept)
    # claims: sin listed at opset 9 (TorchScript exports it), cdist only beyond the measured
    # opset (not checked), relu not listed (exported anyway: unlisted)
    view = migration.build(artifact, {"sin": 9, "cdist": 99},
                           scripts=Scripts(load_catalog(check_draws=False)).for_example)
    rows = {r.name: r for r in view.rows}
    assert view.measured and view.opset == opset_for()
    assert rows["cdist"].kind == "lose" and [r.name for r in dict(
        (k, v) for k, _, _, v in view.lists)["lose"]] == ["cdist"]
    for name, row in rows.items():  # every row's kind follows from its two grades
        assert row.kind == migration.kind_of(artifact.grades(name, "torchscript"),
                                             artifact.grades(name))
    pair = rows["cdist"].pair
    assert pair.worse == "dynamo" and pair.stage == "no-translation" and pair.better_clean
    failures = artifact.specs[pair.spec].failures
    assert pair.signature == min((g for g in failures if g.stage is Stage.NO_TRANSLATION),
                                 key=lambda g: (g.size, len(g.example), g.example)).example
    dynamo, torchscript = pair.repros
    assert "dynamo=True" in dynamo.code and "dynamo=False" in torchscript.code
    ran = {}
    for label, repro in (("dynamo", dynamo), ("torchscript", torchscript)):
        path = tmp_path / f"{label}.py"
        path.write_text(repro.code)
        ran[label] = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                                    timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert ran["dynamo"].returncode != 0
    failed_at = [line for line in ran["dynamo"].stderr.splitlines() if line.strip().endswith("# export")]
    assert failed_at, ran["dynamo"].stderr[-2000:]
    assert ran["torchscript"].returncode == 0, ran["torchscript"].stderr[-2000:]
    assert "no failure: every step passed" in ran["torchscript"].stdout
    assert {n: (r.documented, r.claim) for n, r in rows.items()} == {
        "sin": ("since opset 9", ""), "cdist": ("since opset 99", ""), "relu": ("no", "unlisted")}
    # a claim the measurement contradicts: listed at the measured opset, nothing exported
    entry = artifact.target("torchscript")
    sin = entry.operators["sin"]
    refused = replace(sin, grades=replace(sin.grades, export=Grade.NONE))
    broken = replace(artifact, results={**artifact.results, "torchscript": replace(
        entry, operators={**entry.operators, "sin": refused})})
    assert [r.name for r in migration.build(broken, {"sin": 9}).contradicted] == ["sin"]
    # and the diff (the bot's comment) reports the torchscript target's transition like any other
    (moved,) = diff(artifact, broken).transitions
    assert (moved.op, moved.axis, moved.target, str(moved.kind)) == ("sin", "export", "torchscript",
                                                                     "regression")


class _Noisy(torch.nn.Module):
    """Writes to file descriptors 1 and 2 while traced, as the exporter's C++ side does
    (its graph dump on a refusal, its shape-inference warnings)."""

    def forward(self, x):
        os.write(1, b"native stdout noise\n")
        os.write(2, b"native stderr noise\n")
        return x.sin()


@pytest.mark.parametrize("verbose", [False, True])
def test_the_exporters_own_printing_stays_off_the_terminal_unless_verbose(capfd, verbose):
    from opsweep.engine.torchscript import TorchScriptExporter
    model = TorchScriptExporter(verbose=verbose).export(_Noisy(), (torch.rand(2, 3),))
    assert [n.op_type for n in model.graph.node] == ["Sin"]  # a real export all the same
    out, err = capfd.readouterr()
    assert ("native stdout noise" in out) is verbose
    assert ("native stderr noise" in err) is verbose

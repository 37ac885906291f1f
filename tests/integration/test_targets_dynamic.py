"""Real measurements of the second target (the example translation table) and of
the dynamic axis, with torch, onnx and onnxruntime."""

import textwrap
from pathlib import Path

import onnx
import pytest
import torch
from hypothesis import strategies as st

from opsweep.artifact import data as art
from opsweep.cli.main import main
from opsweep.engine.fastpath import make_exporter
from opsweep.artifact.grade import dynamic_regressed
from opsweep.model import Example, Grade, OpSpec, Stage, TensorArg
from opsweep.page.snippets import snippet
from opsweep.engine.group import run_group

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TABLE = "examples/custom_translations.py:TABLE"
FIXED = ("fmax", "fmin", "hypot", "detach_copy", "fft_fftfreq", "fft_rfftfreq")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """The stock target and the example table's, measured inline (the tests look at no
    worker) in a directory that holds only the examples: the table keeps its relative name
    (the catalog's known-gap notes name it so), and no project configuration adds this
    repository's torchscript and opset targets, which no test here looks at."""
    where = tmp_path_factory.mktemp("targets")
    (where / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    out = where / "a.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(where)
        assert main(["sweep", "--only", *FIXED, "chunk", "relu", "--translations", TABLE,
                     "--jobs", "0", "--no-reuse", "--quiet", "--out", str(out)]) == 0
    return art.load(out)


def test_the_example_table_fixes_what_the_stock_exporter_does_not_export(measured):
    target = measured.target(TABLE)
    assert target.entry.name == TABLE
    for op in FIXED:
        stock, fixed = measured.operators[op].grades, target.operators[op].grades
        assert stock.export is Grade.NONE, (op, stock)
        assert set(measured.specs[op].stages) == {Stage.NO_TRANSLATION}
        assert (fixed.export, fixed.runtime, fixed.numerics) == (Grade.FULL,) * 3, (op, fixed)
    # an operator the table does not touch measures the same with it
    assert target.operators["relu"].grades == measured.operators["relu"].grades
    # known-gap notes that name the table as closing them are measured closed
    for name in ("fft_fftfreq", "fft_rfftfreq"):
        assert measured.specs[name].gap.status == "confirmed"
        assert target.specs[name].gap.status == "closed"


def test_the_dynamic_axis_catches_an_export_that_ignores_dynamic_shapes(measured):
    chunk = measured.specs["chunk"]
    assert chunk.grades.export is Grade.FULL
    assert chunk.grades.dynamic in (Grade.PARTIAL, Grade.NONE)
    failure = min(chunk.dynamic_failures, key=lambda g: g.size)
    assert failure.stage is Stage.RUNTIME and "invalid dimensions for input" in failure.error
    assert measured.specs["relu"].grades.dynamic is Grade.FULL
    # the report's snippet reproduces it: the model it exports has a fixed leading dimension
    code = snippet("chunk", failure.example, dynamic=True)
    scope: dict = {}
    exec(compile(code, "<snippet>", "exec"), scope)  # noqa: S102 - our own generated code
    dims = [i.type.tensor_type.shape.dim[0] for i in scope["program"].model_proto.graph.input]
    assert any(d.HasField("dim_value") for d in dims)


def _spec(name, fn, arg, batch=None):
    return OpSpec(name, (name,), st.just(Example((arg,))), fn=fn, batch=batch)


@pytest.mark.parametrize("fn, arg, batch, static, dynamic, regressed", [
    (torch.sin, TensorArg((3, 2), "float32"), None, Stage.OK, Stage.OK, False),
    (lambda x: torch.chunk(x, 3), TensorArg((4,), "float32"), None, Stage.OK, Stage.RUNTIME, True),
    # no leading dimension eager PyTorch runs at another size: the axis does not apply ...
    (lambda x: x.view(6), TensorArg((3, 2), "float32"), None, Stage.OK, None, False),
    # ... unless the spec says that input carries the batch: then its declaration is wrong,
    # a spec matter, never held against the exporter
    (lambda x: x.view(6), TensorArg((3, 2), "float32"), (0,), Stage.OK, Stage.INVALID, False),
    (lambda x: x.sum(), TensorArg((), "float32"), None, Stage.OK, None, False),  # no leading dim
])
def test_dynamic_stage_of_one_example(fn, arg, batch, static, dynamic, regressed):
    exporter = make_exporter(True)
    [outcome] = run_group(_spec("probe", fn, arg, batch), [Example((arg,), seed=3)], exporter,
                          dynamic=True)
    assert (outcome.stage, outcome.dynamic, dynamic_regressed(outcome)) == (static, dynamic, regressed)


DYNCRASH = '''
import os
import signal

import torch
from opsweep.catalog.families import unary


def _segfault_when_dynamic(x):
    if torch.compiler.is_exporting() and not isinstance(x.shape[0], int):
        os.kill(os.getpid(), signal.SIGSEGV)
    return torch.sin(x)


SPECS = [unary("dyncrash", fn=_segfault_when_dynamic, aten=("sin",), dtypes=("float32",),
               min_rank=1, max_rank=1)]
'''


@pytest.mark.usefixtures("outside_project")  # the stock target only: the one it looks at
def test_a_worker_lost_in_the_dynamic_re_export_keeps_the_static_results(tmp_path, spec_dir):
    (spec_dir / "dyncrash.py").write_text(textwrap.dedent(DYNCRASH))
    out = tmp_path / "a.json"
    assert main(["sweep", "--only", "dyncrash", "--specs", str(spec_dir), "--jobs", "2",
                 "--no-reuse", "--quiet", "--out", str(out)]) == 0
    result = art.load(out).specs["dyncrash"]
    assert result.stages == {Stage.OK: result.examples}  # the static exports all survived
    assert result.grades.export is Grade.FULL and result.grades.dynamic is Grade.NONE
    assert set(result.dynamic_stages) == {Stage.RAW_ERROR}
    assert {g.error for g in result.dynamic_failures} == {
        "WorkerLost: worker killed by SIGSEGV during dynamic-export"}


def test_the_dynamic_export_is_a_valid_onnx_model_with_a_symbolic_batch():
    from opsweep.engine.runner import choose_plan, dynamic_shapes
    example = Example((TensorArg((3, 4), "float32"), TensorArg((3, 4), "float32")))
    plan, call, _ = choose_plan(OpSpec("add", ("add",), st.nothing(), fn=torch.add), torch.add,
                                example)
    assert plan.inputs == {0, 1}  # eager PyTorch cannot add [4, 4] to [3, 4]: both carry it
    model = make_exporter(True).export(call, call.inputs,
                                       dynamic_shapes=dynamic_shapes(plan, 2))
    onnx.checker.check_model(model, full_check=True)
    dims = {i.type.tensor_type.shape.dim[0].dim_param for i in model.graph.input}
    assert len(dims) == 1 and dims != {""}  # one shared symbolic batch dimension

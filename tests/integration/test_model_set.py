"""The public model set (examples/models): every callable builds its model from a
configuration and runs it in eager PyTorch at its dtype, through the loader `opsweep check`
itself uses; the names are unique and the set is large enough (60 architectures, every
family of issue 52's scoreboard); `[tool.opsweep] models` lists exactly the set (the main
command checks it); and the real `opsweep check` gives a verdict on a float32 and a
bfloat16 model, which scripts/score_models.py counts as check counted them. torchvision and timm (the test extras) are optional: their families are
left out, and their tests skipped, when the package is absent."""

import importlib.util
import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
from torch.utils import _pytree as pytree

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing fetched at run time

from opsweep import config  # noqa: E402
from opsweep.capture.cases import load_model  # noqa: E402
from opsweep.cli import main  # noqa: E402

pytest.importorskip("transformers")

ROOT = Path(__file__).parents[2]
HERE = ROOT / "examples" / "models"
ARTIFACT = ROOT / "docs" / "onnx_support_measured.json"
OPTIONAL = {"vision_torchvision": "torchvision", "vision_dense": "torchvision",
            "vision_timm": "timm"}
#: issue 52's scoreboard: each of these groups has an architecture (timm's by what the
#: network is built of, the others by family)
GROUPS = {"classification", "detection", "segmentation", "timm cnn", "timm vit", "encoder",
          "decoder", "encoder-decoder", "plain"}


def _load(name: str, path: Path, package: bool = False):
    where = [str(path.parent)] if package else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=where)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


models = _load("opsweep_public_models", HERE / "__init__.py", package=True)
score_models = _load("opsweep_score_models", ROOT / "scripts" / "score_models.py")
variants = sys.modules["opsweep_public_models._variants"]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """The models are tiny: on a shared machine, more than one intra-op thread costs more in
    waiting than it saves (the file took 68 s with torch's default threads, 16 s with one)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _tensors(value) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves(value) if isinstance(t, torch.Tensor)]


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_each_model_builds_and_runs_in_eager_at_its_dtype(name):
    arch_name, _, tag = name.rpartition("_")
    dtype = variants.DTYPES[tag]
    case = load_model(models.spec(name, ROOT))  # check's loader: import, build, eager run
    assert case.name == f"{arch_name} {variants.dtype_name(tag)}"
    floating = [p for p in case.model.parameters() if p.is_floating_point()]
    assert floating and {p.dtype for p in floating} == {dtype}
    assert {t.dtype for t in case.inputs if t.is_floating_point()} <= {dtype}
    arch = models.ARCHS[arch_name]
    assert (case.dynamic_shapes is not None) == arch.dynamic
    if arch.dynamic:  # the second batch size runs too, and gives outputs of that batch
        with torch.no_grad():
            out = _tensors(case.model(*case.dynamic_inputs))
        assert out and any(t.shape[:1] == (variants.OTHER_BATCH,) for t in out)
        assert any(t.dtype == dtype for t in out)
        _sequences_are_dynamic(arch, case)
    else:  # a static batch: what the architecture's file says why
        with torch.no_grad():
            assert any(t.dtype == dtype for t in _tensors(case.model(*case.inputs)))


def _sequences_are_dynamic(arch, case):
    """The inputs `sequence` marks have a dynamic dimension 1, longer in the second inputs;
    the others keep theirs."""
    assert len(arch.sequence) in (0, len(case.inputs))
    for i, (first, second) in enumerate(zip(case.inputs, case.dynamic_inputs)):
        marked = bool(arch.sequence) and arch.sequence[i]
        assert (1 in case.dynamic_shapes[i]) == marked
        grown = variants.GROW if marked else 0
        assert second.shape[1:2] == (first.shape[1] + grown,)


@pytest.mark.parametrize("family", sorted(OPTIONAL))
def test_an_optional_family_is_in_the_set_when_its_package_is(family):
    if importlib.util.find_spec(OPTIONAL[family]) is None:
        assert models.MISSING[family] == OPTIONAL[family]
        pytest.skip(f"{OPTIONAL[family]} is not installed: {family} is left out")
    assert family not in models.MISSING
    assert any(models.FAMILY_OF[n] == family for n in models.MODELS)


def test_the_names_are_unique_and_the_set_is_large_enough():
    names = [n for m in sys.modules.values() if getattr(m, "__name__", "").startswith(
        "opsweep_public_models.") and hasattr(m, "ALL") for n in m.ALL]
    assert len(names) == len(set(names)) == len(models.MODELS)
    assert len(models.MODELS) >= 30 and len(models.ARCHS) >= 12
    assert len({a.name for a in models.ARCHS.values() if a.sequence}) >= 20  # text, time
    shown = {f"{a.name} {variants.dtype_name(t)}" for a in models.ARCHS.values()
             for t in variants.DTYPES if f"{a.name}_{t}" in models.MODELS}
    assert len(shown) == len(models.MODELS)  # the names reports show are unique too
    assert {f"{a.name}_{t}" for a in models.ARCHS.values() for t in a.dtypes} == \
        set(models.MODELS)
    with pytest.raises(ValueError, match="two models named bert_f32"):
        variants.define((models.ARCHS["bert"],), {"bert_f32": None})


def _group(arch) -> str:
    return f"timm {arch.kind}" if arch.source == "timm" else arch.family


def test_the_scoreboard_spans_sixty_architectures_and_every_family():
    if models.MISSING:
        pytest.skip(f"left out: {', '.join(models.MISSING)} (their packages are not installed)")
    groups = Counter(_group(a) for a in models.ARCHS.values())
    assert len(models.ARCHS) >= 60
    every = [a for a in models.ARCHS.values() if set(a.dtypes) == set(variants.DTYPES)]
    assert len(every) >= len(models.ARCHS) - 2  # a dtype is left out only where eager fails
    assert GROUPS <= set(groups), GROUPS - set(groups)
    assert all(groups[g] >= 2 for g in GROUPS), groups  # more than one of each


LEFT_OUT = [(a.name, t) for a in models.ARCHS.values() for t in variants.DTYPES
            if t not in a.dtypes]


@pytest.mark.parametrize("arch_name, tag", LEFT_OUT)
def test_a_dtype_left_out_is_one_eager_pytorch_cannot_run(arch_name, tag):
    case = variants.case(models.ARCHS[arch_name], tag)
    with pytest.raises(RuntimeError, match="not implemented for"), torch.no_grad():
        case["model"](*case["inputs"])


def test_the_project_lists_the_whole_set_as_its_models():
    """opsweep's own [tool.opsweep] models is the set, each once, as the command line names
    it from the repository's root: the main command's models step checks exactly it."""
    listed = config.load(ROOT / "pyproject.toml").models
    if not models.MISSING:
        assert sorted(listed) == sorted(models.spec(n, ROOT) for n in models.MODELS)
    assert listed and len(set(listed)) == len(listed)
    for source in listed:  # without torchvision or timm: their files still name their models
        path, _, name = source.rpartition(":")
        assert Path(path).parent == Path("examples", "models") and (ROOT / path).is_file()
        family = Path(path).stem
        assert family in models.FAMILIES
        assert family in models.MISSING or models.FAMILY_OF[name] == family


def test_the_command_line_names_every_model():
    for name, fn in models.MODELS.items():
        path, _, attr = models.spec(name, ROOT).rpartition(":")
        assert attr == name == fn.__name__ and (ROOT / path).is_file()


def test_opsweep_check_gives_a_verdict_and_the_score_counts_it(capsys):
    chosen = ["bert_f32", "resnet_bf16"]  # a dynamic float32 encoder, a bfloat16 CNN
    code = main(["check", *(models.spec(n, ROOT) for n in chosen), "--artifact",
                 str(ARTIFACT), "--json"])
    reports = json.loads(capsys.readouterr().out)["models"]
    assert [r["name"] for r in reports] == ["bert float32", "resnet bfloat16"]
    for r in reports:
        assert r["verdict"]["export"] in ("pass", "fail") and r["uses"]
        assert set(r["prediction"]) >= {"export", "runtime", "numerics"}
    assert "dynamic" in reports[0]["verdict"]
    assert code == (1 if any(r["failed"] for r in reports) else 0)
    text = score_models.score(reports, {})
    uses = sum(len(r["uses"]) for r in reports)
    measured = sum(r["counts"]["measured fine"] + r["counts"]["measured failing"]
                   for r in reports)
    assert f"operator uses measured at their (dtype, rank): {measured} of {uses} " in text
    for axis in ("export", "runtime"):
        definite = sum(r["prediction"][axis] != "unknown" for r in reports)
        assert f"models with a definite {axis} prediction: {definite} of 2 " in text


def test_the_score_of_a_table_lookup_alone(capsys):
    """--no-export (the shares need no real export): no verdict, the same counting."""
    main(["check", models.spec("mlp_bf16", ROOT), "--artifact", str(ARTIFACT), "--json",
          "--no-export"])
    (report,) = json.loads(capsys.readouterr().out)["models"]
    assert report["verdict"] is None and report["uses"]
    text = score_models.score([report], {})
    assert "exported for real: none" in text
    measured = report["counts"]["measured fine"] + report["counts"]["measured failing"]
    assert f"operator uses measured at their (dtype, rank): {measured} of " \
           f"{len(report['uses'])} " in text
    # no real export to match the prediction against: said once per axis, never counted
    assert "against the real export: not exported (--no-export)" in text
    assert "definite and matching the real export" not in text

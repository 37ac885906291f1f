import textwrap
from dataclasses import replace

import pytest

from opsweep.catalog.load import load_catalog
from opsweep.errors import SpecError
from opsweep.catalog.families import unary

HEADER = """
from dataclasses import replace

import torch
from hypothesis import strategies as st
from opsweep.catalog.families import spec, unary
from opsweep.catalog.strategies import examples
"""


def write(spec_dir, name, body):
    (spec_dir / f"{name}.py").write_text(HEADER + textwrap.dedent(body))


def test_builtin_catalog_loads_and_tables_are_derived():
    catalog = load_catalog(check_draws=False)
    assert len(catalog.specs) >= 60
    assert len({s.family for s in catalog.specs.values()}) >= 8
    for op, names in catalog.by_operator.items():
        assert all(op in catalog.specs[n].aten_ops for n in names)


def test_user_directory_is_measured_beside_the_builtins(spec_dir):
    write(spec_dir, "mine", 'SPECS = [replace(unary("sin"), name="my_sin")]')
    catalog = load_catalog([spec_dir])
    assert "my_sin" in catalog.specs and "sin" in catalog.specs
    assert catalog.specs["my_sin"].source.startswith("opsweep_user_specs.mine")
    assert catalog.specs["my_sin"].family == "mine"
    assert catalog.by_operator["sin"] == ("my_sin", "sin")


def test_duplicate_names_fail_naming_both_places(spec_dir):
    write(spec_dir, "dupe", 'SPECS = [unary("sin")]')
    with pytest.raises(SpecError, match=r"spec 'sin' \(in opsweep_user_specs\.dupe.*\): duplicate "
                                        r"spec name, first defined in opsweep\.specs\.unary"):
        load_catalog([spec_dir])


def test_empty_aten_ops_fails_naming_the_spec(spec_dir):
    write(spec_dir, "empty", 'SPECS = [replace(unary("tanh"), name="t2", aten_ops=())]')
    with pytest.raises(SpecError, match="spec 't2'.*aten_ops is empty"):
        load_catalog([spec_dir])


def test_prefixed_row_names_are_refused(spec_dir):
    write(spec_dir, "prefixed", 'SPECS = [replace(unary("tanh"), name="t3", aten_ops=("aten::tanh",))]')
    with pytest.raises(SpecError, match="spec 't3'.*listing's row name"):
        load_catalog([spec_dir])


# The tests of a user spec's broken draw below load the user's directory alone (as a
# project's `catalog = "none"` does): with the built-in catalog, each would first draw an
# example of every built-in spec (some 2 s of CPU) before reaching the one it is about.

def test_a_strategy_that_cannot_draw_fails_naming_the_spec(spec_dir):
    write(spec_dir, "nodraw", '''
        SPECS = [spec("never", st.integers().filter(lambda _: False).map(lambda _: None),
                      fn=torch.sin, aten=("sin",))]
    ''')
    with pytest.raises(SpecError, match="spec 'never'.*cannot draw"):
        load_catalog([spec_dir], builtin=False)


def test_a_sweep_of_named_specs_proves_only_their_draws(spec_dir):
    """`opsweep sweep --only NAME` checks the draws of the specs it measures, not of the
    whole catalog (a cached regeneration of a few specs paid five seconds for the rest);
    without names every spec's draw is proven, and the broken one is named."""
    write(spec_dir, "nodraw", '''
        SPECS = [spec("never", st.integers().filter(lambda _: False).map(lambda _: None),
                      fn=torch.sin, aten=("sin",)),
                 replace(unary("sin"), name="my_sin")]
    ''')
    assert "never" in load_catalog([spec_dir], check_draws=["my_sin"]).specs
    with pytest.raises(SpecError, match="spec 'never'.*cannot draw"):
        load_catalog([spec_dir], check_draws=["my_sin", "never"])
    with pytest.raises(SpecError, match="spec 'never'.*cannot draw"):
        load_catalog([spec_dir], check_draws=True)


def test_a_strategy_drawing_something_else_fails(spec_dir):
    write(spec_dir, "wrongtype", 'SPECS = [spec("wrong", st.just(3), fn=torch.sin, aten=("sin",))]')
    with pytest.raises(SpecError, match="spec 'wrong'.*drew int, not an Example"):
        load_catalog([spec_dir], builtin=False)


def test_a_spec_may_not_set_its_family(spec_dir):
    """A spec's family is the module it lives in; one stating another is refused."""
    write(spec_dir, "scans", 'SPECS = [replace(unary("sin"), name="s1"), '
                             'unary("cos", family="reductions")]')
    with pytest.raises(SpecError, match=r"spec 'cos' \(in opsweep_user_specs\.scans_[0-9a-f]+\): "
                                        r"sets family='reductions', but .* \('scans'\)"):
        load_catalog([spec_dir], check_draws=False)


def test_the_family_is_the_module_whatever_the_family_constructor(spec_dir):
    write(spec_dir, "scans", 'SPECS = [replace(unary("cumsum", min_rank=1), name="my_cumsum")]')
    assert load_catalog([spec_dir], check_draws=False).specs["my_cumsum"].family == "scans"


def test_a_spec_drawing_outside_its_dtypes_fails_naming_the_example(spec_dir):
    write(spec_dir, "dt", '''
        from opsweep.model import TensorArg
        SPECS = [spec("dt", examples(lambda d: ((TensorArg((2,), "int64"),), {})), fn=torch.sin,
                      aten=("sin",), dtypes=("float32",))]
    ''')
    with pytest.raises(SpecError, match=r"spec 'dt' .*: the drawn example 'i64\[2\]' is outside "
                                        r"its declared dtypes: dtype int64 \(its first tensor's\) "
                                        r"is not among \('float32',\)"):
        load_catalog([spec_dir], builtin=False)


def test_a_spec_drawing_outside_its_ranks_fails_naming_the_example(spec_dir):
    write(spec_dir, "rk", 'SPECS = [replace(unary("tanh", min_rank=3), name="rk", ranks=(0, 2))]')
    with pytest.raises(SpecError, match=r"spec 'rk' .*: the drawn example 'f\w+\[\d,\d,\d.*' is "
                                        r"outside its declared ranks: rank \d \(its first tensor's\) "
                                        r"is outside \(0, 2\)"):
        load_catalog([spec_dir], builtin=False)


def test_the_declaration_is_checked_on_every_example_not_only_the_first():
    """check_declared judges the dtype and rank an example is filed under (its first
    tensor's; other tensors, such as an index, may differ); a tensorless example has
    no dtype and rank 0."""
    from opsweep.catalog.load import check_declared
    from opsweep.model import Example, TensorArg
    spec = replace(unary("sin"), dtypes=("float32",), ranks=(1, 2))
    index = TensorArg((5, 5, 5), "int64")
    check_declared(spec, Example((TensorArg((3,), "float32"), index)))
    with pytest.raises(SpecError, match="declared dtypes: dtype float16"):
        check_declared(spec, Example((TensorArg((3,), "float16"),)))
    with pytest.raises(SpecError, match="declared ranks: rank 3"):
        check_declared(spec, Example((TensorArg((1, 1, 1), "float32"),)))
    with pytest.raises(SpecError, match=r"declared ranks: rank 0 \(it has no tensor input\)"):
        check_declared(spec, Example((4,)))
    check_declared(replace(spec, ranks=(0, 0)), Example((4,), (("dtype", "float16"),)))


def test_import_errors_name_the_file(spec_dir):
    (spec_dir / "broken.py").write_text("import no_such_module\n")
    with pytest.raises(SpecError, match="importing broken.py failed: ModuleNotFoundError"):
        load_catalog([spec_dir])


def test_missing_directory(tmp_path):
    with pytest.raises(SpecError, match="does not exist"):
        load_catalog([tmp_path / "nope"])


def test_unknown_only_names_are_reported():
    catalog = load_catalog(check_draws=False)
    with pytest.raises(SpecError, match="'nope'.*no such spec"):
        catalog.select(["sin", "nope"])


def test_specs_the_installed_torch_lacks_are_absent_with_the_reason(spec_dir):
    """An operator not in the listing, a callable gone from torch, or a lambda reaching
    a torch attribute that does not exist: the spec is absent, not a load failure."""
    import torch
    version = torch.__version__.split("+")[0]
    write(spec_dir, "gone", '''
        SPECS = [replace(unary("sin"), name="gone_op", aten_ops=("no_such_op_xyz",)),
                 replace(unary("not_in_torch_xyz"), aten_ops=("sin",)),
                 spec("gone_lambda", examples(lambda d: ((), {})),
                      fn=lambda a: torch.linalg.not_there_xyz(a), aten=("sin",))]
    ''')
    catalog = load_catalog([spec_dir])
    mine = ("gone_op", "not_in_torch_xyz", "gone_lambda")  # builtins may be absent too
    reasons = {n: a.reason for n, a in catalog.absent.items() if n in mine}
    assert reasons == {
        "gone_op": f"aten::no_such_op_xyz not in torch {version}'s operator listing",
        "not_in_torch_xyz": f"no callable named 'not_in_torch_xyz' in torch (torch {version})",
        "gone_lambda": f"torch.linalg.not_there_xyz does not exist in torch {version}"}
    assert not set(reasons) & set(catalog.specs)
    assert "gone_op" not in {n for names in catalog.by_operator.values() for n in names}
    # --only an absent spec measures nothing (the artifact records it absent); a typo is an error
    assert catalog.select(["gone_op", "sin"]) == [catalog.specs["sin"]]
    with pytest.raises(SpecError, match="no such spec"):
        catalog.select(["gone_opp"])


def test_loading_the_catalog_imports_no_compiler(spec_dir):
    """A spec whose callable is torch's own (pad, reaching torch._dynamo lazily) is not read
    for missing references: loading the catalog in a process that exports nothing (`opsweep
    draw`, a pooled sweep's parent) imports neither torch._dynamo nor
    torch._inductor, some seconds of CPU that only an export needs. A lambda of the spec's
    own is still read (the test above)."""
    import subprocess
    import sys
    write(spec_dir, "padded", """
        import torch.nn.functional as F
        SPECS = [replace(unary("sin"), name="padded_own", fn=F.pad, aten_ops=("sin",))]
    """)
    code = ("import sys; from pathlib import Path; from opsweep.catalog.load import load_catalog; "
            "c = load_catalog([Path(sys.argv[1])], check_draws=False); "
            "assert 'padded_own' in c.specs and 'pad_constant' in c.specs, sorted(c.absent); "
            "print(sorted(m for m in ('torch._dynamo', 'torch._inductor') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(spec_dir)], capture_output=True,
                          text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["[]"]


def test_list_names_what_the_installed_torch_lacks(spec_dir, capsys):
    from opsweep.cli.main import main
    write(spec_dir, "gone", 'SPECS = [replace(unary("sin"), name="gone_op", aten_ops=("no_op_xyz",))]')
    assert main(["list", "--specs", str(spec_dir)]) == 0
    out = capsys.readouterr()
    assert "gone_op" not in out.out
    assert "not present in this torch: gone_op (aten::no_op_xyz not in torch " in out.err


def test_the_builtin_catalog_has_nothing_absent_under_the_measured_torch():
    """Under the torch the committed artifact measured, the only absent specs are the ones
    it records as absent (cholesky and qr, removed in torch 2.14): any other is a typo."""
    import json
    from pathlib import Path

    import torch
    artifact = json.loads((Path(__file__).parents[2] / "docs" / "onnx_support_measured.json")
                          .read_text("utf-8"))
    measured = artifact["fingerprint"]["torch"].split("+")[0]
    if torch.__version__.split("+")[0] != measured:
        pytest.skip(f"torch {torch.__version__} is not the measured {measured}")
    assert set(load_catalog(check_draws=False).absent) == set(artifact.get("absent", {}))

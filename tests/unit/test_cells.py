"""A spec's cells (opsweep.catalog.cells): the universe, retyping and emptying that keep an
example consistent, each cell's status from eager's answer, and the covering draw that gives
every accepted cell an example within the argument covering."""

import torch
from hypothesis import strategies as st

from opsweep.catalog import cells as C
from opsweep.catalog.draw import PROFILES, cover, draw_examples, plan_for
from opsweep.catalog.families import binary, spec, unary
from opsweep.catalog.strategies import examples, shapes
from opsweep.model import Example, TensorArg


def ex(*shapes_, dtype="float32", **kwargs):
    return Example(tuple(TensorArg(s, dtype) for s in shapes_), tuple(sorted(kwargs.items())))


def test_an_example_is_filed_under_its_first_tensor_and_emptiness():
    assert C.cell_of(ex((2, 3), (3,))) == C.Cell("float32", 2)
    assert C.cell_of(ex((2, 0))) == C.Cell("float32", 2, True)
    assert C.cell_of(ex(())) == C.Cell("float32", 0)
    assert C.cell_of(Example((3, 4))) is None
    assert C.Cell("bfloat16", 0).label == "bf16/0" and C.Cell("int64", 1, True).label == "i64/1/empty"


def test_the_universe_is_each_listed_dtype_from_rank_0_to_the_top_and_one_empty_cell():
    sin = unary("sin", dtypes=("float32", "float16"), max_rank=3)
    cells = C.universe(sin, [ex((2,))])
    assert cells[:-1] == [C.Cell(d, r) for d in ("float32", "float16") for r in range(4)]
    assert cells[-1] == C.Cell("float32", 1, True)
    # the first tensor is not the listed one (an index): the dtypes the draws file under
    assert [c.dtype for c in C.universe(sin, [ex((2,), dtype="int64")])] == ["int64"] * 5
    assert C.universe(sin, [Example((3,))]) == []  # no tensor input: no cells


def test_retyping_swaps_every_tensor_of_the_first_dtype_and_only_those():
    e = Example((TensorArg((2,), "float32", choices=(0.0, float("nan"))),
                 [TensorArg((2,), "float32"), TensorArg((2,), "int64")]), (("k", 2),))
    out = C.retyped(e, "int32")
    assert [t.dtype for t in out.tensors] == ["int32", "int32", "int64"]
    assert out.tensors[0].choices is None  # nan is no integer's edge value
    assert C.retyped(e, "float16").tensors[0].choices is e.args[0].choices
    assert out.kwargs == e.kwargs and isinstance(out.args[1], list)


def test_emptying_zeroes_the_leading_side_and_every_side_aligned_with_it():
    out = C.emptied(ex((3, 4), (3, 4), (4,), (1, 4)))
    assert [t.shape for t in out.tensors] == [(0, 4), (0, 4), (4,), (1, 4)]
    assert C.emptied(ex(())) is None


def _plan(spec_, drawn, found=(), refuse=lambda e: None):
    return C.plan_cells(spec_, drawn, lambda missing: list(found), lambda s, e: refuse(e))


def test_each_cell_is_drawn_searched_retyped_reranked_or_emptied_and_eager_decides():
    s = unary("f", fn=torch.sin, dtypes=("float32", "int64"), min_rank=1, max_rank=2)
    drawn = [ex((2,))]
    searched = []

    def search(ranks):
        searched.append(ranks)
        return [ex((3, 3), dtype="int64")]
    plan = C.plan_cells(s, drawn, search,
                        lambda _, e: "RuntimeError: no int" if e.dtype == "int64" else None)
    assert searched == [{2}]  # the declared rank no drawn example has
    status = {c.label: v for c, v in plan.status.items()}
    assert status["f32/1"] == C.DRAWN
    assert status["i64/2"] == C.REFUSED and plan.how[C.Cell("int64", 2)] == "search"
    # a retyped example eager refuses: the retyping may be at fault (an index that shared
    # the dtype), so not the operator's refusal
    assert status["i64/1"] == C.UNSETTLED and plan.how[C.Cell("int64", 1)] == "retyped"
    assert status["f32/2"] == C.ADDED and plan.how[C.Cell("float32", 2)] == "retyped"
    # the strategy draws no rank 0 (declared ranks 1..2): reranked from rank 1, eager's yes
    # says the spec should widen (never added: outside its declaration), its no is not the
    # operator's (the rewrite may be at fault)
    assert status["f32/0"] == C.OUTSIDE and plan.how[C.Cell("float32", 0)] == "reranked"
    assert status["i64/0"] == C.UNSETTLED
    assert status["f32/1/empty"] == C.ADDED and plan.how[C.Cell("float32", 1, True)] == "emptied"
    assert plan.error[C.Cell("int64", 2)] == "RuntimeError: no int"
    assert plan.added == [C.retyped(search({2})[0], "float32"), C.emptied(drawn[0])]


def test_a_declared_rank_the_strategy_never_draws_is_reranked_and_added_when_eager_runs_it():
    s = unary("f", fn=torch.sin, dtypes=("float32",), max_rank=2)
    plan = C.plan_cells(s, [ex((2,)), ex(())], lambda ranks: [], lambda _, e: None)
    assert plan.status[C.Cell("float32", 2)] == C.ADDED
    assert plan.example[C.Cell("float32", 2)].tensors[0].shape == (2, 2)


def test_reranking_trims_from_the_left_or_prepends_and_leaves_other_dtypes():
    e = Example((TensorArg((3, 4), "float32"), TensorArg((4,), "float32"),
                 TensorArg((5, 6), "int64")))
    assert [t.shape for t in C.reranked(e, 0).tensors] == [(), (), (5, 6)]
    assert [t.shape for t in C.reranked(e, 1).tensors] == [(4,), (4,), (5, 6)]
    assert [t.shape for t in C.reranked(e, 3).tensors] == [(2, 3, 4), (4,), (5, 6)]


def test_covering_adds_the_cells_and_gives_up_redundant_random_draws():
    drawn = [ex((2,)), ex((3,)), ex((4,)), ex((2, 2))]
    added = [ex((), dtype="float32")]
    out = cover(drawn, added)
    assert len(out) == len(drawn)  # the rank-1 repeat gave its place up
    assert {C.cell_of(e) for e in out} == {C.cell_of(e) for e in drawn + added}
    # without cells held, the argument covering may give up a cell's only example
    assert cover(drawn) is drawn


def test_a_cell_example_carries_argument_values_the_covering_would_have_copied():
    drawn = [ex((2,), flag=True), ex((3,), flag=True), ex((2,), flag=False)]
    cell = ex((), flag=False)
    out = cover(drawn[:2], [cell])  # `False` comes with the cell: no copy made for it
    assert sum(dict(e.kwargs)["flag"] is False for e in out) == 1


def _rank_zero_or_more(draw):
    dtype = draw(st.sampled_from(("float32", "int64")))
    return (TensorArg(draw(shapes(min_rank=0, max_rank=2)), dtype),), {}


def test_the_ci_draw_holds_every_accepted_cell_and_is_deterministic():
    s = spec("neg", examples(_rank_zero_or_more), fn=torch.neg, dtypes=("float32", "int64"),
             ranks=(0, 2))
    drawn = draw_examples(s, PROFILES["ci"])
    assert drawn == draw_examples(s, PROFILES["ci"])
    plan = plan_for(s, PROFILES["ci"])
    accepted = {c for c, v in plan.status.items() if v in (C.DRAWN, C.ADDED)}
    assert len(accepted) == 7 and accepted <= {C.cell_of(e) for e in drawn}
    assert len(draw_examples(s, PROFILES["nightly"])) >= 25  # nightly: no cells, as before


def test_a_cell_eager_refuses_records_eagers_error_and_is_not_drawn():
    s = binary("bitwise_and", dtypes=("int64",), scalar_other=False, max_rank=1)
    s = spec("bitwise_and", s.examples, fn=torch.bitwise_and, dtypes=("int64", "float32"),
             ranks=(0, 1))  # the strategy draws int64 only: float32 cells are retyped
    plan = plan_for(s, PROFILES["ci"])
    refused = [c for c, v in plan.status.items() if v == C.UNSETTLED]  # retyped: unsettled
    assert refused and all(c.dtype == "float32" for c in refused)
    assert all("bitwise_and" in plan.error[c] and "\n" not in plan.error[c] for c in refused)
    assert not {c for c in refused} & {C.cell_of(e) for e in draw_examples(s, PROFILES["ci"])}

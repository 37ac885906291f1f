"""Hypothesis profiles and drawing a spec's examples.

``ci`` is derandomized with a per-spec seed and no example database, so a
committed artifact is reproducible and a diff is a real change; ``nightly``
draws eight times as many examples, randomly.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, given, seed, settings

from opsweep.catalog.cells import (
    ADDED, OUTSIDE, SEARCH, CellPlan, cell_of, plan_cells, search_seed, settle, unmeasured,
)
from opsweep.catalog.eager import eager_error
from opsweep.catalog.isolated import ChildLost, in_child
from opsweep.coverage import dtype_class, plain_classes
from opsweep.errors import SpecError, UsageError
from opsweep.model import Example, OpSpec


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    derandomize: bool
    #: whether every accepted (dtype, rank) cell gets an example (opsweep.catalog.cells)
    cells: bool = False


PROFILES = {
    "ci": Profile("ci", 25, True, cells=True),
    "nightly": Profile("nightly", 200, False),
}


def resolve_profile(name: str | None = None, source: str = "--profile") -> Profile:
    """The profile called `name` (None: ci); `source` names where the name came from, for
    the error (the CLI gives `--profile` or $OPSWEEP_HYP_PROFILE, whichever set it)."""
    chosen = name or "ci"
    if chosen not in PROFILES:
        raise UsageError(f"{source}: unknown profile {chosen!r}; choose one of "
                         f"{', '.join(PROFILES)}")
    return PROFILES[chosen]


@contextmanager
def source_independent() -> Iterator[None]:
    """Draw as if no module were local source.

    Hypothesis mixes literal constants of every loaded module it considers local
    source (not installed in site-packages) into its draws. Whether the catalog is
    local depends on how opsweep is installed (a wheel, editable, a checkout), and
    a user's ``--specs`` or ``--translations`` module adds constants of its own, so
    the same spec would draw different examples on different installs. Inside this
    context hypothesis sees no local constants (its built-in global constants stay),
    and the constants it had cached are dropped on the way in and out."""
    try:
        from hypothesis.internal import constants_ast  # noqa: F401  (the feature's home)
    except ImportError:  # a hypothesis that predates local constants: nothing to turn off
        yield
        return
    # hypothesis internals: probed, not assumed
    from hypothesis.internal.conjecture import providers
    get = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if get is None or cache is None or not hasattr(providers, "Constants"):
        raise UsageError("this hypothesis version mixes local source constants into its draws "
                         "in a way opsweep cannot turn off, so draws would depend on how opsweep "
                         "is installed; use the hypothesis pinned in [tool.tox.env.proptest_onnx]")
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = get
        cache.clear()


def draw_examples(spec: OpSpec, profile: Profile) -> list[Example]:
    """Let hypothesis drive the spec's strategy for the profile's budget, then cover its
    cells (a profile with ``cells``) and its arguments; the draws depend only on the spec,
    the profile, the hypothesis version and (for the cells) eager PyTorch's answers."""
    return draw_with_cells(spec, profile)[0]


def draw_with_cells(spec: OpSpec, profile: Profile) -> tuple[list[Example], dict[str, str] | None]:
    """`draw_examples`, and the cells no example stands for (opsweep.catalog.cells.unmeasured;
    None: the profile does not cover cells)."""
    drawn = _hypothesis_draws(spec, profile.max_examples, profile.derandomize,
                              zlib.crc32(spec.name.encode()))
    if not profile.cells:
        return cover(drawn), None
    plan = plan_for(spec, profile, drawn)
    return cover(drawn, plan.added), unmeasured(plan)


def plan_for(spec: OpSpec, profile: Profile, drawn: list[Example] | None = None) -> CellPlan:
    """`spec`'s cells under `profile` (opsweep.catalog.cells), eager asked once per new
    cell; `drawn`: the profile's own hypothesis draws, when already made."""
    if drawn is None:
        drawn = _hypothesis_draws(spec, profile.max_examples, profile.derandomize,
                                  zlib.crc32(spec.name.encode()))

    def search(ranks: set[int]) -> list[Example]:
        return _hypothesis_draws(spec, SEARCH, True, search_seed(spec.name), until=ranks)
    asked: list[Example] = []

    def later(_spec: OpSpec, example: Example) -> None:  # every new cell, accepted for now
        asked.append(example)
        return None
    plan = plan_cells(spec, drawn, search, later)
    cells = [c for c, s in plan.status.items() if s in (ADDED, OUTSIDE)]  # in asking order
    assert len(cells) == len(asked)
    try:  # eager asked in a forked child: a crash of eager PyTorch costs only the child,
        # and only eager's error lines come back (an example's values are never unpickled
        # here: a value can run code when it is)
        errors = in_child(lambda: [eager_error(spec, e) for e in asked])
    except ChildLost as lost:  # a crash is no refusal of the operator: each one unsettled
        line = f"eager PyTorch crashed while the cells were asked ({lost}): not added"
        return settle(plan, {c: line for c in cells}, crashed=True)
    return settle(plan, dict(zip(cells, errors)))


class _Found(Exception):
    """Every rank searched for is drawn: the search stops."""


def _hypothesis_draws(spec: OpSpec, count: int, derandomize: bool, salt: int,
                      until: set[int] | None = None) -> list[Example]:
    """`count` examples of the spec's strategy (fewer: every rank of `until` was drawn)."""
    drawn: list[Example] = []
    left = set(until or ())

    @settings(max_examples=count, database=None,
              derandomize=derandomize, deadline=None,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
    @given(spec.examples)
    def collect(example: Example) -> None:
        if until is not None and not left:
            raise _Found
        drawn.append(example)
        left.discard(example.rank)
        if until is not None and not left:
            raise _Found

    if derandomize:  # decorrelate specs while staying reproducible
        collect = seed(salt)(collect)
    try:
        with source_independent():
            collect()
    except _Found:
        pass
    except UsageError:
        raise
    except Exception as exc:
        raise SpecError(spec.name, f"drawing examples raised {type(exc).__name__}: {exc}",
                        source=spec.source) from exc
    return drawn


# --- the covering design ----------------------------------------------------------------
# Random draws reach a keyword's classes at one dtype and not another: `ceil_mode=True`
# drawn only at float16 makes a ceil_mode failure look like a float16 one. A keyword whose
# values are booleans, strings or None (a class that does not depend on a shape) is covered
# at every dtype class the spec draws: for each dtype class, each such keyword's every class
# (``absent`` too: left out of the call) that the draws reach anywhere. What a dtype class
# lacks is set on a copy of one of its own drawn examples, a class per copy (a covering
# design, not a product: the copies number the classes missing, not their combinations),
# and only where the copy's keywords are a set the strategy itself draws together (no
# keepdim without dim); a random draw whose classes the rest already has gives its place
# up to each copy, so the budget holds where it can.

def _choice(value) -> bool:
    return value is None or isinstance(value, (bool, str))


def _features(example: Example, keys: Sequence[str]) -> set[tuple[str, str]]:
    kwargs = dict(example.kwargs)
    out = set()
    for key in keys:
        if key not in kwargs:
            out.add((key, "absent"))
        elif _choice(kwargs[key]):
            out |= {(key, c) for c in plain_classes(kwargs[key]) or ()}
    return out


def cover(drawn: list[Example], cells: Sequence[Example] | None = None) -> list[Example]:
    """`drawn` with covering examples (see above) and `cells`, the examples of the cells
    the draws missed: they count as members of their dtype class, so a value a cell's
    example carries needs no copy; each example added gives up the place of a random draw
    that holds nothing the rest does not (its keyword classes and, when `cells` is given,
    its cell). The same list when nothing is missing."""
    pool = list(drawn) + list(cells or ())
    keys = sorted({k for e in pool for k, v in e.kwargs if _choice(v)})
    added = _copies(pool, keys) if keys else []
    fixed = list(cells or ()) + added
    if not fixed:
        return drawn
    kept = list(drawn)
    for _ in fixed:  # give up a redundant random draw's place, the last first
        for j in range(len(kept) - 1, -1, -1):
            if _redundant(kept[j], kept[:j] + kept[j + 1:] + fixed, keys, cells is not None):
                del kept[j]
                break
    return kept + fixed


def _redundant(example: Example, rest: list[Example], keys: Sequence[str],
               hold_cells: bool) -> bool:
    here = dtype_class(example.dtype)
    peers = [e for e in rest if dtype_class(e.dtype) == here]
    if hold_cells and (cell_of(example) not in {cell_of(e) for e in rest}
                       or not _plain(example) <= {f for e in rest for f in _plain(e)}):
        return False  # a cell's only example, or a value class no other draw has
    return bool(peers) and _features(example, keys) <= {f for e in peers for f in _features(e, keys)}


def _plain(example: Example) -> set[tuple[str, str]]:
    """The value classes of every plain argument, positional (by place among as many: the
    call's overload) and keyword alike: what the argument bar measures, so a draw holding
    one no other draw has is kept."""
    n = len(example.args)
    named = [(f"#{i}/{n}", v) for i, v in enumerate(example.args)] + list(example.kwargs)
    return {(k, c) for k, v in named for c in plain_classes(v) or ()}


def _copies(drawn: list[Example], keys: Sequence[str]) -> list[Example]:
    """The argument covering's copies (see above)."""
    values: dict[tuple[str, str], object] = {}  # each (keyword, class): its first value
    classes: dict[str, list[Example]] = {}  # dtype class -> its examples, as drawn
    for example in drawn:
        classes.setdefault(dtype_class(example.dtype), []).append(example)
        for key, value in example.kwargs:
            if key in keys:
                values.setdefault((key, next(iter(plain_classes(value) or {"?"}))), value)
    every = {f for e in drawn for f in _features(e, keys)}
    shapes = {frozenset(dict(e.kwargs)) for e in drawn}  # the keyword sets drawn together
    added: list[Example] = []
    for _, members in sorted(classes.items()):
        have = {f for e in members for f in _features(e, keys)}
        for n, (key, cls) in enumerate(sorted(every - have)):
            for base in members[n % len(members):] + members[:n % len(members)]:
                kwargs = dict(base.kwargs)
                if cls == "absent":
                    kwargs.pop(key, None)
                else:
                    kwargs[key] = values[key, cls]
                if frozenset(kwargs) in shapes:  # a keyword set drawn as such: e.g. no
                    added.append(Example(base.args, tuple(sorted(kwargs.items())),  # keepdim
                                         base.init, base.seed))  # without dim
                    break
    return added


def group_by_signature(examples: Sequence[Example]) -> list[list[Example]]:
    """Examples sharing a signature share one export; order is first appearance."""
    groups: dict[str, list[Example]] = {}
    for example in examples:
        groups.setdefault(example.signature, []).append(example)
    return list(groups.values())

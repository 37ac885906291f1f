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

from opsweep.coverage import dtype_class, plain_classes
from opsweep.errors import SpecError, UsageError
from opsweep.model import Example, OpSpec


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    derandomize: bool


PROFILES = {
    "ci": Profile("ci", 25, True),
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
    """Let hypothesis drive the spec's strategy for the profile's budget; the draws
    depend only on the spec, the profile and the hypothesis version."""
    drawn: list[Example] = []

    @settings(max_examples=profile.max_examples, database=None,
              derandomize=profile.derandomize, deadline=None,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
    @given(spec.examples)
    def collect(example: Example) -> None:
        drawn.append(example)

    if profile.derandomize:  # decorrelate specs while staying reproducible
        collect = seed(zlib.crc32(spec.name.encode()))(collect)
    try:
        with source_independent():
            collect()
    except UsageError:
        raise
    except Exception as exc:
        raise SpecError(spec.name, f"drawing examples raised {type(exc).__name__}: {exc}",
                        source=spec.source) from exc
    return cover(drawn)


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


def cover(drawn: list[Example]) -> list[Example]:
    """`drawn` with covering examples (see above); the same list when nothing is missing."""
    keys = sorted({k for e in drawn for k, v in e.kwargs if _choice(v)})
    if not keys:
        return drawn
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
    if not added:
        return drawn
    kept = list(drawn)
    for _ in added:  # give up a redundant random draw's place, the last first
        for j in range(len(kept) - 1, -1, -1):
            rest = kept[:j] + kept[j + 1:] + added
            here = dtype_class(kept[j].dtype)
            if _features(kept[j], keys) <= {f for e in rest if dtype_class(e.dtype) == here
                                            for f in _features(e, keys)} \
                    and any(dtype_class(e.dtype) == here for e in rest):
                del kept[j]
                break
    return kept + added


def group_by_signature(examples: Sequence[Example]) -> list[list[Example]]:
    """Examples sharing a signature share one export; order is first appearance."""
    groups: dict[str, list[Example]] = {}
    for example in examples:
        groups.setdefault(example.signature, []).append(example)
    return list(groups.values())

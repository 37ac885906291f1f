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
    return drawn


def group_by_signature(examples: Sequence[Example]) -> list[list[Example]]:
    """Examples sharing a signature share one export; order is first appearance."""
    groups: dict[str, list[Example]] = {}
    for example in examples:
        groups.setdefault(example.signature, []).append(example)
    return list(groups.values())

"""Hypothesis profiles and drawing a spec's examples.

``ci`` is derandomized with a per-spec seed and no example database, so a
committed artifact is reproducible and a diff is a real change; ``nightly``
draws eight times as many examples, randomly.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, given, seed, settings

from .errors import SpecError, UsageError
from .model import Example, OpSpec

PROFILE_ENV = "OPSWEEP_HYP_PROFILE"


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    derandomize: bool


PROFILES = {
    "ci": Profile("ci", 25, True),
    "nightly": Profile("nightly", 200, False),
}


def resolve_profile(name: str | None = None) -> Profile:
    """`--profile` wins, then $OPSWEEP_HYP_PROFILE, then ci."""
    chosen = name or os.environ.get(PROFILE_ENV) or "ci"
    if chosen not in PROFILES:
        source = "--profile" if name else PROFILE_ENV
        raise UsageError(f"{source}: unknown profile {chosen!r}; choose one of "
                         f"{', '.join(PROFILES)}")
    return PROFILES[chosen]


def draw_examples(spec: OpSpec, profile: Profile) -> list[Example]:
    """Let hypothesis drive the spec's strategy for the profile's budget."""
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
        collect()
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

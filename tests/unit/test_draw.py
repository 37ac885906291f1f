import pytest

from opsweep.catalog.load import load_catalog
from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature, resolve_profile
from opsweep.errors import UsageError
from opsweep.catalog.families import binary


def test_profiles():
    assert (PROFILES["ci"].max_examples, PROFILES["ci"].derandomize) == (25, True)
    assert (PROFILES["nightly"].max_examples, PROFILES["nightly"].derandomize) == (200, False)


def test_profile_resolution():
    """The CLI reads $OPSWEEP_HYP_PROFILE once (Settings); the flag wins over it."""
    from opsweep.cli.settings import PROFILE_ENV, Settings
    assert resolve_profile().name == "ci"
    assert resolve_profile(Settings.read({}).profile).name == "ci"
    assert resolve_profile(Settings.read({PROFILE_ENV: "nightly"}).profile).name == "nightly"
    assert resolve_profile("ci" or "nightly").name == "ci"  # the flag wins
    with pytest.raises(UsageError, match="OPSWEEP_HYP_PROFILE: unknown profile 'weekly'"):
        resolve_profile(Settings.read({PROFILE_ENV: "weekly"}).profile, PROFILE_ENV)


def test_ci_draws_are_reproducible_and_differ_between_specs():
    spec = binary("add")
    first = draw_examples(spec, PROFILES["ci"])
    assert len(first) >= 25  # and one example per cell the draws missed (catalog/cells.py)
    assert first == draw_examples(spec, PROFILES["ci"])
    other = draw_examples(binary("sub"), PROFILES["ci"])
    assert [e.signature for e in other] != [e.signature for e in first]


def test_nightly_draws_more():
    spec = load_catalog(check_draws=False).specs["sin"]
    assert len(draw_examples(spec, PROFILES["nightly"])) > 25


def test_groups_share_a_signature_in_first_appearance_order():
    examples = draw_examples(binary("mul"), PROFILES["ci"])
    groups = group_by_signature(examples)
    assert sum(map(len, groups)) == len(examples)
    assert all(len({e.signature for e in g}) == 1 for g in groups)
    firsts = [g[0] for g in groups]
    assert firsts == sorted(firsts, key=examples.index)

"""Invariants over every spec of the catalog (fast: no ONNX export)."""

import pytest

from opsweep.engine.adapter import quiet_exporter
from opsweep.engine.attribution import attribute, invalid_examples
from opsweep.catalog.load import check_declared, load_catalog
from opsweep.catalog.draw import PROFILES
from opsweep.errors import SpecError
from opsweep.catalog.listing import installed_listing
from opsweep.model import Stage

CATALOG = load_catalog()  # validates every spec and draws one example of each
NAMES = sorted(CATALOG.specs)


@pytest.fixture(scope="module")
def listing():
    return installed_listing()


@pytest.fixture(scope="module")
def traces(drawn_once):
    """Each spec's attribution, its torch.export capture taken only where the eager trace
    leaves a declared row unseen (the verdict is the same). The tests below that read
    `traced` can only fail more for it, never pass more: a packet left out is one fewer
    seen."""
    quiet_exporter()
    return {name: attribute(CATALOG.specs[name], complete=False) for name in NAMES}


def test_breadth():
    assert len(CATALOG.specs) >= 520
    assert len(CATALOG.by_operator) >= 460
    assert len({s.family for s in CATALOG.specs.values()}) >= 15


def test_declared_rows_are_rows_of_the_listing(listing):
    unknown = sorted(op for op in CATALOG.by_operator if op not in listing.rows)
    assert not unknown, f"aten_ops that are not rows of torch {listing.torch_version}'s listing: {unknown}"


def test_every_spec_traces_what_it_declares(traces):
    wrong = {n: f"declares {list(a.missing)}, traced {sorted(a.traced)}"
             for n, a in traces.items() if a.missing}
    assert not wrong, "specs that drifted onto other operators (fix aten_ops or add traces=):\n" + \
        "\n".join(f"  {n}: {why}" for n, why in sorted(wrong.items()))


def test_traces_mappings_are_used(traces):
    unused = {n: (row, names) for n, a in traces.items() for row, names in CATALOG.specs[n].traces.items()
              if row not in a.traced and not set(names) & a.traced}
    assert not unused, f"traces= entries whose names never appear: {unused}"


def test_every_core_operator_is_measured_or_excluded(listing, traces):
    covered = set(CATALOG.by_operator) | set(CATALOG.excluded)
    missing = sorted(listing.core_rows - covered)
    assert not missing, f"core rows with no spec and no exclusion: {missing}"
    seen = set().union(*(a.traced for a in traces.values()))
    hidden = sorted(p for p in listing.core_packets
                    if p.startswith("_") and "backward" not in p and p not in seen
                    and p.lstrip("_") not in CATALOG.excluded)
    assert not hidden, f"'_'-prefixed core packets no spec reaches: {hidden}"


def test_exclusions_have_reasons_and_no_spec():
    for op, row in CATALOG.excluded.items():
        assert row.reason.strip(), op
        assert op not in CATALOG.by_operator, op


@pytest.mark.parametrize("chunk", range(4))
def test_no_spec_draws_examples_pytorch_rejects(chunk, drawn_once):
    bad = {}
    for name in NAMES[chunk::4]:
        rejected = invalid_examples(CATALOG.specs[name])
        if rejected:
            bad[name] = rejected[:2]
    assert not bad, f"specs drawing examples eager PyTorch rejects: {bad}"


@pytest.mark.parametrize("chunk", range(4))
def test_every_drawn_example_stays_inside_the_declared_dtypes_and_ranks(chunk, drawn_once):
    """A spec's dtypes= and ranks= say what it measures: every example the ci profile
    draws is filed under one of them."""
    outside = {}
    for name in NAMES[chunk::4]:
        spec = CATALOG.specs[name]
        for example in drawn_once(spec, PROFILES["ci"]):
            try:
                check_declared(spec, example)
            except SpecError as exc:
                outside[name] = str(exc)
                break
    assert not outside, "specs drawing outside their declaration:\n" + "\n".join(
        f"  {why}" for _, why in sorted(outside.items()))


def test_every_drawn_example_is_kept_by_the_export_cache_and_read_back_identical(
        drawn_once, tmp_path):
    """The export cache keeps a derandomized profile's draws as data (JSON of a closed set
    of types, never a pickle): every example of the catalog is of those types, so none is
    drawn again, and each reads back identical, value by value and type by type."""
    from opsweep.engine.cache import load_draws, save_draws

    from ..factories import identical
    lost = []
    for name in NAMES:
        examples = drawn_once(CATALOG.specs[name], PROFILES["ci"])
        save_draws(tmp_path, name, examples)
        if not identical(load_draws(tmp_path, name), examples):
            lost.append(name)
    assert not lost, f"specs whose draws the export cache does not give back: {lost}"


def test_random_specs_are_nondeterministic():
    for name, spec in CATALOG.specs.items():
        if spec.family == "random":
            assert spec.nondeterministic, f"{name} draws from an RNG but compares numerics"


def test_known_gap_notes_hold_against_the_live_registry():
    """A no-translation note on an operator that has gained a translation fails here (and
    in `opsweep attribution`, which reports the same notes)."""
    from opsweep.engine.attribution import stale_gap_notes
    stale = stale_gap_notes(CATALOG.specs.values())
    assert not stale, stale

"""The fast path's per-process shortcuts (the CIA override's cache, the rng tracker's reset,
the frozen set-up) give the public call's outcomes when two targets take turns in one
process, static and dynamic, as a sweep's worker runs them."""

import gc

import pytest
import torch

from opsweep.engine.adapter import Exporter
from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.engine.fastpath import FastExporter, fast_path_available
from opsweep.engine.group import run_targets
from opsweep.engine.translations import load

pytestmark = pytest.mark.integration

TABLE = "examples/custom_translations.py:TABLE"
#: stock-only specs and specs the example table changes, interleaved
NAMES = ["hypot", "softmax", "fft_fftfreq", "layer_norm", "fmax", "cat", "detach_copy", "sum"]


@pytest.fixture(scope="module")
def table():
    return load(TABLE)[1]


def _groups(spec, count=2):
    return group_by_signature(draw_examples(spec, PROFILES["ci"]))[:count]


def test_targets_taking_turns_measure_as_the_public_call(specs, table):
    assert fast_path_available()
    fast = {"stock": FastExporter(), "custom": FastExporter(table)}
    public = {"stock": Exporter(), "custom": Exporter(table)}
    for name in NAMES:
        for group in _groups(specs[name]):
            want = run_targets(specs[name], group, public, dynamic=True, shortcut=False)
            got = run_targets(specs[name], group, fast, dynamic=True, shortcut=False)
            assert got == want, name


def test_the_rng_tracker_is_torchs_own_when_rng_ops_are_functionalized():
    """Inside the fake mode torch's reset makes FakeTensors; the fast path's makes plain
    empty tensors, unless rng ops are functionalized (then the state is read: torch's own).
    The flag is set with torch's own `config.patch`: monkeypatch's undo removed the key
    from torch's config module, which broke every later export in the process."""
    from torch._decomp.decompositions_for_rng import PhiloxStateTracker
    from torch._functorch import config
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
    FastExporter()
    try:
        with FakeTensorMode():
            with config.patch(functionalize_rng_ops=True):
                PhiloxStateTracker.reset()
            assert isinstance(PhiloxStateTracker.fwd_state.seed, FakeTensor)
            with config.patch(functionalize_rng_ops=False):
                PhiloxStateTracker.reset()
            seed = PhiloxStateTracker.fwd_state.seed
            assert type(seed) is torch.Tensor and seed.numel() == 0
    finally:
        PhiloxStateTracker.reset()
    assert config.functionalize_rng_ops is False  # the key is still torch's, at its default


def test_set_up_is_frozen_out_of_the_collector():
    gc.unfreeze()
    FastExporter()
    assert gc.get_freeze_count() > 0

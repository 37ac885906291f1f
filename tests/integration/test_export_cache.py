"""The export cache with the real engine and the real stack.

In this process: a group measured with the cache gives the outcomes measured without it,
every export of a second measurement is loaded, and an entry that cannot serve is counted,
exported again and rewritten. Across pins, with the real sweep in fresh processes and a
second release installed apart (.ci/run puts onnxruntime 1.31.1 and onnxscript 0.7.1 in
tests/.pins/): a sweep under onnxruntime 1.31.1 that loads every export from a cache made
under the pinned 1.32.0 writes the very bytes of a sweep under 1.31.1 without it; under
onnxscript 0.7.1 no dynamo export is served (the exports depend on it), while the
TorchScript exporter's, which do not, are.
"""


import pytest

from opsweep.catalog.draw import PROFILES, draw_examples, group_by_signature
from opsweep.engine.cache import ExportCache
from opsweep.engine.sweepconfig import Tuning
from opsweep.engine.group import run_targets
from opsweep.engine.exporters import exporters_for
from opsweep.targets import configured

from .pins import second_release, sweep_here, sweep_process

pytestmark = pytest.mark.integration

SPECS = ["layer_norm"]  # a module: its weights are in the model, so in the key (the seed)


def measure(spec, exporters, cache):
    groups = group_by_signature(draw_examples(spec, PROFILES["ci"]))
    return [run_targets(spec, g, exporters, dynamic=True, cache=cache, digest="digest")
            for g in groups]


def test_cached_outcomes_are_the_measured_ones_and_a_bad_entry_is_measured_again(specs, tmp_path):
    spec = specs["layer_norm"]
    exporters = exporters_for(configured(torchscript=True), True, Tuning())
    plain = measure(spec, exporters, None)
    store = ExportCache(tmp_path)
    first = measure(spec, exporters, store)
    made = store.take_counts()
    assert first == plain
    assert made["stock"]["exported"] >= 2 and "loaded" not in made["stock"]  # static + dynamic
    second = measure(spec, exporters, store)
    assert second == plain
    assert store.take_counts() == {t: {"loaded": c["exported"]} for t, c in made.items()}
    entries = sorted(tmp_path.glob("*/*.export"))
    for path in entries[::2]:  # every other entry broken: truncated
        path.write_bytes(path.read_bytes()[:-1])
    third = measure(spec, exporters, store)
    assert third == plain
    counts = store.take_counts()
    broken = len(entries[::2])
    assert sum(c.get("unusable", 0) for c in counts.values()) == broken
    assert sum(c.get("exported", 0) for c in counts.values()) == broken
    assert measure(spec, exporters, store) == plain  # rewritten whole
    assert sum(c.get("loaded", 0) for c in store.take_counts().values()) == len(entries)


def sweep(tmp, name, cache, first=None, jobs="0"):
    """The real sweep in a fresh process with `first` first on its path, else in this one
    (`jobs` 0: measured in that process, the cheapest; the first sweep goes through a
    worker pool, as a user's does): the artifact's bytes and the cache counts."""
    options = ("--torchscript", "--jobs", jobs)
    out, counts = (sweep_process(tmp, name, SPECS, cache, first, *options) if first else
                   sweep_here(tmp, name, SPECS, cache, *options))
    return out.read_bytes(), counts


def test_an_onnxruntime_move_is_served_by_the_cache_and_an_onnxscript_move_is_not(tmp_path):
    ort_b, onnxscript_b = second_release("onnxruntime-1.31.1"), second_release("onnxscript-0.7.1")
    cache = tmp_path / "cache"
    _, made = sweep(tmp_path, "pinned", cache, jobs="1")
    assert made["stock"].get("exported", 0) > 0 and made["torchscript"].get("exported", 0) > 0
    assert not any(c.get("loaded") for c in made.values())

    cached, used = sweep(tmp_path, "ort-cached", cache, ort_b)
    assert used == {t: {"loaded": c["exported"]} for t, c in made.items()}, used
    fresh, _ = sweep(tmp_path, "ort-fresh", None, ort_b)
    assert b'"onnxruntime": "1.31.1"' in fresh
    assert cached == fresh  # byte-identical: the cache changed no grade, no error, nothing

    _, moved = sweep(tmp_path, "onnxscript", cache, onnxscript_b)
    assert "loaded" not in moved["stock"], moved
    assert moved["stock"]["exported"] == made["stock"]["exported"]
    assert moved["torchscript"] == {"loaded": made["torchscript"]["exported"]}, moved

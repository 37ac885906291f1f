"""The export cache's store (opsweep.engine.cache): entries round-trip whole, an entry that
cannot serve is counted unusable and never served, and the key names every version an
export depends on and not onnxruntime's."""

import json

from opsweep.engine import cache as ec
from opsweep.engine.cache import EXPORT_DEPENDS_ON, Entry, ExportCache, size


def key(store, **changes):
    parts = dict(target="stock", identity="FastExporter:x", kind="dynamo", spec="abs",
                 digest="d1", example="Example(args=(1,))", dynamic="")
    return store.key(**(parts | changes))


def test_an_entry_round_trips_and_is_counted(tmp_path):
    store = ExportCache(tmp_path)
    k = key(store)
    assert store.get(k, "stock") is None
    store.put(k, "stock", Entry("ok", "", {"captured": True, "before": ["a"], "after": [],
                                          "decomposed": []}, b"\x08\x01model"))
    got = store.get(k, "stock")
    assert got == Entry("ok", "", {"captured": True, "before": ["a"], "after": [],
                                   "decomposed": []}, b"\x08\x01model")
    assert store.take_counts() == {"stock": {"exported": 1, "loaded": 1}}
    assert store.take_counts() == {}
    assert size(tmp_path)[0] == 1


def test_every_part_of_the_key_separates_entries(tmp_path):
    store = ExportCache(tmp_path)
    base = key(store)
    for change in (dict(target="torchscript"), dict(identity="FastExporter:y"),
                   dict(spec="abs_"), dict(digest="d2"), dict(example="Example(args=(2,))"),
                   dict(dynamic="DynamicPlan(...)"), dict(kind="torchscript")):
        assert key(store, **change) != base, change
    store.put(base, "stock", Entry("capture", "error line"))
    assert store.get(key(store, digest="d2"), "stock") is None


def test_the_key_names_the_versions_exports_depend_on_and_not_onnxruntime(monkeypatch):
    store = ExportCache("unused")
    parts = json.loads(key(store))
    assert set(parts["versions"]) == set(EXPORT_DEPENDS_ON["dynamo"])
    assert "onnxruntime" not in json.dumps(EXPORT_DEPENDS_ON)
    assert "onnxscript" not in EXPORT_DEPENDS_ON["torchscript"]
    assert {"torch", "onnx"} <= set(EXPORT_DEPENDS_ON["torchscript"])
    # a moved onnxscript moves the dynamo keys (and the CI store's name), not torchscript's
    before, before_ts, store_before = key(store), key(store, kind="torchscript"), ec.store_key()
    ec._version.cache_clear()
    real = ec.importlib.metadata.version
    monkeypatch.setattr(ec.importlib.metadata, "version",
                        lambda name: "0.0.0" if name == "onnxscript" else real(name))
    try:
        assert key(store) != before
        assert ec.store_key() != store_before
        assert key(store, kind="torchscript") == before_ts
    finally:
        ec._version.cache_clear()


def test_an_entry_that_cannot_serve_is_unusable_and_never_served(tmp_path):
    store = ExportCache(tmp_path)
    k = key(store)
    store.put(k, "stock", Entry("ok", "", None, b"model bytes"))
    path = next(tmp_path.glob("*/*.export"))
    good = path.read_bytes()
    head, _, model = good.partition(b"\n")
    other = json.loads(head) | {"key": key(store, digest="elsewhere")}
    for bad in (good[:-3],  # truncated model: its hash does not match
                json.dumps(other).encode() + b"\n" + model,  # a file holding another key
                b"not json\n" + model, b""):
        path.write_bytes(bad)
        store.take_counts()
        assert store.get(k, "stock") is None
        assert store.take_counts() == {"stock": {"unusable": 1}}
    path.write_bytes(good)
    assert store.get(k, "stock") == Entry("ok", "", None, b"model bytes")


def test_a_cache_that_cannot_be_written_costs_nothing_but_the_entry(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache directory would be")
    store = ExportCache(blocked)
    store.put(key(store), "stock", Entry("ok", "", None, b"m"))  # no exception
    assert store.get(key(store), "stock") is None


def test_draws_are_kept_for_a_derandomized_profile_only_and_a_bad_entry_is_drawn_again(
        tmp_path):
    from opsweep.catalog.draw import PROFILES, draw_examples
    from opsweep.catalog.load import load_catalog
    from opsweep.engine.config import SweepConfig
    from opsweep.sweep.driver import drawn
    spec = load_catalog(check_draws=False).specs["sin"]
    ci = SweepConfig(PROFILES["ci"], cache=tmp_path)
    first = drawn(spec, "d1", ci)
    assert first == draw_examples(spec, PROFILES["ci"])
    [path] = (tmp_path / "draws").iterdir()
    assert ec.load_draws(tmp_path, ec.draws_key("sin", "d1", "ci", 25)) == first
    assert ec.load_draws(tmp_path, ec.draws_key("sin", "d2", "ci", 25)) is None  # digest
    path.write_bytes(path.read_bytes()[:-2])  # truncated: its hash does not match
    assert ec.load_draws(tmp_path, ec.draws_key("sin", "d1", "ci", 25)) is None
    assert drawn(spec, "d1", ci) == first  # drawn again, and kept whole again
    assert ec.load_draws(tmp_path, ec.draws_key("sin", "d1", "ci", 25)) == first
    nightly = SweepConfig(PROFILES["nightly"], cache=tmp_path / "nightly")
    drawn(spec, "d1", nightly)
    assert not (tmp_path / "nightly").exists()  # random draws are never kept

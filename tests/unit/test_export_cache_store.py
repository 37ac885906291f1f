"""The export cache's store (opsweep.engine.cache): entries round-trip whole, an entry that
cannot serve is counted unusable and never served, and the key names every version an
export depends on and not onnxruntime's."""

import json

from opsweep.engine import cache as ec
from opsweep.engine.cache import EXPORT_DEPENDS_ON, Entry, ExportCache, size

from ..factories import identical


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
    from opsweep.engine.sweepconfig import SweepConfig
    from opsweep.sweep.driver import drawn
    spec = load_catalog(check_draws=False).specs["sin"]
    ci = SweepConfig(PROFILES["ci"], cache=tmp_path)
    first, cells = drawn(spec, "d1", ci)
    assert first == draw_examples(spec, PROFILES["ci"])
    assert cells == {}  # sin: every cell of its universe has an example
    assert ec.load_draws_entry(tmp_path, ec.draws_key("sin", "d1", "ci", 25, True)) == (first, {})
    [path] = (tmp_path / "draws").iterdir()
    assert ec.load_draws(tmp_path, ec.draws_key("sin", "d1", "ci", 25, True)) == first
    assert ec.load_draws(tmp_path, ec.draws_key("sin", "d2", "ci", 25, True)) is None  # digest
    path.write_bytes(path.read_bytes()[:-2])  # truncated: its hash does not match
    assert ec.load_draws(tmp_path, ec.draws_key("sin", "d1", "ci", 25, True)) is None
    assert drawn(spec, "d1", ci) == (first, {})  # drawn again, and kept whole again
    assert ec.load_draws(tmp_path, ec.draws_key("sin", "d1", "ci", 25, True)) == first
    nightly = SweepConfig(PROFILES["nightly"], cache=tmp_path / "nightly")
    drawn(spec, "d1", nightly)
    assert not (tmp_path / "nightly").exists()  # random draws are never kept


class _Planted:
    """What a writer of the cache could plant: a pickle that runs code when loaded (here,
    it makes the directory `marker`)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        import os
        return os.mkdir, (self.marker,)


def test_a_planted_draws_entry_runs_no_code_and_is_a_miss(tmp_path):
    """Issue 48, finding 4: whoever can write the cache (a CI cache another run saved)
    plants a pickle under the very key the sweep reads, with the header's SHA-256 of it
    (anyone can compute that). The sweep reads the entry as data: nothing runs, the entry
    is a miss, the spec is drawn again and the entry rewritten whole."""
    import pickle

    from opsweep.catalog.draw import PROFILES, draw_examples
    from opsweep.catalog.load import load_catalog
    from opsweep.cli.main import main
    from opsweep.sweep.reuse import spec_digest
    spec = load_catalog(check_draws=False).specs["sin"]
    cache, marker = tmp_path / "cache", tmp_path / "pwned"
    key = ec.draws_key("sin", spec_digest(spec), "ci", PROFILES["ci"].max_examples,
                       PROFILES["ci"].cells)
    body = pickle.dumps([_Planted(marker)])
    head = json.dumps({"key": key, "sha256": ec.hashlib.sha256(body).hexdigest()}).encode()
    planted = ec._draws_path(cache, key)
    planted.parent.mkdir(parents=True)
    planted.write_bytes(head + b"\n" + body)
    assert main(["sweep", "--only", "sin", "--jobs", "0", "--no-reuse", "--quiet",
                 "--profile", "ci", "--cache", str(cache), "--out",
                 str(tmp_path / "out.json")]) == 0
    assert not marker.exists(), "reading the export cache ran the planted pickle"
    assert ec.load_draws(cache, key) == draw_examples(spec, PROFILES["ci"])  # rewritten


def test_every_kind_of_value_an_example_holds_round_trips_and_others_are_not_kept(tmp_path):
    import torch

    from opsweep.model import Example, TensorArg
    nan, inf = float("nan"), float("inf")
    examples = [
        Example((TensorArg((2, 0, 3), "float32", -1.5, 2, (nan, -0.0, inf, -inf, 1e-310)),
                 [1, (True, None)], -1, 0.1, "mean"),
                (("dtype", torch.bfloat16), ("memory_format", torch.preserve_format),
                 ("dims", [0, -1]), ("empty", ())),
                (("bias", False), ("eps", 1e-5)), 2**70),
        Example((TensorArg((), "bool"),), seed=-3),
    ]
    ec.save_draws(tmp_path, "k", examples)
    assert identical(ec.load_draws(tmp_path, "k"), examples)
    assert ec.load_draws(tmp_path, "other key") is None
    for unknown in ({1, 2}, torch.zeros(1), 1j, b"bytes", ec.Path("x"), {"a": 1}):
        ec.save_draws(tmp_path, f"k{unknown!r}", [Example((unknown,))])
        assert ec.load_draws(tmp_path, f"k{unknown!r}") is None, unknown  # not kept


def test_a_draws_entry_that_is_not_exactly_examples_is_a_miss(tmp_path):
    """Every part of an entry is checked as it is read: a value of another type, an
    unknown tag, a name that is no dtype, a nesting too deep: a miss, never an exception."""
    from opsweep.model import Example, TensorArg
    ec.save_draws(tmp_path, "k", [Example((TensorArg((2,), "float32"),), (("n", 1),))])
    path = ec._draws_path(tmp_path, "k")
    good = json.loads(path.read_text())
    assert ec.load_draws(tmp_path, "k")

    def planted(edit):
        entry = json.loads(json.dumps(good))
        edit(entry)
        path.write_text(json.dumps(entry))
        return ec.load_draws(tmp_path, "k")

    example = lambda e: e["examples"][0]  # noqa: E731
    edits = [
        lambda e: e.update(examples=[None]),
        lambda e: e.update(examples={"0": 1}),
        lambda e: e.pop("key"),
        lambda e: example(e).update(seed="1"),
        lambda e: example(e).update(extra=1),
        lambda e: example(e).update(args=[1]),  # a list where the arguments' tuple belongs
        lambda e: example(e).update(kwargs={"tuple": [{"tuple": [1, 2]}]}),  # a key not str
        lambda e: example(e).update(args={"tuple": [{"pickle": "gASVAAAAAAAAAAB9lC4="}]}),
        lambda e: example(e).update(args={"tuple": [{"dtype": "Tensor"}]}),
        lambda e: example(e).update(args={"tuple": [{"dtype": "load"}]}),
        lambda e: example(e).update(args={"tuple": [{"float": "1e400x"}]}),
        lambda e: example(e).update(args={"tuple": [{"float": 1.5}]}),
        lambda e: example(e).update(args={"tuple": [1.5]}),  # a bare JSON float
        lambda e: example(e).update(args={"tuple": [{"tensor": [{"tuple": [-1]}, "float32",
                                                                None, None, None]}]}),
        lambda e: example(e).update(args={"tuple": [{"tensor": [{"tuple": [2]}, "float128",
                                                                None, None, None]}]}),
        lambda e: example(e).update(args={"tuple": [{"tensor": [{"tuple": [2]}, "float32",
                                                                "0", None, None]}]}),
        lambda e: example(e).update(args={"tuple": [{"tensor": [{"tuple": [2]}]}]}),
    ]
    for i, edit in enumerate(edits):
        assert planted(edit) is None, i
    path.write_text('{"key": "k", "examples": [' + "[" * 100_000 + "]" * 100_000 + "]}")
    assert ec.load_draws(tmp_path, "k") is None
    path.write_text(json.dumps(good))
    assert ec.load_draws(tmp_path, "k")


def test_an_export_entry_with_a_stage_or_trace_it_cannot_have_is_unusable(tmp_path):
    """A header with the right key and the model's hash (anyone can compute both) still
    serves only a stage an export ends at and a trace as the exporter records it."""
    store = ExportCache(tmp_path)
    k = key(store)
    trace = {"captured": True, "before": ["aten.sin"], "after": [], "decomposed": []}
    store.put(k, "stock", Entry("checker", "bad model", trace, b""))
    path = next(tmp_path.glob("*/*.export"))
    good = json.loads(path.read_bytes().partition(b"\n")[0])
    for change in ({"stage": "numerics"}, {"stage": "bogus"}, {"stage": None},
                   {"error": 3}, {"trace": "x"}, {"trace": trace | {"before": "aten.sin"}},
                   {"trace": trace | {"captured": 1}}, {"trace": {"captured": True}}):
        path.write_bytes(json.dumps(good | change).encode() + b"\n")
        store.take_counts()
        assert store.get(k, "stock") is None, change
        assert store.take_counts() == {"stock": {"unusable": 1}}
    path.write_bytes(json.dumps(good).encode() + b"\n")
    assert store.get(k, "stock") == Entry("checker", "bad model", trace, b"")


def test_an_entry_that_is_a_fifo_or_a_link_is_a_miss_at_once(tmp_path):
    """A cache restored from an archive may hold a FIFO where an entry belongs (opening it
    would wait for a writer forever) or a link to a file elsewhere: neither is read."""
    import os
    import threading
    store = ExportCache(tmp_path / "export")
    k = key(store)
    store.put(k, "stock", Entry("ok", "", None, b"m"))
    export = next((tmp_path / "export").glob("*/*.export"))
    ec.save_draws(tmp_path / "draws", "k", [])
    draws = ec._draws_path(tmp_path / "draws", "k")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(export.read_bytes())
    results = {}

    def read():
        results["export"] = store.get(k, "stock")
        results["draws"] = ec.load_draws(tmp_path / "draws", "k")

    for plant in (os.mkfifo, lambda p: p.symlink_to(elsewhere)):
        for path in (export, draws):
            path.unlink()
            plant(path)
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(60)
        if reader.is_alive():  # release the reader before failing
            for path in (export, draws):
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # no reader waits on this one
                    pass
        assert not reader.is_alive(), "reading the cache waited on a FIFO"
        assert results == {"export": None, "draws": None}

from opsweep.catalog import links


def test_links_and_aliases_from_the_installed_torch():
    got = links.compute(["sin", "arccos", "linalg_det", "special_erfcx", "relu", "not_an_op"], "2.13.0+cpu")
    assert got["sin"].url.endswith("/2.13/generated/torch.sin.html")
    assert got["arccos"].alias_of == "acos"
    assert got["linalg_det"].qualname == "torch.linalg.det"
    assert got["special_erfcx"].url.endswith("/2.13/special.html#torch.special.erfcx")
    assert "not_an_op" not in got


def test_link_cache_is_per_version_and_built_when_missing(tmp_path):
    first = links.cached(["sin"], "2.13.0+cpu", tmp_path)
    assert (tmp_path / "doc-links-torch-2.13.0.json").exists()
    assert links.cached(["sin", "cos"], "2.13.0", tmp_path) == first  # read back, not recomputed
    links.cached(["sin"], "2.14.1", tmp_path)
    assert (tmp_path / "doc-links-torch-2.14.1.json").exists()

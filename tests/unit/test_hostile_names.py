"""Issue 48, finding 6: operator names, spec names, families and aliases are data (the
artifact, the documentation-link cache a measuring run carries, a spec module's file name).
The schemas give them a pattern, so a hostile one does not load (the error names the file
and the field), and every template escapes them where they land, so one that reaches a
page another way shows as text."""

import dataclasses
import json
from pathlib import Path

import pytest

from opsweep import files
from opsweep.artifact import data as art
from opsweep.catalog.links import Link
from opsweep.catalog.load import load_catalog
from opsweep.errors import ArtifactError, DataFileError
from opsweep.page.support import (
    build_view,
    render_details,
    render_dtypes,
    render_migration,
    render_page,
)
from opsweep.page.templates import anchor_id, front

from ..factories import DOCUMENTED, LINKS, LISTING
from .test_render import report

HOSTILE = '"><img src=x onerror=alert(1)>'
COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "onnx_support_measured.json"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(check_draws=False)


def _cut_to_sin(data: dict) -> dict:
    """The artifact cut to the spec sin and the operators it declares, each target's likewise:
    still an artifact that loads (the derived tables follow from the specs kept)."""
    data["specs"] = {k: v for k, v in data["specs"].items() if k == "sin"}
    ops = {op for v in data["specs"].values() for op in v["aten_ops"]}
    data["operators"] = {k: v for k, v in data["operators"].items() if k in ops}
    for target in data["targets"].values():
        for key in ("specs", "operators"):
            if isinstance(target.get(key), dict):
                target[key] = {k: v for k, v in target[key].items() if k in data[key]}
    return data


def test_a_hostile_name_or_family_in_the_artifact_is_refused_naming_file_and_field(tmp_path):
    """The committed artifact loads; the same with one hostile name or family does not.
    The hostile copies are of the artifact cut to sin (which loads, checked first): the
    schema's verdict on a name does not depend on the other specs, and the reference
    validator, which names the field, walks a whole artifact in some 6 s of CPU each."""
    art.load(COMMITTED)
    data = _cut_to_sin(json.loads(COMMITTED.read_text()))
    path = tmp_path / "artifact.json"
    path.write_text(json.dumps(data))
    assert list(art.load(path).specs) == ["sin"]
    for where, change in (("operators", lambda d: d["operators"].update(
                              {HOSTILE: d["operators"]["sin"]})),
                          ("specs.sin.aten_ops", lambda d: d["specs"]["sin"]["aten_ops"].append(
                              HOSTILE)),
                          ("specs.sin.family", lambda d: d["specs"]["sin"].update(
                              family=HOSTILE))):
        bad = json.loads(json.dumps(data))
        change(bad)
        path.write_text(json.dumps(bad))
        with pytest.raises(ArtifactError) as caught:
            art.load(path)
        assert str(path) in str(caught.value) and f"at {where}" in str(caught.value), caught.value


def test_a_hostile_alias_in_the_link_cache_is_refused_naming_file_and_field(tmp_path):
    path = tmp_path / "doc-links-torch-2.13.0.json"
    for entry in ({HOSTILE: {"qualname": "torch.x", "url": "u", "alias_of": None}},
                  {"abs": {"qualname": "torch.abs", "url": "u", "alias_of": HOSTILE}}):
        path.write_text(json.dumps(entry))
        with pytest.raises(DataFileError, match=str(path)):
            files.load(path, "links")


def test_every_page_escapes_a_hostile_alias_family_and_name(catalog):
    """Failed before the fix: operator.md.j2 wrote alias names, the alias target and the
    family raw into HTML (`<a href="../{{ a }}/">`), the front matter and the headings."""
    links = {**LINKS, "absolute": Link("torch.absolute", "https://docs/absolute", HOSTILE),
             f"x{HOSTILE}": Link("torch.x", "https://docs/x", "abs")}
    sin = dataclasses.replace(catalog.specs["sin"], family=f"unary{HOSTILE}\nhide: []")
    hostile = dataclasses.replace(catalog, specs={**catalog.specs, "sin": sin})
    view = build_view(LISTING, hostile, report(), DOCUMENTED, frozenset({"sin"}), links,
                      "2.13.0")
    pages = {**render_details(view), "supported_operators.md": render_page(view),
             "dtypes.md": render_dtypes(view)}
    for name, text in pages.items():
        assert "<img" not in text and "onerror=alert(1)>" not in text.replace("&gt;", ""), name
    assert "&lt;img src=x onerror=alert(1)&gt;" in pages["abs.md"]  # shown, as text
    assert "&lt;img" in pages["absolute.md"] and "&lt;img" in pages["sin.md"]
    front_matter = pages["sin.md"].split("---")[1]
    assert front_matter.count("\n") == 4 and "family: \"unary" in front_matter  # one value


def test_the_escaping_filters_leave_every_name_the_schemas_allow_unchanged():
    """The committed pages render byte for byte as before (their names are plain)."""
    for name in ("sin", "op-_foreach_add", "conv_pool", "add.Tensor", "2.13.0"):
        assert anchor_id(name) == name and front(name) == name
    assert front("not measured") == "not measured" and front("a: b") == '"a: b"'
    assert front("<b>") == '"\\u003cb\\u003e"'
    assert anchor_id(HOSTILE) == "img-src-x-onerror-alert-1"

"""The scoreboard sharded like the sweep (issue 52): each shard job (`bot sweep`) checks its
share of the project's models for real, into a record beside its shard artifact; the
assemble job (`bot assemble`) builds no model, and joins those checks with the merged table.
Real sweeps of two specs, real exports of two tiny models, real onnxruntime."""

import json
import shutil
from pathlib import Path

from opsweep.artifact import checked
from opsweep.cli import main

ROOT = Path(__file__).resolve().parents[2]
MODEL = """\
from pathlib import Path

import torch


class SinRelu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.sin(x))


def build():
    with open(Path(__file__).with_name('builds.txt'), 'a') as log:
        log.write('{name}\\n')
    return {{'model': SinRelu(), 'inputs': (torch.randn(2, 3),), 'name': '{name}'}}
"""


def _project(root: Path, more: str = "") -> list[str]:
    """A project listing two models (each uses sin and relu, and logs each build) and what
    rendering needs of it; `more`: further [tool.opsweep] lines."""
    sources = []
    for name in ("first", "second"):
        path = root / f"{name}.py"
        path.write_text(MODEL.format(name=name))
        sources.append(f"{path.as_posix()}:build")
    listed = ", ".join(f'"{s}"' for s in sources)
    (root / "pyproject.toml").write_text(f"[tool.opsweep]\nmodels = [{listed}]\n{more}")
    (root / "docs" / "data").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "data" / "documented.json", root / "docs" / "data")
    return sources


def _builds(root: Path) -> list[str]:
    log = root / "builds.txt"
    built = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return built


def _unmeasured(entry: dict) -> int:
    return entry["counts"]["not measured"]


def test_shard_jobs_check_the_models_and_assemble_joins_them_with_the_merged_table(
        tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    repo.mkdir()
    # the models are checked with the TorchScript exporter too, in the shards as in assemble
    sources = _project(repo, 'check-targets = ["torchscript"]\n')
    parts, cache = tmp_path / "parts", tmp_path / "cache"
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))
    for shard in (1, 2):
        assert main(["bot", "sweep", "--shard", str(shard), "--shards", "2", "--parts",
                     str(parts), "--cache", str(cache), "--", "--only", "sin", "relu",
                     "--jobs", "0"]) == 0
    # each shard job built its own share of the models, once
    assert sorted(_builds(repo)) == ["first", "second"]
    records = {p.name: json.loads(p.read_text()) for p in sorted(parts.glob("onnx-models-*"))}
    assert sorted(records) == [checked.part_name(1, 2), checked.part_name(2, 2)]
    shard_entries = [m for r in records.values() for m in r["models"]]
    assert sorted(m["source"] for m in shard_entries) == sorted(sources)
    # a shard's table holds its own specs only: a use measured by the other shard is not
    # measured there (sin and relu are one spec each, on either shard)
    assert sum(_unmeasured(m) for m in shard_entries) >= 1
    assert all(m["targets"]["torchscript"]["verdict"]["export"] == "pass" for m in shard_entries)
    capsys.readouterr()

    out = tmp_path / "result"
    assert main(["bot", "assemble", str(parts), "--repo-dir", str(repo), "--out",
                 str(out)]) == 0
    assert _builds(repo) == []  # the assemble job built no model: the shards' checks stand
    err = capsys.readouterr().err
    assert "0 checked, 2 reused by fingerprint, 2 of them checked by the shard jobs" in err
    record = json.loads((out / "docs" / "models_checked.json").read_text())
    checked.from_data(record)
    assert [m["source"] for m in record["models"]] == sources  # the project's order
    by_source = {m["source"]: m for m in shard_entries}
    for entry in record["models"]:
        # joined with the merged table: both uses measured, and its real export kept
        assert _unmeasured(entry) == 0 and entry["counts"]["measured fine"] == 2
        assert entry["reality"] == by_source[entry["source"]]["reality"]
        assert entry["verdict"] == {"export": "pass", "runtime": "pass", "numerics": "pass"}
        assert entry["targets"] == by_source[entry["source"]]["targets"]  # no TorchScript table

    # the same models checked directly against the merged artifact: the same answer
    direct = tmp_path / "direct.json"
    assert main(["check", *sources, "--artifact", str(out / "docs" /
                                                      "onnx_support_measured.json"),
                 "--record", str(direct), "--json"]) == 0
    for mine, theirs in zip(record["models"], json.loads(direct.read_text())["models"]):
        for key in ("counts", "prediction", "verdict", "uses", "check_fingerprint"):
            assert mine[key] == theirs[key], key


def test_a_bad_shard_models_record_stops_assemble_in_one_line(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    repo.mkdir()
    _project(repo)
    parts = tmp_path / "parts"
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))
    assert main(["bot", "sweep", "--parts", str(parts), "--cache", str(tmp_path / "cache"),
                 "--no-models", "--", "--only", "sin", "--jobs", "0"]) == 0
    assert _builds(repo) == [] and not list(parts.glob("onnx-models-*"))  # --no-models
    bad = parts / checked.part_name(1, 1)
    bad.write_text(json.dumps({"models_version": 2, "models": [{"name": 3}]}))
    capsys.readouterr()
    assert main(["bot", "assemble", str(parts), "--repo-dir", str(repo), "--out",
                 str(tmp_path / "result")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a shard job's models record" in err[0]
    assert str(bad) in err[0] and "models[0].name" in err[0]
    assert _builds(repo) == []

"""opsweep init: the caller workflows, the [tool.opsweep] block and the Renovate rule,
written into a repository; nothing that exists is overwritten without --force."""

import json
import re
import tomllib

import pytest
import yaml

from opsweep import config
from opsweep.bot.pins import read_pins
from opsweep.cli.main import main

WORKFLOWS = [".github/workflows/onnx-measure.yml", ".github/workflows/onnx-command.yml",
             ".github/workflows/onnx-publish.yml", ".github/workflows/onnx-bump.yml"]


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "onnx.txt").write_text("torch==2.12.0  # the pin\nonnx==1.20.0\n")
    (tmp_path / "tests" / "op_specs").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "1.0"\n\n'
                                             '[tool.ruff]\nline-length = 99\n')
    return tmp_path


def init(repo, *extra):
    """`opsweep init`, told the release commit the privileged callers pin (a checkout of
    opsweep records none)."""
    sha = [] if "--action-sha" in extra else ["--action-sha", "f" * 40]
    return main(["init", "--repo-dir", str(repo), *sha, *extra])


def test_init_writes_callers_block_and_rule(repo, capsys):
    assert init(repo, "--catalog", "none", "--specs", "tests/op_specs", "--action",
                "octo/opsweep@v3", "--shards", "3") == 0
    for name in WORKFLOWS:
        text = (repo / name).read_text()
        ref = "v3" if name in WORKFLOWS[:2] else f"{'f' * 40} # v"  # privileged: the commit
        assert f"octo/opsweep@{ref}" in text and "./" not in text.replace("../", "")
        yaml.safe_load(text)
    measure = yaml.safe_load((repo / WORKFLOWS[0]).read_text())
    assert measure["jobs"]["sweep"]["uses"] == "octo/opsweep/.github/workflows/onnx-sweep.yml@v3"
    assert measure["jobs"]["sweep"]["with"]["shards"] == 3
    assert "run-name" in yaml.safe_load((repo / WORKFLOWS[1]).read_text())
    data = tomllib.loads((repo / "pyproject.toml").read_text())
    assert data["tool"]["ruff"] == {"line-length": 99}  # the rest kept
    loaded = config.load(repo / "pyproject.toml")
    assert (loaded.pins.kind, loaded.pins.name) == ("requirements", "requirements/onnx.txt")
    assert loaded.catalog == "none" and loaded.specs == ("tests/op_specs",)
    rule = (repo / ".github" / "renovate.json5").read_text()
    assert "requirements\\\\/onnx\\\\.txt" in rule and '"torch"' in rule
    assert "wrote pyproject.toml [tool.opsweep]" in capsys.readouterr().out


def test_init_refuses_to_overwrite_and_names_what_exists(repo, capsys):
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / WORKFLOWS[2]).write_text("name: mine\n")
    with (repo / "pyproject.toml").open("a") as f:
        f.write('\n[tool.opsweep]\ncatalog = "none"\n')
    before = (repo / "pyproject.toml").read_text()
    assert init(repo) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert ".github/workflows/onnx-publish.yml" in err and "[tool.opsweep]" in err
    assert "--force" in err
    assert (repo / WORKFLOWS[2]).read_text() == "name: mine\n"
    assert not (repo / WORKFLOWS[0]).exists() and (repo / "pyproject.toml").read_text() == before


def test_init_force_replaces_the_block_in_place(repo):
    with (repo / "pyproject.toml").open("a") as f:
        f.write('\n[tool.opsweep]\ncatalog = "none"\n\n[tool.other]\nkeep = true\n')
    assert init(repo, "--force", "--pins", "requirements=requirements/onnx.txt") == 0
    text = (repo / "pyproject.toml").read_text()
    assert text.count("[tool.opsweep]") == 1
    data = tomllib.loads(text)
    assert data["tool"]["other"] == {"keep": True} and data["tool"]["opsweep"]["catalog"] == "builtin"


def test_init_creates_pyproject_and_finds_a_tox_pin(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tox.env.sweep]\ndeps = ["torch==2.12.0"]\n')
    assert init(tmp_path) == 0
    assert config.load(tmp_path / "pyproject.toml").pins.where == "[tool.tox.env.sweep] deps"
    assert "tool\\\\.tox\\\\.env\\\\.sweep" in (tmp_path / ".github" / "renovate.json5").read_text()


@pytest.mark.parametrize("args, expected", [
    (["--specs", "../elsewhere"], "specs: '../elsewhere' points outside the repository"),
    (["--specs", "missing"], "--specs missing: no such directory"),
    (["--action", "opsweep"], "--action: expected OWNER/NAME@REF"),
    (["--shards", "0"], "--shards: expected 1 to 32"),
    (["--pins", "torch"], "--pins: expected requirements=PATH"),
])
def test_bad_arguments_are_one_line(repo, capsys, args, expected):
    assert init(repo, *args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err, err
    assert not (repo / ".github").exists()


def test_no_torch_pin_is_one_line(tmp_path, capsys):
    assert init(tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert "no exact torch pin" in err and "--pins requirements=PATH" in err
    assert not (tmp_path / "pyproject.toml").exists()


def test_the_bump_caller_is_configuration_only(repo):
    assert init(repo, "--action", "octo/opsweep@v3") == 0
    text = (repo / WORKFLOWS[3]).read_text()
    assert "requirements/onnx.txt" in text.split("name: onnx-bump")[0]  # says where the pins are
    bump = yaml.safe_load(text)
    (step,) = bump["jobs"]["bump"]["steps"]
    assert step["uses"] == f"octo/opsweep@{'f' * 40}" and step["with"]["mode"] == "bump"
    assert set(bump[True]) == {"schedule", "workflow_dispatch"}  # yaml reads `on:` as True
    assert bump["permissions"] == {} and "run" not in step


def _strings(rule: str) -> list[str]:
    """The JSON strings of a JSON5 rule (what Renovate reads), comments left out."""
    body = "\n".join(line for line in rule.splitlines() if not line.lstrip().startswith("//"))
    return [json.loads(s) for s in re.findall(r'"(?:[^"\\]|\\.)*"', body)]


def _js(pattern: str) -> re.Pattern:
    """A Renovate regex string (`/.../` for file patterns) as a Python pattern."""
    return re.compile(pattern.strip("/").replace("(?<", "(?P<").replace("(?P<=", "(?<="))


PYPROJECT_PINS = ('[project]\nname = "demo"\nversion = "1.0"\ndependencies = ["torch==2.12.0"]\n'
                  '\n[project.optional-dependencies]\nonnx = ["torch==2.12.0"]\n'
                  '\n[dependency-groups]\nexport = ["torch==2.12.0"]\n'
                  '\n[tool.tox.env.sweep]\ndeps = ["torch==2.12.0", "onnx==1.20.0",\n'
                  '        "numpy>=1"]\n')


@pytest.mark.parametrize("pins", ["requirements=requirements/onnx.txt", "tox-env=sweep",
                                  "dependencies=project", "dependencies=optional:onnx",
                                  "dependencies=group:export"])
def test_the_renovate_rule_matches_the_pin_source(repo, pins):
    """Renovate's pip_requirements manager reads requirements files (the rule names the
    configured one, whatever its name), pep621 reads pyproject's dependency arrays by
    itself, and nothing reads a tox pin: a regex custom manager finds exactly its pins."""
    (repo / "pyproject.toml").write_text(PYPROJECT_PINS)
    assert init(repo, "--pins", pins) == 0
    rule = (repo / ".github" / "renovate.json5").read_text()
    source = config.load(repo / "pyproject.toml").pins
    assert source.where in rule and 'groupName: "onnx exporter stack"' in rule
    strings = _strings(rule)
    assert {"torch", "onnx", "onnxruntime", "onnxscript", "hypothesis"} <= set(strings)
    if source.kind == "requirements":
        assert "pip_requirements" in rule and "customManagers" not in rule
        (pattern,) = [s for s in strings if s.startswith("/")]
        assert _js(pattern).search("requirements/onnx.txt")
        assert not _js(pattern).search("requirements/onnx_txt")
        assert not _js(pattern).search("other/requirements/onnx.txt")
    elif source.kind == "tox":
        assert "customManagers" in rule and "pip_requirements" not in rule
        table, pin = (_js(s) for s in strings if "tox" in s or "depName" in s)
        text = (repo / "pyproject.toml").read_text()
        (block,) = table.findall(text)
        found = {m.group("depName"): m.group("currentValue") for m in pin.finditer(block)}
        assert found == read_pins(text, source=source) == {"torch": "2.12.0", "onnx": "1.20.0"}
    else:  # pep621 is on by default and reads [project] and [dependency-groups] arrays
        assert "customManagers" not in rule and "pip_requirements" not in rule


# --- issue 48, finding 5: the privileged callers run a commit, never a moving tag ----------

SHA = "0123456789abcdef0123456789abcdef01234567"
PRIVILEGED, UNPRIVILEGED = WORKFLOWS[2:], WORKFLOWS[:2]


def _uses(text: str) -> list[str]:
    return re.findall(r"^\s*uses: (.+)$", text, re.MULTILINE)


def test_the_privileged_callers_pin_the_release_s_commit(repo):
    """Failed before the fix: every caller, onnx-publish and onnx-bump (the App's key, the
    write tokens) included, ran `opsweep/opsweep@v0`, a tag anyone who may push tags there
    can move. The privileged ones now run the release's commit, its version as a comment
    (Renovate's github-actions manager moves such pins); the others keep the moving tag."""
    from opsweep import __version__
    assert init(repo, "--action-sha", SHA) == 0
    for name in PRIVILEGED:
        uses = _uses((repo / name).read_text())
        assert uses and set(uses) == {f"opsweep/opsweep@{SHA} # v{__version__}"}, (name, uses)
        yaml.safe_load((repo / name).read_text())
    for name in UNPRIVILEGED:
        assert all(u.endswith("@v0") for u in _uses((repo / name).read_text())), name


def test_without_a_known_commit_init_says_how_to_give_one(repo, capsys, monkeypatch):
    """A build that recorded no release commit (a checkout, a fork's --action): one line
    naming --action-sha and how to find the commit; nothing written."""
    from opsweep import _release
    monkeypatch.setattr(_release, "COMMIT", "")
    assert main(["init", "--repo-dir", str(repo)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--action-sha" in err and "ls-remote" in err, err
    assert not (repo / ".github").exists()
    assert main(["init", "--repo-dir", str(repo), "--action-sha", "v0.3.0"]) == 2
    assert "--action-sha: expected a full 40-hex commit SHA" in capsys.readouterr().err


def test_a_release_build_pins_the_commit_it_recorded(repo, monkeypatch, tmp_path):
    """The release workflow records the tag's commit in the package before it builds
    (`python -m opsweep._release SHA`); init pins that commit, for opsweep's own
    repository only (a fork's --action names its own releases)."""
    from opsweep import __version__, _release
    copy = tmp_path / "_release.py"
    copy.write_text(open(_release.__file__).read())
    _release.record(copy, SHA, __version__)
    recorded = {}
    exec(copy.read_text(), recorded)
    assert (recorded["COMMIT"], recorded["VERSION"]) == (SHA, __version__)
    monkeypatch.setattr(_release, "COMMIT", SHA)
    monkeypatch.setattr(_release, "VERSION", __version__)
    bare = ["init", "--repo-dir", str(repo), "--force"]  # no --action-sha
    assert main(bare) == 0
    assert f"opsweep/opsweep@{SHA} # v{__version__}" in (repo / PRIVILEGED[0]).read_text()
    assert main([*bare, "--action", "octo/opsweep@v3"]) == 2  # a fork: not its commit
    monkeypatch.setattr(_release, "VERSION", "0.0.1")  # recorded for another version: stale
    assert main(bare) == 2
    assert main([*bare, "--action", f"octo/opsweep@{SHA}"]) == 0  # pinned already
    assert set(_uses((repo / PRIVILEGED[1]).read_text())) == {f"octo/opsweep@{SHA}"}

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
    (["--pins", "torch"], "--pins torch: no such file torch"),
    (["--pins", "pip=x"], "--pins: expected a FILE, requirements=PATH"),
])
def test_bad_arguments_are_one_line(repo, capsys, args, expected):
    assert init(repo, *args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err, err
    assert not (repo / ".github").exists()


def test_no_torch_pin_is_one_line(tmp_path, capsys):
    assert init(tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert "no exact torch pin" in err and "--pins FILE" in err
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


# --- issue 53: adopting in fifteen minutes ------------------------------------------------

def _measure(repo) -> dict:
    return yaml.safe_load((repo / WORKFLOWS[0]).read_text())


def test_a_docs_requirements_file_never_wins_over_the_project_s_pin(repo, capsys):
    """Failed before: `docs/requirements.txt` sorts before `requirements/onnx.txt` and won,
    silently. Now a file under docs/ ranks last, and init says what it chose and why."""
    (repo / "docs").mkdir()
    (repo / "docs" / "requirements.txt").write_text("mkdocs==1.6.0\ntorch==2.10.0\n")
    assert init(repo) == 0
    assert config.load(repo / "pyproject.toml").pins.name == "requirements/onnx.txt"
    out = capsys.readouterr().out
    (said,) = [line for line in out.splitlines() if line.startswith("opsweep: pins:")]
    assert "requirements/onnx.txt (its name says onnx" in said
    assert "not chosen: docs/requirements.txt (under a docs" in said and "--pins FILE" in said


def test_the_only_pin_is_chosen_even_under_docs_and_a_tie_is_one_line(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "requirements.txt").write_text("torch==2.10.0\n")
    assert init(tmp_path) == 0
    assert config.load(tmp_path / "pyproject.toml").pins.name == "docs/requirements.txt"
    tie = tmp_path / "tie"
    tie.mkdir()
    (tie / "requirements.txt").write_text("torch==2.10.0\n")
    (tie / "requirements-dev.txt").write_text("torch==2.10.0\n")
    assert init(tie) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "2 equally likely places" in err, err
    assert "requirements.txt" in err and "requirements-dev.txt" in err and "--pins FILE" in err
    assert not (tie / ".github").exists()


def test_pins_names_a_file_and_refuses_one_that_pins_no_torch(repo, capsys):
    (repo / "requirements" / "docs.txt").write_text("mkdocs==1.6.0\n")
    assert init(repo, "--pins", "requirements/docs.txt") == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("requirements/docs.txt pins no torch (no torch==X.Y.Z entry): opsweep "
                        "measures the torch pinned there") and len(err.splitlines()) == 1
    assert not (repo / ".github").exists()
    assert init(repo, "--pins", "requirements/onnx.txt") == 0
    assert "opsweep: pins: requirements/onnx.txt (--pins)" in capsys.readouterr().out


def test_ci_installs_the_project_beside_the_pins_never_into_them(repo):
    """The measuring jobs install the project itself (`-e .`: it is a package) in the same
    pip command as the pins; the watched pin file is not touched."""
    pins = (repo / "requirements" / "onnx.txt").read_text()
    assert init(repo) == 0
    for name in WORKFLOWS[:2]:
        sweep = yaml.safe_load((repo / name).read_text())["jobs"]["sweep"]
        assert sweep["with"]["install"] == "-e ."
    assert (repo / "requirements" / "onnx.txt").read_text() == pins
    assert init(repo, "--force", "--install", "-r requirements/dev.txt", "--pip-args=--prefer-binary") == 0
    assert _measure(repo)["jobs"]["sweep"]["with"]["install"] == "-r requirements/dev.txt"
    assert _measure(repo)["jobs"]["sweep"]["with"]["pip-args"] == "--prefer-binary"
    assert init(repo, "--force", "--install", "") == 0
    assert "install" not in _measure(repo)["jobs"]["sweep"]["with"]


def test_ignore_rules_are_appended_never_clobbered(repo):
    (repo / ".gitignore").write_text("/build\n*.pyc")  # no final newline
    assert init(repo) == 0
    text = (repo / ".gitignore").read_text()
    assert text.startswith("/build\n*.pyc\n")
    for rule in (".opsweep-cache/", "*.run.jsonl", "*.checkpoint.jsonl"):
        assert text.splitlines().count(rule) == 1
    assert init(repo, "--force") == 0
    assert (repo / ".gitignore").read_text() == text  # nothing twice


def test_the_closing_text_is_the_whole_checklist(repo, capsys):
    assert init(repo) == 0
    out = capsys.readouterr().out
    steps = out[out.index("opsweep: next"):]
    for needed in ("opsweep sweep && opsweep assemble", "onnx_support_measured.json",
                   "OPSWEEP_APP_CLIENT_ID", "OPSWEEP_APP_PRIVATE_KEY", "start none of your CI",
                   "Allow GitHub Actions to create and approve pull requests",
                   "OPSWEEP_INDEX_URL", "no default", "merge these files into main first",
                   "then Settings > Branches: require onnx-support", "onnx-publish"):
        assert needed in steps, needed
    assert steps.index("measure and commit") < steps.index("merge these") < \
        steps.index("require onnx-support")


def test_an_existing_renovate_json_is_extended_never_shadowed(repo, capsys):
    """Failed before: init refused, and --force wrote a .github/renovate.json5 that Renovate
    ignores (renovate.json comes first). Now the rule goes into renovate.json itself."""
    mine = {"extends": ["config:recommended"], "packageRules": [{"matchPackageNames": ["x"],
                                                                "enabled": False}]}
    (repo / "renovate.json").write_text(json.dumps(mine, indent=4))
    assert init(repo) == 0
    assert not (repo / ".github" / "renovate.json5").exists()
    data = json.loads((repo / "renovate.json").read_text())
    assert data["extends"] == mine["extends"] and data["packageRules"][0] == mine["packageRules"][0]
    (rule,) = data["packageRules"][1:]
    assert rule["groupName"] == "onnx exporter stack" and "torch" in rule["matchPackageNames"]
    (pattern,) = data["pip_requirements"]["managerFilePatterns"]
    assert _js(pattern).search("requirements/onnx.txt")
    out = capsys.readouterr().out
    assert "renovate.json: init's rule added" in out and "Renovate reads renovate.json" in out
    # failed before: the first commit's `git add` left the extended renovate.json out
    assert "git add .github .gitignore pyproject.toml renovate.json docs/onnx " in out
    assert init(repo, "--force") == 0  # once only
    assert json.loads((repo / "renovate.json").read_text()) == data


def test_a_json5_renovate_config_is_explained_and_left_alone(repo, capsys):
    (repo / ".github").mkdir()
    (repo / ".github" / "renovate.json").write_text("// mine\n{ extends: [] }\n")
    assert init(repo) == 0
    assert (repo / ".github" / "renovate.json").read_text() == "// mine\n{ extends: [] }\n"
    assert not (repo / ".github" / "renovate.json5").exists()
    assert ".github/renovate.json is not plain JSON" in capsys.readouterr().out


def test_upgrade_rewrites_the_workflows_and_keeps_tool_opsweep(repo, capsys):
    """Failed before: upgrading needed --force, which rewrote the whole table and dropped
    torchscript, templates and repo-url. --upgrade keeps the table byte for byte, and the
    settings the workflows carry."""
    assert init(repo, "--shards", "3", "--branch", "trunk", "--install", "-r dev.txt",
                "--action", "octo/opsweep@v0") == 0
    with (repo / "pyproject.toml").open("a") as f:
        f.write('torchscript = true\ntemplates = "docs"\n'
                'repo-url = "https://github.com/octo/demo/blob/main"\n')
    before = (repo / "pyproject.toml").read_text()
    (repo / WORKFLOWS[3]).write_text("name: old\n")
    assert init(repo) == 2  # plain init still refuses
    capsys.readouterr()
    assert init(repo, "--upgrade") == 0
    assert (repo / "pyproject.toml").read_text() == before
    assert "wrote pyproject.toml" not in capsys.readouterr().out
    measure = _measure(repo)
    assert measure["jobs"]["sweep"]["with"]["shards"] == 3
    assert measure["jobs"]["sweep"]["with"]["install"] == "-r dev.txt"
    assert measure[True]["push"]["branches"] == ["trunk"]
    assert measure["jobs"]["sweep"]["uses"] == "octo/opsweep/.github/workflows/onnx-sweep.yml@v0"
    assert yaml.safe_load((repo / WORKFLOWS[3]).read_text())["name"] == "onnx-bump"
    assert init(repo, "--upgrade", "--shards", "5") == 0  # what is passed wins
    assert _measure(repo)["jobs"]["sweep"]["with"]["shards"] == 5


def test_upgrade_without_an_earlier_init_is_one_line(repo, capsys):
    assert init(repo, "--upgrade") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "onnx-measure.yml does not exist" in err


def test_pin_sha_pins_every_caller_with_a_version_renovate_moves(repo):
    """Every `uses:` line runs the release's commit with its version as a comment (what
    Renovate's and Dependabot's github-actions managers move); the reusable workflow's
    `opsweep:` input names the same commit, and the written Renovate rule moves it too,
    in the same pull request as the `uses:` lines."""
    from opsweep import __version__
    assert init(repo, "--action-sha", SHA, "--pin-sha") == 0
    pinned = f"opsweep/opsweep@{SHA} # v{__version__}"
    for name in WORKFLOWS:
        text = (repo / name).read_text()
        for uses in _uses(text):
            assert uses.endswith(f"@{SHA} # v{__version__}"), (name, uses)
    text = (repo / WORKFLOWS[0]).read_text()
    assert f"      opsweep: {pinned}\n" in text
    assert _measure(repo)["jobs"]["sweep"]["with"]["opsweep"] == f"opsweep/opsweep@{SHA}"
    strings = _strings((repo / ".github" / "renovate.json5").read_text())
    (matcher,) = [_js(s) for s in strings if "currentDigest" in s]
    found = matcher.search(text)
    assert (found.group("depName"), found.group("currentDigest"), found.group("currentValue")) \
        == ("opsweep/opsweep", SHA, f"v{__version__}")
    (files,) = [_js(s) for s in strings if "workflows" in s]
    assert files.search(WORKFLOWS[0]) and not files.search("src/onnx-measure.yml")
    assert "opsweep/opsweep" in strings and "opsweep" in strings  # the group of both
    assert init(repo, "--upgrade", "--action-sha", SHA) == 0  # an upgrade keeps the pinning
    assert f"opsweep: {pinned}" in (repo / WORKFLOWS[1]).read_text()

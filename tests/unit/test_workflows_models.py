"""The scoreboard's model packages reach every place the main command's models step runs:
opsweep's measuring workflows install requirements/models.txt beside the pins (`install`,
never a watched pin), `tox -e proptest_onnx` installs it before the sweep, and it names
every third-party package the public model set imports, at the test extra's pins."""

import ast
import re
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "requirements" / "models.txt"


def _pins(lines) -> dict[str, str]:
    found = (re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line.split("#")[0].strip())
             for line in lines)
    return {m[1].lower(): m[2] for m in found if m}


def test_the_model_packages_are_the_test_extras_pins():
    listed = _pins(MODELS.read_text().splitlines())
    assert set(listed) == {"transformers", "torchvision", "timm"}, listed
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    test = _pins(project["project"]["optional-dependencies"]["test"])
    assert {name: test.get(name) for name in listed} == listed


def test_the_model_set_imports_nothing_else_third_party():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    core = {re.split(r"[<>=~!\[ ;]", d)[0].lower() for d in project["project"]["dependencies"]}
    allowed = core | set(_pins(MODELS.read_text().splitlines()))
    imported = set()
    for path in (ROOT / "examples" / "models").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = {n for n in imported if n not in sys.stdlib_module_names and n != "__future__"}
    assert third_party and third_party <= allowed, sorted(third_party - allowed)


def test_the_measuring_workflows_and_the_main_command_install_them():
    for name in ("onnx-measure", "onnx-command"):
        jobs = yaml.safe_load((ROOT / ".github" / "workflows" / f"{name}.yml").read_text())["jobs"]
        (sweep,) = [j for j in jobs.values() if j.get("uses", "").endswith("onnx-sweep.yml")]
        assert sweep["with"]["install"] == "-r requirements/models.txt", name
    tox = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["tox"]["env"]
    env = tox["proptest_onnx"]
    assert ["python", "-m", "pip", "install", "--quiet", "-r", "requirements/models.txt"] in \
        env["commands_pre"]
    # never a watched pin: the bot watches the deps of the pinning env alone
    assert not set(_pins(env["deps"])) & {"transformers", "torchvision", "timm"}

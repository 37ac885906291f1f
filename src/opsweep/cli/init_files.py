"""The files ``opsweep init`` writes beside its workflows: the Renovate rule (its own
``.github/renovate.json5``, or a rule added to the project's existing Renovate
configuration, which Renovate reads instead of any later file), the ignore rules of
``.gitignore`` and the closing checklist. docs/adopting.md walks through them."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from opsweep import __version__, config
from opsweep.bot.pins import WATCHED

RENOVATE = ".github/renovate.json5"
#: Renovate's configuration files, in the order it looks for them: it reads the first found
#: and ignores the rest, so init never writes its own file behind an existing one
RENOVATE_FILES = ("renovate.json", "renovate.json5", ".github/renovate.json", RENOVATE,
                  ".gitlab/renovate.json", ".gitlab/renovate.json5", ".renovaterc",
                  ".renovaterc.json", ".renovaterc.json5")
MARK = "Written by `opsweep init`"
#: what a local run leaves in the repository: the export cache (about 100 MB for the
#: built-in catalog) and the sweeps' run logs and checkpoints beside the artifact
IGNORED = (".opsweep-cache/", "*.run.jsonl", "*.checkpoint.jsonl")
GROUP = "onnx exporter stack"


def template(name: str) -> str:
    return resources.files("opsweep").joinpath("templates", "init", name).read_text("utf-8")


def fill(text: str, words: dict[str, str]) -> str:
    for key, value in words.items():
        text = text.replace(key, value)
    return text


def renovate_json5(pins: config.PinSource, action_repository: str = "") -> str:
    """The rule as init's own .github/renovate.json5: the manager that reads the pin source,
    the stack in one pull request, and (`action_repository`: the callers run opsweep by
    commit) a regex manager that moves the `opsweep:` inputs with the `uses:` lines."""
    packages = ", ".join(f'"{p}"' for p in WATCHED)
    managers = []
    if pins.kind == "requirements":
        pattern = "/^" + re.escape(pins.name).replace("/", "\\\\/").replace("\\.", "\\\\.") + "$/"
        manager = f'  pip_requirements: {{ managerFilePatterns: ["{pattern}"] }},\n'
    else:
        manager = ""  # Renovate's pep621 manager reads [project] arrays itself
    if pins.kind == "tox":
        env = re.escape(pins.name).replace("\\", "\\\\")
        managers.append(
            "    {\n      customType: \"regex\",\n"
            "      managerFilePatterns: [\"/(^|/)pyproject\\\\.toml$/\"],\n"
            "      matchStringsStrategy: \"recursive\",\n      matchStrings: [\n"
            f"        \"\\\\n\\\\[tool\\\\.tox\\\\.env\\\\.{env}\\\\][\\\\s\\\\S]*?\\\\ndeps\\\\s*=\\\\s*"
            "\\\\[[^\\\\]]*\\\\]\",\n"
            "        \"\\\"(?<depName>[A-Za-z0-9][A-Za-z0-9._-]*)\\\\s*==\\\\s*"
            "(?<currentValue>[^\\\"\\\\s;,]+)\\\"\",\n      ],\n"
            "      datasourceTemplate: \"pypi\",\n      versioningTemplate: \"pep440\",\n"
            "    },\n")
    rules = ""
    if action_repository:
        managers.append(
            "    {\n      // the reusable workflow's `opsweep:` input names the action's commit too\n"
            "      customType: \"regex\",\n"
            "      managerFilePatterns: [\"/(^|/)\\\\.github\\\\/workflows\\\\/onnx-[a-z]+\\\\.ya?ml$/\"],\n"
            "      matchStrings: [\"opsweep: (?<depName>[A-Za-z0-9_.-]+\\\\/[A-Za-z0-9_.-]+)@"
            "(?<currentDigest>[0-9a-f]{40}) # (?<currentValue>v[0-9A-Za-z.+-]+)\"],\n"
            "      datasourceTemplate: \"github-tags\",\n    },\n")
        rules = ("    {\n      description: \"opsweep's action, its reusable workflow and the "
                 "`opsweep:` inputs in one pull request\",\n"
                 f"      matchPackageNames: [\"{action_repository}\"],\n"
                 "      groupName: \"opsweep\",\n    },\n")
    if managers:
        manager += "  customManagers: [\n" + "".join(managers) + "  ],\n"
    return fill(template("renovate.json5"), {"@MANAGER@": manager, "@PACKAGES@": packages,
                                             "@RULES@": rules, "@WHERE@": pins.where,
                                             "@VERSION@": __version__})


def as_json(json5: str) -> dict:
    """init's own JSON5 rule as plain JSON data (it writes comments, bare keys and trailing
    commas only, which this undoes)."""
    lines = [ln for ln in json5.splitlines() if not ln.lstrip().startswith("//")]
    text = re.sub(r"(^\s*|\{ )([A-Za-z_][A-Za-z0-9_]*):", r'\1"\2":', "\n".join(lines),
                  flags=re.M)
    text = re.sub(r",(\s*[\]}])", r"\1", text)
    return json.loads(text)


def existing_renovate(root: Path) -> str | None:
    """The Renovate configuration file Renovate reads in `root`, if any but init's own."""
    for name in RENOVATE_FILES:
        path = Path(root, name)
        if path.is_file() and not (name == RENOVATE and MARK in path.read_text("utf-8",
                                                                               "replace")):
            return name
    return None


def extend_renovate(text: str, rule: dict) -> str | None:
    """`text` (a JSON Renovate configuration) with init's rule merged in: its package rules
    and custom managers appended unless there already, its pip_requirements file pattern
    added. None when `text` is not plain JSON (JSON5 with comments): the caller explains."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for key in ("packageRules", "customManagers"):
        have = data.setdefault(key, [])
        if not isinstance(have, list):
            return None
        for item in rule.get(key, []):
            if item not in have and not any(isinstance(h, dict) and h.get("groupName") and
                                            h.get("groupName") == item.get("groupName")
                                            for h in have):
                have.append(item)
        if not have:
            del data[key]
    if "pip_requirements" in rule:
        section = data.setdefault("pip_requirements", {})
        if not isinstance(section, dict):
            return None
        patterns = section.setdefault("managerFilePatterns", [])
        for pattern in rule["pip_requirements"]["managerFilePatterns"]:
            if pattern not in patterns:
                patterns.append(pattern)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def place_renovate(root: Path, rule: str, files: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """Put init's rule (JSON5 text) into `files`: as its own file, or merged into the
    Renovate configuration the repository has. Returns that configuration's name ("" for
    init's own file) and what to tell the user."""
    renovate = existing_renovate(root)
    if renovate is None:
        files[RENOVATE] = rule
        return "", ()
    text = Path(root, renovate).read_text("utf-8")
    extended = extend_renovate(text, as_json(rule))
    if extended is None:
        return renovate, (f"{renovate} is not plain JSON, so init left it as it is: add the "
                          "rule of docs/adopting.md (Renovate reads that file and would "
                          f"ignore a {RENOVATE})",)
    if extended == text:
        return renovate, ()
    files[renovate] = extended
    return renovate, (f"{renovate}: init's rule added (Renovate reads that file first and "
                      f"would ignore a {RENOVATE})",)


def gitignore(root: Path) -> str | None:
    """.gitignore with the rules for what a local run leaves (appended, every existing line
    kept); None when every rule is there already."""
    path = Path(root, ".gitignore")
    text = path.read_text("utf-8") if path.is_file() else ""
    have = {line.strip().lstrip("/") for line in text.splitlines()}
    missing = [rule for rule in IGNORED if rule not in have and rule.rstrip("/") not in have]
    if not missing:
        return None
    block = "# what a local opsweep run leaves (written by `opsweep init`)\n" + \
        "".join(f"{rule}\n" for rule in missing)
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text else "") + block


def checklist(parsed: config.Config, branch: str, renovate: str, own: str = "") -> list[str]:
    """init's closing text: every step left between the written files and the first
    comment, in order (docs/adopting.md says each at length)."""
    pins = parsed.pins
    own = f" {own}" if own else ""
    install = f"pip install -r {pins.name}{own} opsweep" if pins.kind == "requirements" else \
        f"pip install{own} opsweep and the pins of {pins.where}"
    # a Renovate file of the repository's own that init extended is committed with the rest
    theirs = f" {renovate}" if renovate and not renovate.startswith(".github/") else ""
    return [
        "opsweep: next (docs/adopting.md, steps 3 and 4, in this order):",
        f"  1. measure and commit the first artifact: {install}; opsweep sweep && opsweep "
        f"assemble; git add .github .gitignore pyproject.toml{theirs} {parsed.pages_dir} "
        f"(the bot diffs every later measurement against {parsed.artifact})",
        "  2. Settings > Environments: create onnx-publish, deployment branches: "
        f"{branch} only",
        "  3. a GitHub App (docs/adopting.md, step 4): the repository variable "
        "OPSWEEP_APP_CLIENT_ID and the onnx-publish secret OPSWEEP_APP_PRIVATE_KEY; without it "
        "the bot pushes with GITHUB_TOKEN, whose commits and pull requests start none of your "
        "CI (your required checks never report on them), and onnx-bump needs Settings > "
        "Actions > General > 'Allow GitHub Actions to create and approve pull requests'",
        f"  4. merge these files into {branch} first: the check onnx-support exists only once "
        "onnx-measure and onnx-publish have run there",
        "  5. then Settings > Branches: require onnx-support",
        "  6. pin bumps: " + (
            f"Renovate reads {renovate} (the rule is there); delete "
            ".github/workflows/onnx-bump.yml, or the rule, to keep one source" if renovate else
            "onnx-bump needs the repository variable OPSWEEP_INDEX_URL, your package index's "
            "base URL (the one serving /pypi/NAME/json; no default: the bump stops in one "
            f"line until it is set); or use Renovate ({RENOVATE}) and delete onnx-bump.yml"),
    ]

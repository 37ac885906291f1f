"""The layout is the pipeline: one package per stage, data flowing one way.

    catalog -> engine -> sweep -> (artifact) -> page, bot -> cli
    catalog, engine -> capture -> check -> cli   (a user's models)

Each package imports only the packages it may (ALLOWED), there is no import cycle between
modules, page/ and bot/ import neither the engine nor torch (checked with torch made
unimportable), only the command line reads the environment, and opsweep/__init__ is the
public face. These are read from the code itself, so a change that breaks them fails here.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import opsweep

SRC = Path(opsweep.__file__).parent
#: the vocabulary every stage shares
BASE = {"model", "errors", "files", "config", "coverage", "targets", "policy", "streams"}
#: package -> the opsweep packages (and base modules) its modules may import
ALLOWED = {
    "model": set(), "errors": set(), "files": {"errors", "config", "targets"},
    "targets": {"model"},  # the targets and their kinds: stdlib only, like config
    "coverage": {"model"},  # value classes and the bar: torch-free, for the artifact too
    "policy": {"model", "files"},  # the tolerance policy: a data file, torch-free
    # stdlib only: the Action runs it before installing anything
    "config": {"errors", "targets", "model"},
    "_release": set(),  # the commit a release build recorded: stdlib only
    "streams": set(),  # C's buffered streams flushed: stdlib only (the command's exit)
    "catalog": BASE | {"catalog"},
    "engine": BASE | {"catalog", "engine"},
    "artifact": BASE | {"artifact"},
    "sweep": BASE | {"catalog", "engine", "artifact", "sweep"},
    "page": BASE | {"artifact", "page"},  # the catalog's types only for annotations
    "bot": BASE | {"artifact", "page", "bot", "_release"},
    # a user's model loaded and captured as the exporter captures it: its aten uses, which
    # the check looks up and the catalog scope "used" measures (the registry's opset, the
    # exporter's error line); neither the table nor the check
    "capture": BASE | {"catalog", "engine", "capture"},
    # a model against the table: its uses (capture), the export (engine), the table
    # (artifact), repro snippets (page); the command line calls it
    "check": BASE | {"catalog", "engine", "artifact", "page", "capture", "check"},
    "cli": BASE | {"catalog", "engine", "artifact", "sweep", "page", "bot", "capture", "check",
                   "cli", "_release"},
}
#: third-party modules deferred on purpose where a function needs them (each with a reason)
HEAVY = ("torch", "hypothesis", "rich", "multiprocessing", "onnx", "onnxruntime", "onnxscript",
         "tqdm")


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).with_suffix("")
        parts = [p for p in relative.parts if p != "__init__"]
        yield ".".join(["opsweep", *parts]), path, ast.parse(path.read_text("utf-8"))


def _level(tree):
    """ids of the nodes imported at module level (TYPE_CHECKING blocks aside)."""
    runtime, typing = set(), set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing |= {id(n) for n in ast.walk(node)}
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Try, ast.If)):
            runtime |= {id(n) for n in ast.walk(node)}
    return runtime, typing


def _imports(tree):
    """(module imported, kind: 'top' | 'typing' | 'function', line) of every import."""
    runtime, typing = _level(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from opsweep.cli import actions` imports the module opsweep.cli.actions
            names = [f"{node.module}.{a.name}" if (SRC.parent / node.module.replace(".", "/")
                                                   / f"{a.name}.py").is_file()
                     or (SRC.parent / node.module.replace(".", "/") / a.name).is_dir()
                     else node.module for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        kind = "top" if id(node) in runtime else "typing" if id(node) in typing else "function"
        for name in names:
            yield name, kind, node.lineno


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_each_package_imports_only_what_it_may():
    wrong = []
    for name, path, tree in _modules():
        stage = _stage(name)
        if stage in ("", "__main__", "specs"):
            continue
        for imported, kind, line in _imports(tree):
            if not imported.startswith("opsweep.") or kind == "typing":
                continue
            if _stage(imported) not in ALLOWED[stage]:
                wrong.append(f"{path.relative_to(SRC)}:{line} imports {imported}")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    graph = {}
    for name, _, tree in _modules():
        graph[name] = {m for m, kind, _ in _imports(tree) if kind == "top" and m.startswith("opsweep")}
    known = set(graph)
    graph = {n: {m for m in deps if m in known and m != n} for n, deps in graph.items()}
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(n):  # Tarjan's strongly connected components
        index[n] = low[n] = len(index)
        stack.append(n)
        on.add(n)
        for m in graph[n]:
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in on:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            component = set()
            while True:
                m = stack.pop()
                on.discard(m)
                component.add(m)
                if m == n:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))
    for n in sorted(graph):
        if n not in index:
            visit(n)
    assert not cycles, cycles


def test_an_import_inside_a_function_is_a_deferred_heavy_one_with_a_reason():
    """Only a heavy optional import is deferred: a third-party one, or (in the command line
    and the engine's worker side) a measuring stage; the first line of each block of them,
    or the comment line above it, says why."""
    wrong = []
    for name, path, tree in _modules():
        lines = path.read_text("utf-8").splitlines()
        inner = sorted(line for _, kind, line in _imports(tree) if kind == "function")
        for imported, kind, line in _imports(tree):
            if kind != "function":
                continue
            heavy = imported.split(".")[0] in HEAVY
            stage_deferred = imported.startswith("opsweep.") and _stage(name) in ("cli", "engine") \
                and _stage(imported) in ("catalog", "engine", "sweep", "page", "capture", "check", "cli")
            if not (heavy or stage_deferred):
                wrong.append(f"{path.relative_to(SRC)}:{line} defers {imported}")
            block = line
            while block - 1 in inner or (block - 2 in inner and not lines[block - 2].strip()):
                block -= 1 if block - 1 in inner else 2
            if "#" not in lines[block - 1] and not lines[block - 2].strip().startswith("#"):
                wrong.append(f"{path.relative_to(SRC)}:{block} gives no reason")
    assert not wrong, "\n".join(sorted(set(wrong)))


#: the names a target is stored under, and the module that alone decides by them
TARGET_NAMES = {"STOCK", "TORCHSCRIPT"}
TARGET_WORDS = {"stock", "torchscript"}
KINDS_MODULE = "opsweep.targets"


def _names_a_target(node: ast.AST) -> bool:
    if isinstance(node, ast.Name) and node.id in TARGET_NAMES:
        return True
    if isinstance(node, ast.Attribute) and node.attr in TARGET_NAMES:
        return ast.unparse(node.value) != "Kind"  # a kind (Kind.STOCK) is what to decide by
    return isinstance(node, ast.Constant) and node.value in TARGET_WORDS


def test_only_the_kinds_module_decides_by_a_targets_name():
    """Behaviour differs by a target's kind (opsweep.targets: KINDS), never by comparing its
    name: no ``==``, ``!=``, ``in`` or ``not in`` against STOCK, TORCHSCRIPT or their
    words, and no set of such names, outside the module that defines the kinds."""
    wrong = []
    for name, path, tree in _modules():
        if name == KINDS_MODULE:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                    _names_a_target(side) for side in (node.left, *node.comparators)):
                wrong.append(f"{path.relative_to(SRC)}:{node.lineno} {ast.unparse(node)}")
            elif isinstance(node, ast.Set) and any(
                    _names_a_target(e) for e in node.elts):
                wrong.append(f"{path.relative_to(SRC)}:{node.lineno} {ast.unparse(node)}")
    assert not wrong, "\n".join(wrong)


def test_the_layout_test_sees_a_decision_by_name():
    """The check above finds what it forbids (a comparison in any of its shapes)."""
    for code in ("x = t == STOCK", "x = 'torchscript' != t", "x = t in {STOCK}",
                 "x = t == art.TORCHSCRIPT", "x = {'stock'}"):
        tree = ast.parse(code)
        found = [n for n in ast.walk(tree) if isinstance(n, ast.Compare)
                 and any(_names_a_target(s) for s in (n.left, *n.comparators))] or \
                [n for n in ast.walk(tree) if isinstance(n, ast.Set)
                 and any(_names_a_target(e) for e in n.elts)]
        assert found, code


BLOCKER = """
import importlib.abc, sys
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"{{name}} is unimportable in this test")
sys.meta_path.insert(0, Blocker())
"""


def _without(blocked: set[str], code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKER.format(blocked=blocked) + code],
                          capture_output=True, text=True, timeout=120)


def test_page_and_bot_import_without_torch_and_the_bot_without_hypothesis():
    stack = {"torch", "onnx", "onnxruntime", "onnxscript", "numpy"}
    page = [n for n, _, _ in _modules() if _stage(n) == "page"]
    bot = [n for n, _, _ in _modules() if _stage(n) == "bot"] + ["opsweep.cli.main", "opsweep.cli.bot"]
    done = _without(stack, "".join(f"import {m}\n" for m in page + bot))
    assert done.returncode == 0, done.stderr[-2000:]
    # what the bot's job installs: PyGithub, jsonschema, jinja2 (action.yml, mode bot), not
    # jsonschema-rs (files.validate falls back to jsonschema)
    done = _without(stack | {"hypothesis", "rich", "jsonschema_rs"},
                    "".join(f"import {m}\n" for m in bot) +
                    "from opsweep.cli import main\nsys.exit(main(['bot', '--help']))")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "steps of the review bot" not in done.stderr


def test_only_the_command_line_reads_the_environment():
    # bot/git.py hands git this process's own environment (plus the push token's header):
    # passed through to a child process, never read as a setting
    readers = [f"{path.relative_to(SRC)}:{node.lineno}"
               for name, path, tree in _modules() if _stage(name) not in ("cli", "engine")
               and path.relative_to(SRC).as_posix() != "bot/git.py"
               for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv")]
    assert not readers, readers
    # the engine's own: the fork server's hand-over and the workers' hash seed, never a setting
    engine = {path.name for name, path, tree in _modules() if _stage(name) == "engine"
              for node in ast.walk(tree)
              if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv")}
    assert engine <= {"forkserver.py", "pool.py"}, engine


def test_python_m_opsweep_describes_the_program():
    done = subprocess.run([sys.executable, "-m", "opsweep", "--help"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: opsweep")
    assert "Measure, operator by operator, what torch.onnx.export(dynamo=True)" in done.stdout
    assert "only place that prints" not in done.stdout  # a developer's note, not a user's


PUBLIC = {
    "ABSENT", "ALL", "BOOL", "COMPLEX", "EDGE_FLOATS", "FLOAT", "INTEGRAL", "NUMERIC",
    "SIGNED_ZEROS", "Artifact", "Example", "Grade", "Grades", "KnownGap", "OpSpec", "Stage",
    "TensorArg", "Tolerance", "activation", "binary", "broadcast_shapes", "comparison",
    "dim_subsets", "dims", "draw_scalar", "dynamic_example_for", "example_for", "examples",
    "gap", "load_artifact", "load_translations", "no_translation", "optional", "present",
    "reduction", "seeds", "shapes", "sides", "spec", "tensors", "unary", "__version__"}


def test_the_public_face():
    assert set(opsweep.__all__) == PUBLIC
    done = _without(set(), "import sys, opsweep\n"
                    "assert not {'torch', 'hypothesis'} & set(sys.modules), 'eager import'\n"
                    "for name in opsweep.__all__: getattr(opsweep, name)\n")
    assert done.returncode == 0, done.stderr[-2000:]
    with pytest.raises(AttributeError, match="no attribute 'engine_internals'"):
        opsweep.engine_internals  # noqa: B018


def test_an_operators_grades_are_looked_up_through_the_public_face():
    artifact = opsweep.load_artifact(Path(__file__).parents[2] / "docs" / "onnx_support_measured.json")
    grades = artifact.grades("sin")
    assert isinstance(grades, opsweep.Grades) and isinstance(grades.export, opsweep.Grade)
    assert artifact.grades("no_such_operator") is None
    assert artifact.grades("sin", target="no such target") is None


def test_committed_snippets_import_public_names_only():
    pages = (Path(__file__).parents[2] / "docs" / "operators").glob("*.md")
    imports = {line.strip() for page in pages for line in page.read_text("utf-8").splitlines()
               if line.strip().startswith("from opsweep")}
    assert imports, "the operators page shows reproduce snippets"
    for line in imports:
        module, _, names = line.removeprefix("from ").partition(" import ")
        assert module == "opsweep", line
        assert {n.strip() for n in names.split(",")} <= set(opsweep.__all__), line


#: standard-library modules opsweep imports that an older Python lacks: (module, since)
NEWER_STDLIB = {"tomllib": (3, 11)}


def test_the_declared_python_is_the_one_the_code_needs():
    """requires-python says what the code needs: tomllib (3.11) is imported unconditionally,
    so 3.10 is not declared."""
    import tomllib
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text("utf-8"))["project"]
    declared = project["requires-python"]
    assert declared.startswith(">=")
    floor = tuple(int(p) for p in declared[2:].split("."))
    needed = max((since for _, path, tree in _modules() for m, kind, _ in _imports(tree)
                  for name, since in NEWER_STDLIB.items() if m == name), default=(3, 0))
    assert floor >= needed, f"the code needs Python {needed}, pyproject declares {declared}"
    assert sys.version_info[:2] >= floor  # and the suite runs on a Python it declares

"""Where a spec is defined, read back for the spec sources page: the call that built it
(recorded as the spec was constructed, `opsweep.model.caller`) found again with :mod:`ast`,
with the source of the statement (the list entry, or the statement holding it) and of the
module-level functions, classes and constants (names assigned once) it names."""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

from opsweep.model import Origin, inside, specs_dir


def display_path(path: str) -> str:
    """`path` as the pages show it: ``specs/...`` for the built-in catalog, relative to
    the working directory when under it, else the directory's name and the file's."""
    path = os.path.abspath(path)
    if inside(path, specs_dir()):
        return "specs/" + Path(os.path.relpath(path, specs_dir())).as_posix()
    here = os.path.abspath(os.getcwd())
    if inside(path, here):
        return Path(os.path.relpath(path, here)).as_posix()
    return f"{Path(path).parent.name}/{Path(path).name}"


def builtin(path: str) -> bool:
    """Whether `path` is a file of the built-in catalog (one the repository holds)."""
    return inside(os.path.abspath(path), specs_dir())


@dataclass(frozen=True)
class Definition:
    """The source of the statement that built a spec, and of the module-level functions,
    classes and constants it names, in file order (`note` says why the source is missing)."""

    code: str
    helpers: tuple[tuple[str, str], ...] = ()
    note: str = ""


@dataclass(frozen=True)
class _Module:
    text: str
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]
    defs: dict[str, ast.stmt]
    calls: dict[int, list[ast.Call]]  # line -> the calls starting on it, in ast.walk's order


def _module(path: str) -> _Module:
    """The parsed file, as it is on disk now."""
    status = os.stat(path)
    return _parsed(path, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=64)
def _parsed(path: str, mtime_ns: int, size: int) -> _Module:
    text = importlib.util.decode_source(Path(path).read_bytes())
    tree = ast.parse(text, filename=path)
    parents: dict[ast.AST, ast.AST] = {}
    calls: dict[int, list[ast.Call]] = {}
    for node in ast.walk(tree):
        parents.update((child, node) for child in ast.iter_child_nodes(node))
        if isinstance(node, ast.Call):
            calls.setdefault(node.lineno, []).append(node)
    return _Module(text, tree, parents, _definitions(tree), calls)


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    """The module's functions and classes, and the names it assigns exactly once, by name."""
    defs: dict[str, ast.stmt] = {}
    assigned: dict[str, list[ast.stmt]] = {}
    for d in tree.body:
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[d.name] = d
        targets = d.targets if isinstance(d, ast.Assign) else \
            [d.target] if isinstance(d, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for name in (n.id for n in ast.walk(t) if isinstance(n, ast.Name)):
                assigned.setdefault(name, []).append(d)
    for name, where in assigned.items():
        d = where[0]
        if len(where) == 1 and isinstance(d, ast.Assign) and len(d.targets) == 1 \
                and isinstance(d.targets[0], ast.Name):
            defs.setdefault(name, d)
    return defs


def definition(origin: Origin | None) -> Definition:
    if origin is None:
        return Definition("", note="built by code that has no source file")
    try:
        module = _module(origin.path)
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        return Definition("", note=f"its source cannot be read ({type(exc).__name__})")
    call = _call_at(module, origin)
    if call is None:
        return Definition("", note=f"no call at line {origin.line} of its source (the file "
                          "changed since the spec was built)")
    node = _entry(call, module.parents)
    return Definition(_segment(module.text, node), _helpers(node, module))


def _call_at(module: _Module, origin: Origin) -> ast.Call | None:
    """The call recorded: the one at exactly that span; without columns, the outermost
    call starting on that line."""
    calls = module.calls.get(origin.line, [])
    exact = [n for n in calls if (n.end_lineno, n.col_offset, n.end_col_offset)
             == (origin.end_line, origin.col, origin.end_col)]
    if exact:
        return exact[0]
    if not calls:
        return None
    return min(calls, key=lambda n: (n.col_offset, -_span(n)[2], -_span(n)[3]))


_ENTRIES = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _entry(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    """The expression that defines the spec: climbing from the call through the calls and
    expressions around it to an entry of a list (or tuple) display; else the statement
    holding it, with the loops or conditions around that statement in its scope."""
    while not isinstance(parents.get(node), (*_ENTRIES, ast.stmt, ast.Module)):
        node = parents[node]
    if isinstance(parents.get(node), _ENTRIES):
        return node
    node = parents.get(node, node)
    while isinstance(node, ast.stmt) and not isinstance(parents.get(node), (*_SCOPES, type(None))):
        node = parents[node]
    return node


def _span(node: ast.AST) -> tuple[int, int, int, int]:
    """(line, column, end line, end column) of a statement or an expression: the nodes a
    definition is made of, each of which the parser gives a position."""
    if not isinstance(node, (ast.stmt, ast.expr)):
        raise TypeError(f"{type(node).__name__} has no position in the source")
    end_line = node.end_lineno if node.end_lineno is not None else node.lineno
    end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    return node.lineno, node.col_offset, end_line, end_col


def _segment(text: str, node: ast.AST) -> str:
    """The source of `node` (with its decorators), dedented."""
    line, col, end_line, end_col = _span(node)
    start = min([line] + [d.lineno for d in getattr(node, "decorator_list", ())])
    lines = text.split("\n")[start - 1:end_line]
    lines[-1] = lines[-1][:_char_col(lines[-1], end_col)]
    if start == line:  # what precedes the node on its first line becomes indentation
        first = _char_col(lines[0], col)
        lines[0] = " " * first + lines[0][first:]
    return textwrap.dedent("\n".join(lines)).strip("\n")


def _char_col(line: str, byte_col: int) -> int:
    """ast's columns count UTF-8 bytes; a str slice counts characters."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _helpers(node: ast.AST, module: _Module) -> tuple[tuple[str, str], ...]:
    """The module-level functions, classes and constants `node` names, and those they name
    in turn (not a statement that holds `node` itself, such as ``SPECS = [...]``)."""
    found: dict[str, ast.stmt] = {}
    todo = [node]
    while todo:
        for name in sorted({n.id for n in ast.walk(todo.pop()) if isinstance(n, ast.Name)}):
            d = module.defs.get(name)
            if d is not None and name not in found and not _holds(d, node):
                found[name] = d
                todo.append(d)
    ordered = sorted(found.items(), key=lambda item: item[1].lineno)
    return tuple((name, _segment(module.text, d)) for name, d in ordered)


def _holds(outer: ast.AST, node: ast.AST) -> bool:
    (line, col, end_line, end_col), inner = _span(outer), _span(node)
    return (line, col) <= inner[:2] and (end_line, end_col) >= inner[2:]

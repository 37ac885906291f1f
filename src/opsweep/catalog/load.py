"""Loading the catalog: the built-in ``opsweep.specs`` package plus any
directories given with ``--specs``. Every spec module exposes ``SPECS``
(a sequence of OpSpec); ``excluded.py`` exposes ``EXCLUDED``.

Validation happens here, at load time, and names the spec and its module.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType, ModuleType

import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from hypothesis.strategies import SearchStrategy

from opsweep.catalog.draw import source_independent
from opsweep.catalog.families import MissingCallable
from opsweep.catalog.listing import missing_references, row_names
from opsweep.errors import SpecError, UsageError
from opsweep.model import GAP_STAGES, Example, OpSpec

BUILTIN_PACKAGE = "opsweep.specs"


@dataclass(frozen=True)
class Exclusion:
    """An aten row with no attributable graph, kept outside both denominators."""

    op: str
    reason: str


@dataclass(frozen=True)
class Absence:
    """A spec the installed torch cannot measure: its operator left the listing, or
    its callable is gone. Recorded as not present in that torch, never measured."""

    spec: OpSpec
    reason: str


@dataclass(frozen=True)
class Catalog:
    specs: Mapping[str, OpSpec]  # the specs present in the installed torch
    excluded: Mapping[str, Exclusion]
    by_operator: Mapping[str, tuple[str, ...]]  # aten name -> spec names (present ones)
    absent: Mapping[str, Absence] = field(default_factory=lambda: MappingProxyType({}))

    def select(self, names: Sequence[str] | None) -> list[OpSpec]:
        """The present specs named (all when none is named); an absent one is skipped
        (the artifact records it as absent), an unknown one is an error."""
        if not names:
            return [self.specs[n] for n in sorted(self.specs)]
        unknown = [n for n in names if n not in self.specs and n not in self.absent]
        if unknown:
            raise SpecError(unknown[0], "no such spec in the catalog"
                            + (f" (also unknown: {', '.join(unknown[1:])})" if unknown[1:] else ""))
        return [self.specs[n] for n in sorted(set(names)) if n in self.specs]


def absence(item: OpSpec) -> str | None:
    """Why the installed torch cannot measure `item`, or None when it can."""
    version = torch.__version__.split("+")[0]
    gone = [op for op in item.aten_ops if op not in row_names()]
    if gone:
        return f"aten::{', aten::'.join(gone)} not in torch {version}'s operator listing"
    if isinstance(item.fn, MissingCallable):
        return f"{item.fn.reason} (torch {version})"
    missing = missing_references(item.fn) if item.module is None else ()
    if missing:
        return f"{', '.join(missing)} does not exist in torch {version}"
    return None


def _builtin_modules() -> list[ModuleType]:
    package = importlib.import_module(BUILTIN_PACKAGE)
    return [_import(f"{BUILTIN_PACKAGE}.{info.name}")
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name)
            if not info.name.startswith("_")]


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except AttributeError as exc:  # `fn=torch.gone` evaluated at import
        raise SpecError("*", f"importing {name} failed: {exc}; name a callable torch may "
                        "remove through the family (unary('name')) or a lambda, so that its "
                        "spec is recorded absent instead", source=name) from exc


def _directory_modules(directory: Path) -> list[ModuleType]:
    directory = Path(directory)
    if not directory.is_dir():
        raise SpecError("*", f"--specs directory {str(directory)!r} does not exist")
    modules = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        name = f"opsweep_user_specs.{path.stem}_{zlib.crc32(str(path.resolve()).encode()):08x}"
        if name in sys.modules:
            modules.append(sys.modules[name])
            continue
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:  # a .py file always has both
            raise SpecError("*", f"{path.name} cannot be imported", source=str(path))
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            raise SpecError("*", f"importing {path.name} failed: {type(exc).__name__}: {exc}",
                            source=str(path)) from exc
        modules.append(module)
    return modules


def load_catalog(extra_dirs: Iterable[Path] = (), *,
                 check_draws: bool | Collection[str] = True,
                 builtin: bool | Collection[str] = True) -> Catalog:
    """Import every spec module (the built-in catalog's only with `builtin`: a project's
    ``[tool.opsweep] catalog = "none"`` measures its own specs alone; a collection of
    operators keeps only the built-in specs and exclusions of those operators, as
    ``catalog = "used"`` does), validate, and build the derived tables. `check_draws`:
    prove every spec's strategy draws (True), none (False), or only the named specs' (the
    ones a sweep with ``--only`` measures)."""
    ops = None if isinstance(builtin, bool) else frozenset(builtin)
    theirs = [m for d in extra_dirs for m in _directory_modules(d)]
    if ops is not None:  # an operator the project's own specs measure is theirs alone
        ops -= {op for m in theirs for item in getattr(m, "SPECS", ())
                for op in getattr(item, "aten_ops", ())}
    modules = [(m, True) for m in (_builtin_modules() if builtin or ops is not None else [])]
    specs, absent, excluded = _gather(modules + [(m, False) for m in theirs], ops)
    by_op: dict[str, list[str]] = {}
    for name in sorted(specs):
        for op in specs[name].aten_ops:
            by_op.setdefault(op, []).append(name)
    for op, row in excluded.items():
        if not row.reason.strip():
            raise SpecError(op, "excluded row has an empty reason")
        if op in by_op:
            raise SpecError(by_op[op][0], f"covers {op!r}, which specs/excluded.py excludes")
    if check_draws:
        checked = set(check_draws) if not isinstance(check_draws, bool) else None
        for item in specs.values():
            if checked is None or item.name in checked:
                check_draw(item)
    return Catalog(MappingProxyType(specs), MappingProxyType(excluded),
                   MappingProxyType({k: tuple(v) for k, v in sorted(by_op.items())}),
                   MappingProxyType(dict(sorted(absent.items()))))


def _gather(modules: list[tuple[ModuleType, bool]], ops: frozenset[str] | None):
    """(specs, absent, excluded) of `modules`, each (module, built-in); with `ops`, a
    built-in module gives only its specs and exclusions of those operators."""
    specs: dict[str, OpSpec] = {}
    absent: dict[str, Absence] = {}
    excluded: dict[str, Exclusion] = {}
    for module, built_in in modules:
        source = module.__name__
        kept = (lambda names: True) if ops is None or not built_in else ops.intersection
        for item in getattr(module, "SPECS", ()):
            if not isinstance(item, OpSpec):
                raise SpecError(repr(item)[:60], "SPECS holds something that is not an OpSpec",
                                source=source)
            if not kept(getattr(item, "aten_ops", ())):
                continue
            item = _placed(item, module)
            if item.name in specs:
                raise SpecError(item.name, f"duplicate spec name, first defined in "
                                f"{specs[item.name].source}", source=source)
            _validate(item)
            if item.name in absent:
                raise SpecError(item.name, f"duplicate spec name, first defined in "
                                f"{absent[item.name].spec.source}", source=source)
            why = absence(item)
            if why is None:
                specs[item.name] = item
            else:
                absent[item.name] = Absence(item, why)
        for row in getattr(module, "EXCLUDED", ()):
            if not kept((row.op,)):
                continue
            if row.op in excluded:
                raise SpecError(row.op, "excluded twice", source=source)
            excluded[row.op] = row
    return specs, absent, excluded


def _placed(item: OpSpec, module: ModuleType) -> OpSpec:
    """`item` as loaded from `module`: its family is the module's name, whatever its
    support status, so a spec may not state one of its own."""
    family = Path(module.__file__ or module.__name__).stem
    if item.family:
        raise SpecError(item.name, f"sets family={item.family!r}, but a spec's family is the "
                        f"name of the module it lives in ({family!r}): remove family= "
                        "(or move the spec to that family's module)", source=module.__name__)
    return replace(item, source=module.__name__, family=family)


def _validate(item: OpSpec) -> None:
    fail = lambda msg: SpecError(item.name, msg, source=item.source)  # noqa: E731
    if not item.name or not item.name.strip():
        raise fail("empty spec name")
    if not item.aten_ops:
        raise fail("aten_ops is empty: name the aten operators this spec measures")
    for op in item.aten_ops:
        if not op or op.startswith(("aten::", "_")) or op != op.strip():
            raise fail(f"aten_ops entry {op!r}: use the listing's row name "
                       "(no 'aten::' prefix, no leading underscore)")
    if not isinstance(item.examples, SearchStrategy):
        raise fail("examples is not a hypothesis strategy")
    if (item.fn is None) == (item.module is None):
        raise fail("exactly one of fn= and module= must be set")
    if item.gap is not None and item.gap.stage not in GAP_STAGES:
        raise fail(f"known gap names stage {item.gap.stage.value!r}, which is not a failure stage")
    for declared in item.traces:
        if declared not in item.aten_ops:
            raise fail(f"traces maps {declared!r}, which is not in aten_ops")
    for argument, why in dict(item.fixed).items():
        if not isinstance(argument, str) or not argument.isidentifier():
            raise fail(f"fixed names {argument!r}: expected a schema argument's name")
        if not isinstance(why, str) or not why.strip():
            raise fail(f"fixed[{argument!r}]: say why the spec never varies it (a non-empty "
                       "reason)")


def check_draw(item: OpSpec) -> Example:
    """Draw one example, proving the strategy can draw at all."""
    found: list[Example] = []

    @settings(max_examples=1, database=None, derandomize=True, deadline=None,
              phases=(Phase.generate,), suppress_health_check=list(HealthCheck))
    @given(item.examples)
    def probe(example):
        found.append(example)

    try:
        with source_independent():
            probe()
    except UsageError:
        raise
    except Unsatisfiable:
        raise SpecError(item.name, "its strategy cannot draw an example "
                        "(every draw was filtered or rejected)", source=item.source) from None
    except Exception as exc:
        raise SpecError(item.name, f"drawing an example raised {type(exc).__name__}: {exc}",
                        source=item.source) from exc
    if not found or not isinstance(found[0], Example):
        got = type(found[0]).__name__ if found else "nothing"
        raise SpecError(item.name, f"its strategy drew {got}, not an Example", source=item.source)
    check_declared(item, found[0])
    return found[0]


def check_declared(item: OpSpec, example: Example) -> None:
    """`example` stays inside the spec's declaration: the dtype and rank it is filed
    under (its first tensor input's, `Example.dtype` and `Example.rank`) are among
    `dtypes` and within `ranks` (inclusive). An example without tensor inputs is
    filed under no dtype and rank 0: only its rank is checked."""
    low, high = item.ranks
    whose = "its first tensor's" if example.tensors else "it has no tensor input"
    if example.tensors and example.dtype not in item.dtypes:
        field, detail = "dtypes", f"dtype {example.dtype} ({whose}) is not among {item.dtypes}"
    elif not low <= example.rank <= high:
        field, detail = "ranks", f"rank {example.rank} ({whose}) is outside {item.ranks}"
    else:
        return
    raise SpecError(item.name, f"the drawn example {example.signature!r} is outside its declared "
                    f"{field}: {detail}; declare what the strategy draws, or narrow the "
                    "strategy", source=item.source)


def exclusions() -> dict[str, str]:
    """The built-in catalog's excluded rows (operator -> reason), without importing every
    spec module: what a quick lookup (`opsweep check --no-export`) needs of the catalog."""
    module = importlib.import_module(f"{BUILTIN_PACKAGE}.excluded")
    return {row.op: row.reason for row in getattr(module, "EXCLUDED", ())}

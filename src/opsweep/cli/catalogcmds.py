"""The catalog's inspection commands, which measure nothing: `opsweep list`, `attribution`
(what each spec really traces), `coverage` (the arguments and cells each spec's draws
reach) and `draw` (the examples a sweep would draw); and the helpers every command that
loads the project's catalog shares (`catalog_of`, `spec_dirs`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from opsweep import coverage
from opsweep.cli.exits import EXIT_ERROR, EXIT_OK
from opsweep.cli.invocation import Invocation
from opsweep.cli.settings import PROFILE_ENV, builtin_scope, project
from opsweep.errors import SpecError


def err(message: str) -> None:
    print(f"opsweep: error: {message}", file=sys.stderr)


def profile_source(args) -> str:
    return "--profile" if args.profile else PROFILE_ENV


def unique(items) -> list:
    return list(dict.fromkeys(items))


def spec_dirs(args, root: Path = Path(".")) -> list[Path]:
    """The project's [tool.opsweep] specs (relative to `root`), then any --specs."""
    return unique([Path(root, d) for d in project(root).specs] + list(getattr(args, "specs", [])))


def catalog_of(args, root: Path = Path("."), *, check_draws: bool | list[str] = False):
    """The catalog the project configures ([tool.opsweep] catalog and specs) plus --specs."""
    from opsweep.catalog.load import load_catalog  # the catalog: hypothesis, torch
    return load_catalog(spec_dirs(args, root), check_draws=check_draws,
                        builtin=builtin_scope(root))


def cmd_list(invocation: Invocation) -> int:
    args = invocation.options
    catalog = catalog_of(args)
    for name, item in catalog.specs.items():
        gap = f"  [gap: {item.gap.stage.value}]" if item.gap else ""
        print(f"{name:<30} {item.family:<16} {', '.join(item.aten_ops)}{gap}")
    print(f"{len(catalog.specs)} specs, {len(catalog.by_operator)} operators, "
          f"{len(catalog.excluded)} excluded rows", file=sys.stderr)
    for name, absence in catalog.absent.items():
        print(f"not present in this torch: {name} ({absence.reason})", file=sys.stderr)
    return EXIT_OK


def cmd_attribution(invocation: Invocation) -> int:
    """What each spec really traces, and the drawn examples eager PyTorch rejects."""
    from opsweep.engine.attribution import attribute, invalid_examples, stale_gap_notes  # torch
    args = invocation.options
    catalog = catalog_of(args)
    bad = 0
    for item in catalog.select(args.names or None):
        try:
            result = attribute(item)
        except SpecError as exc:
            bad += 1
            print(f"{item.name:<28} BROKEN {exc}")
            continue
        invalid = invalid_examples(item)
        verdict = "ok" if not result.missing else f"MISSING {', '.join(result.missing)}"
        bad += bool(result.missing) + bool(invalid)
        print(f"{item.name:<28} {verdict:<24} traced: {', '.join(sorted(result.traced))}")
        for signature, error in invalid[:3]:
            print(f"    INVALID example ({len(invalid)} of them) {signature}: {error}")
    for name, why in stale_gap_notes(catalog.select(args.names or None)).items():
        bad += 1
        print(f"{name:<28} STALE GAP NOTE {why}")
    return EXIT_ERROR if bad else EXIT_OK


def cmd_draw(invocation: Invocation) -> int:
    """The examples a sweep would draw, one JSON line per spec (no export)."""
    from opsweep.catalog.draw import draw_examples, resolve_profile  # hypothesis, torch
    from opsweep.engine.translations import load
    args = invocation.options
    profile = resolve_profile(args.profile or invocation.settings.profile, profile_source(args))
    catalog = catalog_of(args)
    for text in unique([*project().translations, *args.translations]):  # loaded as the sweep loads them, before drawing
        load(text)
    for item in catalog.select(args.names or None):
        drawn = draw_examples(item, profile)
        print(json.dumps({"spec": item.name, "signatures": len({e.signature for e in drawn}),
                          "examples": [repr(e) for e in drawn]}))
    return EXIT_OK


def cmd_coverage(invocation: Invocation) -> int:
    """Which arguments each spec's draws set, and to which value classes, measured from the
    operator's schema by running the drawn examples eagerly (no export); exit 1 when a spec
    misses the catalog's bar (an argument never varied, with no reason given)."""
    from opsweep.catalog.draw import resolve_profile  # hypothesis, torch
    from opsweep.engine import arguments as A
    args = invocation.options
    profile = resolve_profile(args.profile or invocation.settings.profile, profile_source(args))
    catalog = catalog_of(args)
    if args.cells:
        return _cell_coverage(catalog.select(args.names or None), args.json)
    problems: list[str] = []
    for item in catalog.select(args.names or None):
        groups = A.live_features(item, profile)
        table = coverage.coverage(fs for _, fs in groups)
        missed = coverage.bar(item, table)
        problems += missed
        if args.unvaried and not missed:
            continue
        print(f"{item.name}  ({len(groups)} signature groups, {profile.name} profile)")
        print(coverage.describe(item, table))
    for line in problems:
        print(f"BAR {line}", file=sys.stderr)
    if problems:
        err(f"{len(problems)} argument(s) never varied and given no reason")
    return EXIT_ERROR if problems else EXIT_OK


def _cell_coverage(specs, as_json: bool) -> int:
    """Each spec's (dtype, rank) cells under ci: accepted (drawn by the spec, or added),
    refused by eager PyTorch (with its error), unsettled, unreachable (opsweep.catalog.cells)."""
    from opsweep.catalog import cells  # torch
    from opsweep.catalog.draw import PROFILES, plan_for
    totals = dict.fromkeys(cells.STATUSES, 0)
    for item in specs:
        plan = plan_for(item, PROFILES["ci"])
        for status in cells.STATUSES:
            totals[status] += plan.count(status)
        if as_json:
            print(json.dumps(cells.summary(plan), sort_keys=True))
        else:
            print("\n".join(cells.describe(plan)))
    if not as_json:
        print(f"cells: {totals[cells.DRAWN] + totals[cells.ADDED]} accepted "
              f"({totals[cells.DRAWN]} drawn, {totals[cells.ADDED]} added), "
              f"{totals[cells.REFUSED]} refused, {totals[cells.UNSETTLED]} unsettled, "
              f"{totals[cells.OUTSIDE]} outside their spec's ranks, "
              f"{totals[cells.UNREACHABLE]} unreachable")
    return EXIT_OK


def add_parsers(sub) -> None:
    """The catalog's inspection commands: list, attribution, coverage, draw."""
    p = sub.add_parser("list", help="list the catalog's specs")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p = sub.add_parser("attribution", help="what each spec really traces, drawn examples eager "
                       "PyTorch rejects, and known-gap notes that no longer hold (exit 1 when "
                       "any spec is off)")
    p.add_argument("names", nargs="*", metavar="NAME", help="specs to check (default: all)")
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p = sub.add_parser("coverage", help="the arguments each spec's draws set and the value "
                       "classes they reach, from the operator's schema (exit 1 when an argument "
                       "is never varied and the spec gives no reason)")
    p.add_argument("names", nargs="*", metavar="NAME", help="specs to measure (default: all)")
    p.add_argument("--profile", choices=["ci", "nightly"], default=None)
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p.add_argument("--unvaried", action="store_true",
                   help="print only the specs that miss the bar")
    p.add_argument("--cells", action="store_true",
                   help="instead of arguments: each spec's (dtype, rank) cells under ci, "
                        "accepted (drawn or added), refused by eager PyTorch, unsettled, "
                        "unreachable")
    p.add_argument("--json", action="store_true", help="with --cells: one JSON line per spec")
    p = sub.add_parser("draw", help="print the examples a sweep draws for each spec (JSON lines)")
    p.add_argument("names", nargs="*", metavar="NAME", help="specs to draw (default: all)")
    p.add_argument("--profile", choices=["ci", "nightly"], default=None)
    p.add_argument("--specs", type=Path, action="append", default=[], metavar="DIR")
    p.add_argument("--translations", action="append", default=[], metavar="MODULE:TABLE")

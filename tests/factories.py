"""Builders shared by several test modules: small artifacts, results, targets and the
page's inputs, written out by hand so that a test states exactly what it measures."""

import contextlib

from opsweep.artifact import data as art
from opsweep.artifact import grade as grading
from opsweep.artifact.data import Fingerprint, SpecResult, Translations
from opsweep.catalog.links import Link
from opsweep.catalog.listing import Listing, Row
from opsweep.model import Outcome, Stage

FP = Fingerprint("2.13.0", "1.23.2", "1.32.0", "0.7.2", 20, "dynamo", hypothesis="6.170.17")


def result(ops, *stages, nondeterministic=False, dynamic=()):
    """A spec result from outcome stages; `dynamic` gives the dynamic stage of each
    outcome in order (None: not re-exported)."""
    dynamic = tuple(dynamic) + (None,) * (len(stages) - len(dynamic))
    outs = [Outcome(s, f"f32[{i}]", "float32", 1, i, "" if s is Stage.OK else "E: x",
                    d, "" if d in (None, Stage.OK) else "D: y")
            for i, (s, d) in enumerate(zip(stages, dynamic))]
    counts = grading.stage_counts(outs)
    dyn, regressed = grading.dynamic_counts(outs)
    return SpecResult(tuple(ops), "unary", "ci", len(outs), counts, grading.failure_groups(outs),
                      grading.grade([grading.Counts(counts, nondeterministic, dyn, regressed)]),
                      nondeterministic, None, "0123456789abcdef", len(outs), dyn,
                      regressed, grading.dynamic_failures(outs), grading.outcome_counts(outs))


T = Translations("examples/custom_translations.py", "TABLE", "0123456789abcdef", ("prims::hypot",))


def with_target(stock, target, fingerprint=FP, translations=T):
    return art.make_artifact(fingerprint, "ci", 25, 0, stock, None,
                             {translations.name: (translations, target)})


LISTING = Listing("2.13.0", {
    "sin": Row("sin", True, True, ("sin.default",)),
    "cos": Row("cos", True, False, ("cos.default",)),
    "abs": Row("abs", False, False, ("abs.default",)),
    "absolute": Row("absolute", False, False, ("absolute.default",)),
    "tan": Row("tan", True, False, ("tan.default",)),
    "dim": Row("dim", False, False, ("dim.default",)),
}, frozenset({"sin", "cos", "tan"}))
LINKS = {"sin": Link("torch.sin", "https://docs/sin", None),
         "absolute": Link("torch.absolute", "https://docs/absolute", "abs")}
DOCUMENTED = ("torch-2.8.0 wheel", {"sin": 9, "cos": 9, "tan": 9})


def changed_paths(old: bytes, new: bytes) -> set[tuple[str, ...]]:
    """The JSON key path of every value that differs, cut at two levels: ('specs', 'cos'),
    ('regen_index',); a further target's at four, its own specs and operators:
    ('targets', 'torchscript', 'specs', 'cos'). Compared as parsed values, not as lines
    matched by difflib (which pins a moved closing brace on a neighbour); the canonical
    form sorts keys, so a value that is equal is written as the same lines."""
    import json

    def walk(a, b, path):
        cut = 4 if path[:1] == ("targets",) else 2
        if a == b:
            return set()
        if len(path) >= cut or not (isinstance(a, dict) and isinstance(b, dict)):
            return {path}
        out = set()
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.add(path + (key,))
            else:
                out |= walk(a[key], b[key], path + (key,))
        return out

    return walk(json.loads(old), json.loads(new), ())


def identical(a, b) -> bool:
    """Equal value by value and type by type, through tuples, lists and the model's
    dataclasses (nan equal to nan, -0.0 apart from 0.0): what a drawn example read back
    from the export cache must be."""
    from dataclasses import astuple, is_dataclass
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a.hex() == b.hex()
    if is_dataclass(a):
        return identical(astuple(a), astuple(b))
    return a == b


def project_copy(dest, *, untracked: bool = False, leave_out: tuple[str, ...] = ()):
    """This checkout's files as git sees them (tracked; with `untracked`, also the new
    files git does not ignore) copied under `dest`: a tree to make a repository of; paths
    starting with one of `leave_out` are not copied."""
    import shutil
    import subprocess
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    listing = ["git", "ls-files", "-z", *(["--cached", "--others", "--exclude-standard"]
                                          if untracked else [])]
    names = subprocess.run(listing, cwd=root, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        if (root / name).is_file() and not name.startswith(leave_out):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, dest / name)
    return dest


def cell(dtype="float16", rank=3, max_abs=0.001, ulp=2, n=4, tolerance=None):
    """One (dtype, rank) cell's observed error, as the artifact keeps it."""
    from opsweep.artifact.numerics import CellError
    return CellError(dtype, rank, n, max_abs, max_abs / 4, max_abs * 10,
                     ulp if dtype in ("float16", "bfloat16") else None, tolerance=tolerance)


def errored(ops, *cells, digest="0123456789abcdef"):
    """A passing spec result carrying `cells` as its observed error."""
    from dataclasses import replace
    return replace(result(ops, Stage.OK), errors=tuple(cells), digest=digest)


@contextlib.contextmanager
def recording(exporter):
    """The exports `exporter` makes in the block, as (module, dynamic shapes, the model or
    what the export raised); each export is the exporter's own, its result handed on."""
    made = []
    export = exporter.export

    def recorded(module, args, dynamic_shapes=None):
        try:
            model = export(module, args, dynamic_shapes=dynamic_shapes)
        except Exception as exc:
            made.append((module, dynamic_shapes, exc))
            raise
        made.append((module, dynamic_shapes, model))
        return model
    exporter.export = recorded
    try:
        yield made
    finally:
        del exporter.export

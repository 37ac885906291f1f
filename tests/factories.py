"""Builders shared by several test modules: small artifacts, results, targets and the
page's inputs, written out by hand so that a test states exactly what it measures."""

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
    """The JSON key path of every line that differs (difflib over the canonical lines),
    cut at two levels: ('specs', 'cos'), ('regen_index',); a further target's at four, its
    own specs and operators: ('targets', 'torchscript', 'specs', 'cos')."""
    import difflib

    def paths(lines):
        stack, out = [], []
        for line in lines:
            depth = len(line) - len(line.lstrip(" "))
            del stack[depth - 1 if depth else 0:]
            key = line.strip().split('": ', 1)[0].strip('"{},[]') if '": ' in line else ""
            cut = 4 if stack[:1] == ["targets"] else 2
            out.append(tuple(stack[:cut]) + ((key,) if key and len(stack) < cut else ()))
            if line.rstrip().endswith(("{", "[")) and key:
                stack.append(key)
        return out

    a, b = old.decode().splitlines(), new.decode().splitlines()
    pa, pb = paths(a), paths(b)
    changed = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            changed |= {pa[i] for i in range(i1, i2)} | {pb[j] for j in range(j1, j2)}
    return changed

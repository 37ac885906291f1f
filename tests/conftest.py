import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("OPSWEEP_HYP_PROFILE", "ci")
# Every sweep a test runs measures afresh: an export cache shared between tests would serve
# one test's exports to another that means to measure them (a crash, a hang, a broken
# stack). The export cache's own tests name their caches (tests/*/test_export_cache*.py).
os.environ["OPSWEEP_CACHE"] = "off"
# The suite's own property tests: reproducible, no deadline (torch imports are slow), no database.
settings.register_profile("opsweep-tests", deadline=None, database=None, derandomize=True,
                          max_examples=50)
settings.load_profile("opsweep-tests")


@pytest.fixture
def spec_dir(tmp_path):
    """A directory to write user spec modules into (for --specs)."""
    d = tmp_path / "user_specs"
    d.mkdir()
    return d


def require(available: bool, what: str) -> None:
    """Tests that need a system tool beyond Python and pip: on a developer machine
    without it they are skipped with the reason; under CI (CI=true, where .ci/run
    installs everything) a missing tool is a failure, never a silent skip."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing, and CI must run this test (.ci/run installs it)")
    pytest.skip(f"{what} is not installed here (.ci/run installs it)")


def made_once(tmp_path_factory, name: str, make) -> Path:
    """The directory `make(directory)` fills, made once for the whole run: the pytest-xdist
    workers of one run share a temporary root, and the first to get here makes it while
    the others wait for it (a file lock), then read what it made. A failed `make` leaves
    nothing behind, so each worker that needs it fails the same way."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    where, done = root / f"once-{name}", root / f"once-{name}.done"
    with open(root / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir()
            make(where)
            done.touch()
    return where


# --- the built-in catalog's ci draws, drawn once for the run ------------------------------
# Drawing every spec's examples under the ci profile takes some 25 s of CPU here, and the
# catalog's invariants, the argument bar and each render of the support site (its snippets)
# all draw the whole catalog. The draws depend only on the spec's strategy and name, the
# profile and hypothesis (catalog/draw.py: derandomized, independent of where opsweep is
# installed), so the tests that opt in (the `drawn_once` fixture) are served the very
# examples a fresh draw gives; tests of the drawing itself never opt in.

def _encode(value):
    """An example's value as JSON that decodes to the same value (checked when written)."""
    import torch

    from opsweep.model import Example, TensorArg
    if isinstance(value, Example):
        return {"example": [_encode(value.args), _encode(value.kwargs), _encode(value.init),
                            value.seed]}
    if isinstance(value, TensorArg):
        return {"tensor": [_encode(value.shape), value.dtype, value.low, value.high,
                           _encode(value.choices)]}
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [_encode(v) for v in value]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.memory_format):
        return {"memory_format": str(value).removeprefix("torch.")}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"a drawn value of type {type(value).__name__} has no JSON form here")


def _decode(value):
    import torch

    from opsweep.model import Example, TensorArg
    if not isinstance(value, dict):
        return value
    (kind, body), = value.items()
    if kind == "example":
        args, kwargs, init, seed = body
        return Example(_decode(args), _decode(kwargs), _decode(init), seed)
    if kind == "tensor":
        shape, dtype, low, high, choices = body
        return TensorArg(_decode(shape), dtype, low, high, _decode(choices))
    if kind in ("tuple", "list"):
        return (tuple if kind == "tuple" else list)(_decode(v) for v in body)
    return getattr(torch, body)  # a dtype or a memory format


def _draw_catalog(where: Path) -> None:
    """The drawing, in one forked child of this process (`isolated.in_child`): a crash of
    eager PyTorch fails the drawing, never the xdist worker. Within that child the cell
    covering asks eager inline, not in a forked child per spec as a sweep asks it: the same
    draws and cells (tests/unit/test_isolated.py compares the two on specs eager refuses
    cells of), without some 750 forks of a process holding torch and the catalog (about 30 s
    of CPU a drawing, measured side by side)."""
    from opsweep.catalog import draw
    from opsweep.catalog.isolated import in_child

    def drawing() -> None:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(draw, "in_child", lambda fn, timeout=None: fn())
            _draw_here(where)
    in_child(drawing, timeout=1800)


def _draw_here(where: Path) -> None:
    import warnings

    from opsweep.catalog import draw
    from opsweep.catalog.draw import PROFILES, draw_examples
    from opsweep.catalog.load import load_catalog
    drawn, added = {}, {}
    planned = draw.plan_for

    def plan_for(spec, profile, hypothesis_draws=None):  # the drawing's own plan, counted
        plan = planned(spec, profile, hypothesis_draws)
        added[spec.name] = len(plan.added)
        return plan
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(draw, "plan_for", plan_for)
        warnings.simplefilter("ignore")
        for name, spec in load_catalog(check_draws=False).specs.items():
            examples = draw_examples(spec, PROFILES["ci"])
            encoded = [_encode(e) for e in examples]
            # repr, not ==: it tells -0.0 from 0.0, 1 from 1.0 and True, and nan equals nan
            assert [repr(_decode(json.loads(json.dumps(e)))) for e in encoded] == \
                [repr(e) for e in examples], name
            drawn[name] = encoded
    (where / "draws.json").write_text(json.dumps(drawn), "utf-8")
    (where / "cells.json").write_text(json.dumps(added), "utf-8")


class DrawnOnce:
    """`draw_examples` with the built-in catalog's ci draws served from the run's one
    drawing: a spec whose strategy is the built-in spec's own (the same object: a catalog
    loaded again holds the same strategies) is given the examples drawn for it; any other
    spec or profile is drawn as usual."""

    def __init__(self, draw, examples: dict, cells_added: dict) -> None:
        from opsweep.catalog.draw import PROFILES
        from opsweep.catalog.load import load_catalog
        self.draw, self.profile = draw, PROFILES["ci"]
        #: each built-in spec's count of cells the drawing added (its plan_for(spec, ci).added)
        self.cells_added = cells_added
        builtin = load_catalog(check_draws=False).specs
        self.served = {name: (spec.examples, examples[name]) for name, spec in builtin.items()}

    def __call__(self, spec, profile):
        found = self.served.get(spec.name)
        if profile == self.profile and found is not None and found[0] is spec.examples:
            return list(found[1])
        return self.draw(spec, profile)


#: where the library draws a spec's examples (each module's own name for draw_examples)
DRAWING = ("opsweep.catalog.draw", "opsweep.engine.attribution", "opsweep.engine.standalone")


@pytest.fixture(scope="session")
def ci_draws(tmp_path_factory) -> DrawnOnce:
    """The built-in catalog's ci draws, drawn once for the run (shared by the workers)."""
    from opsweep.catalog.draw import draw_examples
    where = made_once(tmp_path_factory, "ci-draws", _draw_catalog)
    encoded = json.loads((where / "draws.json").read_text("utf-8"))
    return DrawnOnce(draw_examples, {n: [_decode(e) for e in es] for n, es in encoded.items()},
                     json.loads((where / "cells.json").read_text("utf-8")))


@pytest.fixture(scope="module")
def drawn_once(ci_draws):
    """For the module's tests, the library's drawing serves the run's one drawing of the
    built-in catalog (see DrawnOnce)."""
    with pytest.MonkeyPatch.context() as patch:
        for module in DRAWING:
            patch.setattr(f"{module}.draw_examples", ci_draws)
        yield ci_draws


# --- the order the workers take the test files in -----------------------------------------
#: The files that take longest, longest first (the durations of a whole run, CI=true:
#: docs/performance.md), but test_catalog first of all: it makes the run's one ci drawing
#: of the catalog (`ci_draws`, about a minute), which test_docs and others wait for, so
#: the other worker begins with a file that needs none (test_act). Under `--dist loadfile`
#: a worker takes the next file whenever it is nearly done with one; begun first, the long
#: files cannot start near the end while the other worker has nothing left to take. Every
#: other file follows in its usual order.
SLOWEST_FIRST = (
    "tests/catalog/test_catalog.py",
    "tests/github/test_act.py",
    "tests/github/test_adopter.py",
    "tests/integration/test_docs.py",
    "tests/integration/test_fastpath.py",
    "tests/integration/test_opsets.py",
    "tests/integration/test_check_owner.py",
    "tests/integration/test_worker_deaths.py",
    "tests/integration/test_sweep.py",
    "tests/integration/test_terminal_output.py",
    "tests/integration/test_targets_dynamic.py",
    "tests/integration/test_export_cache.py",
    "tests/integration/test_check_models.py",
    "tests/integration/test_check_jobs.py",
    "tests/integration/test_regenerate.py",
    "tests/integration/test_drift_pins.py",
    # last of the long ones, and not for its length: it reads the site test_docs builds
    # (`site`), and taken next to test_docs by the other worker it waited some 35 s for it
    "tests/integration/test_reader_tasks.py",
)


def pytest_configure(config):
    # xdist otherwise orders the files by their number of tests, not their length
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    rank = {path: n for n, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))

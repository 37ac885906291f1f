"""A worker leaves no multiprocessing semaphore behind for the resource tracker.

The pool stops its workers at the end of a sweep; a semaphore a worker registered with
Python's resource tracker is then never released, and the tracker warns of a leak on the
user's terminal. The exporter's fx passes open a tqdm progress bar, whose first instance in
a process makes such a semaphore unless the worker's set-up gave tqdm a thread lock."""

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json, sys, multiprocessing
    # as in a worker: under fork a semaphore is unlinked at once and never tracked
    multiprocessing.set_start_method("forkserver")
    from multiprocessing import resource_tracker
    registered = []
    real = resource_tracker.register
    def register(name, rtype):
        registered.append(rtype)
        return real(name, rtype)
    resource_tracker.register = register
    from opsweep.engine import worker
    from opsweep.engine.runner import build_call
    from opsweep.catalog.load import check_draw
    from opsweep.catalog.draw import PROFILES
    from opsweep.engine.sweepconfig import SweepConfig
    worker.init(SweepConfig(PROFILES["ci"]))
    assert "broken" not in worker._WORKER, worker._WORKER.get("broken")
    import torch
    spec = worker._WORKER["catalog"].specs["abs"]
    call = build_call(spec, check_draw(spec))
    torch.onnx.export(call, tuple(call.inputs), dynamo=True, verbose=False)  # runs the fx passes
    from tqdm import tqdm
    with tqdm(range(2), disable=False, file=sys.stderr) as bar:
        list(bar)
    print(json.dumps(registered))
""")


def test_a_worker_that_exported_has_registered_no_semaphore():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []

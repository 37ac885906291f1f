"""The operators page's reproduce snippets run where opsweep cannot be imported, and each fails
at the stage it is labelled with and nowhere else.

One snippet per stage kind, chosen from the committed artifact's failures (the first spec in
name order with a failure of that kind), written by engine.standalone as `opsweep render`
writes them, then run by a Python whose sys.path holds the interpreter's site-packages but
none of their .pth hooks (so no editable install of opsweep) and no source checkout, and
whose importer refuses opsweep (installed as a wheel there, as under tox)."""

import json
import os
import site
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from opsweep.catalog.load import load_catalog
from opsweep.engine.standalone import Scripts

ROOT = Path(__file__).resolve().parents[2]
ARTIFACT = ROOT / "docs" / "onnx_support_measured.json"
#: the artifact's failure stage -> the step (a script line's closing comment) that must raise
STEP = {"no-translation": "export", "translation-error": "export", "raw-error": "export",
        "checker": "checker", "runtime": "runtime", "numerics": "numerics"}
KINDS = [("", "no-translation", False), ("", "translation-error", False), ("", "checker", False),
         ("", "runtime", False), ("", "numerics", False), ("", "no-translation", True),
         ("", "checker", True), ("", "runtime", True), ("", "numerics", True),
         # the TorchScript exporter's call (dynamo=False), as the migration page writes it
         ("torchscript", "no-translation", False), ("torchscript", "raw-error", False),
         ("torchscript", "checker", False), ("torchscript", "runtime", False),
         ("torchscript", "numerics", False), ("torchscript", "runtime", True)]
#: run each script in turn in one interpreter (one torch import) and print, per script, the
#: line of the script's own top level that raised (0: none did), with the error's last line
BOOT = """import importlib.abc, json, runpy, sys, traceback
sys.path[:] = {paths!r}


class NoOpsweep(importlib.abc.MetaPathFinder):  # where opsweep is installed as a wheel (tox)
    def find_spec(self, name, path=None, target=None):
        if name == 'opsweep' or name.startswith('opsweep.'):
            raise ImportError('opsweep is not installed here', name=name)


sys.meta_path.insert(0, NoOpsweep())
try:
    import opsweep
except ImportError:
    pass
else:
    raise SystemExit('opsweep is importable: ' + opsweep.__file__)
for path in sys.argv[1:]:
    line, error = 0, ''
    try:
        runpy.run_path(path, run_name='__main__')
    except BaseException as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if f.filename == path and f.name == '<module>']
        line = frames[-1].lineno if frames else -1
        error = traceback.format_exception_only(exc)[-1].strip()[:300]
    print('RESULT ' + json.dumps([path, line, error]), flush=True)
"""


def _paths() -> list[str]:
    keep = [sysconfig.get_path(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    keep += site.getsitepackages()
    dynload = [p for p in sys.path if p.endswith("lib-dynload")]
    return list(dict.fromkeys(p for p in keep + dynload if p and "opsweep" not in p))


def _sample() -> list[tuple[str, str, bool, str, str]]:
    artifact = json.loads(ARTIFACT.read_text("utf-8"))
    out = []
    for target, stage, dynamic in KINDS:
        specs = artifact["targets"][target]["specs"] if target else artifact["specs"]
        key = "dynamic_failures" if dynamic else "failures"
        found = next(((name, f["example"]) for name in sorted(specs) for f in specs[name][key]
                      if f["stage"] == stage), None)
        assert found is not None, f"the artifact has no {target or 'stock'} {stage} failure " \
                                  f"(dynamic={dynamic})"
        out.append((target, stage, dynamic, *found))
    return out


def _failed_at(script: str, line: int) -> str:
    if line <= 0:
        return "nowhere" if line == 0 else "outside the script's top level"
    text = script.splitlines()[line - 1]
    return text.rsplit("# ", 1)[-1].strip() if "# " in text else f"an unlabelled line: {text}"


def test_snippets_fail_at_their_stage_without_opsweep(tmp_path):
    scripts = Scripts(load_catalog(check_draws=False), "ci")
    boot = tmp_path / "boot.py"
    boot.write_text(BOOT.format(paths=_paths()), "utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONNOUSERSITE": "1"}
    jobs = []
    for i, (target, stage, dynamic, spec, example) in enumerate(_sample()):
        script = scripts.for_example(spec, example, dynamic, target, f"{spec}: {stage}")
        assert script is not None, f"{spec} {example}: no inline script"
        assert "opsweep" not in script, f"{spec}: the script names opsweep"
        path = tmp_path / f"repro_{i}.py"
        path.write_text(script, "utf-8")
        jobs.append((f"{target + ' ' if target else ''}{stage}", dynamic, spec, example, script, path))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-I", "-S", str(boot), *(str(j[5]) for j in jobs)],
                          check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert "opsweep is importable" not in done.stderr, done.stderr
    found = {Path(p).name: (line, error) for p, line, error in
             (json.loads(x.removeprefix("RESULT ")) for x in done.stdout.splitlines()
              if x.startswith("RESULT "))}
    assert len(found) == len(jobs), done.stderr[-2000:]
    results = [(job, _failed_at(job[4], found[job[5].name][0]), found[job[5].name][1])
               for job in jobs]
    for (stage, dynamic, spec, example, _, _), got, err in results:
        print(f"{stage:18} dynamic={dynamic!s:5} {spec:24} {example:30} failed at {got}")
        assert got == STEP[stage.split()[-1]], f"{spec} {example} ({stage}, dynamic={dynamic}): failed at " \
                                   f"{got}, expected {STEP[stage.split()[-1]]}: {err}"
    print(f"{len(results)} snippets in {time.monotonic() - started:.1f} s")

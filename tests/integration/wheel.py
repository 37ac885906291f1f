"""A wheel built from the checkout, installed in a fresh venv outside it (the packaging
test and the newcomer's check)."""

import subprocess
import sys
import sysconfig
from pathlib import Path

from ..conftest import made_once

ROOT = Path(__file__).resolve().parents[2]


def built_wheel(where: Path) -> Path:
    """The wheel `pip wheel` builds from the checkout, into `where`."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(where), str(ROOT)], check=True, capture_output=True)
    (wheel,) = where.glob("opsweep-*.whl")
    return wheel


def fresh_venv(tmp_path: Path) -> Path:
    """A venv outside the repository holding the wheel built from the checkout, which sees
    the running interpreter's packages (torch is not installed twice) as a plain path:
    their .pth files (an editable opsweep among them) are not run, so only the wheel's
    opsweep is importable."""
    wheel = built_wheel(tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    purelib = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True)
    Path(purelib.stdout.strip(), "parent-env.pth").write_text(
        "\n".join(dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]))
        + "\n")
    # --ignore-installed: where the parent has opsweep installed as a wheel (tox), pip would
    # otherwise see it through parent-env.pth and install nothing
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", "--ignore-installed", str(wheel)], check=True,
                   capture_output=True)
    return venv


def installed_once(tmp_path_factory) -> Path:
    """fresh_venv's directory (the wheel in dist/, the venv in venv/), made once for the
    run: building the wheel and installing it costs some ten seconds, and the tests that
    use it only read both (each runs its commands in a directory of its own)."""
    return made_once(tmp_path_factory, "wheel-venv", fresh_venv)

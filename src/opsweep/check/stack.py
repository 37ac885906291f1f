"""Which measurement a check is set against and which stack runs it: the table's file and
why that one, the pins that measured it (and the opsweep, when a history record of the
same pin set beside it names one: the artifact itself does not), the opset its real export
runs at and why, the tolerance policy, and the installed versions of the same packages.
When the installed torch is not the table's, the report says so first and loudly: the
table's predictions are then another torch's, while the real export is this one's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import opsweep
from opsweep.artifact.data import Artifact
from opsweep.artifact.records import pin_path, public_version
from opsweep.errors import OpsweepError

#: The packages whose versions a table's fingerprint names and the check compares with the
#: installed ones (hypothesis only draws: not compared).
STACK = ("torch", "onnx", "onnxruntime", "onnxscript")


def installed() -> dict[str, str]:
    """The installed version of each package of the stack, and opsweep's ("" when absent)."""
    out = {}
    for name in STACK:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = ""
    out["opsweep"] = opsweep.__version__
    return out


@dataclass(frozen=True)
class Table:
    """The measured table a check is set against, and the stack that runs the check."""

    path: str
    why: str  # why this file: "--artifact", "[tool.opsweep] artifact in pyproject.toml", ...
    fingerprint: Mapping[str, object]
    opsweep: str  # the opsweep that measured it ("": not recorded)
    policy: str  # the tolerance policy the table was graded against ("": not recorded)
    check_policy: str  # the tolerance policy the real export is compared at
    installed: Mapping[str, str] = field(default_factory=installed)
    #: the opsweep that wrote a packaged cell table ("": the table is an artifact file)
    written_by: str = ""
    #: the other table --against sets the models against, in a line ("": none)
    against: str = ""

    @property
    def opset(self) -> int:
        return int(str(self.fingerprint.get("opset", 0)))

    @property
    def moved(self) -> tuple[tuple[str, str, str], ...]:
        """(package, measured, installed) of each package of the stack whose installed
        version is not the one that measured the table."""
        return tuple((n, str(self.fingerprint.get(n, "")), self.installed.get(n, ""))
                     for n in STACK
                     if public_version(str(self.fingerprint.get(n, "")))
                     != public_version(self.installed.get(n, "")))

    def measured_line(self) -> str:
        built = f"; opsweep {self.opsweep}" if self.opsweep else \
            "; the opsweep that measured it is not recorded"
        written = f"; the table packaged by opsweep {self.written_by}" if self.written_by else ""
        return (", ".join(f"{n} {self.fingerprint.get(n, '?')}" for n in STACK)
                + f" at opset {self.opset}{built}{written}")

    def installed_line(self) -> str:
        return ", ".join(f"{n} {self.installed.get(n) or 'not installed'}"
                         for n in (*STACK, "opsweep"))

    def warning(self) -> str:
        """The loud line when the installed torch (or another package of the stack) is not
        the one that measured the table ("" when they are the same)."""
        if not self.moved:
            return ""
        torch = [m for m in self.moved if m[0] == "torch"]
        if torch:
            _, was, now = torch[0]
            head = (f"the table was measured with torch {was}, but torch {now or 'none'} is "
                    f"installed: its predictions are torch {was}'s, the real export below "
                    f"is torch {now}'s")
        else:
            head = "the table was measured with another exporter stack than the installed one"
        others = [f"{n} {was} → {now or 'none'}" for n, was, now in self.moved if n != "torch"]
        return head + (f" (also {', '.join(others)})" if others else "")

    def opset_line(self) -> str:
        return (f"exported with torch.onnx.export(..., dynamo=True, opset_version={self.opset}):"
                f" the opset the table was measured at, so that the export and the table's "
                "predictions compare")

    def policy_line(self) -> str:
        table = (f"; the table was graded against {self.policy}" if self.policy
                 and self.policy != self.check_policy else "" if self.policy else
                 "; the table does not name the policy it was graded against")
        return (f"outputs compared at the tolerance policy {self.check_policy} (an element "
                f"agrees when |onnxruntime - PyTorch| <= atol + rtol * |PyTorch|){table}")

    def lines(self) -> list[tuple[str, str]]:
        """(label, text) rows of the report's head."""
        rows = [("measured table", f"{self.path} ({self.why})"), ("measured", self.measured_line()),
                ("installed", self.installed_line()), ("opset", self.opset_line()),
                ("tolerance", self.policy_line())]
        return rows + ([("against", self.against)] if self.against else [])

    def to_data(self) -> dict:
        return {"path": self.path, "why": self.why, "fingerprint": dict(self.fingerprint),
                "opsweep": self.opsweep, "policy": self.policy,
                "check_policy": self.check_policy, "installed": dict(self.installed),
                "written_by": self.written_by, "against": self.against,
                "moved": [list(m) for m in self.moved]}


def measured_by(artifact: Artifact, directories: Iterable[Path]) -> str:
    """The opsweep version a history record of the artifact's pin set names, from the
    first of `directories` that holds one ("" when none does or it does not say)."""
    fingerprint = {k: str(v) for k, v in vars(artifact.fingerprint).items()}
    # a record is named after its pin set (every pin's version): the same measurement
    for directory in directories:
        try:
            path = pin_path(Path(directory), fingerprint)
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError, OpsweepError):
            continue
        if isinstance(data, dict) and isinstance(data.get("opsweep"), str):
            return data["opsweep"]
    return ""

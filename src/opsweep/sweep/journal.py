"""A sweep's own files beside the artifact, never committed (.gitignore):

* the checkpoint: every finished spec is appended to a journal, so an interrupted
  sweep (Ctrl-C, kill -9, a lost runner) resumes where it stopped. The artifact
  itself is only ever written whole, at the end. The journal's first line is a
  header naming the run (schema version, fingerprint, profile, regen_index, shard,
  previous artifact); a journal from another run is set aside, not mixed in. A
  torn last line (a kill in mid-write) is ignored.
* the run log (``<artifact>.run.jsonl``): the finished run's bookkeeping, which the
  committed artifact does not carry: when it ran, and why each spec was reused or
  re-measured. A header line, then one line per target and spec.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from opsweep.artifact.account import read_run, run_path  # noqa: F401  (the journal's file names)
from opsweep.artifact.data import spec_from_data, spec_to_data, validate_data
from opsweep.artifact.results import SpecResult
from opsweep.errors import ArtifactError
from opsweep.files import write_atomic
from opsweep.sweep.targets import Key

if TYPE_CHECKING:
    from opsweep.sweep.reuse import Decision


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".checkpoint.jsonl")


class Journal:
    def __init__(self, path: Path, header: Mapping[str, Any]) -> None:
        self.path = path
        self.header = dict(header)
        self.done: dict[str, SpecResult] = {}
        self.discarded = False
        self._handle: TextIO | None = None

    def open(self) -> Journal:
        """Load what an earlier run of the same sweep finished; start appending."""
        if self.path.exists():
            lines = self.path.read_bytes().split(b"\n")
            if not self._matches(lines[0]):
                self.discarded = True
                self.path.unlink()
            else:
                self._load(lines[1:])
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.header, sort_keys=True) + "\n")
        self._handle = open(self.path, "a", encoding="utf-8")
        return self

    def _matches(self, first: bytes) -> bool:
        try:
            return json.loads(first) == json.loads(json.dumps(self.header))
        except ValueError:
            return False

    def _load(self, lines: list[bytes]) -> None:
        for number, raw in enumerate(lines, start=2):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                if number == len(lines) + 1:  # torn final line of a killed run
                    break
                raise ArtifactError(self.path, f"line {number}", "not valid JSON; delete the "
                                    "checkpoint to start the sweep afresh") from None
            if not isinstance(entry, dict) or set(entry) != {"spec", "result"}:
                raise ArtifactError(self.path, f"line {number}", "not a checkpoint entry")
            validate_data(entry["result"], f"{self.path} line {number}", "spec_result")
            self.done[entry["spec"]] = spec_from_data(entry["result"])
        self._rewrite()

    def _rewrite(self) -> None:
        """Drop a torn tail so appends start on a clean line."""
        body = [json.dumps(self.header, sort_keys=True)]
        body += [json.dumps({"spec": n, "result": spec_to_data(r)}, sort_keys=True)
                 for n, r in self.done.items()]
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("\n".join(body) + "\n")
        os.replace(tmp, self.path)

    def record(self, name: str, result: SpecResult) -> None:
        self.done[name] = result
        line = json.dumps({"spec": name, "result": spec_to_data(result)}, sort_keys=True)
        assert self._handle is not None, "record() after open()"
        self._handle.write(line + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self, *, finished: bool) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if finished:
            self.path.unlink(missing_ok=True)


def write_run(path: Path, header: Mapping[str, Any],
              decisions: Mapping[str, Mapping[str, Decision]],
              resumed: Collection[Key] = ()) -> None:
    """`decisions`: target -> spec -> a decision (`reuse`, `reason`); `resumed`: the
    results taken from an interrupted run's checkpoint."""
    lines = [json.dumps(dict(header), sort_keys=True)]
    lines += [json.dumps({"target": t, "spec": n, "reused": d.reuse, "reason": d.reason,
                          "why": d.why, "resumed": Key(t, n) in resumed}, sort_keys=True)
              for t in sorted(decisions) for n, d in sorted(decisions[t].items())]
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))

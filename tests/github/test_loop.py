"""The loop's workflow-level promises, checked on the real workflow files: GitHub's
concurrency rule (ONE pending run per group: a newer run entering a group cancels the
pending one whatever `cancel-in-progress` says, and with `cancel-in-progress: true` the
running one too) replayed over the groups the workflows really declare, and the required
check's source workflow without a paths filter."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"


def load(name):
    data = yaml.safe_load((WORKFLOWS / f"{name}.yml").read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def evaluate(text: str, context: dict) -> str:
    """`${{ a || b }}` over dotted context paths and quoted literals (what the groups use)."""
    def one(m):
        for operand in (o.strip() for o in m.group(1).split("||")):
            value = operand.strip("'") if operand.startswith("'") else context.get(operand)
            if value:
                return str(value)
        return ""
    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", one, text)


class Groups:
    """GitHub's concurrency: per group one running and at most one pending run."""

    def __init__(self):
        self.running, self.pending, self.cancelled = {}, {}, []

    def enter(self, run: str, block: dict | None, context: dict) -> None:
        if not block:
            return  # no group: the run just runs
        group = evaluate(block["group"], context)
        if group in self.pending:
            self.cancelled.append(self.pending.pop(group))
        if group not in self.running:
            self.running[group] = run
        elif block.get("cancel-in-progress") is True:
            self.cancelled.append(self.running[group])
            self.running[group] = run
        else:
            self.pending[group] = run


def _measure(groups, run, number):
    context = {"github.event.pull_request.number": number, "github.ref": f"refs/pull/{number}/merge"}
    groups.enter(run, load("onnx-measure").get("concurrency"), context)


def _command(groups, run, number):
    workflow = load("onnx-command")
    context = {"needs.command.outputs.pr": number, "github.ref": "refs/heads/main"}
    groups.enter(run, workflow.get("concurrency"), context)
    for job in workflow["jobs"].values():
        groups.enter(run, job.get("concurrency"), context)


def test_a_push_never_cancels_an_accepted_command():
    """PR 12: a push is being measured, a maintainer's /regen-onnx is accepted, two more
    pushes follow, and a second command: every accepted command still runs to its end."""
    groups = Groups()
    _measure(groups, "push-1", 12)
    _command(groups, "command-1", 12)
    _measure(groups, "push-2", 12)
    _command(groups, "command-2", 12)
    _measure(groups, "push-3", 12)
    assert [run for run in groups.cancelled if run.startswith("command")] == []
    assert "push-1" in groups.cancelled  # a superseded push measurement is cancelled (and reported)


def test_no_workflow_comment_claims_that_runs_queue():
    for path in WORKFLOWS.glob("*.yml"):
        assert not re.search(r"queue behind", path.read_text()), path.name


def test_the_required_check_s_source_runs_on_every_pull_request_and_main():
    on = load("onnx-measure")["on"]
    assert not (on["pull_request"] or {}).get("paths")  # a path filter leaves it pending
    assert on["push"]["branches"] == ["main"]  # main re-measured after a merge (finding 9)
    publish = load("onnx-publish")
    assert "cancelled" in publish["jobs"]["failed"]["if"]
    for job in publish["jobs"].values():
        assert job["permissions"].get("statuses") == "write"

"""`opsweep bot release-plan`, `bot dist` and `bot release`: the steps of the release
workflow (opsweep.bot.release). Each takes the token from $GITHUB_TOKEN and the API from
$GITHUB_API_URL, and writes its results as `key=value` lines (and to $GITHUB_OUTPUT)."""

from __future__ import annotations

from pathlib import Path

from opsweep.bot import release as rel
from opsweep.cli import botio
from opsweep.cli.invocation import Invocation


def cmd_release_plan(invocation: Invocation) -> int:
    """Is the checkout's version to be released from `--sha`? (read-only)"""
    args = invocation.options
    version = rel.read_version(args.repo_dir)
    plan = rel.plan(botio.client_of(invocation).get_repo(args.repo), version)
    needed = plan.needed(args.sha)
    if needed:
        rel.notes(args.repo_dir, version)  # refused before anything is built
    print(f"opsweep: {plan.tag} " + ("not tagged yet" if plan.tagged is None else
                                     f"tagged at {plan.tagged[:12]}"))
    botio.outputs(invocation, version=version, tag=plan.tag, release=needed)
    return 0


def cmd_dist(invocation: Invocation) -> int:
    args = invocation.options
    files = rel.build(args.repo_dir, args.out, args.sha)
    for path in files:
        print(f"opsweep: built {path.name}")
    botio.outputs(invocation, files=" ".join(p.name for p in files))
    return 0


def cmd_release(invocation: Invocation) -> int:
    args = invocation.options
    version = rel.read_version(args.repo_dir)
    files = rel.distributions(args.dist, rel.project_name(args.repo_dir), version)
    text = rel.notes(args.repo_dir, version)
    made = rel.publish_release(botio.client_of(invocation).get_repo(args.repo), version, args.sha,
                               files, text)
    for line in made:
        print(f"opsweep: {line}")
    # the package index gets the files when this run made any part of the release: a
    # release left incomplete means the run that began it failed before its upload job
    # (which needs a finished release); a complete one had its upload (a failed upload is
    # re-run as a failed job, docs/github_action.md)
    botio.outputs(invocation, version=version, publish=bool(made))
    return 0


def add_parser(steps) -> None:
    where = {"type": Path, "default": Path("."), "help": "the checkout of the pushed commit"}
    p = steps.add_parser("release-plan", help="release: is the checkout's version untagged?")
    p.add_argument("--repo", default="", help="owner/name (default: $GITHUB_REPOSITORY)")
    p.add_argument("--repo-dir", **where)
    p.add_argument("--sha", required=True, help="the pushed commit")
    p.set_defaults(run=cmd_release_plan)

    p = steps.add_parser("dist", help="release: build the checkout's sdist and wheel, "
                         "recording the release's commit in them (opsweep._release)")
    p.add_argument("--repo-dir", **where)
    p.add_argument("--sha", required=True, help="the pushed commit (the release's)")
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(run=cmd_dist)

    p = steps.add_parser("release", help="release: tag vX.Y.Z, move vX, make the GitHub "
                         "Release with the sdist and the wheel")
    p.add_argument("--repo", default="", help="owner/name (default: $GITHUB_REPOSITORY)")
    p.add_argument("--repo-dir", **where)
    p.add_argument("--sha", required=True, help="the pushed commit")
    p.add_argument("--dist", type=Path, required=True, help="the built sdist and wheel")
    p.set_defaults(run=cmd_release)

"""`opsweep bot bump` (the onnx-bump workflow, scheduled): open or update ONE pull request
moving every watched pin that is behind, in the file ``[tool.opsweep] pins`` names
(opsweep.bot.bump, opsweep.bot.rewrite)."""

from __future__ import annotations

from pathlib import Path

from opsweep.bot import bump
from opsweep.bot.pins import WATCHED, read_pins
from opsweep.bot.publish import allowed
from opsweep.bot.rewrite import check_exact
from opsweep.cli import botio, settings
from opsweep.cli.invocation import Invocation
from opsweep.config import load as load_config
from opsweep.files import DEFAULT


def cmd_bump(invocation: Invocation) -> int:
    """Scheduled: open or update ONE pull request moving every watched pin that is behind,
    in the file [tool.opsweep] pins names (refused: a watched pin that is not exact). The
    bump branch is kept only while the set of moves is unchanged and every commit on it is
    the bot's own (bump.kept_branch); else it is rebuilt from the base."""
    args = invocation.options
    # where the pins live ([tool.opsweep] pins): the bump rewrites that file in place
    source = load_config(Path(args.repo_dir, args.pyproject)).pins
    token, gh, path = invocation.settings.push_token, botio.client_of(invocation), source.file
    base = args.base or bump.default_branch(gh, args.repo)
    base_sha, text = bump.base_text(args.repo_dir, base, path, token)
    check_exact(text, source, path)
    watched = {n: v for n, v in read_pins(text, path, source).items() if n in WATCHED}
    moves = bump.behind(watched, bump.index_url(args.index or invocation.settings.index_url))
    for move in moves:
        print(f"opsweep: {move}")
    if not moves:
        botio.outputs(invocation, changed=False, moved="", base=base)
        return 0
    new = bump.apply(text, moves, path, source)
    title, _ = bump.describe(moves, source.where)
    pull = bump.open_pull(gh, args.repo)  # on its open pull request, publish's commits count
    layout = settings.layout(args.repo_dir)
    sha, why = bump.kept_branch(args.repo_dir, base_sha, read_pins(new, path, source), path,
                                token, source=source, regenerated=(
                                    (lambda p: allowed(layout, p)) if pull else None))
    pushed = not sha
    if pushed:
        if why:
            print(f"opsweep: {bump.BRANCH} is rebuilt from {base}: {why}")
        sha = bump.push_branch(args.repo_dir, base_sha, new, path, title, token)
    else:
        print(f"opsweep: {bump.BRANCH} already moves these pins in the bot's own commits: "
              "left as it is")
    pull = bump.open_or_update(gh, args.repo, base, moves, source.where, pull)
    botio.outputs(invocation, changed=True, pushed=pushed, sha=sha, pr=pull.number,
                  created=pull.created,
                 base=base, moved=",".join(f"{m.name}:{m.old}:{m.new}" for m in moves))
    return 0


def add_parser(steps) -> None:
    p = steps.add_parser("bump", help="open or update the one pull request bumping the pins "
                         "(push token: $OPSWEEP_PUSH_TOKEN)")
    p.add_argument("--repo", default="", help="owner/name (default: $GITHUB_REPOSITORY)")
    p.add_argument("--repo-dir", type=Path, default=Path("."))
    p.add_argument("--pyproject", default=DEFAULT.pyproject)
    p.add_argument("--base", default="", help="the branch the bump starts from and targets "
                   "(default, or empty: the repository's default branch, asked of the API)")
    p.add_argument("--index", default="", metavar="URL",
                   help="the package index (default: $OPSWEEP_INDEX_URL, else pip's index)")
    p.set_defaults(run=cmd_bump)

"""A command's parsed options are read-only (issue 49): `opsweep.cli.main` parses the
command line once into sealed `Options` and hands every command one `Invocation` (the
options, the environment read once, `main`); a value a command derives from its options (a
default from the project, the environment or an earlier init's workflows) is its own, never
written back. Failed before: the steps assigned into the argparse namespace (sweep's and
render's --out, render's --data-dir, bot's --repo and --bot-login, init's --action and
--branch, and what init --upgrade carries). The commands that did still get those defaults:
init here, sweep and render in tests/integration/test_command_defaults.py, the bot's in
tests/github/test_bot.py."""

from pathlib import Path

import pytest
import yaml

from opsweep.cli.init import DEFAULT_ACTION
from opsweep.cli.invocation import Invocation, Options, ReadOnlyOptions
from opsweep.cli.main import main, parse
from opsweep.cli.settings import Settings
from opsweep.files import DEFAULT

MEASURE = ".github/workflows/onnx-measure.yml"


def test_parsed_options_refuse_assignment_and_deletion():
    options = parse(["merge", "a.json"], Settings())
    assert isinstance(options, Options) and options.out == Path(DEFAULT.artifact)
    with pytest.raises(ReadOnlyOptions, match="read-only: cannot set 'out'"):
        options.out = Path("elsewhere.json")
    with pytest.raises(ReadOnlyOptions, match="read-only: cannot set 'settings'"):
        options.settings = Settings()  # what main used to smuggle in the namespace
    with pytest.raises(ReadOnlyOptions, match="cannot delete 'out'"):
        del options.out
    assert options.out == Path(DEFAULT.artifact) and vars(options) == {
        "command": "merge", "parts": [Path("a.json")], "out": Path(DEFAULT.artifact)}


def test_replace_makes_new_sealed_options_of_known_names_only():
    options = parse(["merge", "a.json"], Settings())
    moved = options.replace(out=Path("b.json"))
    assert moved.out == Path("b.json") and options.out == Path(DEFAULT.artifact)
    with pytest.raises(ReadOnlyOptions):
        moved.out = Path("c.json")
    with pytest.raises(TypeError, match="no such option to replace: outt"):
        options.replace(outt=Path("b.json"))


def test_the_invocation_is_frozen_and_typed():
    options = parse(["merge", "a.json"], Settings(repository="octo/demo"))
    invocation = Invocation(options, Settings(repository="octo/demo"), main)
    with pytest.raises(AttributeError):
        invocation.settings = Settings()  # type: ignore[misc]
    assert invocation.settings.repository == "octo/demo" and invocation.main is main


def test_the_environment_fills_a_bot_step_s_left_out_repo_and_login_when_parsed():
    environment = Settings(repository="octo/demo", bot_login="opsweep-app[bot]")
    check = ["bot", "check", "--outcome", "done"]  # --repo defaults to '' ($GITHUB_REPOSITORY)
    assert parse(check, environment).repo == "octo/demo"
    assert parse([*check, "--repo", "octo/other"], environment).repo == "octo/other"
    assert parse(check, Settings()).repo == ""  # outside Actions: nothing to fill in
    comment = ["bot", "comment", "--repo", "octo/other", "--pr", "7", "--body", "b.md"]
    assert parse(comment, environment).bot_login == "opsweep-app[bot]"
    assert parse([*comment, "--bot-login", "me"], environment).bot_login == "me"
    # a step without the option is given none, and a command's own --repo is left alone
    assert "bot_login" not in parse(["bot", "validate", "a.json"], environment)
    assert parse(["pin-changed", "--base", "main"], environment).repo == Path(".")


def _repository(root: Path) -> Path:
    (root / "requirements.txt").write_text("torch==2.12.0\n")
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "1.0"\n')
    return root


def test_init_takes_its_action_and_branch_defaults_and_upgrade_what_the_workflows_carry(
        tmp_path, capsys):
    root = _repository(tmp_path)
    assert main(["init", "--repo-dir", str(root), "--action-sha", "f" * 40]) == 0
    measure = yaml.safe_load((root / MEASURE).read_text())
    ref = DEFAULT_ACTION.split("@")[1]
    assert measure["jobs"]["sweep"]["uses"] == f"opsweep/opsweep/.github/workflows/onnx-sweep.yml@{ref}"
    assert measure[True]["push"]["branches"] == ["main"]
    assert "merge these files into main first" in capsys.readouterr().out
    # --upgrade: the branch, shards and action the workflows carry, the checklist too
    text = (root / MEASURE).read_text().replace("branches: [main]", "branches: [trunk]")
    (root / MEASURE).write_text(text.replace("shards: 2", "shards: 4"))
    assert main(["init", "--repo-dir", str(root), "--action-sha", "f" * 40, "--upgrade"]) == 0
    measure = yaml.safe_load((root / MEASURE).read_text())
    assert measure[True]["push"]["branches"] == ["trunk"]
    assert measure["jobs"]["sweep"]["with"]["shards"] == 4
    assert measure["jobs"]["sweep"]["uses"].endswith(f"@{ref}")
    assert "merge these files into trunk first" in capsys.readouterr().out


def test_the_bot_s_pacing_is_a_runner_setting_named_when_unreadable(capsys, monkeypatch):
    """OPSWEEP_GITHUB_PACING=off builds the bot's client without PyGithub's waits; unset
    keeps them; a value that is neither on nor off stops every command in one line."""
    from opsweep.cli.botio import client_of
    from opsweep.cli.main import EXIT_USAGE

    def pace(environ):
        settings = Settings.read({"GITHUB_TOKEN": "t", **environ})
        kwargs = client_of(Invocation(parse(["diff", "a", "b"], settings), settings,
                                      main)).requester.kwargs
        return kwargs["seconds_between_requests"], kwargs["seconds_between_writes"]

    assert pace({}) == pace({"OPSWEEP_GITHUB_PACING": "on"}) == (0.25, 1.0)
    assert pace({"OPSWEEP_GITHUB_PACING": "off"}) == (None, None)
    monkeypatch.setenv("OPSWEEP_GITHUB_PACING", "slow")
    assert main(["diff", "a.json", "b.json"]) == EXIT_USAGE
    assert "OPSWEEP_GITHUB_PACING='slow': expected on or off" in capsys.readouterr().err

import pytest

from .fake_github import FakeGitHub


@pytest.fixture
def github(httpserver):
    return FakeGitHub(httpserver)


@pytest.fixture
def client_for(github):
    """The bot's own client (opsweep.bot.github.client), unpaced as against any server of
    one's own, authenticated with one of the fake's tokens."""
    from opsweep.bot.github import client

    def make(token="t0ken"):
        return client(token, github.base, paced=False)
    return make


@pytest.fixture
def gh(client_for):
    return client_for("t0ken")


@pytest.fixture
def no_politeness_delays(monkeypatch):
    """The bot's steps run in the test's process with the runner setting for an API server
    of one's own (OPSWEEP_GITHUB_PACING=off, read by every command): PyGithub's waits (a
    quarter of a second before each request, a second before each write) only wait against
    the local fake, some two seconds a publish. What the bot asks and writes is the same."""
    monkeypatch.setenv("OPSWEEP_GITHUB_PACING", "off")

import pytest

from .fake_github import FakeGitHub


@pytest.fixture
def github(httpserver):
    return FakeGitHub(httpserver)


@pytest.fixture
def client_for(github):
    """PyGithub with the bot's own client settings, minus PyGithub's politeness delays,
    authenticated with one of the fake's tokens."""
    from github import Github, GithubRetry
    from github.Auth import Token

    def make(token="t0ken"):
        return Github(base_url=github.base, auth=Token(token), per_page=100,
                      retry=GithubRetry(total=5, backoff_factor=0.1),
                      seconds_between_requests=None, seconds_between_writes=None)
    return make


@pytest.fixture
def gh(client_for):
    return client_for("t0ken")


@pytest.fixture
def no_politeness_delays(monkeypatch):
    """The bot's own client (opsweep.bot.github.client: its retries, its page size) without
    PyGithub's politeness delays (a quarter of a second before each request, a second
    before each write), as `client_for` has: against the local fake they only wait, some
    two seconds a publish. What the bot asks and writes is the same; the delays are
    PyGithub's, not the bot's, and no test here is about them."""
    import functools

    from github import Github
    monkeypatch.setattr("opsweep.bot.github.Github", functools.partial(
        Github, seconds_between_requests=None, seconds_between_writes=None))

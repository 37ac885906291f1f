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

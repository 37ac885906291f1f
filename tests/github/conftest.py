import pytest

from .fake_github import FakeGitHub


@pytest.fixture
def github(httpserver):
    return FakeGitHub(httpserver)


@pytest.fixture
def gh(github):
    from github import Github, GithubRetry
    from github.Auth import Token
    # the bot's own client settings, minus PyGithub's politeness delays
    return Github(base_url=github.base, auth=Token("t0ken"), per_page=100,
                  retry=GithubRetry(total=5, backoff_factor=0.1),
                  seconds_between_requests=None, seconds_between_writes=None)

"""What the command line reads from outside its arguments, read once: the environment
(``GITHUB_*`` as Actions sets it, ``OPSWEEP_*``, ``TOX_ENV_NAME``) and the project's
``[tool.opsweep]`` settings in pyproject.toml. The library below the CLI reads neither:
it is handed these values."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from opsweep import config
from opsweep.config import Config
from opsweep.engine.cache import CACHE_ENV, DEFAULT_DIR
from opsweep.errors import UsageError
from opsweep.files import Layout
from opsweep.policy import read as read_policy

DEFAULT_API = "https://api.github.com"
DEFAULT_SERVER = "https://github.com"
#: The hypothesis profile's variable (``--profile`` wins over it).
PROFILE_ENV = "OPSWEEP_HYP_PROFILE"
#: The tox env (pyproject.toml) whose commands are the sweep, then the pages.
TOX_SWEEP_ENV = "proptest_onnx"
#: The bot's pacing of its API requests (Settings.paced).
PACING_ENV = "OPSWEEP_GITHUB_PACING"


def _paced(value: str) -> bool:
    """$OPSWEEP_GITHUB_PACING: unset or ``on`` keeps PyGithub's pacing, ``off`` drops it;
    anything else is refused, naming the variable (a typo must not quietly pace or not)."""
    word = value.strip().lower()
    if word not in ("", "on", "off"):
        raise UsageError(f"{PACING_ENV}={value!r}: expected on or off")
    return word != "off"


@dataclass(frozen=True)
class Settings:
    """The environment a command runs in. Outside Actions every GitHub value is absent."""

    token: str = ""  # GITHUB_TOKEN
    api_url: str = DEFAULT_API  # GITHUB_API_URL
    server_url: str = DEFAULT_SERVER  # GITHUB_SERVER_URL, without a trailing slash
    repository: str = ""  # GITHUB_REPOSITORY, owner/name
    output: str | None = None  # GITHUB_OUTPUT: the step's outputs file
    summary: str | None = None  # GITHUB_STEP_SUMMARY: the job summary file
    #: OPSWEEP_PUSH_TOKEN: the token the push alone uses (a GitHub App's, so that the new
    #: head's checks run)
    push_token: str | None = None
    bot_login: str = ""  # OPSWEEP_BOT_LOGIN: who the bot is, when the token cannot ask
    profile: str | None = None  # OPSWEEP_HYP_PROFILE
    index_url: str = ""  # OPSWEEP_INDEX_URL, else PIP_INDEX_URL: where bumps look for releases
    tox_env: str = ""  # TOX_ENV_NAME: set when tox runs the command
    cache: str = ""  # OPSWEEP_CACHE: the export cache's directory, ``off`` for none
    #: OPSWEEP_GITHUB_PACING=off: the bot's requests without PyGithub's waits between them,
    #: for an API server of the runner's own (the test suite's fake GitHub under act)
    paced: bool = True

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            token=env.get("GITHUB_TOKEN", ""), api_url=env.get("GITHUB_API_URL", DEFAULT_API),
            server_url=env.get("GITHUB_SERVER_URL", DEFAULT_SERVER).rstrip("/"),
            repository=env.get("GITHUB_REPOSITORY", ""),
            output=env.get("GITHUB_OUTPUT") or None, summary=env.get("GITHUB_STEP_SUMMARY") or None,
            push_token=env.get("OPSWEEP_PUSH_TOKEN") or None,
            bot_login=env.get("OPSWEEP_BOT_LOGIN", ""), profile=env.get(PROFILE_ENV) or None,
            index_url=env.get("OPSWEEP_INDEX_URL") or env.get("PIP_INDEX_URL", ""),
            tox_env=env.get("TOX_ENV_NAME", ""), cache=env.get(CACHE_ENV, "").strip(),
            paced=_paced(env.get(PACING_ENV, "")))

    def cache_dir(self, explicit: Path | None = None, off: bool = False) -> Path | None:
        """The export cache's directory: `explicit` (``--cache``), else $OPSWEEP_CACHE
        (``off``: none), else the default; None when `off` (``--no-cache``)."""
        if off:
            return None
        if explicit is not None:
            return explicit.resolve()
        if self.cache.lower() == "off":
            return None
        return Path(self.cache or DEFAULT_DIR).resolve()

    @property
    def in_tox_sweep(self) -> bool:
        """Run by the main command's tox env, whose next command renders the pages."""
        return self.tox_env == TOX_SWEEP_ENV


PYPROJECT_SETTING = "[tool.opsweep] source-url"


REPO_SETTING = "[tool.opsweep] repo-url"
MODELS_SETTING = "[tool.opsweep] models"


def project(root: str | os.PathLike = ".") -> Config:
    """The project's validated ``[tool.opsweep]`` (opsweep.config), from `root`'s
    pyproject.toml: the one place every command takes its defaults from."""
    return config.load(Path(root, "pyproject.toml"))


def builtin_scope(root: str | os.PathLike = ".",
                  configured: Config | None = None) -> bool | tuple[str, ...]:
    """What of the built-in catalog the project measures, as `load_catalog(builtin=...)`
    and the sweep's workers (`SweepConfig.builtin`) take it: all (True), none (False), or
    ``catalog = "used"``'s operators, sorted (the capture of its models: torch, only then
    imported)."""
    configured = configured or project(root)
    if configured.catalog != "used":
        return configured.builtin
    from opsweep.capture.scope import used_operators  # imports torch: only for "used"
    return tuple(sorted(used_operators(configured.models)))


def layout(root: str | os.PathLike = ".") -> Layout:
    """Where the project keeps its artifact, pages, history, data and pins."""
    return Layout.of(project(root))


def source_url(explicit: str | None, pyproject: Path) -> str:
    """The base URL spec files link to: `explicit` (--source-url) when given, else the
    pyproject setting, else none ("")."""
    if explicit is not None:
        return check_url(explicit, "--source-url") if explicit else ""
    return config.load(pyproject).source_url


def repo_url(pyproject: Path) -> str:
    """Where the repository lives (the home page links it and installs from it): the
    pyproject's ``[tool.opsweep] repo-url``, configured once, else none ("")."""
    return config.load(pyproject).repo_url


def check_url(value: object, where: str) -> str:
    """`value` as a base URL (no trailing slash), or a UsageError naming `where`."""
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or not isinstance(value, str) or parts.scheme not in ("http", "https") or not parts.netloc \
            or any(c.isspace() for c in value) or parts.query or parts.fragment:
        raise UsageError(f"{where}: {value!r} is not an http(s) URL of the repository's files "
                         "(for example https://github.com/OWNER/REPO/blob/main)")
    return value.rstrip("/")


def models(pyproject: Path) -> tuple[str, ...]:
    """The project's models (``module:callable`` or ``.pt2`` paths) from
    ``[tool.opsweep] models`` in `pyproject`: () when the file or the key is absent; a
    UsageError naming the file and the key when it is not a list of such strings."""
    return config.load(pyproject).models


def check_targets(pyproject: Path) -> tuple[str, ...]:
    """The other targets the project's models are checked with (``[tool.opsweep]
    check-targets``): () when the file or the key is absent."""
    return config.load(pyproject).check_targets


def policy_file(path: str) -> str:
    """The configured tolerance policy's file, absolute, read once here so a bad one stops
    the sweep before any worker starts ("": opsweep's own)."""
    if not path:
        return ""
    resolved = str(Path(path).resolve())
    read_policy(resolved)
    return resolved

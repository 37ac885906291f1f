"""The one template environment of every page and of the pull-request comment, and the
filters that make text safe where it lands: a markdown table cell, a code span, an HTML
code element, a fenced block, an anchor, a front-matter value. jinja2 only: the bot's job renders the comment with it and
installs no torch."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import html
import json
import re
from pathlib import Path

import jinja2

from opsweep.errors import UsageError

MAX_SHOWN = 300  # characters of one artifact string shown in a code span
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def _plain(text: object) -> str:
    text = _CONTROL.sub(" ", str(text))
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def code(text: object) -> str:
    """A markdown code span holding `text` verbatim, whatever backticks it contains."""
    text = _plain(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if not text.strip(" ") or text[0] == "`" or text[-1] == "`" or \
        (text[0] == " " and text[-1] == " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def html_code(text: object) -> str:
    """An HTML <code> element holding `text` escaped (for lines inside HTML blocks)."""
    return f"<code>{html.escape(_plain(text), quote=True)}</code>"


def fence(block: str) -> str:
    """A code fence longer than any backtick run inside `block`."""
    return "`" * max(3, max((len(r) for r in re.findall(r"`+", block)), default=0) + 1)


_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|"})


def cell(text: str) -> str:
    """Text safe inside a markdown table cell: no raw HTML, no markup, one line."""
    text = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.translate(_MARKDOWN_SPECIAL).replace("\n", " ")


def anchor(name: str) -> str:
    return f"op-{name}"


_ID = re.compile(r"[A-Za-z0-9_.:-]+")


def anchor_id(text: object) -> str:
    """`text` as an HTML id / markdown attribute-list anchor: unchanged when it is made of
    letters, digits and `_ . : -` (every name the schemas allow), else those runs only,
    joined by `-` (nothing else reaches the markup)."""
    text = str(text)
    return text if _ID.fullmatch(text) else "-".join(_ID.findall(text)) or "-"


_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 _.+-]*")


def front(text: object) -> str:
    """`text` as a YAML scalar of a page's front matter: plain when it is a plain word or
    words, else a double-quoted string (JSON's escapes, which YAML reads, markup characters
    among them), so no value adds a key, ends the block or carries markup."""
    text = str(text)
    if _PLAIN.fullmatch(text) and not text.endswith(" "):
        return text
    return json.dumps(text).translate({ord(c): f"\\u{ord(c):04x}" for c in "<>&"})


#: the operators' pages: one page per operator in this directory beside the support page
DETAILS_DIR = "operators"


def operator_href(name: str, *, markdown: bool = False) -> str:
    """The one link to an operator's own page: every page and the bot's comment use it.
    `markdown`: the form a markdown link takes (mkdocs resolves it to the page), else the
    URL a raw HTML block uses, relative to a top-level page of the site."""
    return f"{DETAILS_DIR}/{name}.md" if markdown else f"../{DETAILS_DIR}/{name}/"


#: the project's template directory ([tool.opsweep] templates) while `overriding` runs
_OVERRIDES: contextvars.ContextVar[str] = contextvars.ContextVar("opsweep_templates", default="")
SETTING = "[tool.opsweep] templates"


def environment() -> jinja2.Environment:
    """Templates from the project's template directory first (inside `overriding`), then
    the package's ``templates/``; a name the template does not get is an error
    (StrictUndefined), never an empty string."""
    return _environment(_OVERRIDES.get())


def base36(n: int) -> str:
    """A rank as one character (0-9, then a-z): the support page's failing ranks."""
    if not 0 <= n < 36:
        raise ValueError(f"rank {n} has no one-character spelling")
    return "0123456789abcdefghijklmnopqrstuvwxyz"[n]


@functools.cache
def _environment(overrides: str) -> jinja2.Environment:
    loaders = [jinja2.FileSystemLoader(overrides)] if overrides else []
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([*loaders, jinja2.PackageLoader("opsweep", "templates")]),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
        lstrip_blocks=True, autoescape=False,
        cache_size=0 if overrides else 400)  # a project's file added later is seen
    env.filters.update(cell=cell, code=code, html_code=html_code, fence=fence,
                       op_href=operator_href, anchor_id=anchor_id, front=front, base36=base36)
    return env


@contextlib.contextmanager
def overriding(directory: str):
    """Render with `directory`'s templates in front of the built-in ones ('' for none); a
    missing directory or a broken template is one UsageError line naming the setting."""
    if directory and not Path(directory).is_dir():
        raise UsageError(f"{SETTING}: {directory}: not a directory of page templates")
    token = _OVERRIDES.set(str(Path(directory).resolve()) if directory else "")
    try:
        yield
    except jinja2.TemplateSyntaxError as exc:
        raise UsageError(f"{SETTING}: {exc.filename or exc.name}:{exc.lineno}: "
                         f"{exc.message}") from None
    except jinja2.UndefinedError as exc:
        if not directory:
            raise
        raise UsageError(f"{SETTING}: {directory}: a template uses a name the page does not "
                         f"give it ({exc.message})") from None
    finally:
        _OVERRIDES.reset(token)

"""How a grade is shown, one place for every page: styled text badges (HTML), never emoji
(a reader's browser without an emoji font shows those as empty boxes, and a screen reader
says "yellow circle", not "partial").

A badge is ``<b class="g-f">full</b>``: the word itself, coloured by the stylesheet. Where four
axes share a cell (the operators page, the history table, a custom target's column), each
badge shows one letter and keeps the rest of the word visually hidden, so that it still
reads (and copies) as the word: ``<b class="g-p">p<i>artial</i></b>``.
"""

from __future__ import annotations

from opsweep.artifact.grade import AXES, Grades
from opsweep.artifact.records import grades
from opsweep.artifact.results import OperatorResult
from opsweep.model import Grade

#: grade -> (css letter, word)
WORDS = {Grade.FULL: ("f", "full"), Grade.PARTIAL: ("p", "partial"), Grade.NONE: ("n", "none"),
         Grade.BLOCKED: ("b", "blocked"), Grade.SKIPPED: ("s", "skipped"), None: ("x", "n/a")}


def badge(grade: Grade | None) -> str:
    """One grade as a word badge."""
    css, word = WORDS[grade]
    return f'<b class="g-{css}">{word}</b>'


def short_badge(grade: Grade | None) -> str:
    """One grade as a one-letter badge that reads as the word."""
    css, word = WORDS[grade]
    if grade is None:
        return '<b class="g-x">-<i> n/a</i></b>'
    return f'<b class="g-{css}">{word[0]}<i>{word[1:]}</i></b>'


GLYPHS = {g: badge(g) for g in WORDS}
UNMEASURED = '<b class="g-u">-<i> unmeasured</i></b>'
LEGEND = (
    (GLYPHS[Grade.FULL], "full", "every generated example exported"),
    (GLYPHS[Grade.PARTIAL], "partial", ("some examples exported, others raised. The artifact "
                                       "keeps the failing shapes/dtypes")),
    (GLYPHS[Grade.NONE], "none", "no example exported, and the exporter refused at least one"),
    (GLYPHS[Grade.BLOCKED], "blocked", ("torch.export could not capture the module, so the ONNX "
                                       "exporter never ran. Not an ONNX verdict")),
    (UNMEASURED, "unmeasured", ("no spec covers it, so we did not measure it here. Not "
                               "unsupported")),
)


def glyph_cell(grades: Grades | None) -> str:
    """Every axis of one operator in one cell: export runtime numerics dynamic."""
    if grades is None:
        return UNMEASURED
    return "".join(short_badge(getattr(grades, axis)) for axis in AXES)


def glyphs(result: OperatorResult | None) -> str:
    return glyph_cell(result.grades if result else None)


#: a grade letter of the records (and of the filters' data) -> (badge class, word); "" is
#: unmeasured. The operator table's grade cells are these: ``<td class="g g-p">partial</td>``.
CELLS = {"f": ("g-f", "full"), "p": ("g-p", "partial"), "n": ("g-n", "none"),
         "b": ("g-b", "blocked"), "s": ("g-s", "skipped"), "-": ("g-x", "n/a"),
         "": ("g-u", "-<i> unmeasured</i>")}


def glyph_code(code: str | None) -> str:
    """The four badges of an operator's grade letters as the records keep them."""
    return glyph_cell(grades(code or None))

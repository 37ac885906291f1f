"""The glyphs a grade is shown with, one place for every page: a grade's glyph, an
operator's four axes in one cell, and the same from the records' grade letters."""

from __future__ import annotations

from opsweep.artifact.data import OperatorResult
from opsweep.artifact.grade import AXES, Grades
from opsweep.artifact.records import grades
from opsweep.model import Grade

GLYPHS = {Grade.FULL: "✅", Grade.PARTIAL: "🟡", Grade.NONE: "❌", Grade.BLOCKED: "⚠️",
          Grade.SKIPPED: "skipped", None: "n/a"}
UNMEASURED = "-"
LEGEND = (
    ("✅", "full", "every generated example exported"),
    ("🟡", "partial", "some examples exported, others raised. The artifact keeps the failing "
                      "shapes/dtypes"),
    ("❌", "none", "no example exported, and the exporter refused at least one"),
    ("⚠️", "blocked", "torch.export could not capture the module, so the ONNX exporter never "
                      "ran. Not an ONNX verdict"),
    ("-", "unmeasured", "no spec covers it, so we did not measure it here. Not unsupported"),
)


def glyph_cell(grades: Grades | None) -> str:
    """Every axis of one operator in one cell: export runtime numerics dynamic."""
    if grades is None:
        return UNMEASURED
    return " ".join(GLYPHS[getattr(grades, axis)] for axis in AXES)


def glyphs(result: OperatorResult | None) -> str:
    return glyph_cell(result.grades if result else None)


def glyph_code(code: str | None) -> str:
    """The four glyphs of an operator's grade letters as the records keep them."""
    return glyph_cell(grades(code or None))

"""The history page's picture: operators measured ``full`` per recorded torch
release, one line per axis (stock exporter) and a dashed export line per
custom translation target, as a static SVG written into the page at render
time (no script, no library)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from opsweep.artifact.grade import AXES
from opsweep.artifact.records import Record
from opsweep.targets import STOCK, is_stock

COLOURS = {"export": "#1e88e5", "runtime": "#43a047", "numerics": "#fb8c00", "dynamic": "#8e24aa"}
TARGET_COLOURS = ("#e53935", "#00897b", "#6d4c41")
WIDTH, HEIGHT = 780, 300
LEFT, RIGHT, TOP, BOTTOM = 50, 290, 20, 40


@dataclass(frozen=True)
class Series:
    label: str
    colour: str
    dashed: bool
    values: tuple[int | None, ...]  # per record; None: the target was not measured then


def full_count(record: Record, target: str, axis: str) -> int | None:
    ops = record.targets.get(target)
    if ops is None:
        return None
    i = AXES.index(axis)
    return sum(code[i] == "f" for code in ops.values())


def series(records: Sequence[Record]) -> list[Series]:
    out = [Series(f"{axis} (stock)", COLOURS[axis], False,
                  tuple(full_count(r, STOCK, axis) for r in records)) for axis in AXES]
    customs = sorted({t for r in records for t in r.targets if not is_stock(t)})
    for n, target in enumerate(customs):
        out.append(Series(f"export with {target.rsplit('/', 1)[-1]}",
                          TARGET_COLOURS[n % len(TARGET_COLOURS)], True,
                          tuple(full_count(r, target, "export") for r in records)))
    return out


def _scale(low: int, top: int) -> tuple[int, int, int]:
    """(the axis minimum, maximum and tick step): round numbers, at most six ticks. The axis
    starts near the lowest value, not at zero, so that 427 -> 435 does not look flat."""
    span = max(top - low, 1)
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if span / s <= 5)
    bottom = max(0, (low // step - 1) * step)
    top = max(bottom + step, -(-top // step) * step)
    while (top - bottom) // step > 6:
        step *= 2
        bottom = max(0, (low // step - 1) * step)
    return bottom, top, step


def svg(records: Sequence[Record]) -> str:
    lines = series(records)
    values = [v for s in lines for v in s.values if v is not None]
    bottom, top, step = _scale(min(values, default=0), max(values, default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    n = len(records)

    def x(i: int) -> float:
        return LEFT + (plot_w * (i + 0.5) / n)

    def y(v: int) -> float:
        return TOP + plot_h * (1 - (v - bottom) / (top - bottom))

    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="opsweep-chart" role="img" '
              f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
              f'font-family="sans-serif" font-size="12">'),
             '<title>Operators measured full per torch release and axis</title>',
             (f'<text x="{LEFT}" y="{TOP - 6}" font-size="11">operators full (axis from '
             f'{bottom})</text>')]
    for v in range(bottom, top + 1, step):
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'stroke="#ccc"/><text x="{LEFT - 6}" y="{y(v) + 4:.1f}" '
                     f'text-anchor="end">{v}</text>')
    for i, r in enumerate(records):
        low = 14 * (i % 2) if n > 4 else 0  # every other label one line lower: no overlap
        parts.append(f'<text x="{x(i):.1f}" y="{HEIGHT - BOTTOM + 16 + low}" '
                     f'text-anchor="middle">{escape(r.name)}</text>')
    for row, s in enumerate(lines):
        points = [(x(i), y(v), v) for i, v in enumerate(s.values) if v is not None]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{s.colour}" '
                         f'stroke-width="2"{dash}/>')
        for px, py, v in points:
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{s.colour}">'
                         f'<title>{escape(s.label)}: {v}</title></circle>')
        ly = TOP + 10 + 20 * row
        parts.append(f'<line x1="{WIDTH - RIGHT + 15}" x2="{WIDTH - RIGHT + 40}" y1="{ly}" '
                     f'y2="{ly}" stroke="{s.colour}" stroke-width="2"{dash}/>'
                     f'<text x="{WIDTH - RIGHT + 46}" y="{ly + 4}">{escape(s.label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def table(records: Sequence[Record]) -> list[tuple[str, tuple[str, ...]]]:
    """The chart's numbers, for readers without the picture: (series, counts per record)."""
    return [(s.label, tuple("-" if v is None else str(v) for v in s.values))
            for s in series(records)]

# SPDX-License-Identifier: BSD-3-Clause
"""How the report's figures are drawn (matplotlib, its Agg backend), the same for every figure: curves of points with
their spread, log2 size axes, legends that keep the data's width, and a figure as PNG bytes.

Spread is always drawn: a band from the combined interval (points.combine: envelope of the per-launch 95%
CIs of the median) and, lighter, p5-p95. Sizes are on a log2 axis that runs over the sizes the figure's data
has (size_axis_range), labelled 1, 1K, 1M ...; a 0-byte point has no place on it and is left out. Where a curve's
protocol or algorithm changed (what_ran_table.switches), the first point after the change is ringed.
"""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from ..results.points import Point  # noqa: E402
from .cells import size_label  # noqa: E402
from .what_ran_table import curves, switches  # noqa: E402

# figures span the page (about 1300 px at the report's 90 dpi); text at these sizes stays readable there
WIDE = (14, 5.5)
LEGEND_FONT = 10
# a legend with more entries, or longer ones, goes below its axes so that the data keeps the figure's width
_LEGEND_INSIDE_MAX = 4
LONG_LABEL = 60
_LEGEND_LINE_INCHES = 0.24
_MARKERS = ("o", "s", "^", "D", "v")
# the log2 axis reaches this factor beyond the smallest and the largest size, so that end points are not on the frame
_MARGIN = 2 ** 0.3
_MAX_TICKS = 9


def png(fig) -> bytes:
    """A figure as PNG bytes at the report's 90 dpi, then closed."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")  # legends beside the axes included
    plt.close(fig)
    return buf.getvalue()


def size_axis_range(sizes) -> tuple[float, float]:
    """The x range of a log2 axis over these sizes (message sizes, rank counts): the smallest to the largest, with a
    small margin; nothing beyond the data (a ceiling measured at a larger size does not stretch it)."""
    lo, hi = min(sizes), max(sizes)
    return lo / _MARGIN, hi * _MARGIN


def size_ticks(lo: float, hi: float, most: int = _MAX_TICKS) -> list[int]:
    """Powers of two within [lo, hi], every 1st, 2nd, 5th or 10th (the smallest step giving at most ``most`` labels;
    steps of 5 and 10 fall on 1K, 1M, 1G)."""
    first, last = math.ceil(math.log2(lo)), math.floor(math.log2(hi))
    exps = range(max(first, 0), last + 1)
    step = next((s for s in (1, 2, 5, 10) if len([e for e in exps if e % s == 0]) <= most), 10)
    return [1 << e for e in exps if e % step == 0] or [1 << e for e in exps]


def size_axis(ax, sizes, most: int = _MAX_TICKS):
    """A log2 axis over the sizes drawn, ticks labelled 1K, 1M ... (size_label), a minor tick at every power of 2."""
    lo, hi = size_axis_range(sizes)
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo, hi)
    ticks = size_ticks(lo, hi, most)
    ax.set_xticks(ticks, [size_label(t) for t in ticks])
    exps = range(max(math.ceil(math.log2(lo)), 0), math.floor(math.log2(hi)) + 1)
    ax.set_xticks([1 << e for e in exps], minor=True)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("message size (bytes)")
    ax.grid(True, which="major", alpha=0.3)


def series_by(points: list[Point], label_fn) -> dict[str, list[Point]]:
    """The points as curves, one per label (``label_fn``), each by size."""
    out: dict[str, list[Point]] = {}
    for p in points:
        out.setdefault(label_fn(p), []).append(p)
    for v in out.values():
        v.sort(key=lambda p: p.bytes)
    return out


def draw_curves(ax, series: dict[str, list[Point]], x=lambda p: p.bytes):
    """Each curve (label: its points) as medians with its interval band and, lighter, its p5-p95 band, against
    ``x`` (the size, or another of a point's numbers)."""
    for i, (label, pts) in enumerate(sorted(series.items())):
        xs = [x(p) for p in pts]
        # matplotlib's ten colours repeat: each further ten series get another marker, so no two look alike
        marker = _MARKERS[i // 10 % len(_MARKERS)]
        (line,) = ax.plot(xs, [p.median for p in pts], marker=marker, markersize=4, label=label)
        # a point without an interval leaves a gap in the band (NaN), never a band of zero width
        ax.fill_between(xs, [p.low if p.has_interval else math.nan for p in pts],
                        [p.high if p.has_interval else math.nan for p in pts], color=line.get_color(), alpha=0.3)
        ax.fill_between(xs, [p.p5 for p in pts], [p.p95 for p in pts], color=line.get_color(), alpha=0.1)
        _mark_switches(ax, pts, x, line.get_color())


def _mark_switches(ax, pts: list[Point], x, colour):
    """Where a curve's protocol or algorithm changed (what_ran_table.switches): a ring around the first point after
    the change, with the first words of what ran from there on."""
    for p, source, words in (change for curve in curves(pts).values() for change in switches(curve)):
        ax.plot([x(p)], [p.median], marker="o", markersize=10, markerfacecolor="none", markeredgecolor=colour)
        ax.annotate(" ".join(words.split()[:3]), (x(p), p.median), fontsize=7, color=colour,
                    xytext=(4, -10), textcoords="offset points")


def size_curves(pts: list[Point], label_fn, ylabel: str, log_y: bool = True):
    """A figure of curves over message size: ``pts`` in series by ``label_fn``, a log2 size axis, the y axis
    ``ylabel`` (log where figures span orders of magnitude: latencies, times), its legend."""
    fig, ax = plt.subplots(figsize=WIDE)
    draw_curves(ax, series_by(pts, label_fn))
    size_axis(ax, [p.bytes for p in pts])
    if log_y:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    place_legend(ax)
    return fig


def place_legend(ax):
    """A short legend inside the axes; a long one below them, in one column when its labels are long (configuration
    names with their settings), so that it neither hides the data nor narrows the axes."""
    labels = ax.get_legend_handles_labels()[1]
    if not labels:
        return
    if len(labels) <= _LEGEND_INSIDE_MAX and max(map(len, labels)) <= LONG_LABEL:
        ax.legend(fontsize=LEGEND_FONT)
        return
    columns = 1 if max(map(len, labels)) > LONG_LABEL else 2
    ax.legend(fontsize=LEGEND_FONT, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=columns, frameon=False)
    _grow_for_legend(ax.figure, math.ceil(len(labels) / columns))


def _grow_for_legend(fig, lines: int):
    """Make a figure taller by the legend lines below its axes, so that the axes keep their height."""
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + _LEGEND_LINE_INCHES * lines)


def series_label(p: Point) -> str:
    """A series' label: library, memory, the operation or variant it measured (one-sided operation, persistent,
    partitions), strategy and path where they say something."""
    operation = f" {p.operation}" if p.operation else ""
    extra = f" {p.strategy_label}" if p.strategy and p.strategy != "direct" else ""
    path = f" ({p.path_class})" if p.path_class and p.path_class not in ("host", "host-device") else ""
    return f"{p.library} {p.memory}{operation}{extra}{path}"

# SPDX-License-Identifier: BSD-3-Clause
"""The figures of transfers by message size: latency and bandwidth between pairs of ranks (with the measured
ceilings and the nominal link rates), the multi-pair message rate, and the collectives' bus bandwidth. Each takes the
results model and returns a matplotlib Figure, or None when the data it needs is absent."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..results.model import Results
from ..results.peaks import ceilings, nominal_rate
from .cells import collective_results, latency_results
from .drawing import (LEGEND_FONT, LONG_LABEL, WIDE, draw_curves, place_legend, plt, series_by, series_label, size_axis,
                      size_curves)


def latency(results: Results) -> Figure | None:
    """One-way latency between pairs of ranks (cells.latency_results) on log axes, the benchmark named when several
    measured it: sub-microsecond medians stay apart from p95 bands that reach tens of microseconds."""
    pts = [p for p in results.points(latency_results(results)) if p.bytes > 0]
    if not pts:
        return None
    several = len({p.benchmark for p in pts}) > 1
    return size_curves(pts, lambda p: f"{p.benchmark} {series_label(p)}" if several else series_label(p),
                       "one-way latency (us)")


def bandwidth(results: Results, benchmark: str) -> Figure | None:
    """A benchmark of bandwidth between pairs of ranks, its ceilings and the nominal link rates."""
    pts = [p for p in results.points(results.ok(benchmark)) if p.bytes > 0 and p.metric == "bw"]
    if not pts:
        return None
    avail = ceilings(results)
    lo, hi = min(p.bytes for p in pts), max(p.bytes for p in pts)
    fig, ax = plt.subplots(figsize=WIDE)
    # several pairs at once (mbw): the pair count tells two aggregates apart
    draw_curves(ax, series_by(pts, lambda p: series_label(p) + (f" {p.key.pairs.count} pairs" if p.key.pairs else "")))
    drawn, seen = set(), set()
    for p in pts:
        # ceilings are measured per size and path: dashed segments through the sizes they were measured at, within
        # the sizes the libraries measured (a ceiling at another size compares with no point of the figure)
        transfer = (p.path_class, p.sides, p.strategy, p.key.pairs)
        curve = () if transfer in seen else tuple(
            c for c in avail.curve(benchmark, p.path_class, p.sides.send, p.sides.recv, p.strategy, p.key.pairs)
            if lo <= c[0] <= hi)
        seen.add(transfer)
        if curve and curve not in drawn:
            drawn.add(curve)
            ax.plot([b for b, _, _ in curve], [v for _, _, v in curve], linestyle="--", marker="x", color="gray",
                    linewidth=1)
            b, op, ceil = curve[-1]
            ax.annotate(f"ceiling {op} ({p.path_class}): {ceil:.0f} GB/s", (b, ceil), fontsize=9, va="bottom",
                        ha="right")
        nominal = nominal_rate(p, results.engines)
        if nominal and ("nominal", nominal) not in drawn:
            drawn.add(("nominal", nominal))
            ax.axhline(nominal, linestyle=":", color="black", linewidth=1)
            ax.annotate(f"nominal {p.path_class}: {nominal:.0f} GB/s", (lo, nominal), fontsize=9,
                        va="bottom")
    size_axis(ax, [p.bytes for p in pts])
    ax.set_yscale("log")  # host, host-device and NVLink figures differ by orders of magnitude
    ax.set_ylabel("bandwidth (GB/s)")
    place_legend(ax)
    return fig


def bw(results: Results):
    return bandwidth(results, "bw")


def bibw(results: Results):
    return bandwidth(results, "bibw")


def message_rate(results: Results):
    """Every result that carries a message rate (multi-pair bandwidth)."""
    rows = results.where(lambda rec: isinstance(rec.get("message_rate_Mps"), dict))
    pts = [p for p in results.points(rows, metric="rate") if p.bytes > 0]
    if not pts:
        return None
    return size_curves(pts, lambda p: f"{series_label(p)} {p.ranks or ''} ranks", "messages / s (millions)",
                       log_y=False)


def collectives(results: Results):
    pts = [p for p in results.points(collective_results(results)) if p.bytes > 0]
    if not pts:
        return None
    ops = sorted({p.operation or "?" for p in pts})
    ncols = min(3, len(ops))
    nrows = (len(ops) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(WIDE[0], 4.5 * nrows), squeeze=False)
    legend = {}
    for ax, op in zip(axes.flat, ops):
        sel = [p for p in pts if (p.operation or "?") == op]
        draw_curves(ax, series_by(sel, lambda p: f"{p.library} {p.memory} n={p.ranks}"))
        size_axis(ax, [p.bytes for p in sel], most=6)  # a third of the page
        ax.set_yscale("log")  # MPI on device memory and NCCL differ by orders of magnitude
        ax.set_title(op, fontsize=LEGEND_FONT + 2)
        ax.set_ylabel("bus bandwidth (GB/s)")
        legend.update(zip(ax.get_legend_handles_labels()[1], ax.get_legend_handles_labels()[0]))
    for ax in list(axes.flat)[len(ops):]:
        ax.axis("off")
    # one legend for every panel (the same configurations in each), below them
    labels = sorted(legend)
    fig.tight_layout()  # before the legend: tight_layout leaves a figure's own legend where it is put
    fig.legend([legend[k] for k in labels], labels, fontsize=LEGEND_FONT, loc="upper center", frameon=False,
               bbox_to_anchor=(0.5, 0), ncol=1 if max(map(len, labels)) > LONG_LABEL else 2)
    return fig

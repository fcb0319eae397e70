# SPDX-License-Identifier: BSD-3-Clause
"""The figures of what a feature measured: collectives over node counts and by size at one node count, the overlap
of communication and computation (non-blocking collectives, partitioned), managed memory placements and halo
exchanges. Each takes the results model and returns a matplotlib Figure, or None when the data it needs is absent."""

from __future__ import annotations

from statistics import median

from matplotlib.ticker import NullFormatter

from ..results.model import Results
from ..results.result_facts import overlap as measures_overlap, partitioned
from .cells import pairwise_time_results, size_label
from .drawing import (LEGEND_FONT, WIDE, draw_curves, place_legend, plt, series_label, size_axis,
                      size_axis_range, size_curves)
from .scaling import series as scaling_series, sweep_words, sweeps


def scaling(results: Results):
    """Collectives over node counts (scaling.series): the time of each series, one configuration at one size, against
    the node count, one line per series."""
    lines = {f"{s.configuration} {s.operation} {s.memory} {s.scaling} {s.size}": sorted(s.by_nodes.values(),
                                                                                     key=lambda p: p.key.hosts)
             for s in scaling_series(results) if s.growth}
    if not lines:
        return None
    fig, ax = plt.subplots(figsize=WIDE)
    draw_curves(ax, lines, x=lambda p: p.key.hosts)
    counts = sorted({p.key.hosts for ps in lines.values() for p in ps})
    ax.set_xscale("log", base=2)
    ax.set_xlim(*size_axis_range(counts))
    ax.set_xticks(counts, [str(c) for c in counts])  # the node counts measured, as numbers
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("nodes")
    ax.set_yscale("log")
    ax.set_ylabel("time (us), slowest rank")
    place_legend(ax)
    return fig


def size_sweep(results: Results):
    """Collectives by size at a fixed node count (scaling.sweeps): each configuration's time, one panel per operation,
    memory, node count and ranks per node."""
    panels = sweeps(results)
    if not panels:
        return None
    ncols = min(3, len(panels))
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(WIDE[0], 4.5 * nrows), squeeze=False)
    for ax, sweep in zip(axes.flat, panels):
        draw_curves(ax, {name: sorted(by_size.values(), key=lambda p: p.bytes)
                         for name, by_size in sweep.by_config.items()})
        size_axis(ax, sweep.sizes, most=6)  # a third of the page
        ax.set_yscale("log")
        per_node = f", {sweep.ranks_per_node} ranks per node" if sweep.ranks_per_node else ""
        ax.set_title(f"{sweep.operation} {sweep.memory}, {sweep_words(sweep.nodes)}{per_node}",
                     fontsize=LEGEND_FONT + 2)
        ax.set_ylabel("time (us), slowest rank")
        place_legend(ax)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    return fig


def _overlap_lines(lines: dict[str, dict[float, list[float]]]):
    """A figure of overlap % lines ({label: {x: the repetitions' overlap %}}): the median, and a band from the
    smallest to the largest repetition (the engine gives an overlap no interval)."""
    fig, ax = plt.subplots(figsize=WIDE)
    for label, by_x in sorted(lines.items()):
        xs = sorted(by_x)
        ax.plot(xs, [median(by_x[x]) for x in xs], marker="o", markersize=3, label=label)
        ax.fill_between(xs, [min(by_x[x]) for x in xs], [max(by_x[x]) for x in xs], alpha=0.2)
    ax.set_ylim(0, 105)
    ax.set_ylabel("overlap (%)")
    return fig, ax


def overlap(results: Results):
    """Overlap % by size of the results that measured it (non-blocking collectives, partitioned overlap); one curve
    per (library, operation or partitions and ready mode[, compute])."""
    rows = results.where(measures_overlap)
    groups: dict[str, dict[int, list[float]]] = {}
    for r in rows:
        m = r.metrics
        if "overlap_pct" not in m or not r.bytes:
            continue
        frac = m.get("compute_fraction")
        label = f"{r.library} {r.operation or ''}" + (f" compute x{frac}" if frac is not None else "")
        groups.setdefault(label, {}).setdefault(r.bytes, []).append(m["overlap_pct"])
    if not groups:
        return None
    fig, ax = _overlap_lines(groups)
    size_axis(ax, [b for by_size in groups.values() for b in by_size])
    place_legend(ax)
    return fig


def partitioned_overlap(results: Results):
    """Partitioned overlap against the compute time (the --compute-sweep curve: compute as a fraction of the pure
    transfer time), at the largest size measured, one line per library, memory, partition count and ready mode."""
    rows = results.where(lambda rec: partitioned(rec) and "curve" in (rec.get("metrics") or {}))
    largest: dict[tuple, int] = {}
    for r in rows:
        key = (r.library, r.memory)
        largest[key] = max(largest.get(key, 0), r.bytes)
    lines: dict[str, dict[float, list[float]]] = {}
    for r in rows:
        if r.bytes != largest[(r.library, r.memory)]:
            continue
        label = f"{r.library} {r.memory} {r.operation} at {size_label(r.bytes)}"
        for point in r.metrics["curve"]:
            lines.setdefault(label, {}).setdefault(point["compute_fraction"], []).append(point["overlap_pct"])
    if not lines:
        return None
    fig, ax = _overlap_lines(lines)
    ax.set_xlabel("compute time / pure transfer time")
    ax.grid(True, alpha=0.3)
    place_legend(ax)
    return fig


def managed(results: Results):
    """Managed-memory placements (the runs that placed them, with the references they measured) next to host-host
    and device-device latency."""
    placed_results, others = pairwise_time_results(results)
    um = [p for p in results.points(placed_results) if p.bytes > 0]
    if not um:
        return None
    ref = [p for p in results.points(others) if p.bytes > 0 and p.memory in ("host:host", "device:device")]
    return size_curves(um + ref, lambda p: f"{p.benchmark} {series_label(p)}", "latency (us)")


def halo(results: Results):
    """Halo exchanges (results whose memory is a field's) by strategy."""
    rows = results.where(lambda rec: "field" in (rec.get("memory") or {}))
    pts = [p for p in results.points(rows) if p.bytes > 0]
    if not pts:
        return None
    return size_curves(pts, lambda p: f"{p.library} {p.memory} {p.strategy_label} {p.operation or ''}",
                       "time per exchange (us)")

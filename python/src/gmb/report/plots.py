# SPDX-License-Identifier: BSD-3-Clause
"""Figures, one function per figure. Each takes the results model (model.Results) and returns a matplotlib Figure,
or None when the data the figure needs is absent (the report then leaves the figure out and says so); render_all
makes them PNG bytes.

Spread is always drawn: a band from the combined interval (model.combine: envelope of the per-launch 95%
CIs of the median) and, lighter, p5-p95. Sizes are on a log2 axis that runs over the sizes the figure's data
has (size_axis_range), labelled 1, 1K, 1M ...; a 0-byte point has no place on it and is left out.
"""

from __future__ import annotations

import io
import math
from statistics import median

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from ..results.peaks import ceilings, nominal_rate  # noqa: E402
from ..results.records import headline, overlap as measures_overlap, pairwise, partitioned  # noqa: E402
from ..results.model import Point, Results  # noqa: E402
from .cells import collective_results, latency_results, pairwise_time_results, size_label  # noqa: E402
from .scaling import series as scaling_series, sweep_words, sweeps  # noqa: E402

# figures span the page (about 1300 px at the report's 90 dpi); text at these sizes stays readable there
WIDE = (14, 5.5)
LEGEND_FONT = 10
# a legend with more entries, or longer ones, goes below its axes so that the data keeps the figure's width
_LEGEND_INSIDE_MAX = 4
_LONG_LABEL = 60
_LEGEND_LINE_INCHES = 0.24
_MARKERS = ("o", "s", "^", "D", "v")
# the log2 axis reaches this factor beyond the smallest and the largest size, so that end points are not on the frame
_MARGIN = 2 ** 0.3
_MAX_TICKS = 9


def _png(fig) -> bytes:
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


def _size_axis(ax, sizes, most: int = _MAX_TICKS):
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


def _series(points: list[Point], label_fn) -> dict[str, list[Point]]:
    out: dict[str, list[Point]] = {}
    for p in points:
        out.setdefault(label_fn(p), []).append(p)
    for v in out.values():
        v.sort(key=lambda p: p.bytes)
    return out


def _draw(ax, series: dict[str, list[Point]], x=lambda p: p.bytes):
    for i, (label, pts) in enumerate(sorted(series.items())):
        xs = [x(p) for p in pts]
        # matplotlib's ten colours repeat: each further ten series get another marker, so no two look alike
        marker = _MARKERS[i // 10 % len(_MARKERS)]
        (line,) = ax.plot(xs, [p.median for p in pts], marker=marker, markersize=4, label=label)
        # a point without an interval leaves a gap in the band (NaN), never a band of zero width
        ax.fill_between(xs, [p.low if p.has_interval else math.nan for p in pts],
                        [p.high if p.has_interval else math.nan for p in pts], color=line.get_color(), alpha=0.3)
        ax.fill_between(xs, [p.p5 for p in pts], [p.p95 for p in pts], color=line.get_color(), alpha=0.1)


def _legend(ax):
    """A short legend inside the axes; a long one below them, in one column when its labels are long (configuration
    names with their settings), so that it neither hides the data nor narrows the axes."""
    labels = ax.get_legend_handles_labels()[1]
    if not labels:
        return
    if len(labels) <= _LEGEND_INSIDE_MAX and max(map(len, labels)) <= _LONG_LABEL:
        ax.legend(fontsize=LEGEND_FONT)
        return
    columns = 1 if max(map(len, labels)) > _LONG_LABEL else 2
    ax.legend(fontsize=LEGEND_FONT, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=columns, frameon=False)
    _grow_for_legend(ax.figure, math.ceil(len(labels) / columns))


def _grow_for_legend(fig, lines: int):
    """Make a figure taller by the legend lines below its axes, so that the axes keep their height."""
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + _LEGEND_LINE_INCHES * lines)


def _label(p: Point) -> str:
    """A series' label: library, memory, the operation or variant it measured (one-sided operation, persistent,
    partitions), strategy and path where they say something."""
    operation = f" {p.operation}" if p.operation else ""
    extra = f" {p.strategy_label}" if p.strategy and p.strategy != "direct" else ""
    path = f" ({p.path_class})" if p.path_class and p.path_class not in ("host", "host-device") else ""
    return f"{p.library} {p.memory}{operation}{extra}{path}"


def latency(results: Results) -> Figure | None:
    """One-way latency between pairs of ranks (cells.latency_results) on log axes, the benchmark named when several
    measured it: sub-microsecond medians stay apart from p95 bands that reach tens of microseconds."""
    pts = [p for p in results.points(latency_results(results)) if p.bytes > 0]
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=WIDE)
    several = len({p.benchmark for p in pts}) > 1
    _draw(ax, _series(pts, lambda p: f"{p.benchmark} {_label(p)}" if several else _label(p)))
    _size_axis(ax, [p.bytes for p in pts])
    ax.set_yscale("log")
    ax.set_ylabel("one-way latency (us)")
    _legend(ax)
    return fig


def bandwidth(results: Results, benchmark: str) -> Figure | None:
    """A benchmark of bandwidth between pairs of ranks, its ceilings and the nominal link rates."""
    pts = [p for p in results.points(results.ok(benchmark)) if p.bytes > 0 and p.metric == "bw"]
    if not pts:
        return None
    avail = ceilings(results)
    lo, hi = min(p.bytes for p in pts), max(p.bytes for p in pts)
    fig, ax = plt.subplots(figsize=WIDE)
    # several pairs at once (mbw): the pair count tells two aggregates apart
    _draw(ax, _series(pts, lambda p: _label(p) + (f" {p.key.pairs.count} pairs" if p.key.pairs else "")))
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
    _size_axis(ax, [p.bytes for p in pts])
    ax.set_yscale("log")  # host, host-device and NVLink figures differ by orders of magnitude
    ax.set_ylabel("bandwidth (GB/s)")
    _legend(ax)
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
    fig, ax = plt.subplots(figsize=WIDE)
    _draw(ax, _series(pts, lambda p: f"{_label(p)} {p.ranks or ''} ranks"))
    _size_axis(ax, [p.bytes for p in pts])
    ax.set_ylabel("messages / s (millions)")
    _legend(ax)
    return fig


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
        _draw(ax, _series(sel, lambda p: f"{p.library} {p.memory} n={p.ranks}"))
        _size_axis(ax, [p.bytes for p in sel], most=6)  # a third of the page
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
               bbox_to_anchor=(0.5, 0), ncol=1 if max(map(len, labels)) > _LONG_LABEL else 2)
    return fig


def scaling(results: Results):
    """Collectives over node counts (scaling.series): the time of each series, one configuration at one size, against
    the node count, one line per series."""
    lines = {f"{s.configuration} {s.operation} {s.memory} {s.scaling} {s.size}": sorted(s.by_nodes.values(),
                                                                                     key=lambda p: p.key.hosts)
             for s in scaling_series(results) if s.growth}
    if not lines:
        return None
    fig, ax = plt.subplots(figsize=WIDE)
    _draw(ax, lines, x=lambda p: p.key.hosts)
    counts = sorted({p.key.hosts for ps in lines.values() for p in ps})
    ax.set_xscale("log", base=2)
    ax.set_xlim(*size_axis_range(counts))
    ax.set_xticks(counts, [str(c) for c in counts])  # the node counts measured, as numbers
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("nodes")
    ax.set_yscale("log")
    ax.set_ylabel("time (us), slowest rank")
    _legend(ax)
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
        _draw(ax, {name: sorted(by_size.values(), key=lambda p: p.bytes) for name, by_size in sweep.by_config.items()})
        _size_axis(ax, sweep.sizes, most=6)  # a third of the page
        ax.set_yscale("log")
        per_node = f", {sweep.ranks_per_node} ranks per node" if sweep.ranks_per_node else ""
        ax.set_title(f"{sweep.operation} {sweep.memory}, {sweep_words(sweep.nodes)}{per_node}",
                     fontsize=LEGEND_FONT + 2)
        ax.set_ylabel("time (us), slowest rank")
        _legend(ax)
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
    _size_axis(ax, [b for by_size in groups.values() for b in by_size])
    _legend(ax)
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
    _legend(ax)
    return fig


def managed(results: Results):
    """Managed-memory placements (the runs that placed them, with the references they measured) next to host-host
    and device-device latency."""
    placed_results, others = pairwise_time_results(results)
    um = [p for p in results.points(placed_results) if p.bytes > 0]
    if not um:
        return None
    ref = [p for p in results.points(others) if p.bytes > 0 and p.memory in ("host:host", "device:device")]
    fig, ax = plt.subplots(figsize=WIDE)
    _draw(ax, _series(um + ref, lambda p: f"{p.benchmark} {_label(p)}"))
    _size_axis(ax, [p.bytes for p in um + ref])
    ax.set_yscale("log")
    ax.set_ylabel("latency (us)")
    _legend(ax)
    return fig


def halo(results: Results):
    """Halo exchanges (results whose memory is a field's) by strategy."""
    rows = results.where(lambda rec: "field" in (rec.get("memory") or {}))
    pts = [p for p in results.points(rows) if p.bytes > 0]
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=WIDE)
    _draw(ax, _series(pts, lambda p: f"{p.library} {p.memory} {p.strategy_label} {p.operation or ''}"))
    _size_axis(ax, [p.bytes for p in pts])
    ax.set_yscale("log")
    ax.set_ylabel("time per exchange (us)")
    _legend(ax)
    return fig


# (id, caption, function): the report walks this list in order. The caption is the figure's only title; lines are
# medians, the darker band their interval, the lighter one p5-p95 (_draw)
_BANDS = "median, interval band, lighter p5-p95"
FIGURES = [
    ("bw", f"Unidirectional bandwidth (bw) by message size, {_BANDS}; measured ceilings dashed (x: the sizes they "
           "were measured at), nominal link rates dotted", bw),
    ("bibw", f"Bidirectional bandwidth (bibw) by message size, {_BANDS}; measured ceilings dashed, nominal link "
             "rates dotted", bibw),
    ("latency", f"One-way latency by message size, {_BANDS}; both axes logarithmic", latency),
    ("mbw", "Multi-pair message rate by message size", message_rate),
    ("coll", f"Collectives: bus bandwidth by message size, one panel per operation, {_BANDS}", collectives),
    ("scaling", f"Collectives over node counts (strong and weak scaling): time against the node count, one line per "
                f"configuration and size, {_BANDS}", scaling),
    ("sweep", f"Collective size sweep at a fixed node count (not weak scaling): time by message size, one panel per "
              f"operation, memory, node count and ranks per node, {_BANDS}", size_sweep),
    ("overlap", "Communication/computation overlap by message size (non-blocking collectives, partitioned): "
                "median, band from the lowest to the highest repetition", overlap),
    ("partitioned-overlap", "Partitioned communication: overlap against compute time (median, band: "
                            "repetitions)", partitioned_overlap),
    ("managed", "Managed memory placements against host-host and device-device latency", managed),
    ("halo", "Halo exchange time by strategy", halo),
]


def _other_bandwidth(results: Results) -> list[tuple[str, str, object]]:
    """A figure for each benchmark of bandwidth between pairs of ranks besides bw and bibw (mbw, new ones)."""
    rows = results.where(lambda rec: pairwise(rec) and headline(rec) == "bandwidth_GBps")
    named = {fid for fid, _, _ in FIGURES}
    return [(b, f"Bandwidth ({b}) by message size, {_BANDS}; measured ceilings dashed", lambda s, b=b: bandwidth(s, b))
            for b in sorted({r.benchmark for r in rows} - named)]


def figure_name(caption: str) -> str:
    """What a figure shows, for a list of the figures left out: its caption up to the first ' by ', ':' or ','."""
    for mark in (" by ", ":", ","):
        caption = caption.split(mark)[0]
    return caption


def figures(results: Results) -> list[tuple[str, str, object]]:
    """(id, title, function) of every figure, in the report's order: other bandwidths after bibw's."""
    at = next(i for i, (fid, _, _) in enumerate(FIGURES) if fid == "bibw") + 1
    return FIGURES[:at] + _other_bandwidth(results) + FIGURES[at:]


def render_all(results: Results) -> list[tuple[str, str, bytes | None]]:
    """(id, title, PNG bytes or None without data) of every figure."""
    out = []
    for fid, title, fn in figures(results):
        fig = fn(results)
        out.append((fid, title, _png(fig) if fig is not None else None))
    return out

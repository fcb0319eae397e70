# SPDX-License-Identifier: BSD-3-Clause
"""The report's figures, in the order it shows them (FIGURES: id, caption, function), and each made PNG bytes
(render_all). The figures themselves: transfer_figures.py (latency, bandwidth, message rate, collectives) and
feature_figures.py (scaling, size sweeps, overlap, managed memory, halo); how they are drawn: drawing.py. A function
returns None when the data its figure needs is absent: the report then leaves the figure out and says so.
"""

from __future__ import annotations

from ..results.model import Results
from ..results.result_facts import headline, pairwise
from .drawing import png
from .feature_figures import halo, managed, overlap, partitioned_overlap, scaling, size_sweep
from .transfer_figures import bandwidth, bibw, bw, collectives, latency, message_rate


# (id, caption, function): the report walks this list in order. The caption is the figure's only title; lines are
# medians, the darker band their interval, the lighter one p5-p95 (drawing.draw_curves)
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
        out.append((fid, title, png(fig) if fig is not None else None))
    return out

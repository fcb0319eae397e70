# SPDX-License-Identifier: BSD-3-Clause
"""What ran behind the curves (records' ``ran``, results/what_ran.py): for each curve, the size ranges over which its
library said the same protocol or algorithm, and the sizes where that changed (a protocol switch), which the plots
mark on the curve."""

from __future__ import annotations

from ..results.model import Results
from ..results.points import Point, PointKey, series_key
from .cells import Table, size_text

# how each source is named in the table
SOURCES = {"ucx": "UCX protocol", "coll": "Open MPI collective component", "nccl": "NCCL algorithm/protocol",
           "mpich": "MPICH algorithm"}


def curves(points: list[Point]) -> dict[PointKey, list[Point]]:
    """The points of each curve (points.series_key: a point's identity without its size), by size."""
    out: dict[PointKey, list[Point]] = {}
    for p in points:
        out.setdefault(series_key(p.key), []).append(p)
    for pts in out.values():
        pts.sort(key=lambda p: p.bytes)
    return out


def spans(curve: list[Point]) -> list[tuple[str, int, int, str]]:
    """(source, first size, last size, words): the runs of consecutive sizes of one curve over which a source said
    the same thing."""
    out: list[tuple[str, int, int, str]] = []
    for source in sorted({s for p in curve for s in p.ran}):
        run: list | None = None
        for p in curve:
            words = p.ran.get(source)
            if run and words == run[3]:
                run[2] = p.bytes
                continue
            if run:
                out.append(tuple(run))
            run = [source, p.bytes, p.bytes, words] if words else None
        if run:
            out.append(tuple(run))
    return out


def switches(curve: list[Point]) -> list[tuple[Point, str, str]]:
    """(the first point after a change, source, what it ran): where a curve's protocol or algorithm changed between
    two neighbouring sizes it measured."""
    out = []
    for before, after in zip(curve, curve[1:]):
        for source, words in after.ran.items():
            if before.ran.get(source) not in (None, words):
                out.append((after, source, words))
    return out


def what_ran_table(results: Results) -> Table:
    """One row per curve and stretch of sizes over which its library said the same thing."""
    rows = []
    points = [p for p in results.points(results.ok()) if p.ran]
    for curve in sorted(curves(points).values(), key=lambda c: (c[0].library, c[0].benchmark, c[0].operation or "",
                                                                   c[0].memory)):
        first = curve[0]
        what = f"{first.benchmark} {first.operation}" if first.operation else first.benchmark
        for source, low, high, words in spans(curve):
            sizes = size_text(low) if low == high else f"{size_text(low)} - {size_text(high)}"
            rows.append([first.library, what, first.memory, first.path_class or "", SOURCES.get(source, source),
                         sizes, words])
    return Table("What ran: the protocol or algorithm behind each curve",
                 ["configuration", "benchmark", "memory", "path", "source", "sizes", "what ran"], rows,
                 "As each library said it while the launches ran (UCX's protocol tables, Open MPI's component "
                 "selection, NCCL's tuning lines), or as the settings force it where a release build does not say "
                 "(coll/tuned's algorithm, MPICH's): docs/records.md, 'What ran'. A curve whose protocol changes "
                 "between two sizes has a row for each stretch, and its plot marks the change; 'varied between "
                 "launches': the launches of one point said different things.")

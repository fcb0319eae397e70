# SPDX-License-Identifier: BSD-3-Clause
"""Collectives over node counts: each scaling series of a campaign (a block over node counts, "strong": the message
size S fixed; "weak": each rank's share fixed), its time and bus bandwidth per node count, and which library
configuration's time grows least from the fewest to the most nodes.

A series is one library configuration, operation, memory and scaling mode, over the node counts its launches ran on
(the hosts its records name); at each count, the smallest size measured there (the block's first size, grown with
the ranks where weak scaling grows it). Growth = time at the most nodes / time at the fewest; its interval is
the ratio of the two points' intervals (worst against best). "Scales best" only where the best growth's interval is
apart from every other series' of that operation."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..results.model import Point, Results, combine
from .answers_data import FeatureAnswer
from .cells import Table, collective_results, size_label
from .wording import sig3, times


@dataclass(frozen=True)
class Series:
    library: str  # the library configuration (without the host count)
    operation: str
    memory: str
    scaling: str
    by_nodes: dict[int, Point]  # node count -> the point of its time
    busbw: dict[int, float | None]  # node count -> its bus bandwidth (GB/s)

    @property
    def growth(self) -> tuple[float, float, float]:
        """(time at the most nodes / time at the fewest, its low and high bound). A time interval reaching 0 or
        below (few launches far apart) bounds nothing: the low bound is then 0, the high one infinite."""
        lo, hi = self.by_nodes[min(self.by_nodes)], self.by_nodes[max(self.by_nodes)]
        low = hi.low / lo.high if hi.low > 0 and lo.high > 0 else 0.0
        high = hi.high / lo.low if lo.low > 0 else math.inf
        return hi.median / lo.median, low, high


def series(results: Results) -> list[Series]:
    """The scaling series of the results: collectives of launches planned as one node count of a series, at each
    node count the smallest size measured there (the block's first size, grown with the ranks under weak
    scaling)."""
    chosen = [r for r in collective_results(results) if r.scaling and r.config.hosts]
    out = []
    for scaling in sorted({r.scaling for r in chosen}):
        rs = [r for r in chosen if r.scaling == scaling]
        busbw = {replace(p.key, metric="t"): p.median for p in combine(rs, "busbw")}
        groups: dict[tuple, dict[int, list[Point]]] = {}
        for p in combine(rs, "t"):
            groups.setdefault((p.base_library, p.operation or "", p.memory), {}).setdefault(p.key.hosts, []).append(p)
        for (lib, op, mem), by_nodes in sorted(groups.items()):
            if len(by_nodes) < 2:
                continue
            picked = {n: min(pts, key=lambda p: p.bytes) for n, pts in by_nodes.items()}
            out.append(Series(lib, op, mem, scaling, picked, {n: busbw.get(p.key) for n, p in picked.items()}))
    return out


def scaling_table(results: Results) -> Table:
    """Time and bus bandwidth of each scaling series per node count, and its growth."""
    all_series = series(results)
    counts = sorted({n for s in all_series for n in s.by_nodes})
    rows = []
    for s in all_series:
        first = s.by_nodes[min(s.by_nodes)]
        cells = [f"{sig3(s.by_nodes[n].median)} us at {size_label(s.by_nodes[n].bytes)}"
                 + (f" ({sig3(s.busbw[n])} GB/s)" if s.busbw.get(n) else "") if n in s.by_nodes else "not measured"
                 for n in counts]
        g, lo, hi = s.growth
        rows.append([s.library, s.operation, s.memory, s.scaling, size_label(first.bytes), *cells,
                     f"{times(g)} [{sig3(lo)}, {sig3(hi) if math.isfinite(hi) else 'unbounded'}]"])
    return Table("Collectives over node counts", ["library", "operation", "memory", "scaling", "size at fewest nodes",
                                                   *[f"{n} node{'s' if n > 1 else ''}" for n in counts],
                                                   "time growth, fewest -> most nodes [interval]"], rows,
                 note="strong: the message size S fixed; weak: each rank's share of S fixed (S grows with the ranks "
                      "for operations that split it among them). Figures: the slowest rank's time, median over "
                      "launches (bus bandwidth in parentheses).")


def scaling_answers(results: Results) -> list[FeatureAnswer]:
    """Per operation and scaling mode, which library configuration's time grows least over the node counts."""
    groups: dict[tuple, list[Series]] = {}
    for s in series(results):
        groups.setdefault((s.operation, s.memory, s.scaling), []).append(s)
    out = []
    for (op, mem, scaling), ss in sorted(groups.items()):
        ss = sorted(ss, key=lambda s: s.growth[0])
        best = ss[0]
        span = f"{min(best.by_nodes)} -> {max(best.by_nodes)} nodes"
        said = "; ".join(f"{s.library} {times(s.growth[0])}" for s in ss)
        verdict = ""
        if len(ss) > 1:
            apart = all(best.growth[2] < s.growth[1] for s in ss[1:])
            verdict = f"; {best.library} scales best" if apart else "; none clearly apart"
        out.append(FeatureAnswer("scaling", f"{op} ({scaling}, {mem or 'memory not recorded'}), time growth over "
                                            f"{span}: {said}{verdict}"))
    return out

# SPDX-License-Identifier: BSD-3-Clause
"""Collectives over node counts and over sizes: two views that are easy to mistake for one another.

Scaling (a block over node counts: its launches say "strong" or "weak"): strong scaling keeps the message size S
fixed, weak scaling each rank's share of S (S grows with the ranks for operations that split it among them). A
series is one configuration (everything of a point's identity but the node count: the library configuration and
its settings, binding, options, memory, operation, ranks per node) at ONE size (weak, split among the ranks: one
share per rank) over the node counts that measured that size; a size some node count did not measure is a series
without that count, said "not measured" there, never mixed with another size. Growth = time at the most nodes /
time at the fewest, a ratio of two points with its 95 % interval over their launches (cells.difference). Per size
and node span, a configuration "scales best" only where its growth is proven lower than every other's: the ratio of
the two growths (inference.ratio_of_ratios) has a 95 % interval below 1 and holds among the report's claims
(claims.decide), no point of either resting on one launch or busy launches; named with that size and those node
counts.

A size sweep at a fixed node count (what the Slingshot-11 GPU-aware MPI study calls weak scaling): per collective,
memory, node count and ranks per node, each configuration's time over the sizes measured there, which one is
fastest at each size (apart from every other, cells.clearly_apart) and the crossover sizes where the fastest
changes, said only between sizes where a fastest was apart."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from ..results.inference import Ratio, ratio_of_ratios
from ..results.model import Results, configuration_labels, point_label_key
from ..results.points import Point, combine
from .answers_data import ScalingAnswer, SweepAnswer, measured
from .cells import Absent, Table, claim_blockers, clearly_apart, collective_results, difference, size_text
from .claims import decide
from .wording import ratio_said, sig3

# the two modes of a series over node counts, and the view over sizes, as tables, answers and figures name them
MODES = {"strong": "strong scaling (S fixed)", "weak": "weak scaling (each rank's share of S fixed)"}
SPLIT = ("equal-blocks", "unequal")  # counts.split of the operations whose S is split among the ranks


def _nodes(n: int) -> str:
    return f"{n} node{'s' if n != 1 else ''}"


def sweep_words(nodes: int | None) -> str:
    """How a size sweep is named: "size sweep at 2 nodes"."""
    return f"size sweep at {_nodes(nodes)}" if nodes else "size sweep (nodes not recorded)"


@dataclass(frozen=True)
class Series:
    configuration: str  # the configuration's name without the node count
    operation: str
    memory: str
    scaling: str
    ranks_per_node: int
    size: str  # the series' size in words: "16M"; weak, split among the ranks: "256K per rank (1M at 4 ranks)"
    by_nodes: dict[int, Point]  # node count -> the point of its time
    busbw: dict[int, float | None]  # node count -> its bus bandwidth (GB/s)
    key: tuple  # what series of one comparison share: operation, memory, mode, ranks per node, size

    @property
    def nodes(self) -> tuple[int, ...]:
        return tuple(sorted(self.by_nodes))

    @property
    def ends(self) -> tuple[Point, Point]:
        """The points at the fewest and at the most nodes."""
        return self.by_nodes[min(self.by_nodes)], self.by_nodes[max(self.by_nodes)]

    @property
    def growth(self) -> Ratio | None:
        """Time at the most nodes / time at the fewest, with its 95 % interval over the launches (none where a
        side has one launch); None over one node count."""
        if len(self.by_nodes) < 2:
            return None
        fewest, most = self.ends
        return difference(most, fewest)


def _share(p: Point, scaling: str, splits: dict) -> Fraction | int:
    """What a series keeps fixed of the size: S, or under weak scaling of an operation that splits S among the
    ranks, each rank's share S / ranks."""
    if scaling == "weak" and splits.get(p.operation) in SPLIT and p.ranks:
        return Fraction(p.bytes, p.ranks)
    return p.bytes


def _size_words(share: Fraction | int, p: Point) -> str:
    if isinstance(share, Fraction):
        per_rank = size_text(int(share)) if share.denominator == 1 else f"{float(share):.4g} B"
        return f"{per_rank} per rank ({size_text(p.bytes)} at {p.ranks} ranks)"
    return size_text(share)


def _namer(results: Results):
    """A point's configuration name without the node count (its views compare points of several node counts, or of
    one), with its variant and strategy."""
    names = configuration_labels(results.results, hosts=False)

    def name(p: Point) -> str:
        base, variant = names.get(point_label_key(p), (p.configuration, ""))
        return " ".join(filter(None, [base, f"({variant})" if variant else "", p.strategy_label]))
    return name


def series(results: Results) -> list[Series]:
    """The scaling series of the results: collectives of launches planned as one node count of a series, one series
    per configuration and size (see the module's doc); a size measured at one node count only is a series of that
    count alone (no growth)."""
    chosen = [r for r in collective_results(results) if r.scaling and r.config.hosts]
    splits = {r.operation: (r.record.get("counts") or {}).get("split") for r in chosen}
    name = _namer(results)
    out = []
    for scaling in sorted({r.scaling for r in chosen}):
        rs = [r for r in chosen if r.scaling == scaling]
        busbw = {replace(p.key, metric="t"): p.median for p in combine(rs, "busbw")}
        groups: dict[tuple, dict[int, Point]] = {}
        for p in measured(combine(rs, "t")):
            hosts = p.key.hosts
            # everything of the point's identity but the node count and what follows from it: the ranks (ranks per
            # node kept), the size (the share kept) and the path among the ranks (one host's links, then the network)
            identity = replace(p.key, hosts=None, ranks=(p.ranks or 0) // hosts, bytes=0, path_class=None)
            groups.setdefault((identity, _share(p, scaling, splits)), {})[hosts] = p
        for (identity, share), by_nodes in groups.items():
            p = by_nodes[min(by_nodes)]
            out.append(Series(name(p), p.operation or "", p.memory, scaling, identity.ranks, _size_words(share, p),
                              by_nodes, {n: busbw.get(q.key) for n, q in by_nodes.items()},
                              (p.operation or "", p.memory, scaling, identity.ranks, share)))
    out.sort(key=lambda s: (s.key, s.configuration))
    return out


def growth_text(g: Ratio) -> str:
    return ratio_said(g) if g.low is not None else f"{ratio_said(g)} (no interval: one launch)"


def scaling_table(results: Results) -> Table:
    """Time and bus bandwidth of each scaling series per node count, and its growth."""
    all_series = series(results)
    counts = sorted({n for s in all_series for n in s.by_nodes})
    rows = []
    for s in all_series:
        cells = [f"{sig3(s.by_nodes[n].median)} us at {size_text(s.by_nodes[n].bytes)}"
                 + (f" ({sig3(s.busbw[n])} GB/s)" if s.busbw.get(n) else "") if n in s.by_nodes
                 else Absent("not measured") for n in counts]
        g = s.growth
        rows.append([s.configuration, s.operation, s.memory, MODES.get(s.scaling, s.scaling), s.ranks_per_node,
                     s.size, *cells, growth_text(g) if g else Absent("one node count: no growth")])
    return Table("Collectives over node counts (strong and weak scaling)",
                 ["configuration", "operation", "memory", "scaling", "ranks per node", "size", *map(_nodes, counts),
                  "time growth, fewest -> most nodes [interval]"], rows,
                 note="Strong scaling: the message size S fixed; weak scaling: each rank's share of S fixed (S grows "
                      "with the ranks for operations that split it among them). A row is one configuration at one "
                      "size (weak: one share per rank) over the node counts that measured it; 'not measured' where "
                      "a node count did not (refused or not planned there): sizes are never mixed. Not a size sweep "
                      "at a fixed node count (its own table). Figures: the slowest rank's time, median over "
                      "launches (bus bandwidth in parentheses); growth: time at the most nodes / at the fewest, "
                      "with its 95 % interval over the launches (log scale).")


def _scales_best(ss: list[Series]) -> bool:
    """Whether the first series (the least growth) is proven to grow less than every other: no end point carries a
    blocker (one launch, busy, quantised), and each ratio of growths is claimed (claims.decide)."""
    best = ss[0]
    if any(claim_blockers(p) for s in ss for p in s.ends):
        return False
    claimed = [decide(("scaling", best.key, best.nodes, best.configuration, s.configuration),
                      ratio_of_ratios(s.growth, best.growth)) for s in ss[1:]]
    return all(claimed)


def scaling_answers(results: Results) -> list[ScalingAnswer]:
    """Per operation, memory, mode, ranks per node, size and node counts, each configuration's time growth and
    which one scales best (its growth proven lower than every other's)."""
    groups: dict[tuple, list[Series]] = {}
    for s in series(results):
        if s.growth:
            groups.setdefault((*s.key, s.nodes), []).append(s)
    out = []
    for ss in groups.values():
        ss = sorted(ss, key=lambda s: s.growth.value)
        out.append(ScalingAnswer(series=ss, scales_best=len(ss) > 1 and _scales_best(ss)))
    return out


@dataclass(frozen=True)
class Sweep:
    """One collective's size sweep at a fixed node count: each configuration's time by size, and at every size two
    configurations or more measured, the one proven fastest there (None: none proven)."""
    operation: str
    memory: str
    nodes: int | None
    ranks_per_node: int | None
    by_config: dict[str, dict[int, Point]]  # configuration -> size -> the point of its time
    fastest: dict[int, str | None]

    @property
    def sizes(self) -> list[int]:
        return sorted({b for by_size in self.by_config.values() for b in by_size})

    def _points(self, b: int) -> list[Point]:
        return [by_size[b] for by_size in self.by_config.values() if b in by_size]

    def stretches(self) -> list[tuple[str | None, int, int]]:
        """(clearly fastest configuration or None, first size, last size) over consecutive compared sizes."""
        out: list[tuple[str | None, int, int]] = []
        for b in sorted(self.fastest):
            if out and out[-1][0] == self.fastest[b]:
                out[-1] = (out[-1][0], out[-1][1], b)
            else:
                out.append((self.fastest[b], b, b))
        return out

    def crossovers(self) -> list[tuple[str, str, int, int]]:
        """(fastest below, fastest above, the last size of the one, the first of the other): where the clearly
        fastest configuration changes, between two sizes where one was clearly fastest."""
        decided = [(b, w) for b, w in sorted(self.fastest.items()) if w]
        return [(w1, w2, b1, b2) for (b1, w1), (b2, w2) in zip(decided, decided[1:]) if w1 != w2]


def sweeps(results: Results) -> list[Sweep]:
    """Per collective operation, memory, node count and ranks per node measured at two sizes or more: each
    configuration's time by size and the fastest at each size (clearly apart from every other there)."""
    name = _namer(results)
    groups: dict[tuple, dict[str, dict[int, Point]]] = {}
    for p in measured(results.points(collective_results(results), "t")):
        hosts = p.key.hosts
        per_node = p.ranks // hosts if hosts and p.ranks else None
        groups.setdefault((p.operation or "", p.memory, hosts, per_node), {}).setdefault(name(p), {})[p.bytes] = p
    out = []
    for (op, memory, hosts, per_node), by_config in groups.items():
        sizes = {b for by_size in by_config.values() for b in by_size}
        if len(sizes) < 2:
            continue
        fastest = {}
        for b in sorted(sizes):
            pts = [by_size[b] for by_size in by_config.values() if b in by_size]
            if len(pts) < 2:
                continue
            best = min(pts, key=lambda p: p.median)
            apart = all(clearly_apart(best, q) for q in pts if q is not best)
            fastest[b] = next(c for c, by_size in by_config.items() if by_size.get(b) is best) if apart else None
        out.append(Sweep(op, memory, hosts, per_node, by_config, fastest))
    out.sort(key=lambda s: (s.operation, s.memory, s.nodes or 0, s.ranks_per_node or 0))
    return out


def _span(lo: int, hi: int) -> str:
    return size_text(lo) if lo == hi else f"{size_text(lo)}-{size_text(hi)}"


def stretches_text(s: Sweep) -> str:
    return "; ".join(f"{who} fastest at {_span(lo, hi)}" if who else f"none proven fastest at {_span(lo, hi)}"
                     for who, lo, hi in s.stretches())


def crossovers_text(s: Sweep) -> str:
    return "; ".join(f"{a} -> {b} between {size_text(lo)} and {size_text(hi)}" for a, b, lo, hi in s.crossovers())


def size_sweep_table(results: Results) -> Table:
    """Per collective, memory, node count and ranks per node: the configurations' sizes, the fastest by size and the
    crossover sizes (the figure beside it draws each configuration's time by size)."""
    rows = []
    for s in sweeps(results):
        several = len(s.by_config) > 1
        one = Absent("one configuration measured it")
        rows.append([s.operation, s.memory, s.nodes or Absent("not recorded"), s.ranks_per_node or
                     Absent("not recorded"), ", ".join(sorted(s.by_config)), f"{_span(s.sizes[0], s.sizes[-1])} "
                     f"({len(s.sizes)} sizes)",
                     (stretches_text(s) if s.fastest else Absent("no size measured by two"))
                     if several else one,
                     (crossovers_text(s) if s.crossovers() else Absent("no crossover"))
                     if several else one])
    return Table("Collectives: size sweep at a fixed node count", ["operation", "memory", "nodes", "ranks per node",
                                                                   "configurations", "sizes", "fastest by size",
                                                                   "crossover sizes"], rows,
                 note="Each configuration's time (the slowest rank's, geometric mean over launches) over the sizes measured "
                      "at one node count: what the Slingshot-11 GPU-aware MPI study calls weak scaling, which is "
                      "not gmb's weak scaling (each rank's share of S fixed over node counts: the table of "
                      "collectives over node counts). 'fastest': the 95 % interval of its ratio to every other "
                      "configuration's at that size excludes 1 (over 2 launches or more), else 'none proven'; a crossover is where the fastest "
                      "changes, said only between two sizes where one was fastest. The figure 'size sweep' draws "
                      "the times.")


def size_sweep_answers(results: Results) -> list[SweepAnswer]:
    """Per collective, memory and node count measured by two configurations or more: the fastest by size and the
    crossover sizes."""
    # no size where one configuration is apart: nothing to say
    return [SweepAnswer(sweep=s) for s in sweeps(results) if any(s.fastest.values())]

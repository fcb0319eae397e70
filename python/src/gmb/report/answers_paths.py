# SPDX-License-Identifier: BSD-3-Clause
"""Answers 1 and 2: which library configuration is best per path, and where a gmb strategy beats a library's own
path (answers.py says how)."""

from __future__ import annotations

from ..results.model import Results
from ..results.peaks import ceilings
from ..results.points import Point
from ..results.result_facts import Sides, placed
from .answers_data import (Figure, PathAnswer, Ranking, StrategyAnswer, best_point, has_device, latencies, measured,
                           nearest, not_cuda_aware, own_path, pick_size, verdict)
from .cells import SUSPECT_PCT, claimed_ratio, pairwise_time_results
from .network import INTER_NODE, ceiling_name, is_network, network_not_measured, network_source
from .wording import order, path_label, sig3


def _path_groups(results: Results, bandwidth: list[Point], latency: list[Point]
                 ) -> list[tuple[str, Sides, str | None, list[Point], bool | None]]:
    """(benchmark, sides, path class, points, higher is better) per path present: bandwidth between pairs of
    ranks (bw; bibw or mbw too only where a configuration measured no bw on that path), the managed placements
    by time, and paths where only a latency was measured by that latency (higher is better: None)."""
    groups: dict[tuple, list[Point]] = {}
    for p in bandwidth:
        groups.setdefault((p.sides, p.path_class), []).append(p)
    out = []
    for (sides, path), pts in groups.items():
        libs = {}
        for p in pts:
            libs.setdefault(p.benchmark, set()).add(p.configuration)
        ranked = sorted(libs, key=results.engines.bandwidth_order)
        first = ranked[0]
        for bench in ranked:
            # bw answers for the path; another benchmark only for the configurations that measured no bw there
            if bench == first or libs[bench] - libs[first]:
                out.append((bench, sides, path, [p for p in pts if p.benchmark == bench], True))
    managed: dict[tuple, list[Point]] = {}
    placed_results = [r for r in pairwise_time_results(results)[0] if placed(r.record)]
    for p in measured(results.points(placed_results)):
        managed.setdefault((p.benchmark, p.sides, p.path_class), []).append(p)
    out += [(bench, sides, path, pts, False) for (bench, sides, path), pts in managed.items()]
    # paths with a latency and no bandwidth measured: answered by the latency
    latency_only: dict[tuple, list[Point]] = {}
    for p in latency:
        if (p.sides, p.path_class) not in groups:
            latency_only.setdefault((p.benchmark, p.sides, p.path_class), []).append(p)
    out += [(bench, sides, path, pts, None) for (bench, sides, path), pts in latency_only.items()]
    return out


def path_answers(results: Results, bandwidth: list[Point], latency: list[Point]) -> tuple[list[PathAnswer], dict]:
    avail = ceilings(results)
    not_aware = not_cuda_aware(results)
    lat = latencies(latency)
    answers, chosen = [], {}
    for bench, sides, path, pts, higher in _path_groups(results, bandwidth, latency):
        label = path_label(sides, path)
        chosen.setdefault((sides, path), set()).add(bench)
        send, recv = sides.send, sides.recv
        # each library's figures by size: its own path; a library that is not CUDA-aware: its best strategy
        per_lib: dict[str, dict[int, Point]] = {}
        staged: set[str] = set()  # not CUDA-aware: figures of gmb's strategies
        for lib in sorted({p.library for p in pts}):
            mine = [p for p in pts if p.library == lib]
            own = [p for p in mine if own_path(p)]
            if not own and mine[0].base_library in not_aware and has_device(sides):
                own = mine
                staged.add(lib)
            by_size: dict[int, list[Point]] = {}
            for p in own:
                by_size.setdefault(p.bytes, []).append(p)
            if by_size:
                per_lib[lib] = {b: best_point(v, higher) for b, v in by_size.items()}
        if not per_lib:
            continue  # only gmb strategies of CUDA-aware libraries here: answer 2 says what they do

        def ceiling_at(b: int):
            return avail.at(bench, path, send, recv, b) if higher and send else (None, None)

        sizes = {lib: set(s) for lib, s in per_lib.items()}
        # The size is that of the configurations moving device memory themselves: a staged one is measured over
        # fewer, smaller sizes (campaigns keep its slow large messages out) and would hold the answer below the
        # sizes where the link's rate is reached; it is named as not measured at that size.
        if set(sizes) - staged:
            sizes = {lib: s for lib, s in sizes.items() if lib not in staged}
        if higher is None:  # a latency alone: at the smallest message, the size latency is quoted at
            size = nearest(set.intersection(*sizes.values()) or set.union(*sizes.values()))
        else:
            size = pick_size(sizes, lambda b: ceiling_at(b)[1] is not None)
        ceil_name, ceil = ceiling_at(size)
        figs = []
        for lib, by_size in per_lib.items():
            p = by_size.get(size)
            if p is None:
                continue
            strategy = "" if own_path(p) else p.strategy_label
            # the figure's own ceiling, as the tables compute it (a staged strategy's, an aggregate's), named where
            # it is not the one the answer states
            fig_name, fig_ceil = avail.of_point(p) if higher else (None, None)
            own = "" if (fig_name, fig_ceil) == (ceil_name, ceil) or not fig_ceil else \
                f"{fig_name} {sig3(fig_ceil)} GB/s"
            f = Figure(lib, p.median, "GB/s" if higher else "us", p.precision, p.capped, strategy,
                       100 * p.median / fig_ceil if fig_ceil else None, own, point=p)
            lat_pts = lat.get((p.configuration, sides, path, strategy))
            if not higher:  # managed placements: the latency is the placement's own small-size time
                lat_pts = by_size
            if lat_pts:
                lp = lat_pts[nearest(lat_pts)]
                f.latency_us, f.latency_bytes = lp.median, lp.bytes
                f.latency_precision, f.latency_capped = lp.precision, lp.capped
                f.latency_point = lp
            figs.append(f)
        figs.sort(key=lambda f: -f.value if higher else f.value)
        missing = sorted(lib for lib in per_lib if size not in per_lib[lib])
        every = set().union(*(set(s) for s in per_lib.values()))
        answers.append(PathAnswer(
            label, sides.label, path, bench, size, ceil_name, ceil,
            ceiling_name(avail, ceil_name, size) if ceil else "",
            network_not_measured(results) if not ceil and higher and path == INTER_NODE else None,
            figs, verdict(figs, bool(higher)), missing, (min(every), max(every)), *_latencies(figs),
            bool(ceil and is_network(avail, ceil_name) and 100 * figs[0].value / ceil > SUSPECT_PCT),
            network_source(avail, ceil_name, size) if ceil and is_network(avail, ceil_name) else None))
    answers.sort(key=lambda a: order(a.path))
    return answers, chosen


def _latencies(figs: list[Figure]) -> tuple[list[Figure], Ranking | None]:
    """The latencies of a path's figures, lowest first, and the verdict on them by the rule the bandwidths follow."""
    lat = sorted((Figure(f.library, f.latency_us, "us", f.latency_precision, f.latency_capped, f.strategy,
                         point=f.latency_point) for f in figs if f.latency_point is not None), key=lambda f: f.value)
    return lat, verdict(lat, False) if lat else None


def strategy_answers(results: Results, chosen: dict, bandwidth: list[Point]) -> list[StrategyAnswer]:
    not_aware = not_cuda_aware(results)
    groups: dict[tuple, list[Point]] = {}
    for p in bandwidth:
        groups.setdefault((p.library, p.benchmark, p.sides, p.path_class), []).append(p)
    # the best library's own path per (benchmark, sides, path, size): a strategy that beats its own library may
    # or may not beat the best configuration there
    best_own: dict[tuple, Point] = {}
    for (_, bench, sides, path), pts in groups.items():
        for p in pts:
            key = (bench, sides, path, p.bytes)
            if own_path(p) and (key not in best_own or p.median > best_own[key].median):
                best_own[key] = p
    out = []
    for (lib, bench, sides, path), pts in groups.items():
        if bench not in chosen.get((sides, path), {bench}):
            continue  # a benchmark answer 1 did not take on that path (bw before bibw)
        direct = {p.bytes: p for p in pts if own_path(p)}
        strat: dict[int, list[Point]] = {}
        for p in pts:
            if not own_path(p):
                strat.setdefault(p.bytes, []).append(p)
        if not strat:
            continue
        label = path_label(sides, path)
        common = set(direct) & set(strat)
        if not common:
            if direct or (pts[0].base_library in not_aware and has_device(sides)):
                continue  # not comparable at one size / answer 1 shows a staged library's figures
            size = max(strat)
            s = best_point(strat[size], True)
            out.append(StrategyAnswer(label, lib, sides.label, bench, size, s.strategy_label, _figure(s), None, None,
                                      False))
            continue
        size = max(common)
        s, d = best_point(strat[size], True), direct[size]
        ratio = claimed_ratio(s, d)
        beats = ratio is not None and ratio.value > 1
        best = best_own.get((bench, sides, path, size))
        others_best = beats and best is not None and best.library != lib
        out.append(StrategyAnswer(label, lib, sides.label, bench, size, s.strategy_label, _figure(s), _figure(d), ratio,
                                  beats, _figure(best) if others_best else None,
                                  claimed_ratio(s, best) if others_best else None))
    out.sort(key=lambda a: (not a.beats, a.direct_GBps is None, order(a.path), a.library))
    return out


def _figure(p: Point) -> Figure:
    """A bandwidth point as an answer's figure (its strategy named)."""
    return Figure(p.library, p.median, "GB/s", p.precision, p.capped, "" if own_path(p) else p.strategy_label, point=p)

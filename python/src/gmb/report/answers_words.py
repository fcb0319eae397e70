# SPDX-License-Identifier: BSD-3-Clause
"""The answers in words: the sentences the terminal (render_text), the report (render_html, answers_table) and
`gmb tables --json` (render_json) print about each answer, from its data (answers_data) alone. The
analysis decides (which figures, which size, what is proven); this module only says it."""

from __future__ import annotations

from typing import Callable

from .answers_data import (CollectiveAnswer, FeatureAnswer, Figure, MissingAnswer, OneSidedAnswer, PartitionedAnswer,
                           PathAnswer, PersistentAnswer, RankedPoints, Ranking, ScalingAnswer, SettingAnswer,
                           StrategyAnswer, SweepAnswer)
from .cells import size_label
from .network import above_every_tool
from .scaling import MODES, crossovers_text, growth_text, stretches_text, sweep_words
from .wording import figure_text, no_difference_text, pct, precision_text, ratio_said, sig3, times


def ranking_said(figures: list[Figure], r: Ranking, head: str, fig: Callable[[Figure], str]) -> str:
    """``head``, then the verdict ``r`` on ``figures`` (best first), each figure as ``fig`` says it."""
    best, worst = figures[0], figures[-1]
    if len(figures) == 1:
        return f"{head}: only {fig(best)}"
    how = ""
    if r.ratio:
        told = ratio_said(r.ratio)
        how = (f"{best.library} moves {told} the bandwidth of {worst.library}" if r.higher
               else f"{worst.library} takes {told} the time of {best.library}")
    if r.fastest and r.slowest:
        return f"{head}: fastest {fig(best)}; slowest {fig(worst)}; {how}"
    if r.slowest:  # the best is not proven ahead of every other one
        return (f"{head}: best {fig(best)}, not proven apart from {', '.join(r.leaders[1:])}; slowest {fig(worst)}; "
                f"{how}")
    if len(figures) == 2:
        return f"{head}: {fig(best)} and {fig(worst)}: {no_difference_text([best.point, worst.point])}"
    return (f"{head}: no configuration of {len(figures)} proven fastest "
            f"({no_difference_text(f.point for f in figures)}); best {fig(best)}, worst {fig(worst)}")


def verdict_said(figures: list[Figure], r: Ranking) -> str:
    """The verdict alone, naming the configurations without their figures."""
    return ranking_said(figures, r, "", lambda f: f.library).removeprefix(": ")


def no_ceiling_said(p: PathAnswer) -> str:
    """Why a path's figures have no percentage of a ceiling ("" where they have one)."""
    if p.ceiling_GBps:
        return ""
    text = "a time figure: no ceiling applies" if not p.ranking.higher else \
        f"no ceiling measured at {size_label(p.bytes)}"
    return text + (f" ({p.network_not_measured})" if p.network_not_measured else "")


def ceiling_finding_said(p: PathAnswer) -> str:
    """What a best figure above the path's network ceiling means ("" where it is not above one)."""
    if not p.above_network_tools:
        return ""
    return above_every_tool(p.ceiling_source, p.ceiling, p.figures[0].value, p.ceiling_GBps)


def path_sentence(p: PathAnswer) -> str:
    """Answer 1 for one path: its size and ceiling, the figures with their verdict, what is above the ceiling and
    which configurations did not measure that size."""
    head = f"{p.path} ({p.benchmark} at {size_label(p.bytes)}" + (
        f", ceiling {p.ceiling_label} {sig3(p.ceiling_GBps)} GB/s)" if p.ceiling_GBps else f"; {no_ceiling_said(p)})")
    with_pct = any(f.pct_of_ceiling is not None for f in p.figures)
    with_latency = any(f.latency_us is not None for f in p.figures)
    text = ranking_said(p.figures, p.ranking, head, lambda f: figure_text(f, with_pct, with_latency))
    if not with_latency:
        text += "; no latency measured"
    finding = ceiling_finding_said(p)
    if finding:
        text += f"; {finding}"
    if p.not_at_size:
        text += f"; not measured at {size_label(p.bytes)}: {', '.join(p.not_at_size)}"
    return text


def _gbps(f: Figure) -> str:
    return f"{sig3(f.value)} GB/s ({precision_text(f.precision, f.capped)})"


def strategy_sentence(s: StrategyAnswer) -> str:
    """Answer 2 for one library and path: its best strategy against its own path (and, where the strategy beats it,
    against the fastest other configuration's own path)."""
    where, at, sf = f"{s.path}, {s.library}", size_label(s.bytes), _gbps(s.strategy_figure)
    d = s.direct_figure
    if d is None:
        return f"{where}: {s.strategy} moves {sf} at {at} (its own path not measured)"
    df = _gbps(d)
    if s.beats:
        text = f"{where}: {s.strategy} moves {sf} at {at}, {ratio_said(s.ratio)} the library's own {df}"
        if s.best_own is not None:
            bf = f"{s.best_own.library}'s own {sig3(s.best_own.value)} GB/s"
            vb = s.versus_best
            text += (f"; {ratio_said(vb)} the fastest configuration's, {bf}" if vb and vb.value > 1 else
                     f"; below the fastest configuration's, {bf}" if vb else
                     f"; not proven apart from the fastest configuration's, {bf}")
        return text
    if s.ratio:
        return f"{where}: the library's own path {df} at {at}; best strategy {s.strategy} {sf}"
    return (f"{where}: best strategy {s.strategy} {sf} and the library's own {df} at {at}: "
            f"{no_difference_text([s.strategy_figure.point, d.point])}")


def setting_sentence(s: SettingAnswer) -> str:
    return f"{s.library}: {s.setting}: {s.effect}"


def collective_sentence(c: CollectiveAnswer) -> str:
    """Answer 4 for one operation, rank count and memory: every configuration's bus bandwidth, then the verdict."""
    listed = ", ".join(f"{f.library} {_gbps(f)}" for f in c.figures)
    head = f"{c.operation}, {c.ranks} ranks, {c.memory or 'unknown'} memory, at {size_label(c.bytes)}: {listed}"
    r = c.ranking
    if len(c.figures) == 1:
        tail = "no MPI figure to compare with" if c.nccl else "no NCCL figure to compare with"
    elif r.fastest and r.slowest:
        tail = f"{r.fastest} fastest, {ratio_said(r.ratio)} {r.slowest}"
    elif r.slowest:
        tail = f"{', '.join(r.leaders)} not proven apart, {ratio_said(r.ratio)} {r.slowest}"
    else:
        tail = no_difference_text(f.point for f in c.figures)
    if c.not_at_size:
        tail += f"; not measured at {size_label(c.bytes)}: {', '.join(c.not_at_size)}"
    return f"{head}; {tail}"


def _sizes_said(sizes: tuple[int, ...]) -> str:
    if not sizes:
        return ""
    return (f"{len(sizes)} size{'s' if len(sizes) > 1 else ''} ({size_label(sizes[0])}"
            + (f" to {size_label(sizes[-1])})" if len(sizes) > 1 else ")"))


def _said_together(m: MissingAnswer) -> list[str]:
    """The subjects said compactly: benchmarks missing on the same paths share one mention,
    "openmpi-5.0.7-ucx bibw/bw NVLink pair, same GPU"."""
    benches: dict[tuple, list[str]] = {}
    for s in m.subjects:
        benches.setdefault((s.library, s.where, _sizes_said(s.sizes)), []).append(s.benchmark)
    places: dict[tuple, list[str]] = {}
    for (lib, where, sizes), bs in benches.items():
        places.setdefault((lib, "/".join(sorted(set(bs))), sizes), []).append(where)
    out = []
    for (lib, bench, sizes), wheres in places.items():
        text = " ".join(filter(None, [lib, bench, ", ".join(w for w in wheres if w)]))
        out.append(text + (f" at {sizes}" if sizes else ""))
    return out


def missing_sentence(m: MissingAnswer, cause: str | None = None) -> str:
    """Answer 5 for one cause: what it left unmeasured (at most five mentions), how many launches ended that way,
    and the cause (``cause``: shortened by the caller; the whole of it by default)."""
    said = _said_together(m)
    shown = said if len(said) <= 5 else said[:4] + [f"and {len(said) - 4} more"]
    count = f", {m.launches} launch{'es' if m.launches != 1 else ''}" if m.launches else ""
    return f"{'; '.join(shown)}{count}: {m.cause if cause is None else cause}"


def _ranked_said(r: RankedPoints, unit: str) -> str:
    """The best configuration of a feature at one size, with its precision (and % of its ceiling: bandwidth), and
    whether it is proven ahead of every other one."""
    best = r.points[0]
    parts = [precision_text(best.precision, best.capped)]
    if unit == "GB/s":
        parts.append(f"{pct(100 * best.median / r.ceiling_GBps)} of ceiling {r.ceiling}" if r.ceiling_GBps else
                     f"no ceiling measured at {size_label(best.bytes)}")
    text = f"{best.library} {best.operation} {sig3(best.median)} {unit} ({', '.join(parts)})"
    if len(r.points) == 1:
        return text + ", the only one measured"
    if r.apart_from_all:
        second = r.points[1]
        return text + (f", fastest of {len(r.points)}; next {second.library} {second.operation} "
                       f"{sig3(second.median)} {unit}")
    return text + f", not proven fastest of {len(r.points)}: not apart from {r.near.library} {r.near.operation}"


def _one_sided_said(a: OneSidedAnswer) -> str:
    said = []
    if a.bandwidth:
        said.append(f"bandwidth at {size_label(a.bandwidth.bytes)}: " + _ranked_said(a.bandwidth, "GB/s"))
    if a.latency:
        said.append(f"latency at {size_label(a.latency.bytes)} B: " + _ranked_said(a.latency, "us"))
    return f"{a.path}: {'; '.join(said)}"


def _persistent_said(a: PersistentAnswer) -> str:
    return (f"{a.library} ({', '.join(a.measured)}): persistent calls {times(a.lowest)} to {times(a.highest)} the "
            f"speed of the regular ones over {a.points} points; clearly faster at {a.faster}, clearly slower at "
            f"{a.slower}, not proven different at {a.points - a.faster - a.slower}")


def _partitioned_said(a: PartitionedAnswer) -> str:
    per = []
    for parts, by_ready in a.overlap_pct.items():
        block, after = by_ready.get("per-block"), by_ready.get("after-kernel")
        if block is not None and after is not None:
            per.append(f"P={parts} {block:.0f} % vs {after:.0f} % ({block - after:+.0f} points)")
        else:
            per.append(f"P={parts} " + ", ".join(f"{ready} {v:.0f} %" for ready, v in sorted(by_ready.items())))
    return f"{a.library}, {a.path}, at {size_label(a.bytes)}: overlap per-block vs after-kernel: {'; '.join(per)}"


def _scaling_said(a: ScalingAnswer) -> str:
    best = a.series[0]
    said = "; ".join(f"{s.configuration} {growth_text(s.growth)}" for s in a.series)
    verdict = ""
    if len(a.series) > 1:
        verdict = (f"; {best.configuration} scales best" if a.scales_best
                   else "; none proven to scale best (the growths' ratio not proven below 1, or a point carries no "
                        "claim)")
    nodes = " -> ".join(map(str, best.nodes))
    return (f"{best.operation} ({best.memory or 'memory not recorded'}), {MODES.get(best.scaling, best.scaling)} at "
            f"{best.size}, {nodes} nodes, {best.ranks_per_node} ranks per node: time growth {said}{verdict}")


def _sweep_said(a: SweepAnswer) -> str:
    s = a.sweep
    cross = crossovers_text(s)
    return (f"{s.operation} ({s.memory or 'memory not recorded'}), {sweep_words(s.nodes)}, "
            f"{s.ranks_per_node or '?'} ranks per node: {stretches_text(s)}; "
            + (f"crossover {cross}" if cross else "no crossover"))


_FEATURE_SAID = {OneSidedAnswer: _one_sided_said, PersistentAnswer: _persistent_said,
                 PartitionedAnswer: _partitioned_said, ScalingAnswer: _scaling_said, SweepAnswer: _sweep_said}


def feature_sentence(a: FeatureAnswer) -> str:
    """Answer 6: one line on one-sided, persistent or partitioned communication, scaling or a size sweep."""
    return _FEATURE_SAID[type(a)](a)

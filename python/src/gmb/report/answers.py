# SPDX-License-Identifier: BSD-3-Clause
"""Answers: what a person choosing an MPI library (and its settings) for GPU data wants to know, from a store.

The report's first section, also printed at the end of `gmb run`. Six answers, each a short sentence or table
row with numbers:

1. Per path present (an NVLink or PCIe pair of GPUs, one GPU, host -> device pinned or pageable and back, host,
   managed placements): the best and the worst library configuration by bandwidth (managed: by time) at one
   stated size, with % of the measured ceiling at that size and the 8 B one-way latency of each.
2. Where a gmb strategy (staged, pipelined, pipelined-gpu) beats the library's own path, and by how many times.
3. The settings that mattered (the doctor's findings, `meta.settings_that_matter`).
4. Collectives: bus bandwidth per operation and rank count, MPI configurations next to NCCL.
5. What was not measured, and why, a cause repeated over many points said once.
6. Where measured: the best one-sided (RMA) configuration per path, the range of the persistent calls' speedup
   over the regular ones, and the overlap partitioned communication buys by marking partitions ready per block of
   the kernel rather than after it.

Rules. Figures are the combined points of tables.combine (median over repetitions, interval over repetitions).
A configuration is called fastest (or a strategy said to beat the library) only when its interval does not
overlap the other's (tables.clearly_apart); otherwise the answer says the figures are within precision of each
other. The size is stated: the largest size every configuration on that path measured, preferring a size at which
a ceiling of that path was measured (peaks.ceiling_for). Precision: half the interval relative to the median
(Point.precision), "cap reached" when an adaptive launch stopped at its cap before reaching its target.
"""

from __future__ import annotations

import html
import json
import math
import textwrap
from dataclasses import dataclass, field
from statistics import median

from ..results.peaks import bidirectional, ceiling_for, ceilings
from ..machine.identity import transport_of
from ..results.records import one_sided, placed
from ..campaign.spec import parse_memory
from ..results.store import Store
from ..machine.load import busy_launch
from .tables import Point, clearly_apart, collective_rows, combine, latency_rows, pairwise_bandwidth, \
    pairwise_time_rows, partitioned_overlap, persistent_pairs, results_where, size_label, within_one_launch

WIDTH = 100  # text columns
LATENCY_BYTES = 8
DIRECT = (None, "", "direct")
BANDWIDTH_BENCHMARKS = ("bw", "bibw", "mbw")  # preferred in this order on one path
PRECISION_NOTE = ("Figures are medians over repetitions (launches). Precision (+-x %): half the width of the figure's "
                  "interval relative to the median: with several launches, the 95 % t-interval of the mean of the "
                  "launch medians widened to cover each launch's 95 % CI of the median; with one launch, that "
                  "launch's CI, and a claim from it holds within that launch only (said so). \"cap reached\": an "
                  "adaptive launch stopped at its iteration or time cap before reaching its target precision. "
                  "\"Fastest\" and \"x times\" only where two intervals do not overlap. A configuration's name "
                  "says what tells it from the library's other configurations (a setting, the binding, the hosts; "
                  "an option in parentheses).")

# path labels, in the order the answers list them
_GPU_PAIR = {"nvlink": "NVLink pair", "pcie": "PCIe pair", "peer": "GPU pair (peer)",
             "inter-node": "GPUs on two nodes", "same-gpu": "same GPU"}
_HOST_SIDE = {"pinned": "pinned host", "host": "pageable host"}
_HOST_PATH = {"host": "", "cross-socket": ", cross-socket", "inter-node": ", two nodes"}
_ORDER = ["NVLink pair", "PCIe pair", "GPU pair (peer)", "GPUs on two nodes", "same GPU",
          "pinned host -> device", "pageable host -> device", "device -> pinned host", "device -> pageable host",
          "host", "host, cross-socket", "host, two nodes", "host, pinned buffers", "host, pinned buffers, cross-socket"]


# ---------------------------------------------------------------------------------------------------- data form
@dataclass
class Figure:
    """One library configuration's figure at the answer's size."""
    library: str
    value: float  # GB/s (bandwidth, bus bandwidth) or us (time)
    unit: str  # "GB/s" or "us"
    precision: float | None  # half the interval relative to the median (0.03: +-3 %)
    capped: bool
    strategy: str = ""  # "" for the library's own path; a gmb strategy for a library that is not CUDA-aware
    pct_of_ceiling: float | None = None
    latency_us: float | None = None  # one-way latency on the same memory and path
    latency_bytes: int | None = None  # the size it was measured at (8 B, else the nearest)
    latency_precision: float | None = None
    latency_capped: bool = False
    point: Point | None = field(default=None, repr=False, compare=False)


@dataclass
class PathAnswer:
    """Answer 1: the configurations on one path at one size, best first."""
    path: str  # "NVLink pair", "pinned host -> device", ...
    memory: str
    path_class: str | None
    benchmark: str
    bytes: int
    ceiling: str | None  # what bounds it (peaks.ceiling_for's name), None without one at that size
    ceiling_GBps: float | None
    no_ceiling: str  # why there is no percentage ("" with a ceiling)
    figures: list[Figure]
    fastest: str | None  # the library clearly ahead of every other one
    slowest: str | None  # the library clearly behind the best
    ratio: float | None  # best / slowest (time: slowest / best) when clearly apart
    not_at_size: list[str]  # configurations on that path that did not measure that size
    sentence: str


@dataclass
class StrategyAnswer:
    """Answer 2: a library's best gmb strategy against its own path, same memory, path and size."""
    path: str
    library: str
    memory: str
    benchmark: str
    bytes: int
    strategy: str  # Point.strategy_label
    strategy_GBps: float
    strategy_precision: float | None
    direct_GBps: float | None  # None: the library's own path was not measured there
    direct_precision: float | None
    ratio: float | None  # strategy / direct, only when clearly apart
    beats: bool
    sentence: str


@dataclass
class SettingAnswer:
    """Answer 3: a setting that changed the doctor's answer, and how."""
    library: str
    setting: str
    effect: str
    sentence: str


@dataclass
class CollectiveAnswer:
    """Answer 4: one operation at one rank count and memory, every configuration at one size."""
    operation: str
    ranks: int
    memory: str
    bytes: int
    figures: list[Figure]  # NCCL first, then the others by bus bandwidth
    fastest: str | None
    slowest: str | None
    ratio: float | None
    nccl: list[str]  # the NCCL configurations among the figures
    sentence: str


@dataclass
class MissingAnswer:
    """Answer 5: one cause, and what it left unmeasured."""
    cause: str
    subjects: list[str]
    launches: int  # launches that ended this way (0: planner skips and records only)
    sentence: str


@dataclass
class FeatureAnswer:
    """Answer 6: one line on one-sided, persistent or partitioned communication."""
    topic: str  # one of FEATURE_TOPICS
    sentence: str


# answer 6's topics, in the order and under the headings the answers show them
FEATURE_TOPICS = {"one-sided": "One-sided communication (RMA), best per path",
                  "persistent": "Persistent calls against the regular ones",
                  "partitioned": "Partitioned communication: overlap per-block vs after the kernel"}


@dataclass
class Answers:
    paths: list[PathAnswer]
    strategies: list[StrategyAnswer]
    settings: list[SettingAnswer]
    settings_note: str  # a sentence when no finding is listed: none found, or not checked
    collectives: list[CollectiveAnswer]
    missing: list[MissingAnswer]
    empty: str = ""  # the one-line statement why there is no answer at all ("" when there are figures)
    features: list[FeatureAnswer] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what holds for every answer: launches per point, a busy host


# ---------------------------------------------------------------------------------------------------- formatting
def sig3(v: float) -> str:
    """A number with three significant figures, never in exponent form: 1832 -> 1830, 0.35 -> 0.350."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    digits = 2 - math.floor(math.log10(abs(v)))
    if digits <= 0:
        return str(int(round(v, digits)))
    return f"{v:.{digits}f}"


def sig2(v: float) -> str:
    """Two significant figures, for precisions: 0.481 -> 0.48, 6.74 -> 6.7, 39.0 -> 39."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    digits = 1 - math.floor(math.log10(abs(v)))
    return str(int(round(v, digits))) if digits <= 0 else f"{v:.{digits}f}"


def _pct(v: float) -> str:
    return f"{v:.1f} %" if abs(v) >= 1 else f"{sig3(v)} %"


def precision_text(precision: float | None, capped: bool) -> str:
    """'+-3.1 %', with ', cap reached' when the launch stopped at its cap."""
    text = f"+-{sig2(100 * precision)} %" if precision is not None else "precision unknown"
    return text + (", cap reached" if capped else "")


def _times(r: float) -> str:
    return f"{sig3(r)}x"


def path_label(memory: str, path_class: str | None) -> str:
    """What a person calls the path of a (memory, path class): "NVLink pair", "pinned host -> device", ..."""
    try:
        send, recv = parse_memory(memory)
    except ValueError:
        return f"{memory or 'unknown memory'}" + (f" ({path_class})" if path_class else "")
    if send.startswith("managed") or recv.startswith("managed"):
        where = f"managed {send.partition(':')[2] or 'unplaced'} -> {recv.partition(':')[2] or 'unplaced'}"
        return where + (f" ({_GPU_PAIR.get(path_class or '', path_class)})" if path_class else "")
    if send == recv == "device":
        return _GPU_PAIR.get(path_class or "", "device -> device" + (f" ({path_class})" if path_class else ""))
    if send in _HOST_SIDE and recv == "device":
        label = f"{_HOST_SIDE[send]} -> device"
    elif send == "device" and recv in _HOST_SIDE:
        label = f"device -> {_HOST_SIDE[recv]}"
    elif send in _HOST_SIDE and recv in _HOST_SIDE:
        base = ("host" if send == recv == "host" else "host, pinned buffers" if send == recv
                else f"host, {_HOST_SIDE[send].split()[0]} -> {_HOST_SIDE[recv].split()[0]}")
        if path_class in _HOST_PATH:
            return base + _HOST_PATH[path_class]
        return base + (f" ({path_class})" if path_class else "")
    else:
        return memory + (f" ({path_class})" if path_class else "")
    return label + (f" ({path_class})" if path_class and path_class != "host-device" else "")


def _order(label: str) -> tuple:
    return (_ORDER.index(label) if label in _ORDER else len(_ORDER) + label.startswith("managed"), label)


def _short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


# ---------------------------------------------------------------------------------------------------- helpers
def _not_aware(store: Store) -> set[str]:
    """Libraries whose contexts say not CUDA-aware (and none says aware)."""
    verdicts: dict[str, set] = {}
    for c in store.contexts():
        verdicts.setdefault(c["library"], set()).add(c["gpu_awareness"])
    return {lib for lib, v in verdicts.items() if "not aware" in v and "aware" not in v}


def _nccl_libraries(store: Store) -> set[str]:
    out = {lib for lib in store.libraries() if lib.lower().startswith("nccl")}
    for c in store.contexts():
        try:
            if transport_of(json.loads(c["json"] or "{}")) == "nccl":
                out.add(c["library"])
        except ValueError:
            continue
    return out


def _direct(p: Point) -> bool:
    return p.strategy in DIRECT


def _has_device(memory: str) -> bool:
    return "device" in memory.split(":") and "managed" not in memory


def _best(points: list[Point], higher: bool) -> Point:
    return max(points, key=lambda p: p.median) if higher else min(points, key=lambda p: p.median)


def _pick_size(sizes_by_config: dict[str, set[int]], with_ceiling) -> int:
    """The largest size every configuration measured, preferring one with a ceiling; when no size is common to all,
    the one the most configurations measured (same preferences)."""
    every = set().union(*sizes_by_config.values())
    return max(every, key=lambda b: (sum(b in s for s in sizes_by_config.values()), with_ceiling(b), b))


def _nearest(sizes, target: int = LATENCY_BYTES) -> int:
    return min(sizes, key=lambda b: (abs(math.log2(b / target)), b))


def _measured(points: list[Point]) -> list[Point]:
    """The points the answers compare: buffers allocated once per launch (not the --fresh-buffers stress mode),
    messages of at least one byte."""
    return [p for p in points if not p.fresh and p.bytes > 0]


def _two_sided(points: list[Point]) -> list[Point]:
    """The regular two-sided points (no one-sided operation, persistent form or partitions: answer 6 has those)."""
    return [p for p in points if not p.operation]


def _bandwidth_points(store: Store) -> list[Point]:
    """Bandwidth between pairs of ranks outside managed placements: what answers 1 and 2 rank."""
    return _two_sided(_measured(combine(results_where(store, lambda rec: pairwise_bandwidth(rec)
                                                      and not placed(rec)))))


def _latencies(latency: list[Point]) -> dict[tuple, dict[int, Point]]:
    """One-way latency points by (library, memory, path class, strategy or "" for the library's own path)."""
    out: dict[tuple, dict[int, Point]] = {}
    for p in latency:
        key = (p.configuration, p.memory, p.path_class, "" if _direct(p) else p.strategy_label)
        out.setdefault(key, {})[p.bytes] = p
    return out


def _relative(a: Point, b: Point, higher: bool) -> float | None:
    """How many times a is better than b, None when b's figure is zero."""
    if higher:
        return a.median / b.median if b.median > 0 else None
    return b.median / a.median if a.median > 0 else None


def _verdict(figs: list[Figure], higher: bool) -> tuple[str | None, str | None, float | None, list[Figure]]:
    """(clearly fastest library, clearly slowest library, best/slowest ratio, leaders): the leaders are the
    figures whose interval overlaps the best one's."""
    best, worst = figs[0], figs[-1]
    leaders = [f for f in figs if f is best or not clearly_apart(best.point, f.point)]
    fastest = best.library if len(figs) > 1 and len(leaders) == 1 else None
    apart = len(figs) > 1 and clearly_apart(best.point, worst.point)
    slowest = worst.library if apart else None
    ratio = _relative(best.point, worst.point, higher) if apart else None
    return fastest, slowest, ratio, leaders


def _who(f: Figure) -> str:
    return f.library + (f" (not CUDA-aware: {f.strategy})" if f.strategy else "")


def _figure_text(f: Figure, with_pct: bool, with_latency: bool = True) -> str:
    parts = [precision_text(f.precision, f.capped)]
    if with_pct and f.pct_of_ceiling is not None:
        parts.append(f"{_pct(f.pct_of_ceiling)} of ceiling")
    text = f"{_who(f)} {sig3(f.value)} {f.unit} ({', '.join(parts)})"
    if with_latency:
        text += f", {latency_text(f)}"
    return text


def latency_text(f: Figure) -> str:
    if f.latency_us is None:
        return "latency not measured"
    figure = f"{sig3(f.latency_us)} us ({precision_text(f.latency_precision, f.latency_capped)})"
    if f.latency_bytes == LATENCY_BYTES:
        return f"8 B latency {figure}"
    return f"latency {figure} at {size_label(f.latency_bytes)} B (8 B not measured)"


# ---------------------------------------------------------------------------------------------------- answer 1
def _path_groups(store: Store, bandwidth: list[Point], latency: list[Point]
                 ) -> list[tuple[str, str, str | None, list[Point], bool | None]]:
    """(benchmark, memory, path class, points, higher is better) per path present: bandwidth between pairs of
    ranks (bw; bibw or mbw too only where a configuration measured no bw on that path), the managed placements
    by time, and paths where only a latency was measured by that latency (higher is better: None)."""
    groups: dict[tuple, list[Point]] = {}
    for p in bandwidth:
        groups.setdefault((p.memory, p.path_class), []).append(p)
    out = []
    for (memory, path), pts in groups.items():
        libs = {}
        for p in pts:
            libs.setdefault(p.benchmark, set()).add(p.configuration)
        first = next((b for b in BANDWIDTH_BENCHMARKS if b in libs), sorted(libs)[0])
        for bench in sorted(libs, key=lambda b: (b != first, BANDWIDTH_BENCHMARKS.index(b)
                                                 if b in BANDWIDTH_BENCHMARKS else len(BANDWIDTH_BENCHMARKS), b)):
            # bw answers for the path; another benchmark only for the configurations that measured no bw there
            if bench == first or libs[bench] - libs[first]:
                out.append((bench, memory, path, [p for p in pts if p.benchmark == bench], True))
    managed: dict[tuple, list[Point]] = {}
    placed_rows = [r for r in pairwise_time_rows(store)[0] if placed(json.loads(r["json"] or "{}"))]
    for p in _measured(combine(placed_rows)):
        managed.setdefault((p.benchmark, p.memory, p.path_class), []).append(p)
    out += [(bench, memory, path, pts, False) for (bench, memory, path), pts in managed.items()]
    # paths with a latency and no bandwidth measured: answered by the latency
    latency_only: dict[tuple, list[Point]] = {}
    for p in latency:
        if (p.memory, p.path_class) not in groups:
            latency_only.setdefault((p.benchmark, p.memory, p.path_class), []).append(p)
    out += [(bench, memory, path, pts, None) for (bench, memory, path), pts in latency_only.items()]
    return out


def _path_answers(store: Store, bandwidth: list[Point], latency: list[Point]) -> tuple[list[PathAnswer], dict]:
    avail = ceilings(store)
    not_aware = _not_aware(store)
    lat = _latencies(latency)
    answers, chosen = [], {}
    for bench, memory, path, pts, higher in _path_groups(store, bandwidth, latency):
        label = path_label(memory, path)
        chosen.setdefault((memory, path), set()).add(bench)
        try:
            send, recv = parse_memory(memory)
        except ValueError:
            send = recv = None
        # each library's figures by size: its own path; a library that is not CUDA-aware: its best strategy
        per_lib: dict[str, dict[int, Point]] = {}
        staged: set[str] = set()  # not CUDA-aware: figures of gmb's strategies
        for lib in sorted({p.library for p in pts}):
            mine = [p for p in pts if p.library == lib]
            own = [p for p in mine if _direct(p)]
            if not own and mine[0].base_library in not_aware and _has_device(memory):
                own = mine
                staged.add(lib)
            by_size: dict[int, list[Point]] = {}
            for p in own:
                by_size.setdefault(p.bytes, []).append(p)
            if by_size:
                per_lib[lib] = {b: _best(v, higher) for b, v in by_size.items()}
        if not per_lib:
            continue  # only gmb strategies of CUDA-aware libraries here: answer 2 says what they do

        def ceiling_at(b: int):
            return ceiling_for(bench, path, send, recv, b, avail) if higher and send else (None, None)

        sizes = {lib: set(s) for lib, s in per_lib.items()}
        # The size is that of the configurations moving device memory themselves: a staged one is measured over
        # fewer, smaller sizes (campaigns keep its slow large messages out) and would hold the answer below the
        # sizes where the link's rate is reached; it is named as not measured at that size.
        if set(sizes) - staged:
            sizes = {lib: s for lib, s in sizes.items() if lib not in staged}
        if higher is None:  # a latency alone: at the smallest message, the size latency is quoted at
            size = _nearest(set.intersection(*sizes.values()) or set.union(*sizes.values()))
        else:
            size = _pick_size(sizes, lambda b: ceiling_at(b)[1] is not None)
        ceil_name, ceil = ceiling_at(size)
        figs = []
        for lib, by_size in per_lib.items():
            p = by_size.get(size)
            if p is None:
                continue
            strategy = "" if _direct(p) else p.strategy_label
            f = Figure(lib, p.median, "GB/s" if higher else "us", p.precision, p.capped, strategy,
                       100 * p.median / ceil if ceil else None, point=p)
            lat_pts = lat.get((p.configuration, memory, path, strategy))
            if not higher:  # managed placements: the latency is the placement's own small-size time
                lat_pts = by_size
            if lat_pts:
                lp = lat_pts[_nearest(lat_pts)]
                f.latency_us, f.latency_bytes = lp.median, lp.bytes
                f.latency_precision, f.latency_capped = lp.precision, lp.capped
            figs.append(f)
        figs.sort(key=lambda f: -f.value if higher else f.value)
        fastest, slowest, ratio, leaders = _verdict(figs, higher)
        no_ceiling = ("" if ceil else "a time figure: no ceiling applies" if not higher
                      else f"no ceiling measured at {size_label(size)}")
        missing = sorted(lib for lib in per_lib if size not in per_lib[lib])
        head = f"{label} ({bench} at {size_label(size)}" + (
            f", ceiling {ceil_name} {sig3(ceil)} GB/s)" if ceil else f"; {no_ceiling})")
        sentence = _path_sentence(head, figs, fastest, slowest, ratio, leaders, higher, ceil is not None)
        if missing:
            sentence += f"; not measured at {size_label(size)}: {', '.join(missing)}"
        answers.append(PathAnswer(label, memory, path, bench, size, ceil_name, ceil, no_ceiling, figs, fastest,
                                  slowest, ratio, missing, sentence))
    answers.sort(key=lambda a: _order(a.path))
    return answers, chosen


def _path_sentence(head, figs, fastest, slowest, ratio, leaders, higher, with_pct) -> str:
    with_latency = any(f.latency_us is not None for f in figs)
    text = _path_verdict(head, figs, fastest, slowest, ratio, leaders, higher,
                         lambda f: _figure_text(f, with_pct, with_latency))
    return text if with_latency else f"{text}; no latency measured"


def _path_verdict(head, figs, fastest, slowest, ratio, leaders, higher, fig) -> str:
    best, worst = figs[0], figs[-1]
    if len(figs) == 1:
        return f"{head}: only {fig(best)}"
    how = (f"{best.library} moves {_times(ratio)} the bandwidth of {worst.library}" if higher
           else f"{worst.library} takes {_times(ratio)} the time of {best.library}") if ratio else ""
    if fastest or slowest:
        how += within_one_launch(f.point for f in figs)
    if fastest and slowest:
        return f"{head}: fastest {fig(best)}; slowest {fig(worst)}; {how}"
    if slowest:  # the best is not clearly ahead of every other one
        others = ", ".join(f.library for f in leaders if f is not best)
        return (f"{head}: best {fig(best)}, within precision of {others}; slowest {fig(worst)}; {how}")
    if len(figs) == 2:
        return f"{head}: {fig(best)} and {fig(worst)} are within precision of each other"
    return (f"{head}: all {len(figs)} configurations within precision of each other; best {fig(best)}, "
            f"worst {fig(worst)}")


# ---------------------------------------------------------------------------------------------------- answer 2
def _strategy_answers(store: Store, chosen: dict, bandwidth: list[Point]) -> list[StrategyAnswer]:
    not_aware = _not_aware(store)
    groups: dict[tuple, list[Point]] = {}
    for p in bandwidth:
        groups.setdefault((p.library, p.benchmark, p.memory, p.path_class), []).append(p)
    # the best library's own path per (benchmark, memory, path, size): a strategy that beats its own library may
    # or may not beat the best configuration there
    best_own: dict[tuple, Point] = {}
    for (_, bench, memory, path), pts in groups.items():
        for p in pts:
            key = (bench, memory, path, p.bytes)
            if _direct(p) and (key not in best_own or p.median > best_own[key].median):
                best_own[key] = p
    out = []
    for (lib, bench, memory, path), pts in groups.items():
        if bench not in chosen.get((memory, path), {bench}):
            continue  # a benchmark answer 1 did not take on that path (bw before bibw)
        direct = {p.bytes: p for p in pts if _direct(p)}
        strat: dict[int, list[Point]] = {}
        for p in pts:
            if not _direct(p):
                strat.setdefault(p.bytes, []).append(p)
        if not strat:
            continue
        label = path_label(memory, path)
        common = set(direct) & set(strat)
        if not common:
            if direct or (pts[0].base_library in not_aware and _has_device(memory)):
                continue  # not comparable at one size / answer 1 shows a staged library's figures
            size = max(strat)
            s = _best(strat[size], True)
            out.append(StrategyAnswer(label, lib, memory, bench, size, s.strategy_label, s.median, s.precision,
                                      None, None, None, False,
                                      f"{label}, {lib}: {s.strategy_label} moves {sig3(s.median)} GB/s "
                                      f"({precision_text(s.precision, s.capped)}) at {size_label(size)} (its own "
                                      f"path not measured)"))
            continue
        size = max(common)
        s, d = _best(strat[size], True), direct[size]
        apart = clearly_apart(s, d)
        beats = apart and s.median > d.median
        ratio = s.median / d.median if apart and d.median > 0 else None
        sf = f"{sig3(s.median)} GB/s ({precision_text(s.precision, s.capped)})"
        df = f"{sig3(d.median)} GB/s ({precision_text(d.precision, d.capped)})"
        if beats:
            sentence = (f"{label}, {lib}: {s.strategy_label} moves {sf} at {size_label(size)}, "
                        f"{_times(ratio)} the library's own {df}{within_one_launch([s, d])}")
            best = best_own.get((bench, memory, path, size))
            if best is not None and best.library != lib:
                bf = f"{best.library}'s own {sig3(best.median)} GB/s"
                sentence += (f"; {_times(s.median / best.median)} the fastest configuration's, {bf}"
                             if clearly_apart(s, best) and s.median > best.median else
                             f"; below the fastest configuration's, {bf}" if clearly_apart(s, best) else
                             f"; within precision of the fastest configuration's, {bf}")
        elif apart:
            sentence = (f"{label}, {lib}: the library's own path {df} at {size_label(size)}; best strategy "
                        f"{s.strategy_label} {sf}")
        else:
            sentence = (f"{label}, {lib}: best strategy {s.strategy_label} {sf} and the library's own {df} at "
                        f"{size_label(size)} are within precision of each other")
        out.append(StrategyAnswer(label, lib, memory, bench, size, s.strategy_label, s.median, s.precision,
                                  d.median, d.precision, ratio, beats, sentence))
    out.sort(key=lambda a: (not a.beats, a.direct_GBps is None, _order(a.path), a.library))
    return out


# ---------------------------------------------------------------------------------------------------- answer 3
def _settings_answers(store: Store) -> tuple[list[SettingAnswer], str]:
    try:
        found = json.loads(store.meta("settings_that_matter") or "[]")
    except ValueError:
        found = []
    if not found:
        return [], "not checked in this campaign (no GPU, or no engine built with CUDA)"
    out, quiet = [], []
    for s in found:
        for f in s.get("findings") or []:
            out.append(SettingAnswer(s["library"], f["setting"], f["effect"],
                                     f"{s['library']}: {f['setting']}: {f['effect']}"))
        if not s.get("findings"):
            quiet.append(s["library"])
    note = ""
    if not out:
        note = f"none found: no setting changed the doctor's answer ({', '.join(quiet)})"
    elif quiet:
        note = f"no setting changed the doctor's answer for {', '.join(quiet)}"
    return out, note


# ---------------------------------------------------------------------------------------------------- answer 4
def _collective_answers(store: Store) -> list[CollectiveAnswer]:
    nccl = _nccl_libraries(store)
    groups: dict[tuple, list[Point]] = {}
    for p in _measured(combine(collective_rows(store))):
        groups.setdefault((p.operation or "", p.ranks or 0, p.memory), []).append(p)
    out = []
    for (op, ranks, memory), pts in groups.items():
        per_lib: dict[str, dict[int, Point]] = {}
        for p in pts:
            cur = per_lib.setdefault(p.library, {}).get(p.bytes)
            if cur is None or p.median > cur.median:
                per_lib[p.library][p.bytes] = p
        size = _pick_size({lib: set(s) for lib, s in per_lib.items()}, lambda b: False)
        figs = [Figure(lib, s[size].median, "GB/s", s[size].precision, s[size].capped, point=s[size])
                for lib, s in per_lib.items() if size in s]
        figs.sort(key=lambda f: -f.value)
        fastest, slowest, ratio, leaders = _verdict(figs, True)
        shown = sorted(figs, key=lambda f: (f.point.base_library not in nccl, -f.value))
        listed = ", ".join(f"{f.library} {sig3(f.value)} GB/s ({precision_text(f.precision, f.capped)})"
                           for f in shown)
        head = f"{op}, {ranks} ranks, {memory or 'unknown'} memory, at {size_label(size)}: {listed}"
        if len(figs) == 1:
            tail = ("no NCCL figure to compare with" if figs[0].point.base_library not in nccl
                    else "no MPI figure to compare with")
        elif fastest and slowest:
            tail = f"{fastest} fastest, {_times(ratio)} {slowest}{within_one_launch(f.point for f in figs)}"
        elif slowest:
            tail = (f"{', '.join(f.library for f in leaders)} within precision of each other, "
                    f"{_times(ratio)} {slowest}{within_one_launch(f.point for f in figs)}")
        else:
            tail = "within precision of each other"
        missing = sorted(lib for lib in per_lib if size not in per_lib[lib])
        if missing:
            tail += f"; not measured at {size_label(size)}: {', '.join(missing)}"
        out.append(CollectiveAnswer(op, ranks, memory, size, shown, fastest, slowest, ratio,
                                    [f.library for f in shown if f.point.base_library in nccl], f"{head}; {tail}"))
    out.sort(key=lambda a: (a.memory != "device", "device" not in a.memory, a.memory, a.operation, a.ranks))
    return out


# ---------------------------------------------------------------------------------------------------- answer 6
def _ranked_text(points: list[Point], higher: bool, unit: str, avail=None) -> str:
    """The best configuration (library and operation) of some points of one size, with its precision and % of
    ceiling, and whether it is clearly ahead of the next one."""
    ranked = sorted(points, key=lambda p: -p.median if higher else p.median)
    best = ranked[0]
    parts = [precision_text(best.precision, best.capped)]
    if avail is not None:
        send, _, recv = best.memory.partition(":")
        name, ceil = ceiling_for(best.benchmark, best.path_class, send, recv, best.bytes, avail, best.strategy)
        parts.append(f"{_pct(100 * best.median / ceil)} of ceiling {name}" if ceil else
                     f"no ceiling measured at {size_label(best.bytes)}")
    text = f"{best.library} {best.operation} {sig3(best.median)} {unit} ({', '.join(parts)})"
    if len(ranked) == 1:
        return text + ", the only one measured"
    second = ranked[1]
    if clearly_apart(best, second):
        return text + (f", fastest of {len(ranked)}{within_one_launch(ranked)}; next {second.library} "
                       f"{second.operation} {sig3(second.median)} {unit}")
    return text + f", within precision of {second.library} {second.operation}"


def _one_sided_answers(store: Store) -> list[FeatureAnswer]:
    """Per path, the best one-sided configuration (library, operation, synchronisation, window creation) by one-way
    bandwidth at the largest size all measured (preferring one with a ceiling), and by latency at 8 B."""
    avail = ceilings(store)
    points = _measured(combine(results_where(store, one_sided)))
    by_path: dict[tuple, dict[str, list[Point]]] = {}
    for p in points:
        kind = "bandwidth" if p.metric == "bw" and not bidirectional(p.benchmark) else "latency" if p.metric == "t" \
            else None
        if kind:
            by_path.setdefault((p.memory, p.path_class), {}).setdefault(kind, []).append(p)
    out = []
    for (memory, path), kinds in by_path.items():
        said = []
        bandwidth = kinds.get("bandwidth", [])
        if bandwidth:
            sizes: dict[str, set[int]] = {}
            for p in bandwidth:
                sizes.setdefault(f"{p.library} {p.operation}", set()).add(p.bytes)
            send, _, recv = memory.partition(":")
            size = _pick_size(sizes, lambda b: ceiling_for(bandwidth[0].benchmark, path, send, recv, b, avail)[1]
                              is not None)
            said.append(f"bandwidth at {size_label(size)}: "
                        + _ranked_text([p for p in bandwidth if p.bytes == size], True, "GB/s", avail))
        latency = kinds.get("latency", [])
        if latency:
            size = _nearest({p.bytes for p in latency})
            said.append(f"latency at {size_label(size)} B: "
                        + _ranked_text([p for p in latency if p.bytes == size], False, "us"))
        out.append(FeatureAnswer("one-sided", f"{path_label(memory, path)}: {'; '.join(said)}"))
    out.sort(key=lambda a: _order(a.sentence.partition(":")[0]))
    return out


def _persistent_answers(store: Store) -> list[FeatureAnswer]:
    """Per library, the range of the persistent calls' speedup over the regular calls of the same launches, and at how
    many points either form is clearly faster."""
    by_lib: dict[str, list] = {}
    for pair in persistent_pairs(store):
        if pair.speedup is not None and pair.persistent.bytes > 0:
            by_lib.setdefault(pair.persistent.library, []).append(pair)
    out = []
    for lib, pairs in sorted(by_lib.items()):
        speedups = [x.speedup for x in pairs]
        apart = [x for x in pairs if clearly_apart(x.persistent, x.regular)]
        faster = sum(x.speedup > 1 for x in apart)
        what = sorted({" ".join(filter(None, [x.persistent.benchmark, x.operation])) for x in pairs})
        out.append(FeatureAnswer("persistent", (
            f"{lib} ({', '.join(what)}): persistent calls {_times(min(speedups))} to {_times(max(speedups))} the "
            f"speed of the regular ones over {len(pairs)} points; clearly faster at {faster}, clearly slower at "
            f"{len(apart) - faster}, within precision at {len(pairs) - len(apart)}"
            f"{within_one_launch(p for x in pairs for p in (x.persistent, x.regular))}")))
    return out


def _partitioned_answers(store: Store) -> list[FeatureAnswer]:
    """Per library, memory and path, at the largest size measured: the overlap % with partitions marked ready per
    block of the kernel against after it, per partition count (medians over repetitions: the engine gives the
    overlap no interval, so no "faster" is said)."""
    figures: dict[tuple, dict[int, dict[str, float]]] = {}
    largest: dict[tuple, int] = {}
    groups = partitioned_overlap(store)
    for lib, memory, path, nbytes, _parts, _ready in groups:
        largest[(lib, memory, path)] = max(largest.get((lib, memory, path), 0), nbytes)
    for (lib, memory, path, nbytes, parts, ready), metrics in groups.items():
        if nbytes == largest[(lib, memory, path)]:
            overlaps = [m["overlap_pct"] for m in metrics]
            figures.setdefault((lib, memory, path), {}).setdefault(parts, {})[str(ready)] = median(overlaps)
    out = []
    for (lib, memory, path), by_parts in sorted(figures.items()):
        per = []
        for parts, by_ready in sorted(by_parts.items()):
            block, after = by_ready.get("per-block"), by_ready.get("after-kernel")
            if block is not None and after is not None:
                per.append(f"P={parts} {block:.0f} % vs {after:.0f} % ({block - after:+.0f} points)")
            else:
                per.append(f"P={parts} " + ", ".join(f"{ready} {v:.0f} %" for ready, v in sorted(by_ready.items())))
        out.append(FeatureAnswer("partitioned", (
            f"{lib}, {path_label(memory, path)}, at {size_label(largest[(lib, memory, path)])}: overlap per-block vs "
            f"after-kernel: {'; '.join(per)}")))
    return out


# ---------------------------------------------------------------------------------------------------- answer 5
_LAUNCH_STATUS = {"failed": "launch failed", "timeout": "timed out", "unsupported": "not supported",
                  "validation-failed": "wrong data received", "bad-input": "arguments refused",
                  "interrupted": "interrupted", "skipped": "not run", "wrong-library": "ran another MPI library",
                  "running": "did not finish"}
_RESULT_STATUS = {"failed": "wrong data received (validation failed)", "unsupported": "not supported"}


def _where(memory: str | None, path: str | None, strategy: str | None) -> str:
    """The path of a missing point as the answers name it, with its strategy ('' for none)."""
    parts = [path_label(memory, path)] if memory else []
    if strategy not in DIRECT:
        parts.append(strategy)
    return " ".join(parts)


def _said_together(subjects: list[tuple[str, str, str, str]]) -> list[str]:
    """(library, benchmark, where, sizes) said compactly: benchmarks missing on the same paths share one mention,
    "openmpi-5.0.7-ucx bibw/bw NVLink pair, same GPU"."""
    benches: dict[tuple, list[str]] = {}
    for lib, bench, where, sizes in subjects:
        benches.setdefault((lib, where, sizes), []).append(bench)
    places: dict[tuple, list[str]] = {}
    for (lib, where, sizes), bs in benches.items():
        places.setdefault((lib, "/".join(sorted(set(bs))), sizes), []).append(where)
    out = []
    for (lib, bench, sizes), wheres in places.items():
        text = " ".join(filter(None, [lib, bench, ", ".join(w for w in wheres if w)]))
        out.append(text + (f" at {sizes}" if sizes else ""))
    return out


def _missing_answers(store: Store) -> list[MissingAnswer]:
    causes: dict[str, dict] = {}

    def add(cause: str, subject: tuple[str, str, str], launch: bool = False, nbytes: int | None = None):
        c = causes.setdefault(cause, {"subjects": {}, "launches": 0})
        sizes = c["subjects"].setdefault(subject, set())
        if nbytes is not None:
            sizes.add(nbytes)
        c["launches"] += launch

    said_by_points = set()  # launches whose own records say why their points were not measured
    for r in store.results(None, status=None):
        if r["status"] == "ok":
            continue
        said_by_points.add(r["launch_id"])
        why = _RESULT_STATUS.get(r["status"], r["status"])
        cause = f"{why}: {r['reason']}" if r["reason"] else why
        add(cause, (r["library"], r["benchmark"], _where(r["memory"], r["path_class"], r["strategy"])),
            nbytes=r["bytes"] if r["status"] == "failed" else None)
    for x in store.launches():
        if x["status"] == "ok" or (x["status"] == "unsupported" and x["launch_id"] in said_by_points):
            continue
        why = _LAUNCH_STATUS.get(x["status"], x["status"] or "not finished")
        cause = f"{why}: {x['reason']}" if x["reason"] else f"{why} (no reason recorded)"
        path = x["planned_path"] if x["planned_path"] not in ("ceilings", "managed") else None
        add(cause, (x["library"], x["benchmark"], _where(x["memory"], path, x["strategy"])), launch=True)
    for s in store.skipped():
        add(f"skipped: {s['reason']}", (s["library"], s["what"], ""))
    out = []
    for cause, c in causes.items():
        subjects = []
        for (lib, bench, where), sizes in c["subjects"].items():
            span = ""
            if sizes:
                ordered = sorted(sizes)
                span = (f"{len(ordered)} size{'s' if len(ordered) > 1 else ''} ({size_label(ordered[0])}"
                        + (f" to {size_label(ordered[-1])})" if len(ordered) > 1 else ")"))
            subjects.append((lib, bench, where, span))
        said = _said_together(subjects)
        shown = said if len(said) <= 5 else said[:4] + [f"and {len(said) - 4} more"]
        count = f", {c['launches']} launch{'es' if c['launches'] != 1 else ''}" if c["launches"] else ""
        out.append(MissingAnswer(cause, [" ".join(filter(None, [lib, bench, where])) + (f" at {span}" if span else "")
                                         for lib, bench, where, span in subjects],
                                 c["launches"], f"{'; '.join(shown)}{count}: {cause}"))
    out.sort(key=lambda m: (-len(m.subjects), m.cause))
    return out


# ---------------------------------------------------------------------------------------------------- entry points
def answers(store: Store) -> Answers:
    """The answers of a store (see the module's doc)."""
    bandwidth, latency = _bandwidth_points(store), _two_sided(_measured(combine(latency_rows(store))))
    paths, chosen = _path_answers(store, bandwidth, latency)
    strategies = _strategy_answers(store, chosen, bandwidth)
    settings, settings_note = _settings_answers(store)
    collectives = _collective_answers(store)
    missing = _missing_answers(store)
    features = _one_sided_answers(store) + _persistent_answers(store) + _partitioned_answers(store)
    notes = _notes(store, bandwidth + latency + [f.point for c in collectives for f in c.figures])
    empty = ""
    if not (paths or strategies or collectives or features):
        n_results = store.rows("SELECT COUNT(*) AS n FROM results")[0]["n"]
        launches = store.launches()
        if not n_results and not launches and not store.skipped():
            empty = "No answers: this store holds no results (nothing was launched or ingested)."
        elif launches and not any(x["status"] == "ok" for x in launches):
            empty = (f"No answers: none of the {len(launches)} launches gave a figure of MPI moving data "
                     f"(see Not measured).")
        else:
            empty = ("No answers: no figure of data moved between ranks (point to point or collectives) in this "
                     "store" + (" (see Not measured)." if missing else "."))
    return Answers(paths, strategies, settings, settings_note, collectives, missing, empty, features, notes)


def _notes(store: Store, points: list[Point]) -> list[str]:
    """What holds for every answer: that its points were measured in one launch each (claims within one launch),
    and the launches that ran while this host was busy."""
    notes = []
    if points and all(p.one_launch for p in points):
        notes.append("Each figure comes from one launch: a configuration said faster is faster within that launch; "
                     "launches differ more than the samples of one launch, so repeat the campaign with "
                     "--repetitions 2 or more for claims that hold across launches.")
    launches = [x for x in store.launches() if x["status"] not in ("skipped", None)]
    busy = [x for x in launches if busy_launch(x.get("load"))]
    if busy:
        why = json.loads(busy[0]["load"]).get("why", "")
        notes.append(f"{len(busy)} of {len(launches)} launches ran on a busy host ({why}, the first of them): their "
                     f"figures may be low; they are flagged 'busy host' in the tables.")
    return notes


_GLUED = (" %", " GB/s", " us", " B ", " B)", " B,", " B;")


def _wrap(line: str, indent: str = "  ") -> list[str]:
    """Wrapped at WIDTH columns, a number never parted from its unit."""
    for unit in _GLUED:
        line = line.replace(unit, "\xa0" + unit[1:])
    return [w.replace("\xa0", " ") for w in textwrap.wrap(line, WIDTH, initial_indent=indent,
                                                          subsequent_indent=indent + "    ",
                                                          break_on_hyphens=False, break_long_words=False)]


def answers_text(store: Store) -> str:
    """The answers as plain text for a terminal (the end of `gmb run`), lines of at most 100 columns."""
    a = answers(store)
    if a.empty:  # one line; what was not measured, and why, under it
        return "\n".join([a.empty] + [line for m in a.missing for line in _wrap(_missing_line(m))])
    lines = ["== Answers (medians over launches; +-x %: 95 % interval over launches; fastest: intervals apart)"]
    for note in a.notes:
        lines += _wrap(note, indent="")
    if a.paths:
        lines.append("Which library, per path (the library's own path):")
        for p in a.paths:
            lines += _wrap(p.sentence)
    if a.strategies:
        lines.append("Where a gmb strategy beats the library's own path:")
        beaten = [s for s in a.strategies if s.beats or s.direct_GBps is None]
        for s in beaten:
            lines += _wrap(s.sentence)
        rest = [s for s in a.strategies if not s.beats and s.direct_GBps is not None]
        if rest:
            lines += _wrap("not beaten: " + "; ".join(
                f"{s.path}, {s.library} ({s.strategy} {sig3(s.strategy_GBps)} vs {sig3(s.direct_GBps)} GB/s at "
                f"{size_label(s.bytes)}" + (")" if s.ratio else ", within precision)") for s in rest))
        if not beaten:
            lines.append("  none: the library's own path is the fastest wherever a strategy was measured")
    lines.append("Settings that mattered:" + (f" {a.settings_note}" if a.settings_note and not a.settings else ""))
    for s in a.settings:
        lines += _wrap(_short(s.sentence, 300))
    if a.settings and a.settings_note:
        lines += _wrap(a.settings_note)
    if a.collectives:
        lines.append("Collectives (bus bandwidth):")
        lines += [line for text in _collective_lines(a.collectives) for line in _wrap(text)]
    for topic, heading in FEATURE_TOPICS.items():
        said = [f.sentence for f in a.features if f.topic == topic]
        if said:
            lines.append(f"{heading}:")
            lines += [line for text in said for line in _wrap(text)]
    if a.missing:
        lines.append("Not measured:")
        for m in a.missing:
            lines += _wrap(_missing_line(m))
    return "\n".join(lines)


def _missing_line(m: MissingAnswer) -> str:
    """The sentence with its cause shortened for a terminal (the report has it whole)."""
    cause, n = " ".join(m.cause.split()), 150
    mark = cause.find("[first library error:")  # what the library said first: usually the cause, kept
    if len(cause) > n and mark > 0:
        tail = _short(cause[mark:], n - 40)
        cause = _short(cause[:mark], n - len(tail)) + " " + tail
    return m.sentence[: len(m.sentence) - len(m.cause)] + _short(cause, n + 10)


def _collective_lines(collectives: list[CollectiveAnswer]) -> list[str]:
    """One line per answer, except that the operations one configuration alone measured at one rank count, memory
    and size share a line."""
    alone: dict[tuple, list[CollectiveAnswer]] = {}
    for c in collectives:
        if len(c.figures) == 1:
            alone.setdefault((c.figures[0].library, c.ranks, c.memory, c.bytes), []).append(c)
    out = []
    for c in collectives:
        if len(c.figures) > 1:
            out.append(c.sentence)
            continue
        key = (c.figures[0].library, c.ranks, c.memory, c.bytes)
        group = alone.pop(key, None)
        if group is None:
            continue  # already said with the first of its group
        if len(group) == 1:
            out.append(c.sentence)
            continue
        lib, ranks, memory, nbytes = key
        listed = ", ".join(f"{g.operation} {sig3(g.figures[0].value)} GB/s "
                           f"({precision_text(g.figures[0].precision, g.figures[0].capped)})" for g in group)
        other = "MPI" if c.nccl else "NCCL"
        out.append(f"{lib}, {ranks} ranks, {memory} memory, at {size_label(nbytes)}: {listed}; no {other} figure "
                   f"to compare with")
    return out


def _role(p: PathAnswer, f: Figure) -> str:
    """What answer 1 says of one configuration, for its table row."""
    best = p.figures[0]
    if len(p.figures) == 1:
        return "only one measured"
    if f is best:
        return (f"fastest, {_times(p.ratio)} the slowest" if p.fastest and p.ratio else "fastest" if p.fastest
                else "best, within precision of another")
    if f is p.figures[-1] and p.slowest:
        return "slowest"
    return "" if clearly_apart(best.point, f.point) else "within precision of the best"


def _e(v) -> str:
    return html.escape("" if v is None else str(v))


def _num(v: float | None, why: str = "not measured") -> str:
    """A numeric cell, or the reason it holds no number (no cell of the report is left empty)."""
    return f'<td class="num">{_e(sig3(v))}</td>' if v is not None else f"<td>{_e(why)}</td>"


def _text(v: str, why: str) -> str:
    return f"<td>{_e(v or why)}</td>"


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>" if items else ""


def answers_html(store: Store) -> str:
    """The answers as an HTML fragment: <section id="answers"> with lists and tables, every value escaped."""
    a = answers(store)
    out = ['<section id="answers"><h2>Answers</h2>']
    if a.empty:
        out.append(f"<p>{_e(a.empty)}</p>")
        if a.missing:
            out.append("<h3>Not measured</h3>" + _list([m.sentence for m in a.missing]))
        out.append("</section>")
        return "\n".join(out)
    out.append(f'<p class="note">{_e(PRECISION_NOTE)}</p>')
    out += [f'<p class="warn">{_e(note)}</p>' for note in a.notes]
    if a.paths:
        out.append("<h3>Which library, per path</h3>")
        out.append(_list([p.sentence for p in a.paths]))
        out.append('<table id="answers-paths"><thead><tr>' + "".join(
            f"<th>{_e(c)}</th>" for c in ("path", "benchmark", "size", "configuration", "figure", "unit",
                                          "precision", "% of ceiling", "ceiling", "latency (us)", "latency size",
                                          "answer")) + "</tr></thead><tbody>")
        for p in a.paths:
            for f in p.figures:
                role = _role(p, f)
                ceiling = f"{p.ceiling} {sig3(p.ceiling_GBps)} GB/s" if p.ceiling else p.no_ceiling
                out.append("<tr>" + "".join([
                    f"<td>{_e(p.path)}</td>", f"<td>{_e(p.benchmark)}</td>", f"<td>{_e(size_label(p.bytes))}</td>",
                    f"<td>{_e(_who(f))}</td>", _num(f.value), f"<td>{_e(f.unit)}</td>",
                    _text(precision_text(f.precision, f.capped), "not known"),
                    _num(f.pct_of_ceiling, p.no_ceiling or "no ceiling") if f.pct_of_ceiling is None else
                    f'<td class="num">{_e(_pct(f.pct_of_ceiling))}</td>',
                    _text(ceiling, "no ceiling"), _num(f.latency_us),
                    f"<td>{_e(size_label(f.latency_bytes) + ' B') if f.latency_bytes else 'not measured'}</td>",
                    _text(role, "in between")]) + "</tr>")
        out.append("</tbody></table>")
    out.append("<h3>Where a gmb strategy beats the library's own path</h3>")
    if a.strategies:
        out.append(_list([s.sentence for s in a.strategies]))
    else:
        out.append("<p>No gmb strategy was measured.</p>")
    out.append("<h3>Settings that mattered</h3>")
    out.append(_list([s.sentence for s in a.settings]))
    if a.settings_note:
        out.append(f"<p>{_e(a.settings_note[0].upper() + a.settings_note[1:])}.</p>")
    if a.collectives:
        out.append("<h3>Collectives (bus bandwidth)</h3>")
        out.append(_list([c.sentence for c in a.collectives]))
        out.append('<table id="answers-collectives"><thead><tr>' + "".join(
            f"<th>{_e(c)}</th>" for c in ("operation", "ranks", "memory", "size (total)", "configuration",
                                          "bus bandwidth (GB/s)", "precision", "answer")) + "</tr></thead><tbody>")
        for c in a.collectives:
            for f in c.figures:
                role = ("fastest" if f.library == c.fastest else "slowest" if f.library == c.slowest else
                        "within precision of the others" if c.fastest is None else "")
                if role == "fastest" and c.ratio:
                    role += f", {_times(c.ratio)} the slowest"
                out.append("<tr>" + "".join([
                    f"<td>{_e(c.operation)}</td>", f'<td class="num">{_e(c.ranks)}</td>', f"<td>{_e(c.memory)}</td>",
                    f"<td>{_e(size_label(c.bytes))}</td>", f"<td>{_e(f.library)}</td>", _num(f.value),
                    _text(precision_text(f.precision, f.capped), "not known"), _text(role, "in between")]) + "</tr>")
        out.append("</tbody></table>")
    for topic, heading in FEATURE_TOPICS.items():
        said = [f.sentence for f in a.features if f.topic == topic]
        if said:
            out.append(f"<h3>{_e(heading)}</h3>" + _list(said))
    if a.missing:
        out.append("<h3>Not measured</h3>" + _list([m.sentence for m in a.missing]))
    out.append("</section>")
    return "\n".join(out)

# SPDX-License-Identifier: BSD-3-Clause
"""What the answers are made of (dataclasses, one per answer), and the choices every answer makes the same way: which
points are compared, which figure is best, which size is quoted, and when one configuration is called faster."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from ..machine.identity import transport_of
from ..results.inference import Ratio
from ..results.model import Results
from ..results.peaks import CeilingSource
from ..results.points import Point
from ..results.result_facts import Sides, placed
from .cells import claimed_ratio, clearly_apart, pairwise_bandwidth

LATENCY_BYTES = 8
DIRECT = (None, "", "direct")
PRECISION_NOTE = ("Figures are the geometric mean of the launch medians over repetitions (launches). Precision "
                  "(+-x %): half the width of the figure's 95 % interval: with several launches, the t-interval on "
                  "log scale with the launch-to-launch variance pooled over the configuration's neighbouring sizes; "
                  "with one launch, that launch's own interval of the median, and no figure of one launch is said "
                  "faster than another (launches, not samples, are the replicates). \"cap reached\": an "
                  "adaptive launch stopped at its iteration or time cap before reaching its target precision. "
                  "\"Fastest\" and \"x times\" only where the 95 % interval of the ratio to every other figure "
                  "excludes 1, and never from a busy launch or quantised figures. A configuration's name "
                  "says what tells it from the library's other configurations (a setting, the binding, the hosts; "
                  "an option in parentheses).")

# path labels, in the order the answers list them


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
    own_ceiling: str = ""  # the ceiling of this figure where it is not the answer's (a staged strategy, an aggregate)
    latency_us: float | None = None  # one-way latency on the same memory and path
    latency_bytes: int | None = None  # the size it was measured at (8 B, else the nearest)
    latency_precision: float | None = None
    latency_capped: bool = False
    point: Point | None = field(default=None, repr=False, compare=False)
    latency_point: Point | None = field(default=None, repr=False, compare=False)


@dataclass
class Ranking:
    """What is proven about the figures of one question, best first (verdict)."""
    higher: bool  # bandwidth (higher is better), else a time
    fastest: str | None  # the configuration proven ahead of every other one
    slowest: str | None  # the configuration proven behind the best
    ratio: Ratio | None  # best / slowest (time: slowest / best) with its interval, where a claim is made
    leaders: list[str]  # the configurations not proven apart from the best, the best first


class RankedAnswer:
    """An answer whose verdict is its ``ranking``: the verdict's parts read from the answer itself."""
    ranking: Ranking

    @property
    def fastest(self) -> str | None:
        return self.ranking.fastest

    @property
    def slowest(self) -> str | None:
        return self.ranking.slowest

    @property
    def ratio(self) -> Ratio | None:
        return self.ranking.ratio


@dataclass
class PathAnswer(RankedAnswer):
    """Answer 1: the configurations on one path at one size, best first."""
    path: str  # "NVLink pair", "pinned host -> device", ...
    memory: str
    path_class: str | None
    benchmark: str
    bytes: int
    ceiling: str | None  # what bounds it (peaks.Ceilings.at's name), None without one at that size
    ceiling_GBps: float | None
    ceiling_label: str  # the ceiling as the answers name it ("network, host buffers (iperf3, 4 streams)"), or ""
    network_not_measured: str | None  # an inter-node path without a network ceiling: why none was measured
    figures: list[Figure]  # best first
    ranking: Ranking
    not_at_size: list[str]  # configurations on that path that did not measure that size
    sizes_measured: tuple[int, int] | None = None  # the smallest and largest size any configuration measured there
    latency_figures: list[Figure] = field(default_factory=list)  # each figure's latency, lowest first
    latency: Ranking | None = None  # the verdict on those latencies, by the same rule
    # the best figure is above the network ceiling: the network tools did not reach the link's limit
    above_network_tools: bool = False
    ceiling_source: CeilingSource | None = None  # what measured the ceiling (a network tool and its streams)


@dataclass
class StrategyAnswer:
    """Answer 2: a library's best gmb strategy against its own path, same memory, path and size."""
    path: str
    library: str
    memory: str
    benchmark: str
    bytes: int
    strategy: str  # Point.strategy_label
    strategy_figure: Figure
    direct_figure: Figure | None  # None: the library's own path was not measured there
    ratio: Ratio | None  # strategy / direct with its interval, only where proven apart
    beats: bool
    # where the strategy beats its own library: the fastest other configuration's own path at that size, and the
    # strategy's ratio to it where proven (None: not proven apart)
    best_own: Figure | None = None
    versus_best: Ratio | None = None

    @property
    def strategy_GBps(self) -> float:
        return self.strategy_figure.value

    @property
    def direct_GBps(self) -> float | None:
        return self.direct_figure.value if self.direct_figure else None


@dataclass
class SettingAnswer:
    """Answer 3: a setting that changed the doctor's answer, and how."""
    library: str
    setting: str
    effect: str


@dataclass
class CollectiveAnswer(RankedAnswer):
    """Answer 4: one operation at one rank count and memory, every configuration at one size."""
    operation: str
    ranks: int
    memory: str
    bytes: int
    figures: list[Figure]  # NCCL first, then the others by bus bandwidth
    ranking: Ranking  # the verdict on the same figures ranked by bus bandwidth
    nccl: list[str]  # the NCCL configurations among the figures
    not_at_size: list[str]  # configurations that measured the operation, not at this size


@dataclass
class MissingSubject:
    """What one cause left unmeasured: a configuration's benchmark on a path, at some sizes (none: all of it)."""
    library: str
    benchmark: str
    where: str  # the path as the answers name it, with a strategy ("" for none)
    sizes: tuple[int, ...] = ()


@dataclass
class MissingAnswer:
    """Answer 5: one cause, and what it left unmeasured."""
    cause: str
    subjects: list[MissingSubject]
    launches: int  # launches that ended this way (0: planner skips and records only)


@dataclass
class FeatureAnswer:
    """Answer 6: one line on one-sided, persistent or partitioned communication, collectives over node counts or a
    size sweep; each kind says its topic (one of FEATURE_TOPICS)."""
    topic: ClassVar[str] = ""


@dataclass
class RankedPoints:
    """The configurations (library and operation) of a feature at one size, best first, and whether the best is
    proven apart from every other one."""
    bytes: int
    points: list[Point] = field(repr=False)
    apart_from_all: bool
    near: Point | None = field(repr=False)  # where not apart from all: the first one the best is not apart from
    ceiling: str | None = None  # bandwidth: the best figure's ceiling (peaks.Ceilings.of_point), None without one
    ceiling_GBps: float | None = None


@dataclass
class OneSidedAnswer(FeatureAnswer):
    """Per path, the best one-sided configuration by one-way bandwidth and by latency."""
    topic: ClassVar[str] = "one-sided"
    path: str = ""
    bandwidth: RankedPoints | None = None
    latency: RankedPoints | None = None


@dataclass
class PersistentAnswer(FeatureAnswer):
    """Per library, the persistent calls' speedup over the regular calls of the same launches."""
    topic: ClassVar[str] = "persistent"
    library: str = ""
    measured: list[str] = field(default_factory=list)  # the benchmarks (and operations) compared
    lowest: float = 0.0  # the speedups' range
    highest: float = 0.0
    points: int = 0
    faster: int = 0  # points where the persistent form is proven faster
    slower: int = 0  # ... proven slower


@dataclass
class PartitionedAnswer(FeatureAnswer):
    """Per library, memory and path, at the largest size: the overlap % per partition count and readiness."""
    topic: ClassVar[str] = "partitioned"
    library: str = ""
    path: str = ""
    bytes: int = 0
    overlap_pct: dict[int, dict[str, float]] = field(default_factory=dict)  # {partitions: {ready: median %}}


@dataclass
class ScalingAnswer(FeatureAnswer):
    """One collective's series over node counts (scaling.Series), least time growth first, and whether the first is
    proven to grow less than every other."""
    topic: ClassVar[str] = "scaling"
    series: list = field(default_factory=list, repr=False)
    scales_best: bool = False


@dataclass
class SweepAnswer(FeatureAnswer):
    """One collective's size sweep at a fixed node count (scaling.Sweep): the fastest by size, the crossovers."""
    topic: ClassVar[str] = "size sweep"
    sweep: object = field(default=None, repr=False)


# answer 6's topics, in the order and under the headings the answers show them
FEATURE_TOPICS = {"one-sided": "One-sided communication (RMA), best per path",
                  "persistent": "Persistent calls against the regular ones",
                  "partitioned": "Partitioned communication: overlap per-block vs after the kernel",
                  "scaling": "Collectives over node counts (strong: S fixed; weak: each rank's share of S fixed), "
                             "growth per size",
                  "size sweep": "Collectives: size sweep at a fixed node count (not weak scaling), the fastest by "
                                "size, crossovers"}


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


def not_cuda_aware(results: Results) -> set[str]:
    """Libraries whose contexts say not CUDA-aware (and none says aware)."""
    verdicts: dict[str, set] = {}
    for c in results.contexts:
        verdicts.setdefault(c.library, set()).add(c.gpu_awareness)
    return {lib for lib, v in verdicts.items() if "not aware" in v and "aware" not in v}


def nccl_libraries(results: Results) -> set[str]:
    out = {lib for lib in results.libraries() if lib.lower().startswith("nccl")}
    return out | {c.library for c in results.contexts if transport_of(c.record) == "nccl"}


def own_path(p: Point) -> bool:
    return p.strategy in DIRECT


def has_device(sides: Sides) -> bool:
    """Device memory on some side, and no managed memory."""
    return sides.device and not sides.managed


def best_point(points: list[Point], higher: bool) -> Point:
    return max(points, key=lambda p: p.median) if higher else min(points, key=lambda p: p.median)


def pick_size(sizes_by_config: dict[str, set[int]], with_ceiling) -> int:
    """The largest size every configuration measured, preferring one with a ceiling; when no size is common to all,
    the one the most configurations measured (same preferences)."""
    every = set().union(*sizes_by_config.values())
    return max(every, key=lambda b: (sum(b in s for s in sizes_by_config.values()), with_ceiling(b), b))


def nearest(sizes, target: int = LATENCY_BYTES) -> int:
    return min(sizes, key=lambda b: (abs(math.log2(b / target)), b))


def measured(points: list[Point]) -> list[Point]:
    """The points the answers compare: buffers allocated once per launch (not the --fresh-buffers stress mode),
    messages of at least one byte."""
    return [p for p in points if not p.fresh and p.bytes > 0]


def two_sided(points: list[Point]) -> list[Point]:
    """The regular two-sided points (no one-sided operation, persistent form or partitions: answer 6 has those)."""
    return [p for p in points if not p.operation]


def bandwidth_points(results: Results) -> list[Point]:
    """Bandwidth between pairs of ranks outside managed placements: what answers 1 and 2 rank."""
    return two_sided(measured(results.points(results.where(lambda rec: pairwise_bandwidth(rec)
                                                      and not placed(rec)))))


def latencies(latency: list[Point]) -> dict[tuple, dict[int, Point]]:
    """One-way latency points by (library, sides, path class, strategy or "" for the library's own path)."""
    out: dict[tuple, dict[int, Point]] = {}
    for p in latency:
        key = (p.configuration, p.sides, p.path_class, "" if own_path(p) else p.strategy_label)
        out.setdefault(key, {})[p.bytes] = p
    return out


def verdict(figs: list[Figure], higher: bool) -> Ranking:
    """The ranking of ``figs`` (best first): the proven fastest configuration, the proven slowest, how many times the
    best is better than the slowest with its interval, and the leaders, the figures not proven apart from the best.
    The ratio is the one the claim was tested on (bandwidth: best / slowest; time: slowest / best), None where no
    claim is made."""
    best, worst = figs[0], figs[-1]
    leaders = [f.library for f in figs if f is best or not clearly_apart(best.point, f.point)]
    fastest = best.library if len(figs) > 1 and len(leaders) == 1 else None
    ratio = None
    if len(figs) > 1:
        ratio = claimed_ratio(best.point, worst.point) if higher else claimed_ratio(worst.point, best.point)
    slowest = worst.library if ratio else None
    return Ranking(higher, fastest, slowest, ratio, leaders)

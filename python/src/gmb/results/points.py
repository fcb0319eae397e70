# SPDX-License-Identifier: BSD-3-Clause
"""What a point is, and its figure from its launches.

A point is a whole configuration (PointKey): the library and its settings, the benchmark, its operation and variant,
the memory of each side, the strategy and its chunks, the options that change the measured work (window, batch,
tests, compute ...), the buffer mode, the ranks and over how many hosts (nodes) they ran, the binding, the path class,
the size with its convention, and for several pairs at once which of them share what bounds them
(result_facts.PairLayout). Results of one point that differ in anything else are repetitions, combined by ``combine``
and counted by launch id (a launch that measured a point twice is one launch; each point carries its launches,
PointLaunch). A launch is the replicate: with several launches the point's figure is the geometric mean of the launch
medians and its interval the 95 % t-interval of that mean on log scale, the launch-to-launch variance pooled over the
points of its series (the same configuration at sizes within a factor of 8: series_noise, inference.launch_noise);
with one launch, that launch's own 95 % interval of the median (a claim from it holds within that launch only; none
where the launch took fewer than 6 samples). docs/methodology.md gives the model and its assumptions.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from statistics import median

from ..machine.load import busy_launch
from .inference import LaunchNoise, estimate, launch_noise
from .result_facts import PairLayout, Sides, pair_layout, precision_stop
from .run_conditions import RunConditions
from .stored_rows import Result


@dataclass(frozen=True)
class PointKey:
    """What a point is: results equal in all of these are repetitions of one point."""
    library: str  # as declared or found
    settings: str  # canonical JSON of the library's settings
    benchmark: str
    operation: str | None  # the operation and its variant (result_facts.operation_label)
    memory: str  # canonical JSON of the memory of each side (send, recv; root, others; field)
    strategy: str | None
    chunks: int | None
    fresh: bool  # buffers allocated per size (--fresh-buffers) rather than once
    options: str  # canonical JSON of the options that change the measured work (window, batch, tests, compute ...)
    ranks: int | None
    hosts: int | None  # nodes; ranks per node: ranks / hosts
    binding: str | None
    path_class: str | None
    bytes: int
    size_convention: str | None  # what bytes counts: one message, or a collective's total
    metric: str  # the statistic: STAT_COLUMNS prefix
    pairs: PairLayout | None = None  # several pairs at once (mbw, mlat): which of them share what bounds them

    @classmethod
    def of(cls, r: Result, metric: str) -> PointKey:
        c = r.config
        return cls(r.library, json.dumps(c.settings, sort_keys=True), r.benchmark, r.operation,
                   json.dumps(r.record.get("memory") or {}, sort_keys=True), r.strategy, r.chunks, r.fresh,
                   json.dumps(c.options, sort_keys=True), r.ranks, c.hosts, c.binding, r.path_class, r.bytes,
                   r.record.get("size_convention"), metric, pair_layout(r.record))


@dataclass(frozen=True)
class PointLaunch:
    """One launch's part in a point: the replicate a point's statistics rest on (samples inside a launch are not
    replicates). A launch that measured the point more than once (``--references``, a repeated chunk count) is one
    launch: its median is the median of its measurements' medians, its interval covers theirs."""
    launch_id: str | None  # None: a record without one (older records), a launch of its own
    repetition: int | None  # the campaign's repetition round: launches of two points in one round can be paired
    busy: bool  # it ran while this host was busy (load.py)
    median: float
    low: float | None  # its own 95 % interval of the median; None where its records had none (fewer than 6 samples)
    high: float | None
    ran: tuple[tuple[str, str], ...] = ()  # what ran behind its figure (its records' ``ran``: source, words)


@dataclass
class Point:
    # the configuration's name: the library's, with what tells it from the library's other configurations (settings,
    # binding, hosts: "openmpi-5.0.7-ucx [UCX_RNDV_THRESH=8192]") and from the benchmark's other points of it
    # (options: "... (window=16)")
    library: str
    benchmark: str
    operation: str | None
    memory: str
    strategy: str | None
    ranks: int | None
    bytes: int
    path_class: str | None
    nominal: float | None
    metric: str
    median: float  # the figure (point_figure): several launches' geometric mean, one launch's median
    low: float | None  # its 95 % interval (point_figure); None: none
    high: float | None
    p5: float
    p95: float
    reps: int  # launches combined: len(launches)
    chunks: int | None = None  # a chunked strategy's chunk count: "pipelined C=4" and "C=16" are two points
    fresh: bool = False  # buffers allocated per size (--fresh-buffers, a stress mode): a point of its own
    capped: bool = False  # an adaptive launch stopped at its iteration or time cap before reaching its precision
    base_library: str = ""  # the library (configuration) as declared or found, without the configuration's details
    busy: int = 0  # launches that ran while this host was busy (load.py)
    configuration: str = ""  # the name without the options: the same for every benchmark of that configuration
    config: RunConditions | None = None  # the configuration beyond the other fields (run_conditions.configuration)
    key: PointKey | None = None  # what the point is (combine's group)
    launches: tuple[PointLaunch, ...] = ()  # its launches, in the order first measured
    noise: LaunchNoise | None = None  # its launch noise, pooled over its series' neighbouring sizes (series_noise)
    sides: Sides = Sides()  # where its buffers were (``memory`` is their label)

    def __post_init__(self):
        self.base_library = self.base_library or self.library
        self.configuration = self.configuration or self.library

    @property
    def strategy_label(self) -> str:
        return strategy_label(self.strategy, self.chunks, self.fresh)

    @property
    def values(self) -> list[float]:
        """Each launch's median: the replicates a comparison of this point with another rests on."""
        return [x.median for x in self.launches]

    @property
    def has_interval(self) -> bool:
        """Whether the point has a 95 % interval: not where its one launch took fewer than 6 samples."""
        return self.low is not None and self.high is not None

    @property
    def precision(self) -> float | None:
        """Half the width of the point's interval, as a fraction of its median (the wider side): 0.03 is +-3 %. None
        for a median of 0 or a point without an interval."""
        if not self.median or not self.has_interval:
            return None
        return max(self.median - self.low, self.high - self.median) / abs(self.median)

    @property
    def ran(self) -> dict[str, str]:
        """What ran behind the figure (records' ``ran``, docs/records.md): source -> words; where its launches said
        different things, each, and that they varied."""
        said: dict[str, list[str]] = {}
        for launch in self.launches:
            for source, words in launch.ran:
                if words not in said.setdefault(source, []):
                    said[source].append(words)
        return {source: words[0] if len(words) == 1 else " | ".join(words) + " (varied between launches)"
                for source, words in said.items()}

    @property
    def one_launch(self) -> bool:
        """Measured in one launch: its interval is that launch's, and a claim from it holds within that launch."""
        return self.reps < 2


def strategy_label(strategy: str | None, chunks: int | None, fresh: bool = False) -> str:
    label = f"{strategy} C={chunks}" if strategy and chunks and chunks > 1 else (strategy or "")
    return f"{label} (fresh buffers)".strip() if fresh else label


def series_key(key: PointKey) -> PointKey:
    """The curve a point lies on: its identity without the size. Its launches' noise is pooled over these points."""
    return replace(key, bytes=0)


def _positive(launches: list[PointLaunch]) -> bool:
    return all(x.median > 0 and math.isfinite(x.median) for x in launches)


def _launch_values(launches: list[PointLaunch]) -> dict:
    """launch -> the launch's median, a launch without an id a launch of its own."""
    return {(x.launch_id if x.launch_id is not None else ("record", i)): x.median for i, x in enumerate(launches)}


# A point's launch noise is pooled over the points of its series within this factor of its size either way: small
# messages move more from launch to launch than large ones (a 1 B latency by several %, a 64 MiB bandwidth by a few
# tenths of a %), so one variance for the whole curve would make the small sizes' intervals too narrow and the large
# sizes' too wide; three octaves each way leave a pow2 sweep 7 neighbours to pool.
NOISE_NEIGHBOURHOOD = 8


def _neighbours(a: int, b: int) -> bool:
    if a == 0 or b == 0:
        return a == b
    return max(a, b) <= NOISE_NEIGHBOURHOOD * min(a, b)


def series_noise(launches_by_point: dict[PointKey, list[PointLaunch]]) -> dict[PointKey, LaunchNoise | None]:
    """Each point's between-launch noise (inference.launch_noise), pooled over the points of its series (the same
    configuration, every size) whose sizes lie within NOISE_NEIGHBOURHOOD of its own: a point of 2 launches borrows
    the spread its neighbours show. Points of one launch, or with a value of 0 (bandwidth at 0 B), add nothing."""
    by_series: dict[PointKey, list[tuple[int, dict]]] = {}
    for key, launches in launches_by_point.items():
        if len(launches) > 1 and _positive(launches):
            by_series.setdefault(series_key(key), []).append((key.bytes, _launch_values(launches)))
    return {key: launch_noise(values for size, values in by_series.get(series_key(key), [])
                              if _neighbours(size, key.bytes))
            for key in launches_by_point}


def point_figure(launches: list[PointLaunch], noise: LaunchNoise | None) -> tuple[float, float | None, float | None]:
    """A point's figure and 95 % interval. Several launches: inference.estimate, the geometric mean of the launch
    medians with the t-interval of the series' pooled launch noise (it shrinks as launches are added). One launch:
    its median and its own within-launch interval (a claim from it holds within that launch only; none below 6
    samples). A value of 0 (bandwidth at 0 B): the median of the launches' medians, no interval."""
    medians = [x.median for x in launches]
    if len(launches) == 1:
        return medians[0], launches[0].low, launches[0].high
    if not _positive(launches):
        return median(medians), None, None
    e = estimate(medians, noise)
    return e.value, e.low, e.high


def _point_launches(results: list[Result], metric: str) -> list[PointLaunch]:
    """The launches of one point's results, counted by launch id."""
    by_launch: dict[object, list[Result]] = {}
    for i, r in enumerate(results):
        by_launch.setdefault(r.launch_id if r.launch_id is not None else (None, i), []).append(r)
    out = []
    for rs in by_launch.values():
        stats = [r.stats[metric] for r in rs]
        ran = {(source, str(words)) for r in rs for source, words in (r.record.get("ran") or {}).items()}
        out.append(PointLaunch(rs[0].launch_id, rs[0].repetition, bool(busy_launch(rs[0].launch_load)),
                               median([s.median for s in stats]),
                               min((s.ci95_low for s in stats if s.ci95_low is not None), default=None),
                               max((s.ci95_high for s in stats if s.ci95_high is not None), default=None),
                               tuple(sorted(ran))))
    return out


def combine(results: list[Result], metric: str | None = None) -> list[Point]:
    """The points of some results (PointKey), their repetitions combined. Each point is of its records' headline
    statistic (result_facts.headline), or of ``metric`` ("t", "bw", "busbw", "rate") when given; its interval comes from
    its launches and its series' pooled launch noise (point_figure, series_noise)."""
    groups: dict[PointKey, list[Result]] = {}
    for r in results:
        m = metric or r.headline
        if m in r.stats:
            groups.setdefault(PointKey.of(r, m), []).append(r)
    launches_of = {key: _point_launches(rs, key.metric) for key, rs in groups.items()}
    noise_of = series_noise(launches_of)
    out = []
    for key, rs in groups.items():
        stats = [r.stats[key.metric] for r in rs]
        launches = launches_of[key]
        noise = noise_of[key]
        value, low, high = point_figure(launches, noise)
        first = rs[0]
        name = f"{first.configuration} ({first.variant})" if first.variant else first.configuration
        out.append(Point(name, key.benchmark, key.operation, first.memory, key.strategy, key.ranks, key.bytes,
                         key.path_class, first.nominal_GBps, key.metric, value, low, high,
                         min(s.median if s.p5 is None else s.p5 for s in stats),
                         max(s.median if s.p95 is None else s.p95 for s in stats), len(launches), key.chunks,
                         key.fresh, any(precision_stop(r.record) not in (None, "converged") for r in rs), key.library,
                         sum(x.busy for x in launches), first.configuration, first.config, key, tuple(launches),
                         noise, first.sides))
    out.sort(key=lambda p: (p.library, p.benchmark, p.operation or "", p.memory, p.strategy_label, p.ranks or 0,
                            p.path_class or "", p.bytes))
    return out

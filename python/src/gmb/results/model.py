# SPDX-License-Identifier: BSD-3-Clause
"""The results model: a store's records read once, as typed results, and what a point is.

``Results.load(store)`` reads every result, context, launch and skipped point of a store once and parses each
record's JSON once; tables, answers, figures, comparisons and CSV read this model, never the store.

A point is a whole configuration (PointKey): the library and its settings, the benchmark, its operation and variant,
the memory of each side, the strategy and its chunks, the options that change the measured work (window, batch,
tests, compute ...), the buffer mode, the ranks and over how many hosts (nodes) they ran, the binding, the path class,
the size with its convention, and for several pairs at once which of them share what bounds them (records.PairLayout).
Results of one point that differ in anything else are repetitions, combined by ``combine`` and counted by launch id
(a launch that measured a point twice is one launch; each point carries its launches, PointLaunch). A launch is
the replicate: with several launches the point's figure is the geometric mean of the launch medians and its interval
the 95 % t-interval of that mean on log scale, the launch-to-launch variance pooled over the points of its series
(the same configuration at sizes within a factor of 8: series_noise, inference.launch_noise); with one launch, that launch's own 95 %
interval of the median (a claim from it holds within that launch only; none where the launch took fewer than 6
samples). docs/methodology.md gives the model and its assumptions. Points of one library that differ in a
setting, the binding or the hosts are named apart (configuration_labels).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field, replace
from statistics import median

from ..engine.description import EngineDescription
from ..machine.load import busy_launch
from .engine_facts import EngineFacts
from .inference import LaunchNoise, estimate, launch_noise
from .records import CEILINGS, PairLayout, Sides, headline, is_ceiling, pair_layout, precision_stop
from .store import STAT_COLUMNS, Store, result_key


# The fewest samples with a 95 % order-statistic interval of the median (the engine's kMinSamplesForMedianCi): below,
# the engine records none (null); engines before that recorded [min, max], which is no 95 % interval and not read.
MIN_SAMPLES_FOR_INTERVAL = 6


@dataclass(frozen=True)
class Statistics:
    """One statistics object of a result (time_us, bandwidth_GBps, ...), the figures combine reads. ci95_low and
    ci95_high: the launch's own 95 % interval of the median, None where it has none (fewer than 6 samples)."""
    median: float
    ci95_low: float | None
    ci95_high: float | None
    p5: float | None
    p95: float | None


@dataclass(frozen=True)
class RunConditions:
    """What a result's figure depends on beyond its other fields (records.configuration): the library's settings, the
    benchmark options that change the measured work, the binding and the number of hosts."""
    settings: dict
    options: dict
    binding: str | None
    hosts: int | None
    canonical: str  # as the store keeps it: canonical JSON, "" for none

    @classmethod
    def parse(cls, text: str | None) -> RunConditions:
        c = json.loads(text or "{}")
        return cls(c.get("settings") or {}, c.get("options") or {}, c.get("binding"), c.get("hosts"), text or "")

    def get(self, part: str):
        """A part by its records.configuration name ("settings", "options", "binding", "hosts"), None when unset."""
        return getattr(self, part) or None


@dataclass
class Result:
    """One result record, as the store labelled it (library, operation label, memory label, status) and parsed."""
    run_id: str
    launch_id: str | None
    repetition: int | None  # the campaign's repetition (launch) number
    library: str  # the library as declared or found
    benchmark: str
    operation: str | None  # records.operation_label: the operation and its variant
    status: str
    reason: str | None
    bytes: int
    memory: str  # records.memory_label: "send:recv", or a collective's kinds
    mem_send: str | None
    mem_recv: str | None
    strategy: str | None
    ranks: int | None
    path_class: str | None
    nominal_GBps: float | None
    stats: dict[str, Statistics]  # by STAT_COLUMNS prefix ("t", "bw", "busbw", "rate")
    metrics: dict
    record: dict  # the whole record
    config: RunConditions
    configuration: str = ""  # the configuration's name (configuration_labels)
    variant: str = ""  # the options that tell it from the benchmark's other points of that configuration
    launch_load: dict | None = None  # how busy the host was while its launch ran (load.py)
    scaling: str | None = None  # "strong" or "weak": its launch is one node count of a scaling series

    @property
    def headline(self) -> str:
        """The prefix of the statistic it is ranked by (records.headline)."""
        return STAT_COLUMNS[headline(self.record)]

    @property
    def chunks(self) -> int | None:
        return self.record.get("chunks")

    @property
    def ceiling(self) -> bool:
        """A ceiling's record (records.CEILINGS), not a library's figure."""
        return is_ceiling(self.record)

    @property
    def sides(self) -> Sides:
        """Where its buffers were, side by side (its record's memory)."""
        return Sides.of(self.record.get("memory"))

    @property
    def fresh(self) -> bool:
        """Buffers allocated per size (--fresh-buffers, a stress mode)."""
        return self.record.get("buffer_allocation") == "fresh-per-size"

    @property
    def validation(self) -> str | None:
        return self.record.get("validation")


@dataclass
class Context:
    """One context record: the run's library, its CUDA-awareness verdict and the whole record."""
    run_id: str
    launch_id: str | None
    library: str
    library_version: str | None
    gpu_awareness: str | None
    record: dict


@dataclass
class LaunchRecord:
    """One engine launch a campaign planned, and how it ended."""
    launch_id: str
    library: str | None
    benchmark: str | None
    memory: str | None
    strategy: str | None
    planned_path: str | None
    status: str | None
    reason: str | None
    argv: list | None  # the command line, None where not recorded
    load: dict | None


@dataclass
class Skipped:
    """A point the planner decided not to run."""
    library: str
    what: str
    reason: str


class Unreadable(ValueError):
    """A stored row's column that cannot be read as the store writes it (a damaged or hand-edited store); its
    message says which column and how ("bytes not an integer")."""


def _column_json(row: dict, column: str, default, required: bool = False, kind: type = dict):
    """A JSON column as the store writes it: an object (``kind``), NULL unless ``required``; else Unreadable."""
    text = row[column]
    if text is None and not required:
        return default
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise Unreadable(f"{column} not JSON") from None
    if value is None and not required:
        return default
    if not isinstance(value, kind):
        raise Unreadable(f"{column} not a JSON {'object' if kind is dict else 'list'}")
    return value


_STATISTIC_FIELDS = ("median", "ci95_low", "ci95_high", "p5", "p95", "n")


def _statistics(record: dict) -> dict[str, Statistics]:
    """The statistics objects of a result's record (time_us, bandwidth_GBps, ...) by their STAT_COLUMNS prefix, each
    one with a median; Unreadable names the first field that is not a finite number or null."""
    out = {}
    for key, prefix in STAT_COLUMNS.items():
        st = record.get(key)
        if st is None:
            continue
        if not isinstance(st, dict):
            raise Unreadable(f"json: {key} not an object")
        for field in _STATISTIC_FIELDS:
            value = st.get(field)
            if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                          and math.isfinite(value)):
                raise Unreadable(f"json: {key}.{field} not a finite number")
        if st.get("median") is not None:
            out[prefix] = Statistics(st["median"], *_launch_ci(st), st.get("p5"), st.get("p95"))
    return out


def _launch_ci(st: dict) -> tuple[float | None, float | None]:
    """A statistics object's own 95 % interval of the median: None, None where it has none (null, or fewer than
    MIN_SAMPLES_FOR_INTERVAL samples: an older engine's [min, max])."""
    low, high, n = st.get("ci95_low"), st.get("ci95_high"), st.get("n")
    if low is None or high is None or (n is not None and n < MIN_SAMPLES_FOR_INTERVAL):
        return None, None
    return low, high


def _result(row: dict) -> Result:
    """A result row as the model reads it. Unreadable names the first column that is not what the store writes
    (names, an integer size, finite numbers or NULL, JSON objects, an ok result's headline median)."""
    for column in ("library", "benchmark", "status"):
        if not isinstance(row[column], str) or not row[column]:
            raise Unreadable(f"{column} not a name")
    for column, required in (("bytes", True), ("ranks", False), ("repetition", False)):
        value = row[column]
        if (value is None and required) or (value is not None and (not isinstance(value, int) or value < 0)):
            raise Unreadable(f"{column} not an integer")
    value = row["nominal_GBps"]
    if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value)):
        raise Unreadable("nominal_GBps not a finite number")
    record = _column_json(row, "json", {}, required=True)
    metrics = _column_json(row, "metrics", {})
    _column_json(row, "config", {})  # RunConditions.parse reads its text
    stats = _statistics(record)
    if row["status"] == "ok" and STAT_COLUMNS[headline(record)] not in stats:
        raise Unreadable(f"json: {headline(record)}.median null in an ok result (the statistic it is ranked by)")
    return Result(row["run_id"], row["launch_id"], row["repetition"], row["library"], row["benchmark"],
                  row["operation"], row["status"], row["reason"], row["bytes"], row["memory"], row["mem_send"],
                  row["mem_recv"], row["strategy"], row["ranks"], row["path_class"], row["nominal_GBps"],
                  stats, metrics, record, RunConditions.parse(row["config"]),
                  launch_load=row["launch_load"], scaling=row["launch_scaling"])


def _launch(x: dict) -> LaunchRecord:
    return LaunchRecord(x["launch_id"], x["library"], x["benchmark"], x["memory"], x["strategy"], x["planned_path"],
                  x["status"], x["reason"], _column_json(x, "argv", None, kind=list), _column_json(x, "load", None))


def _readable(rows: list[dict], read, table: str, problems: Counter) -> list:
    """``read`` of each row, the rows it finds Unreadable left out and counted in ``problems`` by table and column."""
    out = []
    for row in rows:
        try:
            out.append(read(row))
        except Unreadable as exc:
            problems[f"{table}.{exc}"] += 1
    return out


def _once_each(results: list[Result]) -> tuple[list[Result], int]:
    """The results with every (run, point) once (the first row of each: a measurement stored twice is one launch,
    not two), and how many rows repeated one."""
    seen, out = set(), []
    for r in results:
        key = (r.run_id, result_key(r.record))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out, len(results) - len(out)


@dataclass
class Results:
    """Everything a report reads of a store, read once (Results.load)."""
    results: list[Result]  # every status, ordered by library, benchmark, memory and size
    contexts: list[Context]
    launches: list[LaunchRecord]
    skipped: list[Skipped]
    meta: dict[str, str] = field(default_factory=dict)
    engines: EngineFacts = field(default_factory=EngineFacts)  # what the engines that wrote them say
    # What of the store was left out, for its reader to be told: rows that cannot be read (a damaged store), rows
    # that repeat a measurement
    left_out: list[str] = field(default_factory=list)
    _points: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # metric -> combine(ok())

    @classmethod
    def load(cls, store: Store) -> Results:
        problems: Counter = Counter()
        launches = _readable(store.launches(), _launch, "launches", problems)
        loads = {x.launch_id: x.load for x in launches}
        results, repeated = _once_each(_readable([{**r, "launch_load": loads.get(r["launch_id"])}
                                                  for r in store.results(status=None)], _result, "results", problems))
        labels = configuration_labels(results)
        for r in results:
            r.configuration, r.variant = labels[_label_key(r)]
        contexts = _readable(store.contexts(), lambda c: Context(
            c["run_id"], c["launch_id"], c["library"], c["library_version"], c["gpu_awareness"],
            _column_json(c, "json", {}, required=True)), "contexts", problems)
        skipped = [Skipped(s["library"], s["what"], s["reason"]) for s in store.skipped()]
        meta = {r["key"]: r["value"] for r in store.rows("SELECT key, value FROM meta")}
        engines = EngineFacts.of({lib: EngineDescription(raw, source=f"{store.path}: the engine of {lib}")
                                  for lib, raw in store.engines().items()})
        left_out = []
        if problems:
            left_out.append(
                f"{store.path}: {sum(problems.values())} row(s) cannot be read ("
                + "; ".join(f"{what}: {n}" for what, n in sorted(problems.items())) + "): left out of every table, "
                f"figure and comparison; the store is damaged: make a new one from its record files (gmb ingest "
                f"NEW.sqlite RESULTS/raw/*.jsonl RESULTS/engines/*.json)")
        if repeated:
            left_out.append(f"{store.path}: the store holds {repeated} duplicate row(s) of results (the same run and "
                            f"point stored more than once): each measurement counted once")
        return cls(results, contexts, launches, skipped, meta, engines, left_out)

    def ceilings(self) -> list[Result]:
        """The ok ceiling records (peaks): what bounds each path, measured without MPI."""
        return [r for r in self.ok() if r.ceiling]

    def ok(self, benchmark: str | None = None) -> list[Result]:
        """The ok results (of one benchmark)."""
        return [r for r in self.results if r.status == "ok" and benchmark in (None, r.benchmark)]

    def points(self, chosen: list[Result] | None = None, metric: str | None = None) -> list[Point]:
        """The points of the ok results (those of ``chosen`` where given), of their headline statistic or of
        ``metric``. The ok results are combined once per metric, so every answer and table reads the same points,
        whole: each with all its launches, its launch noise pooled over its whole series, whichever subset asks."""
        if metric not in self._points:
            self._points[metric] = combine(self.ok(), metric)
        if chosen is None:
            return self._points[metric]
        keys = {PointKey.of(r, metric or r.headline) for r in chosen if (metric or r.headline) in r.stats}
        return [p for p in self._points[metric] if p.key in keys]

    def where(self, keep, status: str | None = "ok") -> list[Result]:
        """The results (of that status; None: any) whose record passes ``keep``, benchmark by benchmark."""
        chosen = [r for r in self.results if status in (None, r.status) and keep(r.record)]
        return sorted(chosen, key=lambda r: r.benchmark)

    def libraries(self) -> list[str]:
        return sorted({r.library for r in self.results})

    def undescribed(self) -> bool:
        """No engine description came with these results (records ingested without their engines/*.json): nothing
        tells what bounds their transfers or which benchmark counts both directions."""
        return bool(self.results) and not self.engines.described


# ---------------------------------------------------------------------------------------------- configuration names
def _label_key(r: Result) -> tuple:
    return r.library, r.benchmark, r.ranks, r.config.canonical


def point_label_key(p: Point) -> tuple:
    """The key of a point's configuration in configuration_labels."""
    return p.key.library, p.key.benchmark, p.key.ranks, p.config.canonical if p.config else ""


def configuration_labels(results: list[Result], hosts: bool = True) -> dict[tuple, tuple[str, str]]:
    """(library, benchmark, ranks, canonical configuration) -> (the configuration's name, its variant). The name is
    the library's, followed by the settings and hosts that differ among the library's results and the binding that
    differs among those of the same rank count (launchers bind 2 ranks otherwise than 4 by default), ceilings aside:
    they measure no library; e.g. "openmpi-5.0.7-ucx [UCX_RNDV_THRESH=8192]", the library's name alone where nothing
    differs. The variant names the options that differ among the library's results of the benchmark ("window=16"),
    "" where none do. ``hosts=False``: names without the hosts, for a configuration over node counts."""
    configs = {_label_key(r): r.config for r in results}
    by_library: dict[str, list[RunConditions]] = {}
    by_ranks: dict[tuple, list[RunConditions]] = {}
    by_benchmark: dict[tuple, list[RunConditions]] = {}
    for (lib, bench, ranks, _), c in configs.items():
        if bench != CEILINGS:  # a ceiling measures no library: its settings name no configuration
            by_library.setdefault(lib, []).append(c)
            by_ranks.setdefault((lib, ranks), []).append(c)
        by_benchmark.setdefault((lib, bench), []).append(c)

    def differing(cs: list[RunConditions], part: str) -> list[str]:
        names = sorted({k for c in cs for k in getattr(c, part)})
        return [k for k in names if len({json.dumps(getattr(c, part).get(k)) for c in cs}) > 1]

    labels = {}
    for key, c in configs.items():
        lib, bench, ranks, _ = key
        mates = by_library.get(lib, [c])
        # the settings it sets that differ; only where it sets none of them, the ones it leaves unset
        keys = differing(mates, "settings")
        parts = [f"{k}={c.settings[k]}" for k in keys if k in c.settings] or [f"{k} unset" for k in keys]
        if len({x.binding for x in by_ranks.get((lib, ranks), [c])}) > 1:
            parts.append(f"binding {c.binding or 'not recorded'}")
        if hosts and len({x.hosts for x in mates}) > 1:
            parts.append(f"{c.hosts} host{'s' if c.hosts != 1 else ''}" if c.hosts else "hosts not recorded")
        variant = [f"{k}={_option_text(c.options[k])}" if k in c.options else f"{k} not given"
                   for k in differing(by_benchmark[(lib, bench)], "options")]
        labels[key] = (f"{lib} [{', '.join(parts)}]" if parts else lib, " ".join(variant))
    return labels


def _option_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# ---------------------------------------------------------------------------------------------------------- points
@dataclass(frozen=True)
class PointKey:
    """What a point is: results equal in all of these are repetitions of one point."""
    library: str  # as declared or found
    settings: str  # canonical JSON of the library's settings
    benchmark: str
    operation: str | None  # the operation and its variant (records.operation_label)
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
    config: RunConditions | None = None  # the configuration beyond the other fields (records.configuration)
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
    def one_launch(self) -> bool:
        """Measured in one launch: its interval is that launch's, and a claim from it holds within that launch."""
        return self.reps < 2


def strategy_label(strategy: str | None, chunks: int | None, fresh: bool = False) -> str:
    label = f"{strategy} C={chunks}" if strategy and chunks and chunks > 1 else (strategy or "")
    return f"{label} (fresh buffers)".strip() if fresh else label


def _series(key: PointKey) -> PointKey:
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
            by_series.setdefault(_series(key), []).append((key.bytes, _launch_values(launches)))
    return {key: launch_noise(values for size, values in by_series.get(_series(key), [])
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
        out.append(PointLaunch(rs[0].launch_id, rs[0].repetition, bool(busy_launch(rs[0].launch_load)),
                               median([s.median for s in stats]),
                               min((s.ci95_low for s in stats if s.ci95_low is not None), default=None),
                               max((s.ci95_high for s in stats if s.ci95_high is not None), default=None)))
    return out


def combine(results: list[Result], metric: str | None = None) -> list[Point]:
    """The points of some results (PointKey), their repetitions combined. Each point is of its records' headline
    statistic (records.headline), or of ``metric`` ("t", "bw", "busbw", "rate") when given; its interval comes from
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

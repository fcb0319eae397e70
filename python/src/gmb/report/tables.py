# SPDX-License-Identifier: BSD-3-Clause
"""Tables derived from the store: combined repetitions, fraction of peak, non-ok points. CSV export.

A point is a whole configuration (records.configuration): results of one library that differ in a setting, an option
that changes the measured work, the binding or the number of hosts are different points, named apart
(Store.configuration_labels). Only repetitions (separate launches of the same configuration) are combined: the
point's value is the median of the per-launch medians; its interval (launch_interval) comes from the launches: with
one launch, that launch's 95 % CI of the median (a claim from it holds within that launch only); with several, the
95 % t-interval of the mean of the launch medians (launch-to-launch variation, the larger one), widened to cover
every launch's own interval.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from ..outputs import write_new
from ..results.peaks import bidirectional, ceiling_for, ceiling_sizes, ceilings
from ..results.records import (headline, one_sided, operation_label, overlap, pairwise, partitioned, persistent, placed,
                      precision_stop)
from ..machine.load import busy_launch
from ..results.store import STAT_COLUMNS, Store

HIGHER_IS_BETTER = {"bw", "busbw", "rate"}
# above this share of a measured ceiling an MPI figure is not plausible: the row says the ceiling is suspect
SUSPECT_PCT = 105


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
    median: float
    low: float  # interval (launch_interval)
    high: float
    p5: float
    p95: float
    reps: int  # launches combined
    chunks: int | None = None  # a chunked strategy's chunk count: "pipelined C=4" and "C=16" are two points
    fresh: bool = False  # buffers allocated per size (--fresh-buffers, a stress mode): a point of its own
    capped: bool = False  # an adaptive launch stopped at its iteration or time cap before reaching its precision
    base_library: str = ""  # the library (configuration) as declared or found, without the configuration's details
    busy: int = 0  # launches that ran while this host was busy (load.py)
    configuration: str = ""  # the name without the options: the same for every benchmark of that configuration
    config: str = ""  # the configuration beyond the other fields, as the store keeps it (records.configuration)

    def __post_init__(self):
        self.base_library = self.base_library or self.library
        self.configuration = self.configuration or self.library

    @property
    def strategy_label(self) -> str:
        return strategy_label(self.strategy, self.chunks, self.fresh)

    @property
    def precision(self) -> float | None:
        """Half the width of the point's interval, as a fraction of its median (the wider side): 0.03 is +-3 %."""
        if not self.median:
            return None
        return max(self.median - self.low, self.high - self.median) / abs(self.median)

    @property
    def one_launch(self) -> bool:
        """Measured in one launch: its interval is that launch's, and a claim from it holds within that launch."""
        return self.reps < 2


# Student's t quantile t(0.975, df) for df = 1 .. 30; the normal quantile beyond
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def launch_interval(medians: list[float], lows: list[float], highs: list[float]) -> tuple[float, float]:
    """The 95 % interval of a point from its launches (each its median and its own 95 % CI of the median). One
    launch: its own interval. Several: the t-interval of the mean of their medians (launches differ more than the
    samples of one launch: OMB's own alltoall moved 45 % between launches), widened to cover every launch's interval
    and the median of medians."""
    if len(medians) == 1:
        return lows[0], highs[0]
    n = len(medians)
    mean = sum(medians) / n
    sd = (sum((m - mean) ** 2 for m in medians) / (n - 1)) ** 0.5
    half = (_T975[n - 2] if n - 1 <= len(_T975) else 1.96) * sd / n ** 0.5
    value = median(medians)
    return min(mean - half, *lows, value), max(mean + half, *highs, value)


def clearly_apart(a: Point, b: Point) -> bool:
    """Whether two points of one metric differ by more than their precision: their intervals do not overlap. Only
    then is one of them called faster."""
    return a.low > b.high or b.low > a.high


# a point whose slow samples (p95) take ten times the fast ones (p5) or more: its median hides an order of magnitude
NOISY_SPREAD = 10.0

PRECISION_COLUMN = "precision (+- %)"
PRECISION_NOTE = (f"'{PRECISION_COLUMN}': a figure's precision, half the width of its interval as a % of its median "
                  "(the wider side). With several repetitions (launches) the interval comes from them: the 95 % "
                  "t-interval of the mean of the launch medians, widened to cover each launch's own 95 % CI of the "
                  "median; with one launch it is that launch's CI, and a figure said faster than another is faster "
                  "within one launch only. 'check': 'cap reached' when an adaptive launch stopped at its iteration or "
                  "time cap before its interval reached the target; 'noisy' when p95 / p5 is "
                  f"{NOISY_SPREAD:g} or more (an order of magnitude between fast and slow samples); 'busy host' when "
                  "some of its launches ran while other work used the cores the ranks needed (its figure may be low).")


class Absent(str):
    """A table cell without a value, saying why ("not measured", "link rate unknown"): no cell is a bare empty
    string. A column whose every cell is one of these is left out of its table (see Table)."""


# the operation cell of a record that names neither an operation nor a variant (two-sided latency, bw ...)
NO_OPERATION = Absent("none")
OPERATION_NOTE = ("'operation': what the benchmark measured where it names it (records.operation_label): the one-sided "
                  "operation, synchronisation and window creation ('put flush create'), 'persistent' (requests made "
                  "once, started every iteration), the partition count ('P=16').")


def precision_pct(points: list[Point]) -> float | Absent:
    """The widest precision of some points in % (one decimal), for a PRECISION_COLUMN cell."""
    known = [p.precision for p in points if p.precision is not None]
    return round(100 * max(known), 1) if known else Absent("median is 0")


def point_flags(p: Point, where: str = "") -> list[str]:
    """What a reader should check about a point before trusting its figure: its launch stopped at a cap before
    reaching its precision, or its samples spread over an order of magnitude. ``where`` (e.g. " at 1M") is appended
    to each flag."""
    flags = [f"cap reached{where}"] if p.capped else []
    if p.p95 > 0 and p.p95 >= NOISY_SPREAD * p.p5:
        spread = f"{p.p95 / p.p5:.0f}x" if p.p5 > 0 else "unbounded"
        flags.append(f"noisy{where}: p95/p5 {spread}")
    if p.busy:
        flags.append(f"busy host{where}: {p.busy} of {p.reps} launch{'es' if p.reps > 1 else ''}")
    return flags


def within_one_launch(points) -> str:
    """" (within one launch)" when a claim rests on a point measured in one launch, else ""."""
    return " (within one launch)" if any(p.one_launch for p in points) else ""


def check_cell(flags: list[str]) -> str:
    return "; ".join(flags) if flags else Absent("nothing flagged")


def strategy_label(strategy: str | None, chunks: int | None, fresh: bool = False) -> str:
    label = f"{strategy} C={chunks}" if strategy and chunks and chunks > 1 else (strategy or "")
    return f"{label} (fresh buffers)".strip() if fresh else label


def _record(r: dict) -> dict:
    try:
        return json.loads(r.get("json") or "{}")
    except ValueError:
        return {}


def fresh_buffers(record: dict) -> bool:
    """Whether a record's buffers were allocated per size (--fresh-buffers, a stress mode)."""
    return record.get("buffer_allocation") == "fresh-per-size"


def checked_inside_timing(record: dict) -> bool:
    """Whether a record's figures were timed with --validate's fill and check inside each sample: engines before
    buffer_allocation was recorded timed one call per sample after a barrier, with host-side checks between. Today's
    engine checks extra, untimed iterations, so its validated figures are timed like unvalidated ones."""
    return record.get("validation") in ("passed", "failed") and "buffer_allocation" not in record


def combine(rows: list[dict], metric: str | None = None) -> list[Point]:
    """Group result rows over repetitions per whole configuration: (library, benchmark, operation, memory, strategy
    and chunk count, buffer allocation, ranks, path class, bytes, and the rest of the configuration: settings,
    options, binding, hosts; records.configuration). device:device between two GPUs and on one GPU are different
    points, and so are buffers allocated per size (--fresh-buffers) and once, and two blocks that differ in one
    environment variable. Each point is of its records' headline statistic (records.headline), or of ``metric``
    ("t", "bw", "busbw", "rate") when given; its interval comes from its launches (launch_interval). Where a point has
    records timed with the validation inside (an older engine's, see checked_inside_timing) and records timed back
    to back, the latter make the point."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        record = _record(r)
        m = metric or STAT_COLUMNS[headline(record)]
        if r.get(f"{m}_median") is None:
            continue
        key = (r["library"], r.get("config"), r["benchmark"], r["operation"], r["memory"], r["strategy"],
               record.get("chunks"), fresh_buffers(record), r["ranks"], r["path_class"], r["bytes"], m)
        groups.setdefault(key, {}).setdefault(checked_inside_timing(record), []).append(r)
    groups = {key: by_kind.get(False) or by_kind[True] for key, by_kind in groups.items()}
    out = []
    for (lib, _config, bench, op, mem, strat, chunks, fresh, ranks, _path, nbytes, m), rs in groups.items():
        meds = [r[f"{m}_median"] for r in rs]
        lows = [r[f"{m}_ci95_low"] if r[f"{m}_ci95_low"] is not None else r[f"{m}_median"] for r in rs]
        highs = [r[f"{m}_ci95_high"] if r[f"{m}_ci95_high"] is not None else r[f"{m}_median"] for r in rs]
        p5s = [r[f"{m}_p5"] if r[f"{m}_p5"] is not None else r[f"{m}_median"] for r in rs]
        p95s = [r[f"{m}_p95"] if r[f"{m}_p95"] is not None else r[f"{m}_median"] for r in rs]
        capped = any(precision_stop(_record(r)) not in (None, "converged") for r in rs)
        low, high = launch_interval(meds, lows, highs)
        busy = sum(bool(busy_launch(r.get("launch_load"))) for r in rs)
        configuration, variant = rs[0].get("configuration") or lib, rs[0].get("variant")
        out.append(Point(f"{configuration} ({variant})" if variant else configuration, bench, op, mem, strat, ranks,
                         nbytes, rs[0]["path_class"], rs[0]["nominal_GBps"], m, median(meds), low, high, min(p5s),
                         max(p95s), len(rs), chunks, fresh, capped, lib, busy, configuration, rs[0].get("config") or ""))
    out.sort(key=lambda p: (p.library, p.benchmark, p.operation or "", p.memory, p.strategy_label, p.ranks or 0,
                            p.path_class or "", p.bytes))
    return out


def results_where(store: Store, keep, status: str | None = "ok") -> list[dict]:
    """The result rows whose record passes ``keep``, benchmark by benchmark in the store's order."""
    return [r for bench in store.benchmarks() for r in store.results(bench, status=status) if keep(_record(r))]


def pairwise_bandwidth(record: dict) -> bool:
    """Bandwidth between pairs of ranks (bw, bibw, mbw ...): what ceilings of the same path bound."""
    return pairwise(record) and headline(record) == "bandwidth_GBps"


def pairwise_time_rows(store: Store) -> tuple[list[dict], list[dict]]:
    """The results ranked by time between pairs of ranks (latency, mlat, rma_latency, part_latency, managed placements
    ...), as (those of runs that placed managed memory, with the references those runs measured; the others: one-way
    latency). Overlap measurements (part_overlap: an overall time with compute) are not latencies."""
    rows = results_where(store, lambda rec: pairwise(rec) and headline(rec) == "time_us" and not overlap(rec))
    placed_runs = {r["run_id"] for r in rows if placed(_record(r))}
    return [r for r in rows if r["run_id"] in placed_runs], [r for r in rows if r["run_id"] not in placed_runs]


def latency_rows(store: Store) -> list[dict]:
    """One-way latency between pairs of ranks; runs that placed managed memory are left to the managed-memory
    figure."""
    return pairwise_time_rows(store)[1]


@dataclass
class Table:
    """A titled table. A column whose every cell is Absent is left out (better than the same reason in every
    row): the note names it, with its reason when all its cells give the same one."""
    title: str
    columns: list[str]
    rows: list[list]
    note: str = ""

    def __post_init__(self):
        empty = [i for i in range(len(self.columns)) if self.rows and all(isinstance(r[i], Absent) for r in self.rows)]
        if not empty:
            return
        left_out = []
        for i in empty:
            reasons = {r[i] for r in self.rows}
            left_out.append(f"{self.columns[i]} ({reasons.pop()})" if len(reasons) == 1 else self.columns[i])
        self.columns = [c for i, c in enumerate(self.columns) if i not in empty]
        self.rows = [[v for i, v in enumerate(r) if i not in empty] for r in self.rows]
        self.note = " ".join(filter(None, [self.note, f"Columns without a value in any row, left out: "
                                                      f"{'; '.join(left_out)}."]))

    def write_csv(self, path: Path):
        text = io.StringIO(newline="")
        w = csv.writer(text)
        w.writerow(self.columns)
        w.writerows(self.rows)
        write_new(path, text.getvalue())


def fraction_of_peak(store: Store) -> Table:
    """Per library, benchmark of bandwidth between pairs of ranks (bw, bibw, mbw ...), memory placement, strategy
    and path: the peak MPI bandwidth, its share of the measured ceiling and of the nominal link rate.

    The peak is the best combined median over the sizes at which a ceiling bounding that transfer was measured
    (peaks.ceiling_for: same path class, same message size, strategy-aware), so that a figure is never compared
    with a ceiling of another size (a cache-resident small copy against a large one, or the reverse). When no
    ceiling was measured at any size the library measured, the peak is the best over all its validated sizes
    and the row says that there is no ceiling to compare with (no percentage)."""
    avail = ceilings(store)
    groups: dict[tuple, list[Point]] = {}
    for p in combine(results_where(store, pairwise_bandwidth)):
        groups.setdefault((p.library, p.benchmark, p.operation, p.memory, p.strategy, p.chunks, p.fresh, p.path_class),
                          []).append(p)
    # Sizes whose data arrived wrong are not results: the peak is over the sizes that validated, and the
    # table says how many did not (a library that corrupts large messages must not look merely slow).
    failed: dict[tuple, set] = {}
    for r in results_where(store, pairwise_bandwidth, status="failed"):
        record = _record(r)
        key = (r["library"], r["benchmark"], r["operation"], r["memory"], r["strategy"], record.get("chunks"),
               fresh_buffers(record), r["path_class"])
        failed.setdefault(key, set()).add(r["bytes"])
    # Launches that died (a crash, a timeout) leave a row with only the sizes before the failure: the row says so.
    broken: dict[tuple, list[str]] = {}
    for launch in store.launches():
        if launch["status"] in ("failed", "timeout"):
            key = (launch["library"], launch["benchmark"], launch["memory"], launch["strategy"] or "direct",
                   launch["planned_path"])
            broken.setdefault(key, []).append(launch["status"])
    operations = any(key[2] for key in groups)  # an operation column where some row names one
    rows = []
    for key, pts in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        lib, bench, operation, mem, strat, chunks, fresh, path = key
        send, _, recv = mem.partition(":")
        bounded = []
        for p in pts:
            op, ceil = ceiling_for(bench, path, send, recv, p.bytes, avail, strat)
            if ceil:
                bounded.append((p, op, ceil))
        flags = []
        if bounded:
            p, op, ceil = max(bounded, key=lambda x: x[0].median)
            pct, ceil_cell = round(100 * p.median / ceil, 1), round(ceil, 2)
            if pct > SUSPECT_PCT:  # MPI cannot beat a copy without MPI over the same path: the ceiling is wrong
                flags.append("ceiling suspect: MPI above it")
        else:
            p = max(pts, key=lambda x: x.median)
            at = ceiling_sizes(bench, path, send, recv, avail, strat)
            op = (f"none at the sizes measured (measured at {', '.join(_size(b) for b in at)})" if at
                  else "none measured for this path")
            pct = ceil_cell = Absent(f"no ceiling at {_size(p.bytes)}")
        flags += point_flags(p)
        died = broken.get((lib, bench, mem, strat or "direct", path), [])
        if died:
            flags.append(f"{len(died)} launch(es) {'/'.join(sorted(set(died)))}: sizes after the failure missing "
                         f"(see Not measured)")
        nominal = p.nominal * (2 if bidirectional(bench) else 1) if p.nominal else None
        no_rate = Absent("link rate unknown")
        rows.append([lib, bench, *([operation or NO_OPERATION] if operations else []), mem, strategy_label(strat, chunks, fresh) or "not recorded", path or "not recorded",
                     _size(p.bytes), round(p.median, 3), precision_pct([p]), pct, op, ceil_cell,
                     round(100 * p.median / nominal, 1) if nominal else no_rate, nominal or no_rate,
                     len(failed.get(key, ())), check_cell(flags)])
    return Table("Fraction of peak", ["library", "benchmark", *(["operation"] if operations else []), "memory",
                                      "strategy", "path", "at size",
                                      "peak MPI GB/s", PRECISION_COLUMN, "% of ceiling", "ceiling", "ceiling GB/s",
                                      "% of nominal", "nominal GB/s", "sizes failed validation", "check"], rows,
                 "Peak = best median (median of repetitions) over the validated sizes at which a ceiling of that "
                 "path was measured; 'at size' is that size and the ceiling is the one measured at it, without MPI, "
                 "by the peaks benchmark, over the same path class (staged and pipelined strategies on device "
                 "memory: the slower host-device copy; pipelined-gpu: the host side's copy). bibw: twice the one-way "
                 "ceiling (x2) on links with separate resources per direction, the one-way ceiling (x1) where both "
                 "directions share one memory (same GPU, host), unless a bidirectional ceiling was measured; nominal "
                 "rate doubled. Without a ceiling at any size measured the row says so and the peak is over all "
                 "validated sizes. " + (OPERATION_NOTE + " " if operations else "") + "'sizes failed validation': message sizes where the library delivered wrong data "
                 "(no figure is taken from them). " + PRECISION_NOTE + " A figure above the ceiling (by more than "
                 f"{SUSPECT_PCT - 100} %) is flagged too: the ceiling was not measured right at that size; and a row "
                 "whose launches failed or timed out.")


def collectives_table(store: Store, largest: int = 3) -> Table:
    """Bus bandwidth per collective operation, rank count and memory at the largest sizes, one column per library
    (MPI libraries and NCCL side by side), the fastest library and how many times faster it is than the slowest
    one. This is where an MPI allreduce on device buffers that is hundreds of times slower than NCCL's shows."""
    pts = [p for p in combine(collective_rows(store)) if p.bytes > 0]
    libs = sorted({p.library for p in pts})
    groups: dict[tuple, dict[int, dict[str, Point]]] = {}
    for p in pts:
        memory = p.memory + (" (fresh buffers)" if p.fresh else "")
        groups.setdefault((p.operation or "", p.ranks or 0, memory), {}).setdefault(p.bytes, {})[p.library] = p
    rows = []
    for (op, ranks, mem), by_size in sorted(groups.items()):
        # the largest sizes measured by more than one library (comparable), else the largest sizes
        shared = [b for b, per_lib in by_size.items() if len(per_lib) > 1]
        for b in sorted(shared or by_size, reverse=True)[:largest][::-1]:
            per_lib = by_size[b]
            fastest, ratio = _fastest(list(per_lib.values()))
            flags = [f for lib, p in sorted(per_lib.items()) for f in point_flags(p, f" ({lib})")]
            rows.append([op, ranks, mem, _size(b),
                         *[round(per_lib[lib].median, 2) if lib in per_lib else Absent("not measured")
                           for lib in libs],
                         fastest, ratio, precision_pct(list(per_lib.values())), check_cell(flags)])
    return Table("Collectives: bus bandwidth at the largest sizes (GB/s)",
                 ["operation", "ranks", "memory", "size (total)", *libs, "fastest", "fastest / slowest",
                  f"{PRECISION_COLUMN}, widest", "check"], rows,
                 "Bus bandwidth (nccl-tests factors), median of repetitions; the largest sizes that more than one "
                 "library measured. A library is called fastest only when its interval lies above every other "
                 "library's (else 'within precision'); fastest / slowest: how many times the fastest library's bus "
                 "bandwidth exceeds the slowest one's, given only when their intervals do not overlap. Sizes follow "
                 "nccl-tests: the operation's whole buffer (alltoall: each rank's send buffer; allgather, gather: "
                 "the gathered result; scatter: the root's send buffer); OSU's benchmarks call size / ranks the size "
                 "of those four. " + PRECISION_NOTE)


def _fastest(points: list[Point]) -> tuple[str, float | str]:
    """(fastest library, fastest / slowest) of one collective point measured by several libraries: a library is the
    fastest only when its interval lies above every other's (clearly_apart), the ratio only when the fastest and the
    slowest are apart; otherwise the cells say that the difference is within the figures' precision."""
    if len(points) < 2:
        return Absent("one library measured it"), Absent("one library measured it")
    ranked = sorted(points, key=lambda p: p.median, reverse=True)
    best, worst = ranked[0], ranked[-1]
    if not clearly_apart(best, worst):
        return Absent("within precision"), Absent("not significant")
    ratio = round(best.median / worst.median, 1) if worst.median > 0 else Absent("slowest measured 0")
    if not isinstance(ratio, Absent) and within_one_launch([best, worst]):
        ratio = f"{ratio}{within_one_launch([best, worst])}"
    if all(clearly_apart(best, p) for p in ranked[1:]):
        return best.library + within_one_launch(ranked), ratio
    return f"{best.library} or {ranked[1].library} (within precision)", ratio


def collective_rows(store: Store) -> list[dict]:
    """The results ranked by bus bandwidth: collective operations (barrier, which moves no data, has none)."""
    return results_where(store, lambda rec: headline(rec) == "busbw_GBps")


def ceilings_table(store: Store) -> Table:
    rows = [[op, path or Absent("not recorded"), _size(nbytes), round(v, 2)]
            for (op, path, nbytes), v in sorted(ceilings(store).items(), key=lambda kv: (kv[0][0], kv[0][1] or "",
                                                                                          kv[0][2]))]
    return Table("Measured ceilings (no MPI)", ["operation", "path", "size", "GB/s (median)"], rows,
                 "Median over the GPU or NUMA pairs of that path class and the repetitions, per message size.")


def latency_table(store: Store, sizes=(1, 8, 1024, 65536, 1 << 20)) -> Table:
    """One-way latency between pairs of ranks at a few sizes; a benchmark column when several benchmarks measured
    it (latency, mlat, rma_latency ...), an operation column when some name one (one-sided operations, persistent,
    partitions)."""
    pts = [p for p in combine(latency_rows(store)) if p.bytes in sizes]
    cols = sorted({p.bytes for p in pts})
    several = len({p.benchmark for p in pts}) > 1
    operations = any(p.operation for p in pts)
    rowmap: dict[tuple, dict[int, Point]] = {}
    for p in pts:
        key = (p.library, *([p.benchmark] if several else []), *([p.operation or NO_OPERATION] if operations else []),
               p.memory, p.strategy_label or "not recorded", p.path_class or "not recorded")
        rowmap.setdefault(key, {})[p.bytes] = p
    rows = [[*k, *[round(v[c].median, 3) if c in v else Absent("not measured") for c in cols],
             precision_pct(list(v.values())),
             check_cell([f for c, p in sorted(v.items()) for f in point_flags(p, f" at {_size(c)}")])]
            for k, v in sorted(rowmap.items())]
    return Table("One-way latency (us, median)", ["library", *(["benchmark"] if several else []),
                                                  *(["operation"] if operations else []), "memory", "strategy", "path",
                                                  *[_size(c) for c in cols], f"{PRECISION_COLUMN}, widest", "check"],
                 rows, "Median of repetitions, in microseconds, at each message size (bytes). "
                 + (OPERATION_NOTE + " " if operations else "") + PRECISION_NOTE)


# sizes the persistent table quotes (where a launch measured none of them: its smallest and largest)
PERSISTENT_SIZES = (8, 1 << 10, 64 << 10, 1 << 20, 16 << 20)
RMA_LATENCY_BYTES = 8


@dataclass
class PersistentPair:
    """A persistent point (time) and the regular point it is measured against, of the same launches."""
    persistent: Point
    regular: Point | None  # None: the regular form was not measured at that size
    operation: str | None  # the regular records' label (a collective's operation; None for point to point)

    @property
    def speedup(self) -> float | None:
        """Regular / persistent time: above 1 where the persistent form is faster."""
        if self.regular is None or self.persistent.median <= 0:
            return None
        return self.regular.median / self.persistent.median


def persistent_pairs(store: Store) -> list[PersistentPair]:
    """Every persistent point (by time, whatever the benchmark's headline) with the regular point of the same
    library, benchmark, operation, memory, strategy, ranks, path and size."""
    persistent_rows = results_where(store, persistent)
    # the label of the regular records each persistent label is measured against ("allreduce persistent" ->
    # "allreduce", "persistent" -> None)
    regular_label = {r["operation"]: operation_label({"operation": _record(r).get("operation")})
                     for r in persistent_rows}
    benchmarks = {r["benchmark"] for r in persistent_rows}
    regular = {(p.library, p.benchmark, p.operation, p.memory, p.strategy_label, p.ranks, p.path_class, p.bytes): p
               for p in combine(results_where(store, lambda rec: rec.get("benchmark") in benchmarks
                                              and not persistent(rec)), metric="t")}
    out = []
    for p in combine(persistent_rows, metric="t"):
        base = regular_label[p.operation]
        out.append(PersistentPair(p, regular.get((p.library, p.benchmark, base, p.memory, p.strategy_label, p.ranks,
                                                  p.path_class, p.bytes)), base))
    return out


def persistent_table(store: Store) -> Table:
    """Per library, benchmark (and collective operation), memory, path, ranks and size: the regular calls' median
    time next to the persistent form's, both from the same launches, how many times faster the persistent form is
    and whether the two differ by more than their precision (clearly_apart)."""
    columns = ["library", "benchmark", "operation", "memory", "path", "ranks", "size", "regular (us)",
               "persistent (us)", "speedup (regular / persistent)", "difference", f"{PRECISION_COLUMN}, widest",
               "check"]
    groups: dict[tuple, list[PersistentPair]] = {}
    for pair in persistent_pairs(store):
        p = pair.persistent
        groups.setdefault((p.library, p.benchmark, pair.operation or "", p.memory, p.strategy_label, p.ranks or 0,
                           p.path_class or ""), []).append(pair)
    rows = []
    for (lib, bench, operation, mem, _strategy, ranks, path), pairs in sorted(groups.items()):
        sizes = sorted(pair.persistent.bytes for pair in pairs)
        quoted = [b for b in sizes if b in PERSISTENT_SIZES] or sorted({sizes[0], sizes[-1]})
        for pair in sorted((x for x in pairs if x.persistent.bytes in quoted), key=lambda x: x.persistent.bytes):
            p, q = pair.persistent, pair.regular
            if q is None:
                regular_cell = speedup = difference = Absent("regular form not measured at this size")
            else:
                regular_cell = round(q.median, 3)
                speedup = round(pair.speedup, 2) if pair.speedup is not None else Absent("persistent time 0")
                difference = (("persistent faster" if p.median < q.median else "regular faster")
                              if clearly_apart(p, q) else Absent("within precision"))
            both = [p] + ([q] if q else [])
            rows.append([lib, bench, operation or NO_OPERATION, mem, path or "not recorded",
                         ranks or Absent("not recorded"), _size(p.bytes), regular_cell, round(p.median, 3), speedup,
                         difference, precision_pct(both), check_cell([f for x in both for f in point_flags(x)])])
    return Table("Persistent vs regular calls (time, us)", columns, rows,
                 "The same launch measures the regular calls, then their persistent form (MPI_Send_init/MPI_Recv_init, "
                 "MPI_Allreduce_init ...: requests made once, started every iteration); medians of repetitions in "
                 "microseconds (bw, bibw, mbw: the time of a window). 'speedup': regular / persistent time, above 1 "
                 "where the persistent form is faster; 'difference' names the faster form only where the two "
                 "intervals do not overlap. " + PRECISION_NOTE)


def one_sided_table(store: Store) -> Table:
    """Per library, one-sided operation, synchronisation, window creation, memory and path: the latency at 8 B and
    the one-way bandwidth at the largest size with a measured ceiling (else the largest size), with its % of that
    ceiling (peaks.ceiling_for, as for two-sided bandwidth)."""
    rows_ = results_where(store, one_sided)
    rma = {r["operation"]: _record(r)["rma"] for r in rows_}
    avail = ceilings(store)
    groups: dict[tuple, dict[str, dict[int, Point]]] = {}
    for p in combine(rows_):
        kind = "latency" if p.metric == "t" else "bandwidth" if p.metric == "bw" and not bidirectional(p.benchmark) \
            else None
        if kind:
            key = (p.library, p.operation, p.memory, p.strategy, p.path_class)
            groups.setdefault(key, {}).setdefault(kind, {})[p.bytes] = p
    rows = []
    for (lib, label, mem, strat, path), kinds in sorted(groups.items(), key=lambda kv: str(kv[0])):
        about = rma.get(label) or {}
        lat = kinds.get("latency", {}).get(RMA_LATENCY_BYTES)
        bw = kinds.get("bandwidth", {})
        send, _, recv = mem.partition(":")
        shown = [x for x in [lat] if x]
        if bw:
            bounded = [b for b in bw if ceiling_for(bw[b].benchmark, path, send, recv, b, avail, strat)[1]]
            size = max(bounded or bw)
            p = bw[size]
            shown.append(p)
            name, ceil = ceiling_for(p.benchmark, path, send, recv, size, avail, strat)
            bw_cells = [_size(size), round(p.median, 3), round(100 * p.median / ceil, 1) if ceil else
                        Absent(f"no ceiling at {_size(size)}"), name or Absent("none measured for this path"),
                        round(ceil, 2) if ceil else Absent(f"no ceiling at {_size(size)}")]
        else:
            bw_cells = [Absent("bandwidth not measured")] * 5
        call = about.get("call")
        rows.append([lib, f"{about.get('operation', label)}" + (f" ({call})" if call else ""),
                     about.get("sync") or Absent("not recorded"),
                     about.get("window_creation") or Absent("not recorded"),
                     mem, path or "not recorded",
                     round(lat.median, 3) if lat else Absent(f"{RMA_LATENCY_BYTES} B not measured"), *bw_cells,
                     precision_pct(shown), check_cell([f for x in shown for f in point_flags(x)])])
    return Table("One-sided communication (RMA)",
                 ["library", "operation", "synchronisation", "window creation", "memory", "path",
                  f"latency at {RMA_LATENCY_BYTES} B (us)", "bandwidth at size", "bandwidth GB/s", "% of ceiling",
                  "ceiling", "ceiling GB/s", f"{PRECISION_COLUMN}, widest", "check"], rows,
                 "Origin rank 0, target rank 1 (memory: origin:target). Latency: median time of one operation and its "
                 "synchronisation; bandwidth: a window of operations per synchronisation, at the largest size at which "
                 "a ceiling of that path was measured (the ceiling as in Fraction of peak). " + PRECISION_NOTE)


def partitioned_overlap(store: Store) -> dict[tuple, list[dict]]:
    """The metrics of partitioned overlap results (one per repetition) by (library, memory, path class, bytes,
    partitions, ready mode)."""
    groups: dict[tuple, list[dict]] = {}
    for r in results_where(store, lambda rec: partitioned(rec) and overlap(rec)):
        rec = _record(r)
        key = (r["library"], r["memory"], r["path_class"] or "not recorded", r["bytes"], rec["partitions"],
               rec.get("ready") or Absent("not recorded"))
        groups.setdefault(key, []).append(rec["metrics"])
    return groups


def partitioned_overlap_table(store: Store) -> Table:
    """Partitioned communication overlapped with compute: per library, memory, path, size, partition count and
    ready mode (partitions marked ready per block of the kernel, or after the kernel) the pure, compute and
    overall times and the overlap %, medians of repetitions."""
    figures = ("pure_us", "compute_us", "overall_us", "overhead_us", "overlap_pct")
    rows = []
    for (lib, mem, path, nbytes, parts, ready), metrics in sorted(partitioned_overlap(store).items(),
                                                                  key=lambda kv: (*kv[0][:5], str(kv[0][5]))):
        values = [round(median(m[f] for m in metrics if f in m), 2) if any(f in m for m in metrics)
                  else Absent("not recorded") for f in figures]
        rows.append([lib, mem, path, _size(nbytes), parts, ready, *values, len(metrics)])
    return Table("Partitioned communication overlapped with compute",
                 ["library", "memory", "path", "size", "partitions", "ready", "pure (us)", "compute (us)",
                  "overall (us)", "overhead (us)", "overlap (%)", "repetitions"], rows,
                 "pure: the transfer alone; compute: the kernel alone (about the pure time); overall: both, partitions "
                 "marked ready per block of the kernel as it finishes them (per-block) or all after it (after-kernel); "
                 "overlap % (the engine's, as for non-blocking collectives) = 100 x (1 - (overall - compute) / pure): "
                 "the share of the transfer hidden behind the kernel; medians of repetitions.")


# results that are not "ok", grouped by status and reason; the engine leaves the reason out of a point whose data
# arrived wrong (it says so in validation_error, which differs per size)
_NOT_OK = ("SELECT library, benchmark, operation, memory, strategy, status, COALESCE(reason, CASE json_extract(json, "
           "'$.validation') WHEN 'failed' THEN 'data failed validation' END) AS reason, COUNT(*) AS points "
           "FROM results WHERE status != 'ok' GROUP BY 1, 2, 3, 4, 5, 6, 7")


def status_table(store: Store) -> Table:
    """What was not measured, one row per status and reason: how many (result points, planned runs or launches)
    and which library / benchmark / memory / strategy it covers, rather than the same reason in dozens of rows."""
    groups: dict[tuple, tuple[list[int], set]] = {}

    def add(status, reason, count, unit, *what):
        count_box, covers = groups.setdefault((status, reason or "no reason recorded", unit), ([0], set()))
        count_box[0] += count
        covers.add(" ".join(str(w) for w in what if w))

    for r in store.rows(_NOT_OK):
        add(r["status"], r["reason"], r["points"], "result points", r["library"], r["benchmark"], r["operation"],
            r["memory"], r["strategy"])
    for s in store.skipped():
        add("skipped", s["reason"], 1, "planned runs", s["library"], s["what"])
    for launch in store.launches():
        if launch["status"] != "ok":
            add(f"launch {launch['status']}", launch["reason"], 1, "launches", launch["library"],
                launch["benchmark"], launch["memory"], launch["strategy"])
    rows = [[status, reason, count_box[0], unit, "; ".join(sorted(covers))]
            for (status, reason, unit), (count_box, covers) in sorted(groups.items())]
    return Table("Not measured (unsupported, failed, skipped, timed out)",
                 ["status", "reason", "count", "counted", "covers (library benchmark operation memory strategy)"], rows,
                 "One row per status and reason; 'count' counts what 'counted' names (result points of a launch, "
                 "runs the planner left out, or launches).")


def all_tables(store: Store) -> list[Table]:
    """The report's tables; those of one-sided, persistent and partitioned communication only where the store holds
    such results."""
    measured = [t for t in (one_sided_table(store), persistent_table(store), partitioned_overlap_table(store))
                if t.rows]
    return [fraction_of_peak(store), ceilings_table(store), latency_table(store), *measured,
            collectives_table(store), status_table(store)]


def export_csv(tables: list[Table], outdir: str | Path) -> list[Path]:
    """One CSV per table, each complete or absent (outputs.write_new); refuses to overwrite."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for t in tables:
        name = "".join(c if c.isalnum() else "_" for c in t.title.lower()).strip("_")
        while "__" in name:
            name = name.replace("__", "_")
        path = outdir / f"{name}.csv"
        if path.exists():
            raise FileExistsError(f"{path} exists; not overwriting")
        t.write_csv(path)
        written.append(path)
    return written


def _size(b: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


size_label = _size

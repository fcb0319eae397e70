# SPDX-License-Identifier: BSD-3-Clause
"""The tables of one-sided, persistent and partitioned communication (present only where such results are)."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from ..results.model import Results
from ..results.peaks import ceilings
from ..results.points import Point
from ..results.result_facts import one_sided, operation_label, overlap, partitioned, persistent
from .cells import (NO_OPERATION, PRECISION_COLUMN, PRECISION_NOTE, Absent, Table, check_cell, clearly_apart,
                    point_flags, precision_pct, size_label)
from .wording import no_difference_text


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


def persistent_pairs(results: Results) -> list[PersistentPair]:
    """Every persistent point (by time, whatever the benchmark's headline) with the regular point of the same
    library, benchmark, operation, memory, strategy, ranks, path and size."""
    persistent_results = results.where(persistent)
    # the label of the regular records each persistent label is measured against ("allreduce persistent" ->
    # "allreduce", "persistent" -> None)
    regular_label = {r.operation: operation_label({"operation": r.record.get("operation")})
                     for r in persistent_results}
    benchmarks = {r.benchmark for r in persistent_results}
    regular = {(p.library, p.benchmark, p.operation, p.memory, p.strategy_label, p.ranks, p.path_class, p.bytes): p
               for p in results.points(results.where(lambda rec: rec.get("benchmark") in benchmarks
                                              and not persistent(rec)), metric="t")}
    out = []
    for p in results.points(persistent_results, metric="t"):
        base = regular_label[p.operation]
        out.append(PersistentPair(p, regular.get((p.library, p.benchmark, base, p.memory, p.strategy_label, p.ranks,
                                                  p.path_class, p.bytes)), base))
    return out


def persistent_table(results: Results) -> Table:
    """Per library, benchmark (and collective operation), memory, path, ranks and size: the regular calls' median
    time next to the persistent form's, both from the same launches, how many times faster the persistent form is
    and whether the two differ by more than their precision (clearly_apart)."""
    columns = ["library", "benchmark", "operation", "memory", "path", "ranks", "size", "regular (us)",
               "persistent (us)", "speedup (regular / persistent)", "difference", f"{PRECISION_COLUMN}, widest",
               "check"]
    groups: dict[tuple, list[PersistentPair]] = {}
    for pair in persistent_pairs(results):
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
                              if clearly_apart(p, q) else Absent(no_difference_text([p, q])))
            both = [p] + ([q] if q else [])
            rows.append([lib, bench, operation or NO_OPERATION, mem, path or "not recorded",
                         ranks or Absent("not recorded"), size_label(p.bytes), regular_cell, round(p.median, 3), speedup,
                         difference, precision_pct(both), check_cell([f for x in both for f in point_flags(x)])])
    return Table("Persistent vs regular calls (time, us)", columns, rows,
                 "The same launch measures the regular calls, then their persistent form (MPI_Send_init/MPI_Recv_init, "
                 "MPI_Allreduce_init ...: requests made once, started every iteration); medians of repetitions in "
                 "microseconds (bw, bibw, mbw: the time of a window). 'speedup': regular / persistent time, above 1 "
                 "where the persistent form is faster; 'difference' names the faster form only where the difference "
                 "is proven (the 95 % interval of the ratio over the launches excludes 1), and otherwise says why "
                 "not. " + PRECISION_NOTE)


def one_sided_table(results: Results) -> Table:
    """Per library, one-sided operation, synchronisation, window creation, memory and path: the latency at 8 B and
    the one-way bandwidth at the largest size with a measured ceiling (else the largest size), with its % of that
    ceiling (peaks.Ceilings.at, as for two-sided bandwidth)."""
    chosen = results.where(one_sided)
    rma = {r.operation: r.record["rma"] for r in chosen}
    avail = ceilings(results)
    groups: dict[tuple, dict[str, dict[int, Point]]] = {}
    for p in results.points(chosen):
        kind = "latency" if p.metric == "t" else "bandwidth" if p.metric == "bw" and not results.engines.bidirectional(p.benchmark) \
            else None
        if kind:
            key = (p.library, p.operation, p.memory, p.strategy, p.path_class)
            groups.setdefault(key, {}).setdefault(kind, {})[p.bytes] = p
    rows = []
    for (lib, label, mem, strat, path), kinds in sorted(groups.items(), key=lambda kv: str(kv[0])):
        about = rma.get(label) or {}
        lat = kinds.get("latency", {}).get(RMA_LATENCY_BYTES)
        bw = kinds.get("bandwidth", {})
        shown = [x for x in [lat] if x]
        if bw:
            bounded = [b for b in bw if avail.of_point(bw[b])[1]]
            size = max(bounded or bw)
            p = bw[size]
            shown.append(p)
            name, ceil = avail.of_point(p)
            bw_cells = [size_label(size), round(p.median, 3), round(100 * p.median / ceil, 1) if ceil else
                        Absent(f"no ceiling at {size_label(size)}"), name or Absent("none measured for this path"),
                        round(ceil, 2) if ceil else Absent(f"no ceiling at {size_label(size)}")]
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


def partitioned_overlap(results: Results) -> dict[tuple, list[dict]]:
    """The metrics of partitioned overlap results (one per repetition) by (library, sides, path class, bytes,
    partitions, ready mode)."""
    groups: dict[tuple, list[dict]] = {}
    for r in results.where(lambda rec: partitioned(rec) and overlap(rec)):
        key = (r.library, r.sides, r.path_class or "not recorded", r.bytes, r.record["partitions"],
               r.record.get("ready") or Absent("not recorded"))
        groups.setdefault(key, []).append(r.metrics)
    return groups


def partitioned_overlap_table(results: Results) -> Table:
    """Partitioned communication overlapped with compute: per library, memory, path, size, partition count and
    ready mode (partitions marked ready per block of the kernel, or after the kernel) the pure, compute and
    overall times and the overlap %, medians of repetitions."""
    figures = ("pure_us", "compute_us", "overall_us", "overhead_us", "overlap_pct")
    rows = []
    for (lib, sides, path, nbytes, parts, ready), metrics in sorted(partitioned_overlap(results).items(),
                                                                    key=lambda kv: (*kv[0][:5], str(kv[0][5]))):
        values = [round(median(m[f] for m in metrics if f in m), 2) if any(f in m for m in metrics)
                  else Absent("not recorded") for f in figures]
        rows.append([lib, sides.label, path, size_label(nbytes), parts, ready, *values, len(metrics)])
    return Table("Partitioned communication overlapped with compute",
                 ["library", "memory", "path", "size", "partitions", "ready", "pure (us)", "compute (us)",
                  "overall (us)", "overhead (us)", "overlap (%)", "repetitions"], rows,
                 "pure: the transfer alone; compute: the kernel alone (about the pure time); overall: both, partitions "
                 "marked ready per block of the kernel as it finishes them (per-block) or all after it (after-kernel); "
                 "overlap % (the engine's, as for non-blocking collectives) = 100 x (1 - (overall - compute) / pure): "
                 "the share of the transfer hidden behind the kernel; medians of repetitions.")

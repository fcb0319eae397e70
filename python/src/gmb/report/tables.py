# SPDX-License-Identifier: BSD-3-Clause
"""The report's tables, computed from the results model (results/model.py): fraction of peak, measured ceilings,
latency, collectives and what was not measured, with the tables of one-sided, persistent and partitioned
communication (feature_tables.py). Each function returns a Table; render_text, render_html and render_csv show it.
"""

from __future__ import annotations

from ..results.model import Results
from ..results.peaks import PAIRS_NOT_RECORDED, Ceilings, ceilings, measured_ceilings, nominal_rate
from ..results.points import Point, strategy_label
from .cells import (NO_OPERATION, OPERATION_NOTE, PRECISION_COLUMN, PRECISION_NOTE, SUSPECT_PCT, Absent, Table,
                    check_cell, claimed_ratio, clearly_apart, collective_results, latency_results,
                    pairwise_bandwidth, point_flags, precision_pct, size_label, size_text)
from .feature_tables import one_sided_table, partitioned_overlap_table, persistent_table
from .network import above_every_tool, ceiling_name, is_network, network_source, network_table
from .scaling import scaling_table, size_sweep_table
from .what_ran_table import what_ran_table
from .wording import no_difference_text, ratio_said


PAIRS_NOTE = ("'pairs': several pairs at once (an aggregate figure): its ceiling and nominal rate are the "
              "aggregate's, each group of pairs sharing a resource (the network between two hosts, a GPU, a host's "
              "memory) counted once and the groups summed ('4 x p2p-ipc', 'network (shared by 4 pairs)').")


def fraction_of_peak(results: Results) -> Table:
    """Per library, benchmark of bandwidth between pairs of ranks (bw, bibw, mbw ...), memory placement, strategy
    and path: the peak MPI bandwidth, its share of the measured ceiling and of the nominal link rate.

    The peak is the best combined median over the sizes at which a ceiling bounding that transfer was measured
    (peaks.Ceilings.at: same path class, same message size, strategy-aware), so that a figure is never compared
    with a ceiling of another size (a cache-resident small copy against a large one, or the reverse). When no
    ceiling was measured at any size the library measured, the peak is the best over all its validated sizes
    and the row says that there is no ceiling to compare with (no percentage)."""
    avail = ceilings(results)
    groups: dict[tuple, list[Point]] = {}
    for p in results.points(results.where(pairwise_bandwidth)):
        groups.setdefault((p.library, p.benchmark, p.operation, p.memory, p.strategy, p.chunks, p.fresh, p.path_class,
                           p.key.pairs.count if p.key.pairs else 1), []).append(p)
    # Sizes whose data arrived wrong are not results: the peak is over the sizes that validated, and the
    # table says how many did not (a library that corrupts large messages must not look merely slow).
    failed: dict[tuple, set] = {}
    for r in results.where(pairwise_bandwidth, status="failed"):
        key = (r.library, r.benchmark, r.operation, r.memory, r.strategy, r.chunks, r.fresh, r.path_class)
        failed.setdefault(key, set()).add(r.bytes)
    broken = _broken_launches(results)
    operations = any(key[2] for key in groups)  # an operation column where some row names one
    several = any(key[8] > 1 for key in groups)  # a pairs column where some row measured several pairs at once
    rows = []
    for key, pts in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        lib, bench, operation, mem, strat, chunks, fresh, path, pairs = key
        p, pct, op, ceil_cell, flags = _peak(results, avail, pts)
        flags += point_flags(p)
        died = broken.get((lib, bench, mem, strat or "direct", path), [])
        if died:
            flags.append(f"{len(died)} launch(es) {'/'.join(sorted(set(died)))}: sizes after the failure missing "
                         f"(see Not measured)")
        nominal = nominal_rate(p, results.engines)
        no_rate = Absent("link rate unknown")
        rows.append([lib, bench, *([operation or NO_OPERATION] if operations else []), *([pairs] if several else []),
                     mem, strategy_label(strat, chunks, fresh) or "not recorded", path or "not recorded",
                     size_label(p.bytes), round(p.median, 3), precision_pct([p]), pct, op, ceil_cell,
                     round(100 * p.median / nominal, 1) if nominal else no_rate, nominal or no_rate,
                     len(failed.get(key[:8], ())), check_cell(flags)])
    return Table("Fraction of peak", ["library", "benchmark", *(["operation"] if operations else []),
                                      *(["pairs"] if several else []), "memory",
                                      "strategy", "path", "at size",
                                      "peak MPI GB/s", PRECISION_COLUMN, "% of ceiling", "ceiling", "ceiling GB/s",
                                      "% of nominal", "nominal GB/s", "sizes failed validation", "check"], rows,
                 _fraction_of_peak_note(several, operations))


def _broken_launches(results: Results) -> dict[tuple, list[str]]:
    """The statuses of the launches that died (a crash, a timeout), by library, benchmark, memory, strategy and
    path: such a launch leaves a row with only the sizes before the failure, and the row says so."""
    broken: dict[tuple, list[str]] = {}
    for launch in results.launches:
        if launch.status in ("failed", "timeout"):
            key = (launch.library, launch.benchmark, launch.memory, launch.strategy or "direct", launch.planned_path)
            broken.setdefault(key, []).append(launch.status)
    return broken


def _peak(results: Results, avail: Ceilings,
          pts: list[Point]) -> tuple[Point, float | Absent, str, float | Absent, list[str]]:
    """(the peak point, its % of the ceiling, the ceiling's name, the ceiling in GB/s, flags) of one row's points:
    the best of those a ceiling bounds, else the best of all with why there is no ceiling."""
    bounded = []
    for p in pts:
        op, ceil = avail.of_point(p)
        if ceil:
            bounded.append((p, op, ceil))
    flags = []
    if bounded:
        p, op, ceil = max(bounded, key=lambda x: x[0].median)
        pct, ceil_cell = round(100 * p.median / ceil, 1), round(ceil, 2)
        if pct > SUSPECT_PCT:  # MPI cannot beat a copy without MPI over the same path: the ceiling is wrong
            flags.append(above_every_tool(network_source(avail, op, p.bytes), op, p.median, ceil)
                         if is_network(avail, op) else "ceiling suspect: MPI above it")
        return p, pct, ceiling_name(avail, op, p.bytes), ceil_cell, flags
    p = max(pts, key=lambda x: x.median)
    send, _, recv = p.memory.partition(":")
    at = avail.sizes(p.benchmark, p.path_class, send, recv, p.strategy, p.key.pairs)
    op = (f"none at the sizes measured (measured at {', '.join(size_label(b) for b in at)})" if at
          else "unknown: no engine description stored" if not results.engines.described
          else f"none: {PAIRS_NOT_RECORDED}" if p.key.pairs and p.key.pairs.groups is None
          else "none measured for this path")
    no_ceiling = Absent(f"no ceiling at {size_label(p.bytes)}")
    return p, no_ceiling, op, no_ceiling, flags


def _fraction_of_peak_note(several: bool, operations: bool) -> str:
    return ("Peak = best median (median of repetitions) over the validated sizes at which a ceiling of that "
            "path was measured; 'at size' is that size and the ceiling is the one measured at it, without MPI, "
            "by the peaks benchmark, over the same path class: the largest of the copies measured there (a GPU "
            "pair: p2p-ipc, p2p-ce, p2p-sm), named (staged and pipelined strategies on device memory: the "
            "slower host-device copy; pipelined-gpu: the host side's copy). bibw: twice the one-way ceiling "
            "(x2) on links with separate resources per direction, the one-way ceiling (x1) where both "
            "directions share one memory (same GPU, host), host <-> device the copy one way plus the copy back, "
            "unless a bidirectional ceiling was measured; nominal rate doubled. "
            + (PAIRS_NOTE + " " if several else "") + "Without a ceiling at any size measured the row "
            "says so and the peak is over all validated sizes. " + (OPERATION_NOTE + " " if operations else "")
            + "'sizes failed validation': message sizes where the library delivered wrong data "
            "(no figure is taken from them). " + PRECISION_NOTE + " A figure above the ceiling (by more than "
            f"{SUSPECT_PCT - 100} %) is flagged too: the ceiling was not measured right at that size (between "
            "hosts: the network tools did not reach the link's limit); and a row "
            "whose launches failed or timed out.")


def collectives_table(results: Results, largest: int = 3) -> Table:
    """Bus bandwidth per collective operation, rank count and memory at the largest sizes, one column per library
    (MPI libraries and NCCL side by side), the fastest library and how many times faster it is than the slowest
    one. This is where an MPI allreduce on device buffers that is hundreds of times slower than NCCL's shows."""
    pts = [p for p in results.points(collective_results(results)) if p.bytes > 0]
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
            rows.append([op, ranks, mem, size_label(b),
                         *[round(per_lib[lib].median, 2) if lib in per_lib else Absent("not measured")
                           for lib in libs],
                         fastest, ratio, precision_pct(list(per_lib.values())), check_cell(flags)])
    return Table("Collectives: bus bandwidth at the largest sizes (GB/s)",
                 ["operation", "ranks", "memory", "size (total)", *libs, "fastest", "fastest / slowest",
                  f"{PRECISION_COLUMN}, widest", "check"], rows,
                 "Bus bandwidth (nccl-tests factors), median of repetitions; the largest sizes that more than one "
                 "library measured. A library is called fastest only when it is proven ahead of every other (the 95 % "
                 "interval of the ratio over the launches excludes 1, the report's claims held together at a 5 % "
                 "false discovery rate); fastest / slowest: how many times the fastest library's bus bandwidth "
                 "exceeds the slowest one's, with its 95 % interval, given only where that difference is proven. "
                 "Sizes follow "
                 "nccl-tests: the operation's whole buffer (alltoall: each rank's send buffer; allgather, gather: "
                 "the gathered result; scatter: the root's send buffer); OSU's benchmarks call size / ranks the size "
                 "of those four. " + PRECISION_NOTE)


def _fastest(points: list[Point]) -> tuple[str | Absent, str | Absent]:
    """(fastest library, fastest / slowest with its interval) of one collective point measured by several libraries:
    a library is the fastest only when it is proven ahead of every other (clearly_apart), the ratio only where the
    fastest and the slowest are proven apart, as the answers write it; otherwise the cells say why no claim is
    made."""
    if len(points) < 2:
        return Absent("one library measured it"), Absent("one library measured it")
    ranked = sorted(points, key=lambda p: p.median, reverse=True)
    best, worst = ranked[0], ranked[-1]
    claimed = claimed_ratio(best, worst)
    if claimed is None:
        why = no_difference_text([best, worst])
        return Absent("not proven apart"), Absent(why)
    ratio = ratio_said(claimed)
    if all(clearly_apart(best, p) for p in ranked[1:]):
        return best.library, ratio
    return f"{best.library} or {ranked[1].library} (not proven apart)", ratio


def ceilings_table(results: Results) -> Table:
    rows = [[op, path or Absent("not recorded"), size_label(nbytes), round(v, 2)]
            for (op, path, nbytes), v in sorted(measured_ceilings(results).items(), key=lambda kv: (kv[0][0], kv[0][1] or "",
                                                                                          kv[0][2]))]
    return Table("Measured ceilings (no MPI)", ["operation", "path", "size", "GB/s (median)"], rows,
                 "Median over the GPU or NUMA pairs of that path class and the repetitions, per message size.")


def latency_table(results: Results, sizes=(1, 8, 1024, 65536, 1 << 20)) -> Table:
    """One-way latency between pairs of ranks at a few sizes; a benchmark column when several benchmarks measured
    it (latency, mlat, rma_latency ...), an operation column when some name one (one-sided operations, persistent,
    partitions)."""
    pts = [p for p in results.points(latency_results(results)) if p.bytes in sizes]
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
             check_cell([f for c, p in sorted(v.items()) for f in point_flags(p, f" at {size_label(c)}")])]
            for k, v in sorted(rowmap.items())]
    return Table("One-way latency (us, median)", ["library", *(["benchmark"] if several else []),
                                                  *(["operation"] if operations else []), "memory", "strategy", "path",
                                                  *[size_text(c) for c in cols], f"{PRECISION_COLUMN}, widest", "check"],
                 rows, "Median of repetitions, in microseconds, at each message size (bytes). "
                 + (OPERATION_NOTE + " " if operations else "") + PRECISION_NOTE)


def not_ok_reason(r) -> str | None:
    """Why a result is not ok: its reason; the engine leaves the reason out of a point whose data arrived wrong (it
    says so in validation_error, which differs per size)."""
    return r.reason or ("data failed validation" if r.validation == "failed" else None)


def status_table(results: Results) -> Table:
    """What was not measured, one row per status and reason: how many (result points, planned runs or launches)
    and which library / benchmark / memory / strategy it covers, rather than the same reason in dozens of rows."""
    groups: dict[tuple, tuple[list[int], set]] = {}

    def add(status, reason, count, unit, *what):
        count_box, covers = groups.setdefault((status, reason or "no reason recorded", unit), ([0], set()))
        count_box[0] += count
        covers.add(" ".join(str(w) for w in what if w))

    for r in results.results:
        if r.status != "ok":
            add(r.status, not_ok_reason(r), 1, "result points", r.library, r.benchmark, r.operation, r.memory,
                r.strategy)
    for s in results.skipped:
        add("skipped", s.reason, 1, "planned runs", s.library, s.what)
    for launch in results.launches:
        if launch.status != "ok":
            add(f"launch {launch.status}", launch.reason, 1, "launches", launch.library, launch.benchmark,
                launch.memory, launch.strategy)
    rows = [[status, reason, count_box[0], unit, "; ".join(sorted(covers))]
            for (status, reason, unit), (count_box, covers) in sorted(groups.items())]
    return Table("Not measured (unsupported, failed, skipped, timed out)",
                 ["status", "reason", "count", "counted", "covers (library benchmark operation memory strategy)"], rows,
                 "One row per status and reason; 'count' counts what 'counted' names (result points of a launch, "
                 "runs the planner left out, or launches).")


# The report's tables, in the order shown: each an analysis function of the results, and whether it is shown when
# it has no row (one-sided, persistent and partitioned only where the results hold such results). A new table is
# one function here and one entry below: text, HTML and CSV render every Table alike.
TABLES = ((fraction_of_peak, True), (ceilings_table, True), (network_table, False), (latency_table, True), (one_sided_table, False),
          (persistent_table, False), (partitioned_overlap_table, False), (collectives_table, True),
          (scaling_table, False), (size_sweep_table, False), (what_ran_table, False),
          (status_table, True))


def all_tables(results: Results) -> list[Table]:
    """The report's tables (TABLES)."""
    return [t for make, always in TABLES for t in [make(results)] if always or t.rows]



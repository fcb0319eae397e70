# SPDX-License-Identifier: BSD-3-Clause
"""Synthetic, schema-valid gmb records: for tests, demos and fake engines.

The numbers follow a simple model (latency = alpha + bytes / beta) with a per-library scale, so that
tables, plots and comparisons have something realistic-looking to work on. They are not measurements.
"""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

from gmb import SCHEMA_ID

# path class -> (alpha us, beta GB/s, nominal GB/s per direction, link)
PATH_MODEL = {
    "host": (0.4, 12.0, None, "shared memory"),
    "cross-socket": (0.7, 9.0, None, "UPI"),
    "host-device": (2.5, 22.0, 64.0, "PCIe Gen5 x16"),
    "nvlink": (2.0, 350.0, 478.0, "NV18"),
    "pcie": (3.0, 40.0, 64.0, "PCIe Gen5 x16"),
    "same-gpu": (1.5, 900.0, None, "HBM3"),
    "inter-node": (2.2, 22.0, 25.0, "IB NDR200"),
}


def stats(median: float, spread: float = 0.03, n: int = 100, rng: random.Random | None = None) -> dict:
    rng = rng or random.Random(0)
    jitter = 1.0 + rng.uniform(-spread, spread) / 4
    med = median * jitter
    return {
        "n": n,
        "min": med * (1 - spread),
        "median": med,
        "mean": med * (1 + spread / 5),
        "p5": med * (1 - spread * 0.8),
        "p95": med * (1 + spread * 1.5),
        "max": med * (1 + spread * 3),
        "cv": spread / 2,
        "ci95_low": med * (1 - spread / 6),
        "ci95_high": med * (1 + spread / 6),
    }


def context(run_id: str, benchmark: str, library_version: str = "Open MPI v4.1.4", world_size: int = 2,
            cuda: bool = False, argv: list[str] | None = None, env: dict | None = None) -> dict:
    ranks = [
        {"rank": r, "host": "node0", "local_rank": r, "local_rank_source": "OMPI_COMM_WORLD_LOCAL_RANK",
         "cpu_binding": str(r),
         "gpu": ({"index": r, "name": "NVIDIA H200", "uuid": f"GPU-{r:08d}", "pci_bus_id": f"0000:{r + 1:02x}:00.0",
                  "memory_bytes": 150_000_000_000} if cuda else None)}
        for r in range(world_size)
    ]
    return {
        "schema": SCHEMA_ID, "type": "context", "run_id": run_id, "time_utc": "2025-01-01T00:00:00Z",
        "tool": {"name": "gmb-bench", "version": "0.1.0", "git_revision": "synthetic",
                 "build": {"cuda": cuda, "compiler": "g++ 12.2"}},
        "command_line": argv or ["gmb-bench", benchmark], "benchmark": benchmark, "world_size": world_size,
        "environment": env or {}, "mpi": {"library_version": library_version, "standard_version": "3.1",
                                          "gpu_awareness": {"verdict": "aware" if cuda else "not aware",
                                                            "evidence": {}}},
        "cuda": ({"runtime_version": "13.0", "driver_version": "580", "device_count": 2} if cuda else None),
        "ranks": ranks, "options": {"iters": 1000, "warmup": 100},
    }


def pt2pt_results(run_id: str, benchmark: str, sizes: list[int], send: str = "host", recv: str = "host",
                  path_class: str = "host", scale: float = 1.0, strategy: str = "direct",
                  seed: int = 0, window: int = 64, pairs: int = 1, headline: str | None = None) -> list[dict]:
    """Point-to-point results. Without ``headline``, as engines wrote them before records named their headline
    (latency: time only; bw, bibw, mbw: bandwidth too); with it, as today's engines write them: the headline named,
    and a benchmark ranked by time (latency, mlat) carries time only."""
    rng = random.Random(seed)
    time_only = benchmark == "latency" if headline is None else headline == "time_us"
    alpha, beta, nominal, link = PATH_MODEL[path_class]
    alpha *= scale
    beta /= scale
    out = []
    for b in sizes:
        t = alpha + b / (beta * 1e3)  # us (GB/s -> bytes/us = 1e3 * GB/s)
        rec = {"schema": SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": benchmark, "status": "ok",
               "bytes": b, "memory": {"send": send, "recv": recv}, "size_convention": "message", "strategy": strategy,
               "ranks": 2 * pairs, "iterations": 1000, "warmup": 100, "buffer_allocation": "once-per-launch",
               "validation": "passed", "validated_iterations": 2,
               "path": {"class": path_class, "link": link, "nominal_GBps": nominal}}
        if headline:
            rec["headline"] = headline
        if time_only:
            rec["time_us"] = stats(t, rng=rng)
        else:
            factor = 2.0 if benchmark.endswith("bibw") else 1.0
            # windowed: per-message overhead amortised over the window
            t_win = alpha / 4 + b / (beta * 1e3)
            gbps = factor * pairs * b / (t_win * 1e3) if b else 0.0
            rec["window"] = window
            rec["time_us"] = stats(t_win * window, rng=rng)
            rec["bandwidth_GBps"] = stats(gbps, spread=0.05, rng=rng)
            if benchmark == "mbw":
                rec["pairs"] = pairs
                rec["message_rate_Mps"] = stats(pairs / t_win, rng=rng)
        out.append(rec)
    return out


# one-sided operations: (call, datatype, element bytes, single element, cost relative to put)
RMA_OPERATIONS = {"put": ("MPI_Put", "byte", 1, False, 1.0), "get": ("MPI_Get", "byte", 1, False, 1.2),
                  "acc": ("MPI_Accumulate", "int", 4, False, 1.6),
                  "get_acc": ("MPI_Get_accumulate", "int", 4, False, 1.9),
                  "fop": ("MPI_Fetch_and_op", "int64", 8, True, 1.5),
                  "cas": ("MPI_Compare_and_swap", "int64", 8, True, 1.5)}
# the engine's reasons where an MPI-3 library lacks an MPI-4 interface (src/core/mpi_features.cpp)
MPI3_REASONS = {
    "partitioned": "the engine's MPI library, Open MPI v4.1.4 (MPI 3.1), has no MPI_Psend_init/MPI_Precv_init/"
                   "MPI_Pready/MPI_Parrived (MPI-4.0 partitioned communication): they did not compile and link when "
                   "the engine was built",
    "persistent_collectives": "the engine's MPI library, Open MPI v4.1.4 (MPI 3.1), has no MPI_Allreduce_init, "
                              "MPI_Bcast_init, ... (MPI_<op>_init) (MPI-4.0 persistent collectives): they did not "
                              "compile and link when the engine was built"}


def rma_results(run_id: str, benchmark: str, sizes: list[int], send: str, recv: str, path_class: str,
                operation: str = "put", sync: str = "flush", window_creation: str = "create", scale: float = 1.0,
                seed: int = 0, headline: str | None = None) -> list[dict]:
    """One-sided results as rma_latency / rma_bw / rma_bibw write them: pt2pt's fields plus the operation, the
    variant (synchronisation and window creation) and the rma object; fop and cas measure their one element only,
    integer operations whole elements."""
    call, datatype, element, single, cost = RMA_OPERATIONS[operation]
    sizes = [element] if single else [b for b in sizes if b >= element and b % element == 0]
    recs = pt2pt_results(run_id, benchmark, sizes, send, recv, path_class, scale=scale * cost, seed=seed,
                         headline=headline)
    for r in recs:
        r.update(transport="mpi", operation=operation, variant=f"{sync} {window_creation}",
                 rma={"operation": operation, "call": call, "sync": sync, "window_creation": window_creation,
                      "datatype": datatype})
    return recs


def persistent_results(regular: list[dict], call: str, speedup: float = 1.15) -> list[dict]:
    """The persistent form's records of a launch that measured ``regular`` first: the same points, ``speedup``
    times faster, with the variant and the regular figure they are compared with."""
    out = []
    for r in regular:
        if r["status"] != "ok":
            continue
        p = copy.deepcopy(r)
        for key in ("time_us", "bandwidth_GBps", "busbw_GBps", "message_rate_Mps"):
            if key in p:
                factor = 1 / speedup if key == "time_us" else speedup
                p[key] = {k: v if k in ("n", "cv") else v * factor for k, v in p[key].items()}
        p["variant"] = "persistent"
        p["persistent"] = {"call": call, "regular_time_us": r["time_us"]["median"],
                           "speedup": r["time_us"]["median"] / p["time_us"]["median"]}
        out.append(p)
    return out


def partitioned_results(run_id: str, benchmark: str, sizes: list[int], send: str, recv: str, path_class: str,
                        partitions: list[int], seed: int = 0, headline: str | None = None) -> list[dict]:
    """part_latency / part_bw: pt2pt's fields per partition count, partitions readied by the host."""
    out = []
    for parts in partitions:
        recs = pt2pt_results(run_id, benchmark, [b for b in sizes if b >= parts], send, recv, path_class,
                             scale=1.0 + 0.02 * parts, seed=seed + parts, headline=headline)
        for r in recs:
            r.update(transport="mpi", partitions=parts, variant=f"P={parts}", ready="host")
        out += recs
    return out


def part_overlap_results(run_id: str, sizes: list[int], send: str, recv: str, path_class: str, partitions: list[int],
                         ready_modes: list[str], sweep: bool, seed: int = 0) -> list[dict]:
    """part_overlap: per partition count and ready mode the nbc overlap figures (compute about the pure time), and
    with ``sweep`` the curve over compute fractions 0, 0.25 ... 2; per-block readying overlaps more with more
    partitions, after-kernel hardly at all."""
    rng = random.Random(seed)
    alpha, beta, nominal, link = PATH_MODEL[path_class]
    out = []
    for parts in partitions:
        for ready in ready_modes:
            hidden = min(0.9, 0.3 + 0.1 * math.log2(parts)) if ready == "per-block" else 0.05
            for b in sizes:
                pure = alpha + b / (beta * 1e3)

                def figures(fraction: float) -> dict:
                    compute = fraction * pure
                    overlap_us = hidden * min(pure, compute) if compute else 0.0
                    overall = pure + compute - overlap_us
                    return {"pure_us": pure, "compute_us": compute, "overall_us": overall,
                            "overhead_us": overall - compute, "overlap_pct": 100.0 * overlap_us / pure}

                metrics = figures(1.0)
                if sweep:
                    metrics["curve"] = [{"compute_fraction": 0.25 * k, **figures(0.25 * k)} for k in range(9)]
                out.append({"schema": SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": "part_overlap",
                            "status": "ok", "bytes": b, "memory": {"send": send, "recv": recv},
                            "size_convention": "message", "transport": "mpi", "strategy": "direct", "ranks": 2,
                            "partitions": parts, "variant": f"P={parts} {ready}", "ready": ready,
                            "path": {"class": path_class, "link": link, "nominal_GBps": nominal},
                            "headline": "time_us", "time_us": stats(metrics["overall_us"], rng=rng),
                            "metrics": metrics})
    return out


def peaks_results(run_id: str, cuda: bool = True) -> list[dict]:
    """Copy ceilings with the path class the engine records; a GPU pair's (p2p-*) is left out, so that those ceilings
    bound no MPI figure."""
    rng = random.Random(7)
    ops = [("host-stream", "host", "host", 14.0, "host")]
    if cuda:
        ops += [("h2d-pinned", "host", "gpu0", 55.0, "host-device"), ("d2h-pinned", "gpu0", "host", 55.0, "host-device"),
                ("h2d-pageable", "host", "gpu0", 24.0, "host-device"), ("d2d", "gpu0", "gpu0", 2080.0, "same-gpu"),
                ("p2p-ce", "gpu0", "gpu1", 387.0, None), ("p2p-ipc", "gpu0", "gpu1", 380.0, None)]
    out = []
    for op, src, dst, gbps, path in ops:
        out.append({"schema": SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": "peaks",
                    "status": "ok", "bytes": 256 << 20, "operation": op, **({"path": {"class": path}} if path else {}),
                    "bandwidth_GBps": stats(gbps, spread=0.01, rng=rng), "metrics": {"src": src, "dst": dst}})
    return out


def coll_results(run_id: str, ops: list[str], sizes: list[int], ranks: int, scale: float = 1.0,
                 memory: str = "host", seed: int = 3) -> list[dict]:
    rng = random.Random(seed)
    factors = {"allreduce": 2 * (ranks - 1) / ranks, "allgather": (ranks - 1) / ranks,
               "reduce_scatter": (ranks - 1) / ranks, "reduce_scatter_block": (ranks - 1) / ranks,
               "alltoall": (ranks - 1) / ranks, "bcast": 1.0, "reduce": 1.0}
    out = []
    for op in ops:
        for b in sizes:
            t = scale * (3.0 + b / 8e3)
            algbw = b / (t * 1e3)
            out.append({"schema": SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": "coll",
                        "status": "ok", "bytes": b, "operation": op, "ranks": ranks,
                        "memory": {"root": memory, "others": memory}, "size_convention": "total",
                        "timing": "max over ranks of the per-iteration time", "buffer_allocation": "once-per-launch",
                        "time_us": stats(t, rng=rng), "bandwidth_GBps": stats(algbw, rng=rng),
                        "busbw_GBps": stats(algbw * factors.get(op, 1.0), rng=rng)})
    return out


def nbc_results(run_id: str, op: str, sizes: list[int], ranks: int = 2) -> list[dict]:
    rng = random.Random(5)
    out = []
    for b in sizes:
        pure = 5.0 + b / 5e3
        overlap = min(95.0, 20.0 + 10.0 * (b.bit_length() / 3))
        out.append({"schema": SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": "nbc", "status": "ok",
                    "bytes": b, "operation": op, "ranks": ranks, "time_us": stats(pure * 1.3, rng=rng),
                    "metrics": {"pure_us": pure, "compute_us": pure, "overall_us": pure * 1.3,
                                "overlap_pct": overlap, "tests": 1000}})
    return out


# The engine's halo strategies (docs/halo.md), as records name them; --strategy all runs each.
HALO_STRATEGIES = ("staged-pinned", "direct", "pipelined", "pipelined-overlap")


def halo_results(run_id: str, benchmark: str, sizes: list[int], field: str = "host", strategy: str = "staged-pinned",
                 ranks: int = 2) -> list[dict]:
    rng = random.Random(9)
    strategies = HALO_STRATEGIES if strategy == "all" else (strategy,)
    return [{"schema": SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": benchmark, "status": "ok",
             "bytes": b, "memory": {"field": field}, "strategy": s, "ranks": ranks,
             "time_us": stats(10.0 + b / 4e3, rng=rng), "headline": "time_us"} for s in strategies for b in sizes]


def unsupported(run_id: str, benchmark: str, reason: str, send="device", recv="device") -> dict:
    return {"schema": SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": benchmark,
            "status": "unsupported", "reason": reason, "bytes": 0, "memory": {"send": send, "recv": recv}}


def write_jsonl(path: str | Path, records: list[dict]) -> Path:
    path = Path(path)
    with open(path, "x") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")
    return path


def pow2_sizes(lo: int = 1, hi: int = 4 << 20) -> list[int]:
    sizes, b = [], lo
    while b <= hi:
        sizes.append(b)
        b *= 2
    return sizes

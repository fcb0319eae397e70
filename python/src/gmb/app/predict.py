# SPDX-License-Identifier: BSD-3-Clause
"""What an application's communication would cost under each configuration a store measured (`gmb predict`).

Each row of the profile (a call kind, its memory and path, a size bin, on one rank) is priced with the store's figure
of the benchmark that measures that call, at the row's mean message size:

- blocking point-to-point sends (MPI_Send, MPI_Sendrecv, ...): `latency`, the one-way time of one message;
- non-blocking sends (MPI_Isend, ...): `bw`, a stream of messages in flight: bytes / bandwidth per message;
- collectives: `coll` of that operation (its non-blocking form priced as the blocking one) at the communicator's
  rank count and hosts;
- receives and completion calls are the other side of a message already priced at its sender; one-sided calls
  and operations gmb does not measure are named unpriced.

Between two measured sizes the figure is interpolated on log-log scale; below the smallest the smallest's time is
taken (a message's fixed cost), above the largest its bandwidth (said as extrapolated). A rank's predicted
communication time is the sum over its rows of count x time; the application's is the slowest rank's. Its interval
adds each row's interval bounds, as if every figure erred the same way (conservative)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..campaign.spec import Block, Campaign
from ..results.model import Results

BLOCKING_SENDS = {"MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Sendrecv", "MPI_Sendrecv_replace"}
NONBLOCKING_SENDS = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"}
# the other side of a message priced at its sender, or time spent waiting for one
NOT_PRICED = {"MPI_Recv", "MPI_Irecv", "MPI_Sendrecv (receive)", "wait (requests the profiler did not start)"}
# collective calls -> gmb-bench coll's operation
OPERATIONS = {"MPI_Bcast": "bcast", "MPI_Ibcast": "bcast", "MPI_Reduce": "reduce", "MPI_Allreduce": "allreduce",
              "MPI_Iallreduce": "allreduce", "MPI_Gather": "gather", "MPI_Allgather": "allgather",
              "MPI_Allgatherv": "allgatherv", "MPI_Scatter": "scatter", "MPI_Alltoall": "alltoall",
              "MPI_Alltoallv": "alltoallv", "MPI_Reduce_scatter_block": "reduce_scatter"}


@dataclass(frozen=True)
class Need:
    """A figure a row needs: the benchmark (and operation), the memory of each side, the path (point to point) or
    the ranks and hosts (collectives)."""
    benchmark: str
    operation: str | None
    memory: str
    path: str | None
    ranks: int | None
    hosts: int | None

    def label(self) -> str:
        what = f"{self.benchmark} {self.operation}" if self.operation else self.benchmark
        hosts = f"{self.hosts} host" + ("s" if self.hosts != 1 else "")
        where = f"over {self.path}" if self.path else f"on {self.ranks} ranks ({hosts})"
        return f"{what}, {self.memory} memory, {where}"


def need_of(row: dict) -> Need | None:
    """What prices a profile row; None for a row that is not priced (NOT_PRICED)."""
    call = row["call"]
    if (call in BLOCKING_SENDS or call in NONBLOCKING_SENDS) and row["peer"] < 0:
        return None  # to MPI_PROC_NULL: no message (a Sendrecv's time is then its receive's wait)
    if call in BLOCKING_SENDS or call in NONBLOCKING_SENDS:
        return Need("latency" if call in BLOCKING_SENDS else "bw", None, f"{row['memory']}:{row['peer_memory']}",
                    row["path"], None, None)
    if call in OPERATIONS:
        return Need("coll", OPERATIONS[call], row["memory"], None, row["comm_size"], row["comm_hosts"])
    return None


@dataclass
class Curve:
    """One configuration's figures of one Need, by size: (bytes, median, low, high), bytes ascending; ``time``: the
    figures are times per call (us), else bandwidths (GB/s)."""
    points: list[tuple[int, float, float, float]]
    time: bool

    def per_call_us(self, size: float) -> tuple[float, float, float, str]:
        """Time per call at ``size`` (median, low, high) and how it was had: measured, interpolated, or
        extrapolated below or above the sizes measured."""
        pts = self.points
        sizes = [p[0] for p in pts]
        if size <= sizes[0] or len(pts) == 1 and size == sizes[0]:
            how = "measured" if size == sizes[0] else "below the sizes measured: the smallest's"
            b, m, lo, hi = pts[0]
            if not self.time:  # a bandwidth at the smallest size: its time per message, not scaled down
                return tuple(_us(b or 1, v) for v in (m, hi, lo)) + (how,)
            return m, lo, hi, how
        if size > sizes[-1]:
            b, m, lo, hi = pts[-1]
            scale = size / b  # the largest size's bandwidth carries on
            vals = (m, lo, hi) if self.time else (_us(b, m), _us(b, hi), _us(b, lo))
            return tuple(v * scale for v in vals) + (f"above the sizes measured ({sizes[-1]} B): its bandwidth",)
        i = next(k for k in range(1, len(pts)) if sizes[k] >= size)
        (b0, *v0), (b1, *v1) = pts[i - 1], pts[i]
        if not self.time:
            v0 = [_us(b0, v0[0]), _us(b0, v0[2]), _us(b0, v0[1])]
            v1 = [_us(b1, v1[0]), _us(b1, v1[2]), _us(b1, v1[1])]
        if size == b1:
            return (*v1, "measured")
        f = (math.log(size) - math.log(b0)) / (math.log(b1) - math.log(b0)) if b0 > 0 else 0.0
        return tuple(math.exp(math.log(a) + f * (math.log(c) - math.log(a))) for a, c in zip(v0, v1)) + (
            "interpolated",)


def _us(size: int, gbps: float) -> float:
    """One message of ``size`` bytes at ``gbps`` GB/s, in us."""
    return size / (gbps * 1e3) if gbps > 0 else math.inf


def curves(results: Results) -> dict[tuple[str, Need], Curve]:
    """Every configuration's curve of every Need the store can answer."""
    out: dict[tuple[str, Need], list] = {}
    kinds = {"latency": "t", "bw": "bw", "coll": "t"}
    for bench, metric in kinds.items():
        for p in results.points(results.ok(bench), metric=metric):
            if p.low is None or p.high is None or p.fresh or (bench != "coll" and p.operation):
                continue  # no interval, or a variant (persistent, fresh buffers) the application's calls are not
            if bench == "coll":
                need = Need(bench, p.operation, p.memory, None, p.ranks, (p.config.hosts or 1) if p.config else 1)
            else:
                need = Need(bench, None, p.memory, p.path_class, None, None)
            out.setdefault((p.configuration or p.library, need), []).append((p.bytes, p.median, p.low, p.high))
    return {k: Curve(sorted(_one_per_size(v)), time=k[1].benchmark != "bw") for k, v in out.items()}


def _one_per_size(pts: list[tuple]) -> list[tuple]:
    """One figure per size (the first of points that differ only in what the Need does not tell apart)."""
    seen = {}
    for p in pts:
        seen.setdefault(p[0], p)
    return list(seen.values())


@dataclass
class Priced:
    """One row priced for one configuration."""
    row: dict
    need: Need
    us: float
    low_us: float
    high_us: float
    how: str


@dataclass
class Prediction:
    """One configuration's predicted communication time: per rank (us), the slowest rank's with its interval, the
    rows priced and those that could not be (their Needs)."""
    configuration: str
    per_rank_us: dict[int, tuple[float, float, float]] = field(default_factory=dict)
    priced: list[Priced] = field(default_factory=list)
    missing: dict[Need, int] = field(default_factory=dict)  # Need -> calls it leaves unpriced

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def slowest(self) -> tuple[int, float, float, float]:
        rank, (us, lo, hi) = max(self.per_rank_us.items(), key=lambda kv: kv[1][0])
        return rank, us, lo, hi

    def dominant(self, n: int = 5) -> list[tuple[str, float]]:
        """The call kinds (call, memory, size bin) that take most of the slowest rank's time."""
        rank = self.slowest[0]
        by: dict[str, float] = {}
        for p in self.priced:
            if p.row["rank"] == rank:
                key = f"{p.row['call']} {p.row['memory']} {_bin_label(p.row['bin'])}"
                by[key] = by.get(key, 0.0) + p.us
        return sorted(by.items(), key=lambda kv: -kv[1])[:n]


def _bin_label(b: int) -> str:
    """A size bin: "0 B", "1 B", "[8 KiB, 16 KiB)"."""
    if b <= 0:
        return f"{max(b + 1, 0)} B"
    return f"[{_size(1 << b)}, {_size(2 << b)})"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n} B"


def unpriced_calls(profile: dict) -> dict[str, int]:
    """Calls the prediction cannot price in any store (gmb measures no figure for them): call -> count."""
    out: dict[str, int] = {}
    for row in profile["rows"]:
        sends = row["call"] in BLOCKING_SENDS or row["call"] in NONBLOCKING_SENDS
        if need_of(row) is None and row["call"] not in NOT_PRICED and not sends:
            out[row["call"]] = out.get(row["call"], 0) + row["count"]
    return out


def predict(profile: dict, results: Results) -> list[Prediction]:
    """Each configuration's Prediction, complete ones first, fastest first."""
    have = curves(results)
    configurations = sorted({conf for conf, _ in have})
    out = []
    for conf in configurations:
        pred = Prediction(conf)
        for row in profile["rows"]:
            need = need_of(row)
            if need is None or row["count"] == 0:
                continue
            curve = have.get((conf, need))
            if curve is None:
                pred.missing[need] = pred.missing.get(need, 0) + row["count"]
                continue
            us, lo, hi, how = curve.per_call_us(row["bytes"] / row["count"])
            pred.priced.append(Priced(row, need, row["count"] * us, row["count"] * lo, row["count"] * hi, how))
            total = pred.per_rank_us.get(row["rank"], (0.0, 0.0, 0.0))
            pred.per_rank_us[row["rank"]] = (total[0] + row["count"] * us, total[1] + row["count"] * lo,
                                             total[2] + row["count"] * hi)
        if pred.per_rank_us or pred.missing:
            out.append(pred)
    return sorted(out, key=lambda p: (not p.complete, p.slowest[1] if p.per_rank_us else math.inf))


def needs(profile: dict) -> list[Need]:
    """Every Need of the profile, once."""
    return list(dict.fromkeys(n for n in map(need_of, profile["rows"]) if n is not None))


def campaign_for(profile: dict, libraries: list[str] | None = None, repetitions: int = 5) -> Campaign:
    """A campaign that measures every figure the profile needs, from the smallest size to its largest message
    (rounded up to a power of two), on the libraries given (every library where None): one block per memory and path
    of its point-to-point calls (latency and bw together), one per collective operation, memory and ranks."""
    pt2pt: dict[tuple, list] = {}  # (memory, path) -> [benchmarks, largest]
    colls: dict[Need, int] = {}
    for row in profile["rows"]:
        need = need_of(row)
        if need is None:
            continue
        top = row["max_bytes"] or 1
        if need.benchmark == "coll":
            colls[need] = max(colls.get(need, 4), top)
            continue
        entry = pt2pt.setdefault((need.memory, need.path), [[], 1])
        if need.benchmark not in entry[0]:
            entry[0].append(need.benchmark)
        entry[1] = max(entry[1], top)
    opts = {"validate": True, "precision": 0.05, "max-seconds": 0.25}
    blocks = [Block(sorted(benchmarks, key=["latency", "bw"].index), memory=[memory], sizes=f"1:{_pow2(top)}",
                    ranks=[2], path=path, options=dict(opts), libraries=libraries)
              for (memory, path), (benchmarks, top) in pt2pt.items()]
    for need, top in colls.items():
        across = need.hosts is not None and need.hosts > 1
        blocks.append(Block(["coll"], sizes=f"4:{_pow2(top)}", ranks=[need.ranks], operations=[need.operation],
                            options={**opts, "mem": need.memory} if need.memory != "host" else dict(opts),
                            nodes=[need.hosts] if across else None,
                            ranks_per_node=need.ranks // need.hosts if across else None, libraries=libraries))
    return Campaign("for-profile", blocks, repetitions=repetitions, bundle=True)


def _pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))

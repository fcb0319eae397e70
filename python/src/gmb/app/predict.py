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

from ..report.cells import size_text
from ..results.model import Results
from ..results.profile import NOT_PRICED, SENDS, Need, need_of


def bin_label(b: int) -> str:
    """A size bin of a profile: "0 B", "1 B", "[8K, 16K)"."""
    if b <= 0:
        return f"{max(b + 1, 0)} B"
    return f"[{size_text(1 << b)}, {size_text(2 << b)})"


@dataclass
class Curve:
    """One configuration's figures of one Need as times per call (us), by size: (bytes, median, low, high), bytes
    ascending."""
    points: list[tuple[int, float, float, float]]

    @classmethod
    def of_bandwidth(cls, points: list[tuple[int, float, float, float]]) -> Curve:
        """From bandwidths (GB/s) by size: each size's time per message (the highest bandwidth the shortest time)."""
        return cls([(b, _us(b, m), _us(b, hi), _us(b, lo)) for b, m, lo, hi in points])

    def per_call_us(self, size: float) -> tuple[float, float, float, str]:
        """Time per call at ``size`` (median, low, high) and how it was had: measured, interpolated, or
        extrapolated below the sizes measured (the smallest's time: a message's fixed cost) or above them (the
        largest's bandwidth carries on)."""
        pts = self.points
        sizes = [p[0] for p in pts]
        if size <= sizes[0]:
            return (*pts[0][1:], "measured" if size == sizes[0] else "below the sizes measured: the smallest's")
        if size > sizes[-1]:
            b, *values = pts[-1]
            return (*(v * size / b for v in values), f"above the sizes measured ({sizes[-1]} B): its bandwidth")
        i = next(k for k in range(1, len(pts)) if sizes[k] >= size)
        (b0, *v0), (b1, *v1) = pts[i - 1], pts[i]
        if size == b1:
            return (*v1, "measured")
        f = (math.log(size) - math.log(b0)) / (math.log(b1) - math.log(b0))
        return (*(math.exp(math.log(a) + f * (math.log(c) - math.log(a))) for a, c in zip(v0, v1)), "interpolated")


def _us(size: int, gbps: float) -> float:
    """One message of ``size`` bytes at ``gbps`` GB/s, in us."""
    return size / (gbps * 1e3) if gbps > 0 else math.inf


def curves(results: Results) -> dict[tuple[str, Need], Curve]:
    """Every configuration's curve of every Need the store can answer."""
    out: dict[tuple[str, Need], list] = {}
    kinds = {"latency": "t", "bw": "bw", "coll": "t"}
    for bench, metric in kinds.items():
        for p in results.points(results.ok(bench), metric=metric):
            if (p.low is None or p.high is None or p.low <= 0 or p.bytes <= 0 or p.fresh
                    or (bench != "coll" and p.operation)):
                continue  # no interval or size, or a variant (persistent, fresh buffers) not the application's
            if bench == "coll":
                need = Need(bench, p.operation, p.memory, None, p.ranks, (p.config.hosts or 1) if p.config else 1)
            else:
                need = Need(bench, None, p.memory, p.path_class, None, None)
            out.setdefault((p.configuration or p.library, need), []).append((p.bytes, p.median, p.low, p.high))
    return {k: (Curve.of_bandwidth if k[1].benchmark == "bw" else Curve)(sorted(_one_per_size(v)))
            for k, v in out.items()}


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
                key = f"{p.row['call']} {p.row['memory']} {bin_label(p.row['bin'])}"
                by[key] = by.get(key, 0.0) + p.us
        return sorted(by.items(), key=lambda kv: -kv[1])[:n]


def unpriced_calls(profile: dict) -> dict[str, int]:
    """Calls the prediction cannot price in any store (gmb measures no figure for them): call -> count."""
    out: dict[str, int] = {}
    for row in profile["rows"]:
        if need_of(row) is None and row["call"] not in NOT_PRICED and row["call"] not in SENDS:
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

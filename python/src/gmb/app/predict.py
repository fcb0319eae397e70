# SPDX-License-Identifier: BSD-3-Clause
"""What an application's communication would cost under each configuration a store measured (`gmb predict`).

Each row of the profile (a call kind, its memory and path, a size bin, on one rank) is priced with the store's figure
of the benchmark that measures that call, at the row's mean message size:

- blocking point-to-point sends (MPI_Send, MPI_Sendrecv, ...): `latency`, the one-way time of one message;
- non-blocking sends (MPI_Isend, ...): `bw`, a stream of messages in flight: bytes / bandwidth per message;
- collectives and barriers: `coll` of that operation (its non-blocking form priced as the blocking one) at the
  communicator's rank count and hosts;
- one-sided calls and operations gmb does not measure are named unpriced.

Between two measured sizes the figure is interpolated on log-log scale; below the smallest the smallest's time is
taken (a message's fixed cost), above the largest its bandwidth (said as extrapolated). Each rank's communication has
three parts, read together from the profile's own times under the configuration it ran under (its ``library``):

- its own calls: the sum over its rows of count x time;
- its receives: the messages sent to it, priced at their senders' figures, times the share of them it waited for in
  the profile (its time in receive calls and their completions over those messages priced, at most all of it): a
  rank whose messages arrive while it is in its own blocking sends finds them there (near 0), one that waits for
  them (a ping-pong's reply, a gather's root, a halo's MPI_Waitall) waits for all of them (1);
- its wait: its time in MPI in the profile beyond those two, priced at the profiled configuration's figures: a peer
  still computing, a receiver not yet in MPI to finish a rendezvous send. No benchmark measures it; it is the
  application's (how its ranks' work is balanced), carried as measured to every configuration.

The application's is the slowest rank's. The interval adds each row's interval bounds, as if every figure erred the
same way (conservative); the wait is one run's and has none. Without figures of the profiled configuration, only the
own calls are priced."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..report.cells import size_text
from ..results.model import Results
from ..results.profile import NOT_PRICED, RECEIVES, SENDS, Need, need_of


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
            sized = p.bytes > 0 or p.operation == "barrier"  # a barrier moves no data: its one point is at 0 B
            if (p.low is None or p.high is None or p.low <= 0 or not sized or p.fresh
                    or (bench != "coll" and p.operation)):
                continue  # no interval or size, or a variant (persistent, fresh buffers) not the application's
            if bench == "coll":
                # a barrier has no buffer: its records name no memory, the profiler's rows of it host memory
                memory = "host" if p.operation == "barrier" and not p.memory else p.memory
                need = Need(bench, p.operation, memory, None, p.ranks, (p.config.hosts or 1) if p.config else 1)
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


Interval = tuple[float, float, float]  # median, low, high (us)


def _add(a: Interval, b: Interval) -> Interval:
    return tuple(x + y for x, y in zip(a, b))


ZERO: Interval = (0.0, 0.0, 0.0)


@dataclass
class Prediction:
    """One configuration's predicted communication time. Per rank (us): its own calls priced (sends, collectives),
    the messages it receives priced at their senders' figures times the share of them it waited for, and its wait
    carried from the profile; the slowest rank's sum with its interval; the rows priced and those that could not be
    (their Needs)."""
    configuration: str
    own_us: dict[int, Interval] = field(default_factory=dict)
    received_us: dict[int, Interval] = field(default_factory=dict)
    priced: list[Priced] = field(default_factory=list)
    missing: dict[Need, int] = field(default_factory=dict)  # Need -> calls it leaves unpriced
    wait_us: dict[int, float] = field(default_factory=dict)  # rank -> its wait, as the profile measured it
    waits_from: str | None = None  # the configuration whose figures told the profile's waits from its transfers

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def per_rank_us(self) -> dict[int, Interval]:
        """Each rank's own calls, the share of its receives it waits for, and its wait (median, low, high)."""
        ranks = sorted(set(self.own_us) | set(self.received_us) | set(self.wait_us))
        w = self.wait_us
        return {r: _add(_add(self.own_us.get(r, ZERO), self.received_us.get(r, ZERO)), (w.get(r, 0.0),) * 3)
                for r in ranks}

    @property
    def slowest(self) -> tuple[int, float, float, float]:
        rank, (us, lo, hi) = max(self.per_rank_us.items(), key=lambda kv: kv[1][0])
        return rank, us, lo, hi

    @property
    def own_slowest(self) -> tuple[int, float, float, float]:
        """The slowest rank by its own calls alone: what gmb predict said before it priced receives and waits."""
        rank, (us, lo, hi) = max(self.own_us.items(), key=lambda kv: kv[1][0])
        return rank, us, lo, hi

    def dominant(self, n: int = 5) -> list[tuple[str, float]]:
        """The call kinds (call, memory, size bin) that take most of the slowest rank's time, its receives and its
        wait."""
        rank = self.slowest[0]
        by: dict[str, float] = {}
        if self.wait_us.get(rank):
            by[f"waiting for peers (the profile's, under {self.waits_from})"] = self.wait_us[rank]
        if self.received_us.get(rank, ZERO)[0]:
            by["receiving the peers' messages"] = self.received_us[rank][0]
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


def rank_mpi_s(profile: dict) -> dict[int, float]:
    """Each rank's time in MPI calls (their own and their completion calls' waits), s."""
    out: dict[int, float] = {}
    for row in profile["rows"]:
        out[row["rank"]] = out.get(row["rank"], 0.0) + row["call_s"] + row["wait_s"]
    return out


def _priced(profile: dict, have: dict, conf: str) -> Prediction:
    """``conf``'s own calls: every row priced at its figure, or its Need named missing."""
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
        n = row["count"]
        pred.priced.append(Priced(row, need, n * us, n * lo, n * hi, how))
        pred.own_us[row["rank"]] = _add(pred.own_us.get(row["rank"], ZERO), (n * us, n * lo, n * hi))
    return pred


def incoming_us(pred: Prediction) -> dict[int, Interval]:
    """What the messages each rank receives cost at their senders' figures (the point-to-point sends to it)."""
    out: dict[int, Interval] = {}
    for p in pred.priced:
        if p.need.benchmark != "coll":
            out[p.row["peer"]] = _add(out.get(p.row["peer"], ZERO), (p.us, p.low_us, p.high_us))
    return out


def received_shares(profile: dict, profiled: Prediction) -> dict[int, float]:
    """The share of its incoming messages' transfers each rank waited for in its receives, in the profile: its time
    in receive calls and their completions over those messages priced at the profiled configuration's figures, at
    most all of it. A rank whose messages arrive while it is in its own blocking sends (LAMMPS: MPI_Irecv,
    MPI_Send, MPI_Wait) finds them there (a share near 0); one that waits for them (a ping-pong's reply, a gather's
    root, gmb's halo in MPI_Waitall) waits for all of them (1)."""
    waited: dict[int, float] = {}
    for row in profile["rows"]:
        if row["call"] in RECEIVES:
            waited[row["rank"]] = waited.get(row["rank"], 0.0) + 1e6 * (row["call_s"] + row["wait_s"])
    return {r: min(1.0, waited.get(r, 0.0) / t[0]) for r, t in incoming_us(profiled).items() if t[0] > 0}


def profile_waits(profile: dict, profiled: Prediction) -> dict[int, float]:
    """Each rank's wait in the profile, us: its time in MPI beyond what its calls and receives cost at the figures
    of the configuration the profile ran under (``profiled``, its receives already priced); none below zero (a
    rank whose messages overlapped its work waited for nothing)."""
    return {rank: max(0.0, 1e6 * s - profiled.per_rank_us.get(rank, ZERO)[0])
            for rank, s in rank_mpi_s(profile).items()}


def predict(profile: dict, results: Results) -> list[Prediction]:
    """Each configuration's Prediction from the store's figures (predict_with)."""
    return predict_with(profile, curves(results))


def predict_with(profile: dict, have: dict[tuple[str, Need], Curve]) -> list[Prediction]:
    """Each configuration's Prediction from these curves, complete ones first, fastest first. Receives and waits are
    priced where the curves hold the configuration the profile ran under: its figures tell, in the profile's times,
    the transfers from the waits."""
    out = [p for p in (_priced(profile, have, conf) for conf in sorted({conf for conf, _ in have}))
           if p.own_us or p.missing]
    profiled = next((p for p in out if p.configuration == profile.get("library")), None)
    if profiled is not None:
        shares = received_shares(profile, profiled)
        for p in out:
            p.received_us = {r: tuple(shares.get(r, 0.0) * x for x in t) for r, t in incoming_us(p).items()}
        waits = profile_waits(profile, profiled)
        for p in out:
            if p.own_us:  # a configuration with nothing priced has no prediction to add the waits to
                p.wait_us = dict(waits)
            p.waits_from = profiled.configuration
    return sorted(out, key=lambda p: (not p.complete, p.slowest[1] if p.own_us else math.inf))

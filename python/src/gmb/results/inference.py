# SPDX-License-Identifier: BSD-3-Clause
"""The statistics behind every claim: a point's figure and interval from its launches, the ratio of two points, the
fastest of several. Pure functions on numbers: no I/O, no wording (renderers put the results into words). Whether a
claim may rest on them (many claims at once, a search's confirmation, what blocks a claim): claim_checks.py.

The model (docs/methodology.md, "How a point's interval, a difference and a recommendation are decided"): a launch is
the replicate; each launch gives one value per point (its median over its samples). On log scale a launch's value is
the point's true log value plus a launch effect, normal with a variance shared by all points of one configuration
(launch_noise pools it over them, with its degrees of freedom), independent between launches; a launch's effect may
be shared by all the points it measured, and the degrees of freedom say so. A point's figure is
the geometric mean of its launch values with a Student t interval (estimate); a difference is the interval of the
ratio of two figures, paired by repetition round where both ran in the same rounds, Welch-Satterthwaite otherwise
(ratio); positive quantities stay positive (every interval is exp of a log interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence

from .t_distribution import t_quantile, two_sided_p

LEVEL = 0.95  # the confidence of every interval unless a correction asks for more


# --------------------------------------------------------------------------------------------------- launch noise
@dataclass(frozen=True)
class LaunchNoise:
    """The between-launch variance of log values (of one configuration, pooled over its points), and its degrees of
    freedom: how much a launch's value moves from one launch to the next, sqrt(variance) ~ the relative spread."""
    variance: float
    df: float


def _logs(values: Sequence[float]) -> list[float]:
    if any(not (v > 0 and math.isfinite(v)) for v in values):
        raise ValueError(f"launch values must be positive and finite (times, bandwidths, rates), got {list(values)}")
    return [math.log(v) for v in values]


def _two_way(rows: list[list[float]]) -> tuple[float, float] | None:
    """The variance of one point's launch value and its Satterthwaite degrees of freedom, from points measured in the
    same launches (``rows``: per point, its log values in the launches' order): a launch's effect may be shared by
    all its points (a slow launch is slow at every size), so the launches' mean square (n - 1 df) and the residual
    one ((n - 1)(S - 1) df) are estimated apart: tau^2 = MS_launch / S + (1 - 1 / S) MS_residual. Where launches
    share nothing the degrees of freedom approach S (n - 1); where a shared effect dominates, n - 1."""
    points, n = len(rows), len(rows[0])
    if n < 2:
        return None
    point_means = [sum(r) / n for r in rows]
    launch_means = [sum(r[j] for r in rows) / points for j in range(n)]
    grand = sum(point_means) / points
    ms_launch = points * sum((m - grand) ** 2 for m in launch_means) / (n - 1)
    part_launch = ms_launch / points
    if points == 1:
        return (part_launch, n - 1) if part_launch > 0 else None
    ms_resid = sum((r[j] - point_means[i] - launch_means[j] + grand) ** 2
                   for i, r in enumerate(rows) for j in range(n)) / ((n - 1) * (points - 1))
    part_resid = (1 - 1 / points) * ms_resid
    tau2 = part_launch + part_resid
    if tau2 <= 0:
        return None
    return tau2, tau2 ** 2 / (part_launch ** 2 / (n - 1) + part_resid ** 2 / ((n - 1) * (points - 1)))


def _pool(points: Iterable[Mapping | Sequence[float]]) -> LaunchNoise | None:
    """Pooled variance of log values: points whose launches are known (a mapping launch -> log value) grouped by the
    set of launches that measured them, each group estimated by _two_way; a point given as a plain sequence is a group
    of its own (its launches assumed to share nothing with other points'). Groups combine weighted by their degrees
    of freedom."""
    groups: dict = {}
    for i, values in enumerate(points):
        if isinstance(values, Mapping):
            groups.setdefault(frozenset(values), []).append([values[k] for k in sorted(values, key=str)])
        else:
            groups[("alone", i)] = [list(values)]
    weighted = df = 0.0
    for rows in groups.values():
        found = _two_way(rows)
        if found:
            weighted += found[0] * found[1]
            df += found[1]
    return LaunchNoise(weighted / df, df) if df else None


def per_launch(values: Iterable[tuple[Hashable, float]]) -> dict:
    """One value per launch (launch id -> value) from (launch id, value) pairs: the geometric mean of a launch's values
    where it measured the point more than once (a run with references, or a chunk count given twice, is one launch:
    its records are not replicates). Pairs without a launch id (None) count as launches of their own."""
    by_launch: dict = {}
    for i, (launch, value) in enumerate(values):
        by_launch.setdefault(("record", i) if launch is None else launch, []).append(value)
    return {k: math.exp(sum(_logs(vs)) / len(vs)) for k, vs in by_launch.items()}


def launch_noise(points: Iterable[Mapping | Sequence[float]]) -> LaunchNoise | None:
    """The between-launch variance of one launch's log value, pooled over some points of one configuration, with its
    degrees of freedom. Each point: its launches' values, best as a mapping launch id -> value (points measured in
    the same launches share those launches' effects, and _two_way keeps that from passing for independent evidence);
    a plain sequence where launches are not known (independent launches assumed). Points of one launch add nothing.
    None where no point has two launches, or no launch differs from another."""
    return _pool(dict(zip(p, _logs(list(p.values())))) if isinstance(p, Mapping) else _logs(p) for p in points)


def paired_differences(a: Sequence[float], rounds_a: Sequence | None, b: Sequence[float],
                       rounds_b: Sequence | None) -> dict | None:
    """log(a) - log(b) by repetition round, where both sides ran once in each of the same two rounds or more; None
    where they cannot be paired (no rounds, a round repeated, rounds one side lacks)."""
    if rounds_a is None or rounds_b is None or None in rounds_a or None in rounds_b:
        return None
    if len(set(rounds_a)) != len(rounds_a) or set(rounds_a) != set(rounds_b) or len(rounds_a) < 2:
        return None
    if len(rounds_a) != len(a) or len(rounds_b) != len(b):
        raise ValueError("each launch value needs its round")
    by_round = dict(zip(rounds_b, _logs(b)))
    return {r: x - by_round[r] for r, x in zip(rounds_a, _logs(a))}


def paired_noise(pairs: Iterable[dict | None]) -> LaunchNoise | None:
    """The variance of the per-round log differences (paired_differences, by round) pooled over the points two
    configurations share, as launch_noise pools a configuration's: the rounds are the launches."""
    return _pool(d for d in pairs if d)


# ----------------------------------------------------------------------------------------------- a point's figure
@dataclass(frozen=True)
class Estimate:
    """A point's figure from its launches: the geometric mean of its launch values and its interval, None where its
    launches give none (one launch; no spread to estimate)."""
    value: float
    low: float | None
    high: float | None
    launches: int
    log_se: float | None = None
    df: float | None = None

    @property
    def precision(self) -> float | None:
        """Half the width of the log interval, as a relative figure: 0.03 is +-3 % (precision_pct)."""
        return None if self.low is None else precision(self.low, self.high)


def estimate(values: Sequence[float], noise: LaunchNoise | None = None, level: float = LEVEL) -> Estimate:
    """A point's figure and its ``level`` interval from its launches' values (each launch's median): on log scale the
    mean of the launch values +- t(df) * s / sqrt(n), s^2 the configuration's pooled between-launch variance
    (``noise``, from launch_noise over its points, this one included) or, without it, this point's own (n - 1 df).
    One launch: no interval (a launch says nothing of how the next one moves). The interval shrinks as launches are
    added and lies above zero."""
    logs = _logs(values)
    n = len(logs)
    if n == 0:
        raise ValueError("a point needs at least one launch")
    mean = sum(logs) / n
    if n < 2:
        return Estimate(values[0], None, None, n)
    noise = noise or _pool([logs])
    if noise is None:
        return Estimate(math.exp(mean), None, None, n)
    se = math.sqrt(noise.variance / n)
    half = t_quantile(0.5 + level / 2, noise.df) * se
    return Estimate(math.exp(mean), math.exp(mean - half), math.exp(mean + half), n, se, noise.df)


# ---------------------------------------------------------------------------------------------------- differences
@dataclass(frozen=True)
class Ratio:
    """A / B of two points with its interval (None where the launches give none) and the two-sided p-value of
    "A equals B" from the same test; paired: by repetition round."""
    value: float
    low: float | None
    high: float | None
    p: float | None
    paired: bool = False
    log_se: float | None = None
    df: float | None = None

    @property
    def apart(self) -> int:
        """+1 where A is proven larger than B (the interval lies above 1), -1 smaller, 0 not proven."""
        if self.low is None:
            return 0
        return 1 if self.low > 1 else -1 if self.high < 1 else 0


def ratio(a: Sequence[float], b: Sequence[float], noise_a: LaunchNoise | None = None,
          noise_b: LaunchNoise | None = None, rounds_a: Sequence | None = None, rounds_b: Sequence | None = None,
          pair_noise: LaunchNoise | None = None, level: float = LEVEL) -> Ratio:
    """The ratio A / B of two points' figures (estimate) with its ``level`` interval on log scale and its p-value.

    Paired where both ran once in each of the same rounds (paired_differences): the mean log difference with the
    variance of the differences pooled over the two configurations' shared points (``pair_noise``, paired_noise) or
    this point's own; launches of one round share what the machine did then, and pairing removes it. Otherwise
    Welch: each side's pooled variance (``noise_a``, ``noise_b``; its own without) over its launches, with
    Welch-Satterthwaite degrees of freedom. A side of one launch gives no interval."""
    la, lb = _logs(a), _logs(b)
    if not la or not lb:
        raise ValueError("a ratio needs launches on both sides")
    log_ratio = sum(la) / len(la) - sum(lb) / len(lb)
    value = math.exp(log_ratio)
    if len(la) < 2 or len(lb) < 2:
        return Ratio(value, None, None, None)
    diffs = paired_differences(a, rounds_a, b, rounds_b)
    if diffs is not None:
        noise = pair_noise or _pool([diffs])
        if noise is None:
            return Ratio(value, None, None, None, paired=True)
        se, df = math.sqrt(noise.variance / len(diffs)), noise.df
    else:
        noise_a, noise_b = noise_a or _pool([la]), noise_b or _pool([lb])
        if noise_a is None or noise_b is None:
            return Ratio(value, None, None, None)
        se, df = _welch(noise_a.variance / len(la), noise_a.df, noise_b.variance / len(lb), noise_b.df)
    return _tested(log_ratio, se, df, level, paired=diffs is not None)


def _welch(va: float, dfa: float, vb: float, dfb: float) -> tuple[float, float]:
    """The standard error of the difference of two independent estimates whose squared standard errors are ``va``
    and ``vb``, and its Welch-Satterthwaite degrees of freedom."""
    return math.sqrt(va + vb), (va + vb) ** 2 / (va ** 2 / dfa + vb ** 2 / dfb)


def _tested(log_ratio: float, se: float, df: float, level: float, paired: bool = False) -> Ratio:
    """A ratio from its log, that log's standard error and degrees of freedom: its ``level`` t-interval and the
    two-sided p-value of "equal"."""
    half = t_quantile(0.5 + level / 2, df) * se
    return Ratio(math.exp(log_ratio), math.exp(log_ratio - half), math.exp(log_ratio + half),
                 two_sided_p(log_ratio / se, df), paired, se, df)


def ratio_of_ratios(a: Ratio, b: Ratio, level: float = LEVEL) -> Ratio:
    """a / b of two ratios of independent launches (one configuration's growth over node counts against
    another's): on log scale the difference of the two, their variances added, Welch-Satterthwaite degrees of
    freedom. No interval where either ratio has none."""
    if a.log_se is None or b.log_se is None or a.df is None or b.df is None or a.log_se == b.log_se == 0:
        return Ratio(a.value / b.value, None, None, None)
    se, df = _welch(a.log_se ** 2, a.df, b.log_se ** 2, b.df)
    return _tested(math.log(a.value / b.value), se, df, level)


@dataclass(frozen=True)
class Fastest:
    """The best of several points (``index``) and its ratio to every other (None for itself); proven only where
    every ratio's interval excludes 1 on the better side; p: the largest of those ratios' p-values (a claim that
    needs every one of its comparisons holds at the level of each: an intersection-union test)."""
    index: int
    ratios: list[Ratio | None]
    proven: bool
    p: float | None


def fastest(points: Sequence[Sequence[float]], lower_is_better: bool, noises: Sequence[LaunchNoise | None] | None = None,
            rounds: Sequence[Sequence | None] | None = None, pair_noises: Mapping[tuple[int, int], LaunchNoise] | None = None,
            level: float = LEVEL) -> Fastest:
    """Which of several points (each its launches' values) is the best (lowest time, highest bandwidth), and whether
    that is proven: apart from every other, not only from the runner-up. Each comparison is ``ratio``'s, with the
    points' ``noises``, ``rounds`` and the pairs' ``pair_noises`` (by (i, j), either order) as it takes them."""
    if len(points) < 2:
        raise ValueError("fastest needs two points or more")
    noises = noises or [None] * len(points)
    rounds = rounds or [None] * len(points)
    centres = [sum(_logs(p)) / len(p) for p in points]
    best = (min if lower_is_better else max)(range(len(points)), key=centres.__getitem__)
    pair_noises = pair_noises or {}

    def versus(i: int) -> Ratio:
        pair = pair_noises.get((best, i)) or pair_noises.get((i, best))
        return ratio(points[best], points[i], noises[best], noises[i], rounds[best], rounds[i], pair, level)

    ratios = [None if i == best else versus(i) for i in range(len(points))]
    want = -1 if lower_is_better else 1
    others = [r for r in ratios if r is not None]
    proven = all(r.apart == want for r in others)
    p = None if any(r.p is None for r in others) else max(r.p for r in others)
    return Fastest(best, ratios, proven, p)


# -------------------------------------------------------------------------------------------- an interval's width
def precision(low: float, high: float) -> float:
    """Half the width of an interval on log scale as a relative figure (exp(half) - 1): [97, 103.1] is 0.03."""
    return math.exp((math.log(high) - math.log(low)) / 2) - 1

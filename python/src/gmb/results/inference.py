# SPDX-License-Identifier: BSD-3-Clause
"""The statistics behind every claim: a point's figure and interval from its launches, the ratio of two points, the
fastest of several, the control of many claims at once, a search's confirmation, what blocks a claim and what would
settle it, and numbers printed with the digits they need. Pure functions on numbers: no I/O, no wording (renderers
put the results into words).

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
from statistics import NormalDist
from typing import Hashable, Iterable, Mapping, Sequence

LEVEL = 0.95  # the confidence of every interval unless a correction asks for more
_NORMAL = NormalDist()


# ----------------------------------------------------------------------------------------- Student's t distribution
def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularised incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (any df > 0; infinite: the normal)."""
    if math.isinf(df):
        return _NORMAL.cdf(t)
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def _t_density(t: float, df: float) -> float:
    return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
                    - (df + 1) / 2 * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (0 < p < 1, df > 0; infinite: the normal)."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    if math.isinf(df):
        return _NORMAL.inv_cdf(p)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df == 1:  # Cauchy: exact
        return math.tan(math.pi * (p - 0.5))
    if df == 2:  # exact
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = _NORMAL.inv_cdf(p)  # Cornish-Fisher start, then Newton on the cdf
    t = z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
    for _ in range(50):
        step = (t_cdf(t, df) - p) / _t_density(t, df)
        t -= step
        if abs(step) < 1e-12 * max(1.0, abs(t)):
            break
    return t


def _two_sided_p(statistic: float, df: float) -> float:
    return min(1.0, 2.0 * (1.0 - t_cdf(abs(statistic), df)))


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
                 _two_sided_p(log_ratio / se, df), paired, se, df)


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


# ---------------------------------------------------------------------------------------------------- many claims
def bh_adjusted(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values): a claim is made at false discovery rate q where its adjusted
    p-value is at most q."""
    m = len(pvalues)
    order = sorted(range(m), key=pvalues.__getitem__)
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(pvalues: Sequence[float], q: float = 1 - LEVEL) -> list[bool]:
    """Which of a report's claims (each its p-value) are made with the false discovery rate held at ``q``."""
    return [x <= q for x in bh_adjusted(pvalues)]


def fcr_level(made: int, claims: int, level: float = LEVEL) -> float:
    """The interval level for the ``made`` claims Benjamini-Hochberg kept of ``claims``: intervals at this level hold
    the false coverage rate over the claims made at 1 - level (Benjamini and Yekutieli)."""
    return 1 - max(made, 1) * (1 - level) / max(claims, 1)


def holm(pvalues: Sequence[float], alpha: float = 1 - LEVEL, tried: int | None = None) -> list[bool]:
    """Holm's step-down: which of a search's tests hold with the chance of any false one at most ``alpha``, over
    ``tried`` tests in all (at least the ones given: the values x sizes searched, each test not given counted as
    failed)."""
    m = max(tried or 0, len(pvalues))
    order = sorted(range(len(pvalues)), key=pvalues.__getitem__)
    kept = [False] * len(pvalues)
    for rank, i in enumerate(order):
        if pvalues[i] > alpha / (m - rank):
            break
        kept[i] = True
    return kept


def bonferroni_level(tried: int, level: float = LEVEL) -> float:
    """The interval level that keeps ``tried`` intervals all true together with chance ``level``."""
    return 1 - (1 - level) / max(tried, 1)


# ------------------------------------------------------------------------------------------- a search's confirmation
@dataclass(frozen=True)
class Confirmation:
    """A searched value confirmed on fresh launches, size by size (in the order given): its ratio to the defaults
    (value / defaults) with the corrected interval, and where it is proven better and proven worse. ``gain``: its
    gain from these launches alone, the geometric mean of the better/worse-oriented ratios over the sizes from the
    first to the last proven better, none proven worse between (1.0 where none is proven better); ``span``: those
    sizes' first and last index."""
    ratios: list[Ratio]
    better: list[bool]
    worse: list[bool]
    gain: float
    span: tuple[int, int] | None

    @property
    def recommended(self) -> bool:
        return self.span is not None

    @property
    def mixed(self) -> bool:
        """Better at some sizes and proven worse at others."""
        return any(self.better) and any(self.worse)


def confirm(value: Sequence[Sequence[float]], defaults: Sequence[Sequence[float]], higher_is_better: bool,
            tried: int, alpha: float = 1 - LEVEL) -> Confirmation:
    """Whether a value found by a search is better than the defaults, from fresh launches that played no part in
    finding it: ``value`` and ``defaults`` hold, per size, the values of the confirmation launches, the i-th value
    of every size from the arm's i-th launch. Each size's ratio (Welch, each arm's variance pooled over its sizes and
    launches by launch_noise) is tested with Holm over ``tried`` tests (every value x size
    the search tried, not only the confirmed ones), its interval at the matching Bonferroni level."""
    if len(value) != len(defaults):
        raise ValueError("a value and the defaults need the same sizes")
    noise_v, noise_d = (launch_noise([dict(enumerate(size)) for size in arm]) for arm in (value, defaults))
    level = bonferroni_level(tried, 1 - alpha)
    ratios = [ratio(v, d, noise_v, noise_d, level=level) for v, d in zip(value, defaults)]
    pvalues = [1.0 if r.p is None else r.p for r in ratios]
    held = holm(pvalues, alpha, tried)
    up = 1 if higher_is_better else -1
    better = [h and r.apart == up for h, r in zip(held, ratios)]
    worse = [h and r.apart == -up for h, r in zip(held, ratios)]
    span = None
    if any(better):
        first = better.index(True)
        last = len(better) - 1 - better[::-1].index(True)
        span = (first, last) if not any(worse[first:last + 1]) else None
        if span is None:  # worse sizes inside: the longest run of sizes proven better with none worse
            span = _longest_better_run(better, worse)
    gain = 1.0
    if span:
        logs = [math.log(r.value) * up for r in ratios[span[0]:span[1] + 1]]
        gain = math.exp(sum(logs) / len(logs))
    return Confirmation(ratios, better, worse, gain, span)


def _longest_better_run(better: list[bool], worse: list[bool]) -> tuple[int, int]:
    """The longest stretch of sizes from one proven better to another with none proven worse between."""
    runs, start = [], None
    for i, (b, w) in enumerate(zip(better, worse)):
        if w:
            start = None
        elif b:
            start = i if start is None else start
            runs.append((start, i))
    return max(runs, key=lambda r: (r[1] - r[0], -r[0]))


# --------------------------------------------------------------------------------------- claims that cannot be made
ONE_LAUNCH = "one launch"  # no launch-to-launch variation seen: a claim would hold within that launch only
BUSY = "busy"  # some launches ran while other work used the ranks' cores: their figures may be low
QUANTISED = "quantised"  # values on a coarse lattice (a scheduler tick): their spread says nothing of the noise
NO_SPREAD = "no spread"  # launches that agree exactly: rounded or quantised values, a zero-width interval


@dataclass(frozen=True)
class Blocker:
    """Why no claim rests on a point: ``kind`` (ONE_LAUNCH, BUSY, QUANTISED, NO_SPREAD); ``count`` of ``of``
    launches (BUSY); ``step``: the lattice's step (QUANTISED)."""
    kind: str
    count: int = 0
    of: int = 0
    step: float | None = None


def lattice_step(values: Sequence[float], rel_tol: float = 1e-6) -> float | None:
    """The step of the lattice ``values`` sit on where they are quantised: they repeat (at most half as many distinct
    values as values; a timer that resolves the work gives no exact ties) and the distinct ones lie on multiples of
    their smallest gap. 0.0 where they are all equal; None where they are not quantised (or too few to tell)."""
    if len(values) < 2:
        return None
    distinct: list[float] = []
    for v in sorted(values):
        if not distinct or v - distinct[-1] > rel_tol * max(abs(v), abs(distinct[-1])):
            distinct.append(v)
    if len(distinct) == 1:
        return 0.0
    if len(distinct) > len(values) / 2:
        return None
    step = min(b - a for a, b in zip(distinct, distinct[1:]))
    on_lattice = all(abs((v - distinct[0]) / step - round((v - distinct[0]) / step)) < 0.02 for v in distinct)
    return step if on_lattice else None


def blockers(launches: Sequence[float], busy: int = 0, samples: Sequence[float] = ()) -> list[Blocker]:
    """What keeps a point out of any claim: one launch; busy launches (``busy`` of them, from the records' load
    flags); launch values or a launch's samples on a coarse lattice. [] where a claim may rest on it."""
    out = []
    if len(launches) < 2:
        out.append(Blocker(ONE_LAUNCH, of=len(launches)))
    if busy:
        out.append(Blocker(BUSY, count=busy, of=len(launches)))
    step = lattice_step(launches)
    if step == 0.0:
        out.append(Blocker(NO_SPREAD, of=len(launches)))
        return out
    step = step if step is not None else lattice_step(samples)
    if step is not None:  # 0.0: samples all equal, a step coarser than their spread
        out.append(Blocker(QUANTISED, step=step))
    return out


def launches_needed(observed: float, noise_a: LaunchNoise, noise_b: LaunchNoise, power: float = 0.8,
                    level: float = LEVEL) -> int | None:
    """Launches per side for a ratio as large as ``observed`` (A / B) to be resolved at ``level`` with chance
    ``power``, given each side's between-launch noise: the smallest n with
    (t(level, df) + t(power, df)) * sqrt((s_a^2 + s_b^2) / n) <= |log observed|, df the two noises' Welch degrees of
    freedom. None where nothing is to resolve (a ratio of 1)."""
    delta = abs(math.log(observed))
    if delta == 0:
        return None
    var = noise_a.variance + noise_b.variance
    df = var ** 2 / (noise_a.variance ** 2 / noise_a.df + noise_b.variance ** 2 / noise_b.df)
    factor = t_quantile(0.5 + level / 2, df) + t_quantile(power, df)
    return max(2, math.ceil(var * (factor / delta) ** 2))


# ------------------------------------------------------------------------------------------------ numbers printed
def precision(low: float, high: float) -> float:
    """Half the width of an interval on log scale as a relative figure (exp(half) - 1): [97, 103.1] is 0.03."""
    return math.exp((math.log(high) - math.log(low)) / 2) - 1


def significant(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, the integer part never cut: 10623 -> "10600", 0.0001234 -> "0.000123"."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = digits - 1 - math.floor(math.log10(abs(x)))
    rounded = round(x, decimals)
    return f"{rounded:.{max(decimals, 0)}f}"


def ratio_text(value: float, low: float | None = None, high: float | None = None) -> str:
    """A ratio with its interval, with the significant digits that tell the three apart (3 to 6): "10000x [9500,
    10600]", "1.05x [1.02, 1.08]"."""
    digits = 3
    while low is not None and digits < 6 and len({significant(x, digits) for x in (low, value, high)}) < 3:
        digits += 1
    text = f"{significant(value, digits)}x"
    return text if low is None else f"{text} [{significant(low, digits)}, {significant(high, digits)}]"

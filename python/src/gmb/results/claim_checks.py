# SPDX-License-Identifier: BSD-3-Clause
"""Whether claims may be made: many claims at once (false discovery rate by Benjamini-Hochberg and its coverage
level, Holm's step-down, Bonferroni's level), a searched value confirmed on fresh launches (confirm), and what keeps a
point out of any claim and how many launches would settle one (blockers, launches_needed). Pure functions on numbers,
on inference.py's ratios and launch noise (docs/methodology.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .inference import LEVEL, LaunchNoise, Ratio, launch_noise, ratio
from .t_distribution import t_quantile


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
    # each side's launch noise, pooled over its sizes and launches: what every ratio of the decision rests on, and
    # what the gain's interval must rest on too (an interval that disagreed with the decision would contradict it)
    noise_value: LaunchNoise | None = None
    noise_defaults: LaunchNoise | None = None

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
    return Confirmation(ratios, better, worse, gain, span, noise_v, noise_d)


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

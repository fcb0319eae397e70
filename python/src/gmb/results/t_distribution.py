# SPDX-License-Identifier: BSD-3-Clause
"""Student's t distribution: its cdf and quantiles for any degrees of freedom (infinite: the normal), and the
two-sided p-value of a t statistic. The standard library has the normal only; these are what every interval and
test of inference.py and claim_checks.py rest on."""

from __future__ import annotations

import math
from statistics import NormalDist

_NORMAL = NormalDist()


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


def two_sided_p(statistic: float, df: float) -> float:
    return min(1.0, 2.0 * (1.0 - t_cdf(abs(statistic), df)))

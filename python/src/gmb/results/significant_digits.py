# SPDX-License-Identifier: BSD-3-Clause
"""Numbers printed with the significant digits they need: a figure to so many, its integer part never cut
(significant); a ratio with its interval to the digits that tell the three apart (ratio_text)."""

from __future__ import annotations

import math


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

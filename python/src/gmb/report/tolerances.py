# SPDX-License-Identifier: BSD-3-Clause
"""`gmb compare --reference`: a tolerance file read and checked, and the compared points that violate it.

A reference file (TOML) sets tolerances for a regression check:

    [default]
    max_regression_pct = 10        # B may be at most 10 % worse than A
    [[rule]]                       # first matching rule wins
    benchmark = "latency"
    max_bytes = 8192
    max_regression_pct = 25

A point violates its tolerance when its difference is called (the same test as the comparison's verdict,
compare.py), in the worse direction, and larger than the tolerance.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

from ..tomlcheck import array_of_tables
from .compare import Row


def load_tolerances(path: str | Path) -> dict:
    """A reference file's tolerances, checked (check_tolerances); ValueError naming the file."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ValueError(f"--reference {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not TOML ({exc})") from None
    if "default" not in data and "rule" not in data:
        raise ValueError(f"{path}: expected a [default] table and/or [[rule]] entries")
    check_tolerances(data, path)
    return data


TOLERANCE_KEYS = {"max_regression_pct"}
TOLERANCE = "a number of percent >= 0 (how much worse B may be than A)"
RULE_KEYS = {"benchmark": str, "memory": str, "operation": str, "min_bytes": int, "max_bytes": int,
             "max_regression_pct": (int, float)}


def check_tolerances(tol: dict, path) -> None:
    """The reference file of `gmb compare`: [default] max_regression_pct and [[rule]] entries, values of the
    right type (a tolerance is a finite number of percent >= 0, sizes integers >= 0); ValueError naming what is
    wrong."""
    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0

    unknown = set(tol) - {"default", "rule"}
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)} (accepted: [default], [[rule]])")
    default = tol.get("default", {})
    if not isinstance(default, dict):
        raise ValueError(f"{path}: default must be a [default] table")
    if set(default) - TOLERANCE_KEYS:
        raise ValueError(f"{path}: [default]: unknown keys {sorted(set(default) - TOLERANCE_KEYS)} "
                         f"(accepted: max_regression_pct)")
    if "max_regression_pct" in default and not number(default["max_regression_pct"]):
        raise ValueError(f"{path}: [default] max_regression_pct must be {TOLERANCE} "
                         f"(got {default['max_regression_pct']!r})")
    rules = array_of_tables(tol, "rule", path, ValueError)
    for i, r in enumerate(rules):
        unknown = set(r) - set(RULE_KEYS)
        if unknown:
            raise ValueError(f"{path}: [[rule]] #{i + 1}: unknown keys {sorted(unknown)} "
                             f"(accepted: {', '.join(RULE_KEYS)})")
        for k, v in r.items():
            ok = number(v) if k in ("max_regression_pct", "min_bytes", "max_bytes") else True
            ok = ok and isinstance(v, RULE_KEYS[k]) and not isinstance(v, bool)
            if not ok:
                want = TOLERANCE if k == "max_regression_pct" else \
                    "an integer >= 0" if RULE_KEYS[k] is int else "a string"
                raise ValueError(f"{path}: [[rule]] #{i + 1}: {k} must be {want} (got {v!r})")


def tolerance_for(row: Row, tol: dict) -> float | None:
    for rule in tol.get("rule", []):
        if "benchmark" in rule and rule["benchmark"] != row.benchmark:
            continue
        if "memory" in rule and rule["memory"] != row.memory:
            continue
        if "operation" in rule and rule["operation"] != row.operation:
            continue
        if row.bytes < rule.get("min_bytes", 0) or row.bytes > rule.get("max_bytes", float("inf")):
            continue
        return rule.get("max_regression_pct")
    return tol.get("default", {}).get("max_regression_pct")


def check(rows: list[Row], tol: dict) -> list[Row]:
    """The rows that violate their tolerance: a difference called (so only rows with a verdict), in the worse
    direction, larger than the tolerance."""
    bad = []
    for r in rows:
        limit = tolerance_for(r, tol)
        if limit is not None and r.significant and r.worse_pct > limit:
            r.violation = f"{r.worse_pct:.1f}% worse > {limit}%"
            bad.append(r)
    return bad

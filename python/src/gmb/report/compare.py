# SPDX-License-Identifier: BSD-3-Clause
"""Compare two result sets: ratio of medians per point (benchmark, operation, memory, strategy, ranks, path class,
size and the rest of its configuration: records.configuration).

Each side's value per point is combined over repetitions (model.combine): median of the launch medians, and an
interval taken over the launches (model.launch_interval). ratio = B / A with interval [B.low / A.high, B.high / A.low]
(a ratio of figures >= 0: an interval reaching 0 or below leaves the ratio's bound at 0, or unbounded). Every point
present on both sides is compared, whichever side is A; a point whose median is 0 on a side has no ratio and is left
out, and said, as are the points of one side only (Comparison.left_out). A
difference is *significant* when the two intervals do not overlap and each side measured the point in two launches
or more: launches differ more than the samples of one launch (two launches of the same library minutes apart differ
by more than one launch's interval), so a point of a single launch on either side is *not judged*, and no tolerance
is checked on it. Whether a ratio is better or worse depends on the metric: time (latency) lower is better;
bandwidth higher is better.

Points are matched by their whole configuration. Two result sets of the same library compare configurations with the
same settings and binding; two different libraries (or library configurations, which differ in their settings by
definition) run as each was launched: their points are matched whatever their settings and binding (an Open MPI
binds ranks to cores by default, MPICH's Hydra leaves them unbound), and launch_differences() names what differed. A
side holding several configurations of its library that differ in settings or binding is refused (choose one with
--a-library/--b-library, naming the configuration as the tables do).

A reference file (TOML) sets tolerances for a regression check:

    [default]
    max_regression_pct = 10        # B may be at most 10 % worse than A
    [[rule]]                       # first matching rule wins
    benchmark = "latency"
    max_bytes = 8192
    max_regression_pct = 25

A point violates its tolerance when the change is significant, in the worse direction, and larger than the
tolerance.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from ..results.model import Point, PointKey, Results, combine
from ..tomlcheck import array_of_tables
from .cells import HIGHER_IS_BETTER, Absent, Table, clearly_apart, size_label
from .wording import bounds_text


@dataclass
class Row:
    benchmark: str
    operation: str | None
    memory: str
    strategy: str | None
    ranks: int | None
    path_class: str | None
    bytes: int
    metric: str
    a: Point
    b: Point
    ratio: float
    ratio_low: float | None  # None: a side has no interval
    ratio_high: float | None
    significant: bool
    worse_pct: float  # > 0 when B is worse than A, in percent
    violation: str = ""

    @property
    def judged(self) -> bool:
        """Both sides measured the point in two launches or more: only then can a difference be called significant."""
        return not (self.a.one_launch or self.b.one_launch)


# The parts of a configuration that belong to how one library was launched: matched only within one library.
LAUNCH_CONFIGURATION = ("settings", "binding")


def _key(p: Point, same_library: bool) -> PointKey:
    """What a point is (model.PointKey), without its library's name: the two sides are matched on the rest, and two
    libraries' points also without how each was launched (LAUNCH_CONFIGURATION). The layout of several pairs is
    left out: records of engines before pair_paths do not say it, and the ranks and path already match."""
    key = replace(p.key, library="", pairs=None)
    return key if same_library else replace(key, settings="", binding=None)


def _order(p: Point):
    """Rows in the order of benchmark, operation, memory, strategy, ranks, path, size, metric and configuration."""
    return tuple((0, x) if isinstance(x, int) else (1, str(x)) for x in
                 (p.benchmark, p.operation, p.memory, p.strategy_label, p.ranks, p.path_class, p.bytes, p.metric,
                  p.config.canonical))


@dataclass
class Comparison:
    """The rows compared, and how many points were not and why."""
    rows: list[Row]
    only_a: int = 0  # points of A that B lacks
    only_b: int = 0  # points of B that A lacks
    no_ratio: int = 0  # points of both with a median of 0 on a side

    def left_out(self) -> list[str]:
        """What was not compared, one phrase per reason ([] when every point of both sides was)."""
        return [text for n, text in (
            (self.no_ratio, f"{self.no_ratio} present on both sides with a median of 0 on a side (no ratio)"),
            (self.only_a, f"{self.only_a} of A that B lacks"), (self.only_b, f"{self.only_b} of B that A lacks")) if n]


def compare(a: Results, b: Results, a_library: str | None = None, b_library: str | None = None) -> Comparison:
    def side(results, lib, name):
        rows = [r for r in results.ok() if r.benchmark != "peaks"]
        libs = sorted({r.library for r in rows})
        configurations = sorted({r.configuration for r in rows})
        if lib is None and len(libs) > 1:
            raise ValueError(f"result set {name.upper()} holds several libraries ({', '.join(libs)}): choose one with "
                             f"--{name}-library (e.g. --a-library {libs[0]} --b-library {libs[-1]} to compare two "
                             f"libraries of one result set)")
        if lib is not None:
            if lib not in libs and lib not in configurations:
                raise ValueError(f"library {lib!r} not in result set {name.upper()} (have: "
                                 f"{', '.join(sorted(set(libs) | set(configurations))) or 'none'})")
            rows = [r for r in rows if lib in (r.library, r.configuration)]
        return combine(rows), {r.library for r in rows}

    (pts_a, libs_a), (pts_b, libs_b) = side(a, a_library, "a"), side(b, b_library, "b")
    same_library = libs_a == libs_b  # one library on both sides: its settings and binding are part of what is matched

    def by_key(points, name):
        out: dict[tuple, Point] = {}
        for p in points:
            key = _key(p, same_library)
            if key in out and out[key].library != p.library:
                raise ValueError(f"result set {name.upper()} holds configurations that differ in their settings or binding "
                                 f"({out[key].library}; {p.library}): compare one at a time with --{name}-library "
                                 f"(the configuration's name as the tables give it)")
            out[key] = p
        return out

    pa, pb = by_key(pts_a, "a"), by_key(pts_b, "b")
    common = sorted(set(pa) & set(pb), key=lambda k: _order(pa[k]))
    out = Comparison([], len(set(pa) - set(pb)), len(set(pb) - set(pa)))
    for key in common:
        x, y = pa[key], pb[key]
        if x.median <= 0 or y.median <= 0:
            out.no_ratio += 1
            continue
        ratio = y.median / x.median
        # figures are >= 0: an interval reaching below 0 bounds the ratio by 0, one reaching 0 leaves it unbounded;
        # a side without an interval (one launch of fewer than 6 samples) leaves the ratio's without one
        rlow = rhigh = None
        if x.has_interval and y.has_interval:
            rlow, rhigh = max(y.low, 0) / x.high, y.high / x.low if x.low > 0 else math.inf
        apart = clearly_apart(x, y)
        higher_better = x.metric in HIGHER_IS_BETTER
        worse = (1 - ratio) * 100 if higher_better else (ratio - 1) * 100
        row = Row(x.benchmark, x.operation, x.memory, x.strategy_label, x.ranks, x.path_class, x.bytes, x.metric, x,
                  y, ratio, rlow, rhigh, False, worse)
        row.significant = apart and row.judged
        out.rows.append(row)
    return out


def launch_differences(rows: list[Row]) -> list[str]:
    """How the two sides' launches differed in the points compared (settings, binding), one line per part, e.g.
    "binding: A 1 CPU/rank, B unbound": a comparison of two libraries compares each as it was launched."""
    out = []
    for part in LAUNCH_CONFIGURATION:
        def shown(point):
            value = point.config.get(part)
            if part == "settings":  # records.configuration leaves out an empty set of settings
                return " ".join(f"{k}={v}" for k, v in (value or {}).items()) or "none"
            return str(value) if value is not None else "not recorded"
        a = sorted({shown(r.a) for r in rows})
        b = sorted({shown(r.b) for r in rows})
        if a != b:
            out.append(f"{part}: A {'; '.join(a)}, B {'; '.join(b)}")
    return out


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
    """The rows that violate their tolerance (a significant change, so only judged rows)."""
    bad = []
    for r in rows:
        limit = tolerance_for(r, tol)
        if limit is not None and r.significant and r.worse_pct > limit:
            r.violation = f"{r.worse_pct:.1f}% worse > {limit}%"
            bad.append(r)
    return bad


def as_table(rows: list[Row], a_name: str, b_name: str) -> Table:
    body = []
    for r in rows:
        body.append([r.benchmark, r.operation or "", r.memory, r.strategy or "", r.path_class or "",
                     r.ranks if r.ranks is not None else Absent("a pair"), size_label(r.bytes), r.metric,
                     f"{r.a.median:.4g}", f"[{bounds_text(r.a.low, r.a.high, '.4g', ', ')}]", f"{r.b.median:.4g}",
                     f"[{bounds_text(r.b.low, r.b.high, '.4g', ', ')}]", f"{r.ratio:.3f}",
                     f"[{bounds_text(r.ratio_low, r.ratio_high, '.3f', ', ')}]",
                     ("yes, " + ("worse" if r.worse_pct > 0 else "better")) if r.significant else
                     "no" if r.judged else "not judged: one launch",
                     r.violation])
    return Table(f"Comparison: B={b_name} / A={a_name}",
                 ["benchmark", "operation", "memory", "strategy", "path", "ranks", "size", "metric", "A median", "A CI",
                  "B median", "B CI", "B/A", "ratio CI", "significant", "tolerance"], body)

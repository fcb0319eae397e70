# SPDX-License-Identifier: BSD-3-Clause
"""Two result sets compared point by point: their points matched, the ratio B / A of each point both measured with
its 95 % interval and a verdict, and every point that was not compared, with why.

**Matching.** A point is its whole configuration (points.PointKey): benchmark, operation, memory, strategy and chunks,
buffer allocation, options, ranks, hosts, path class, size, metric and, within one library, its settings and
binding. Two result sets of the same library match points on all of it; two different libraries (or library
configurations, which differ in their settings by definition) run as each was launched: their points match whatever
their settings and binding (an Open MPI binds ranks to cores by default, MPICH's Hydra leaves them unbound), and
launch_differences() names what differed. A side holding several configurations of its library that differ in
settings or binding is refused (choose one with --a-library/--b-library, naming the configuration as the tables do).
Matching is symmetric: A and B swapped match the same points.

**Every point accounted for.** Each point of A is matched with B's, or not matched, and then it is one of: B
measured it and has no figure (failed or unsupported: B's reason), B has a point that differs in a part of its
configuration (named: "options: A window=64, B window=16"), or it is only in A (Unmatched). A matched point has a
ratio unless a launch value is 0 on a side (bandwidth at 0 B).

**A difference.** The ratio B / A is inference.ratio of the two points' launch values (the launch is the replicate),
each side's launch noise pooled over its series (points.series_noise): Welch on log scale, so the interval lies above
zero and A / B is its exact reciprocal with the same p-value. A point that cannot carry a claim (claim_checks.blockers:
one launch, busy launches, launch values on a coarse lattice or all equal) gets no verdict and says why. The others
are decided together: a difference is called where its Benjamini-Hochberg adjusted p-value over all the points
compared is at most 5 % (a false discovery rate of 5 %), which implies that its 95 % interval excludes 1. Whether
B's being higher is better depends on the metric: time (latency) lower is better; bandwidth higher is better.

The comparison in tables and words: compare_words.py; its regression check against a tolerance file: tolerances.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from ..results import claim_checks, inference
from ..results.model import Results
from ..results.points import Point, PointKey, combine
from ..results.result_facts import PairLayout
from ..results.stored_rows import Result
from .cells import HIGHER_IS_BETTER

FALSE_DISCOVERY_RATE = 1 - inference.LEVEL  # over all the points one comparison decides

# verdicts of a matched point
DIFFERENT = "different"  # its difference is called (Benjamini-Hochberg over the comparison)
NOT_PROVEN = "not proven"  # tested, not called
NO_VERDICT = "no verdict"  # a side cannot carry a claim (Row.blockers) or the launches give no interval
NO_RATIO = "no ratio"  # a launch value of 0 on a side

# why a point of one side was not matched
NO_FIGURE = "no figure"  # the other side measured it and has no figure: failed or unsupported, with its reason
NOT_THE_SAME = "not the same point"  # the other side has a point like it that differs in a part of its configuration
ONLY_HERE = "only here"  # nothing like it on the other side
AMBIGUOUS = "ambiguous"  # several points of this side match as one (they differ only in the layout of their pairs)


@dataclass
class Row:
    """A point both sides measured: A's and B's, the ratio B / A with its 95 % interval and p-value, and the
    verdict."""
    a: Point
    b: Point
    ratio: float | None  # None: a launch value of 0 on a side
    ratio_low: float | None = None  # None: no interval (a side cannot carry a claim, or its launches give none)
    ratio_high: float | None = None
    p: float | None = None
    q: float | None = None  # Benjamini-Hochberg adjusted p-value over the comparison's points
    blockers: list[tuple[str, claim_checks.Blocker]] = field(default_factory=list)  # (side "A"/"B", blocker)
    significant: bool = False  # the difference is called
    violation: str = ""

    benchmark = property(lambda self: self.a.benchmark)
    operation = property(lambda self: self.a.operation)
    memory = property(lambda self: self.a.memory)
    strategy = property(lambda self: self.a.strategy_label)
    ranks = property(lambda self: self.a.ranks)
    path_class = property(lambda self: self.a.path_class)
    bytes = property(lambda self: self.a.bytes)
    metric = property(lambda self: self.a.metric)

    @property
    def judged(self) -> bool:
        """A verdict rests on it: a ratio with an interval, and neither side blocked."""
        return self.p is not None and not self.blockers

    @property
    def verdict(self) -> str:
        if self.ratio is None:
            return NO_RATIO
        if not self.judged:
            return NO_VERDICT
        return DIFFERENT if self.significant else NOT_PROVEN

    @property
    def launches_needed(self) -> int | None:
        """Launches a side that would resolve a ratio as large as this one (claim_checks.launches_needed, 80 % power),
        where it is not proven and both sides' launch noise is known; None otherwise."""
        if self.verdict != NOT_PROVEN or self.a.noise is None or self.b.noise is None:
            return None
        return claim_checks.launches_needed(self.ratio, self.b.noise, self.a.noise)

    @property
    def worse_pct(self) -> float:
        """How much worse B is than A, in percent (< 0: better): time higher, bandwidth lower."""
        if self.ratio is None:
            return 0.0
        return (1 - self.ratio) * 100 if self.metric in HIGHER_IS_BETTER else (self.ratio - 1) * 100


@dataclass
class Unmatched:
    """A point of one side (``side``: "A" or "B") that is not compared, ``why`` (NO_FIGURE, NOT_THE_SAME, ONLY_HERE,
    AMBIGUOUS) and ``detail``: the other side's reason (NO_FIGURE), what differs (NOT_THE_SAME), how many (AMBIGUOUS)."""
    side: str
    point: Point
    why: str
    detail: str = ""


@dataclass
class Side:
    """One side of a comparison: its points (one library, or one configuration of it), the results of the same
    selection that have no figure (failed, unsupported) and the libraries they belong to."""
    points: list[Point]
    missing: list[Result] = field(default_factory=list)
    libraries: frozenset = frozenset()


@dataclass
class Comparison:
    """The matched points (rows) and the points of each side that were not, with why: every point of A is either in
    a row or in ``unmatched`` (side "A"), and so is every point of B."""
    rows: list[Row]
    unmatched: list[Unmatched]
    points_a: int
    points_b: int

    def not_matched(self, side: str) -> list[Unmatched]:
        return [u for u in self.unmatched if u.side == side]


# The parts of a configuration that belong to how one library was launched: matched only within one library.
LAUNCH_CONFIGURATION = ("settings", "binding")
# The parts of a point's identity that tell two points of one benchmark, memory, strategy and size apart, in the
# order they are named where two points differ only in them.
CONFIGURATION_PARTS = ("settings", "options", "binding", "hosts", "ranks", "path_class", "chunks", "fresh",
                       "size_convention", "pairs")


def _key(p: PointKey, same_library: bool) -> PointKey:
    """What a point is (points.PointKey), without its library's name: the two sides are matched on the rest, and two
    libraries' points also without how each was launched (LAUNCH_CONFIGURATION). The layout of several pairs is
    left out: records of engines before pair_paths do not say it, and the ranks and path already match."""
    key = replace(p, library="", pairs=None)
    return key if same_library else replace(key, settings="", binding=None)


def _kind(p: PointKey) -> tuple:
    """What a point measures, whatever its configuration: two points alike in this and different in a
    CONFIGURATION_PARTS part are not the same point, and the difference is named."""
    return p.benchmark, p.operation, p.memory, p.strategy, p.bytes, p.metric


def _order(p: Point):
    """Rows in the order of benchmark, operation, memory, strategy, ranks, path, size, metric and configuration."""
    return tuple((0, x) if isinstance(x, int) else (1, str(x)) for x in
                 (p.benchmark, p.operation, p.memory, p.strategy_label, p.ranks, p.path_class, p.bytes, p.metric,
                  p.config.canonical if p.config else ""))


def side(results: Results, library: str | None, name: str) -> Side:
    """The points of one result set to compare (those of ``library``: a library or a configuration's name), and its
    results of the same selection without a figure; ValueError where the set holds several libraries and none is
    chosen, or not the one chosen."""
    chosen = [r for r in results.results if not r.ceiling]
    ok = [r for r in chosen if r.status == "ok"]
    libs = sorted({r.library for r in ok})
    if library is None and len(libs) > 1:
        raise ValueError(f"result set {name.upper()} holds several libraries ({', '.join(libs)}): choose one with "
                         f"--{name}-library (e.g. --a-library {libs[0]} --b-library {libs[-1]} to compare two "
                         f"libraries of one result set)")
    if library is None and libs:  # the one library measured: another's results without a figure are not this side's
        library = libs[0]
    elif library is not None:
        known = {r.library for r in chosen} | {r.configuration for r in chosen}
        if library not in known:
            raise ValueError(f"library {library!r} not in result set {name.upper()} (have: "
                             f"{', '.join(sorted(known)) or 'none'})")
    if library is not None:
        chosen = [r for r in chosen if library in (r.library, r.configuration)]
        ok = [r for r in chosen if r.status == "ok"]
    return Side(combine(ok), [r for r in chosen if r.status != "ok"], frozenset(r.library for r in chosen))


def _libraries(results: Results) -> set[str]:
    """The libraries of a result set's figures and failures, ceilings aside."""
    return {r.library for r in results.results if not r.ceiling}


def compare(a: Results, b: Results, a_library: str | None = None, b_library: str | None = None) -> Comparison:
    """B against A: one library (or configuration) of each where chosen or where each holds one; with none chosen
    and a set holding several, each library against its namesake in the other set (a campaign run twice, or on two
    days), the verdicts decided together over every library's points."""
    if a_library is None and b_library is None and max(len(_libraries(a)), len(_libraries(b))) > 1:
        return _library_by_library(a, b)
    return match(side(a, a_library, "a"), side(b, b_library, "b"))


def _library_by_library(a: Results, b: Results) -> Comparison:
    """Each library of both sets against itself (their points matched within it, its settings and binding too);
    a library of one set alone: each of its points not matched, with why."""
    in_a, in_b = _libraries(a), _libraries(b)
    parts = [match(side(a, lib, "a"), side(b, lib, "b"), decide=False) for lib in sorted(in_a & in_b)]
    rows = sorted((r for c in parts for r in c.rows), key=lambda r: (r.a.library, _order(r.a)))
    unmatched = [u for c in parts for u in c.unmatched]
    alone_points = {"A": 0, "B": 0}
    for name, results, mine, other, theirs in (("A", a, in_a, "B", in_b), ("B", b, in_b, "A", in_a)):
        for lib in sorted(mine - theirs):
            points = side(results, lib, name.lower()).points
            alone_points[name] += len(points)
            unmatched += [Unmatched(name, p, ONLY_HERE, f"{lib} not in {other}") for p in points]
    _decide(rows)
    return Comparison(rows, unmatched, sum(c.points_a for c in parts) + alone_points["A"],
                      sum(c.points_b for c in parts) + alone_points["B"])


def match(a: Side, b: Side, decide: bool = True) -> Comparison:
    """The comparison of two sides: their points matched (_key), each pair's ratio and verdict (``decide``: over
    these rows alone; else the caller decides over all its rows), and every point not matched with why."""
    same_library = a.libraries == b.libraries  # one library on both sides: its settings and binding are matched too
    pa, pb = _by_key(a.points, same_library, "a"), _by_key(b.points, same_library, "b")
    common = sorted((k for k in pa if k in pb and len(pa[k]) == len(pb[k]) == 1), key=lambda k: _order(pa[k][0]))
    rows = [_row(pa[k][0], pb[k][0]) for k in common]
    if decide:
        _decide(rows)
    missing_a, missing_b = ([(PointKey.of(r, ""), r) for r in x.missing] for x in (a, b))
    unmatched = [*_unmatched("A", pa, pb, missing_b, same_library), *_unmatched("B", pb, pa, missing_a, same_library)]
    return Comparison(rows, unmatched, len(a.points), len(b.points))


def _by_key(points: list[Point], same_library: bool, name: str) -> dict[PointKey, list[Point]]:
    out: dict[PointKey, list[Point]] = {}
    for p in points:
        mates = out.setdefault(_key(p.key, same_library), [])
        if mates and mates[0].library != p.library:
            raise ValueError(f"result set {name.upper()} holds configurations that differ in their settings or binding "
                             f"({mates[0].library}; {p.library}): compare one at a time with --{name}-library "
                             f"(the configuration's name as the tables give it)")
        mates.append(p)
    return out


def _row(a: Point, b: Point) -> Row:
    if not all(v > 0 for v in (*a.values, *b.values)):
        return Row(a, b, None)
    r = inference.ratio(b.values, a.values, b.noise, a.noise)
    blocked = [(name, x) for name, p in (("A", a), ("B", b)) for x in claim_checks.blockers(p.values, p.busy)]
    return Row(a, b, r.value, r.low, r.high, r.p, blockers=blocked)


def _decide(rows: list[Row]) -> None:
    """Each row's verdict: Benjamini-Hochberg over every point with a ratio (one without a verdict counts as a test
    that found nothing), a difference called where the adjusted p-value is at most FALSE_DISCOVERY_RATE."""
    tested = [r for r in rows if r.ratio is not None]
    adjusted = claim_checks.bh_adjusted([r.p if r.judged else 1.0 for r in tested])
    for r, q in zip(tested, adjusted):
        if r.judged:
            r.q = q
            r.significant = q <= FALSE_DISCOVERY_RATE


def _unmatched(name: str, mine: dict, theirs: dict, their_missing: list[tuple[PointKey, Result]],
               same_library: bool) -> list[Unmatched]:
    """The points of one side (``mine``, named ``name``) not matched with the other's, each with why
    (``their_missing``: the other side's results without a figure, each with its key)."""
    other = "B" if name == "A" else "A"
    out = []
    for key, points in mine.items():
        if key in theirs and len(points) == len(theirs[key]) == 1:
            continue
        if len(points) > 1 or key in theirs:
            n = len(points), len(theirs.get(key, ()))
            out += [Unmatched(name, p, AMBIGUOUS, f"{n[0]} of {name}, {n[1]} of {other}") for p in points]
            continue
        (p,) = points
        failed = next((r for k, r in their_missing if _measured_as(k, p.key, same_library)), None)
        alike = [q for k, qs in theirs.items() if k not in mine for q in qs if _kind(q.key) == _kind(p.key)]
        if failed is not None:
            out.append(Unmatched(name, p, NO_FIGURE, f"{failed.status}: {failed.reason or 'no reason recorded'}"))
        elif alike:
            nearest = min(alike, key=lambda q: (len(_differences(p.key, q.key, same_library)), _order(q)))
            out.append(Unmatched(name, p, NOT_THE_SAME, "; ".join(
                f"{part} {name} {mine_text}, {other} {their_text}"
                for part, mine_text, their_text in _differences(p.key, nearest.key, same_library))))
        else:
            out.append(Unmatched(name, p, ONLY_HERE))
    return sorted(out, key=lambda u: _order(u.point))


def _measured_as(theirs: PointKey, key: PointKey, same_library: bool) -> bool:
    """Whether a result without a figure (``theirs``: its key, without a metric) is of the point ``key``: the same kind
    and configuration, where the record says it (a launch refused before it started may not record its ranks, path or
    binding)."""
    if _kind(replace(theirs, metric=key.metric)) != _kind(key):
        return False
    parts = [p for p in CONFIGURATION_PARTS if same_library or p not in LAUNCH_CONFIGURATION]
    return all(getattr(theirs, p) in (None, "", "{}", getattr(key, p)) for p in parts if p != "pairs")


def _differences(mine: PointKey, theirs: PointKey, same_library: bool) -> list[tuple[str, str, str]]:
    """(part, mine, theirs) for each part of two points' configurations that differs; for settings and options, the
    names that differ ("window=64" against "window=16")."""
    out = []
    for part in CONFIGURATION_PARTS:
        if part in LAUNCH_CONFIGURATION and not same_library:
            continue
        x, y = getattr(mine, part), getattr(theirs, part)
        if x == y:
            continue
        if part in ("settings", "options"):
            x, y = json.loads(x or "{}"), json.loads(y or "{}")
            names = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
            out.append((part, *(" ".join(f"{k}={json.dumps(d[k]) if not isinstance(d[k], str) else d[k]}"
                                         if k in d else f"{k} unset" for k in names) for d in (x, y))))
        else:
            out.append((part.replace("_", " "), *(_part_text(v) for v in (x, y))))
    return out


def _part_text(value) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, PairLayout):
        return f"{value.count} pairs" + (f" in {len(value.groups)} groups" if value.groups else "")
    return str(value)


def launch_differences(rows: list[Row]) -> list[str]:
    """How the two sides' launches differed in the points compared (settings, binding), one line per part, e.g.
    "binding: A 1 CPU/rank, B unbound": a comparison of two libraries compares each as it was launched."""
    out = []
    for part in LAUNCH_CONFIGURATION:
        def shown(point):
            value = point.config.get(part)
            if part == "settings":  # run_conditions.configuration leaves out an empty set of settings
                return " ".join(f"{k}={v}" for k, v in (value or {}).items()) or "none"
            return str(value) if value is not None else "not recorded"
        a = sorted({shown(r.a) for r in rows})
        b = sorted({shown(r.b) for r in rows})
        if a != b:
            out.append(f"{part}: A {'; '.join(a)}, B {'; '.join(b)}")
    return out

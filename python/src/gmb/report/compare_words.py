# SPDX-License-Identifier: BSD-3-Clause
"""A comparison (compare.py) in tables and words: each point compared with both figures, the ratio and its verdict
said, the points not compared with why, and the summary that accounts for every point of both sides."""

from __future__ import annotations

from ..results import claim_checks, inference
from ..results.points import Point
from ..results.significant_digits import ratio_text, significant
from .cells import Absent, Table, size_label
from .compare import (AMBIGUOUS, DIFFERENT, FALSE_DISCOVERY_RATE, NO_FIGURE, NO_RATIO, NO_VERDICT, NOT_PROVEN,
                      NOT_THE_SAME, ONLY_HERE, Comparison, Row, Unmatched)
from .wording import short

# a difference that would take more launches a side than this to resolve is too small to be worth suggesting them
MOST_LAUNCHES_SUGGESTED = 50


def _digits(*values: float) -> int:
    """The significant digits (3 to 6) that tell a figure and its bounds apart."""
    digits = 3
    while digits < 6 and len({significant(x, digits) for x in values}) < len(values):
        digits += 1
    return digits


def figure_cells(p: Point) -> tuple[str, str | Absent]:
    """A point's figure and its interval's cell ("[2.71, 2.89] +-3.2 %"), with the digits they need: the interval
    of a point of one launch says so (it holds within that launch)."""
    if not p.has_interval or p.low <= 0:
        return significant(p.median), Absent("no interval")
    digits = _digits(p.low, p.median, p.high)
    bounds = f"[{significant(p.low, digits)}, {significant(p.high, digits)}] " \
             f"+-{significant(100 * inference.precision(p.low, p.high), 2)} %"
    return significant(p.median, digits), bounds + (" (one launch)" if p.one_launch else "")


def blocker_text(side_name: str, b: claim_checks.Blocker) -> str:
    """Why a side's point carries no claim, in words."""
    return {claim_checks.ONE_LAUNCH: f"{side_name} one launch",
            claim_checks.BUSY: f"{side_name} {b.count} of {b.of} launches on a busy host",
            claim_checks.QUANTISED: f"{side_name} launch values on a lattice of step {significant(b.step or 0)}",
            claim_checks.NO_SPREAD: f"{side_name} launches agree exactly"}[b.kind]


def verdict_text(r: Row) -> str:
    verdict = r.verdict
    if verdict == NO_RATIO:
        return "no ratio: a launch value of 0 on " + " and ".join(
            name for name, p in (("A", r.a), ("B", r.b)) if not all(v > 0 for v in p.values))
    if verdict == NO_VERDICT:
        return "no verdict: " + ("; ".join(blocker_text(s, b) for s, b in r.blockers) or "the launches give no interval")
    q = "q < 0.0001" if r.q < 1e-4 else f"q {significant(r.q, 2)}"
    if verdict == NOT_PROVEN:
        needed = r.launches_needed
        settle = f": about {needed} launches a side would resolve {ratio_text(r.ratio)}" \
            if needed is not None and max(r.a.reps, r.b.reps) < needed <= MOST_LAUNCHES_SUGGESTED else ""
        return f"not proven ({q}){settle}"
    return f"B {'worse' if r.worse_pct > 0 else 'better'} ({q})"


def ran_change(r: Row) -> str | Absent:
    """Whether what ran behind the point (Point.ran) changed from A to B: "same", or each source that changed."""
    a, b = r.a.ran, r.b.ran
    if not a and not b:
        return Absent("not recorded")
    changed = [f"{source}: {a.get(source, 'not said')} -> {b.get(source, 'not said')}"
               for source in sorted({*a, *b}) if a.get(source) != b.get(source)]
    return "; ".join(changed) if changed else "same"


def _point_cells(p: Point) -> list:
    return [p.benchmark, p.operation or "", p.memory, p.strategy_label or "", p.path_class or "",
            p.ranks if p.ranks is not None else Absent("a pair"), size_label(p.bytes), p.metric]


POINT_COLUMNS = ["benchmark", "operation", "memory", "strategy", "path", "ranks", "size", "metric"]


def as_table(rows: list[Row], a_name: str, b_name: str) -> Table:
    """One row per point compared; the configuration named where the rows span several (library by library)."""
    several = len({r.a.library for r in rows}) > 1
    body = []
    for r in rows:
        ratio = Absent("no ratio") if r.ratio is None else ratio_text(r.ratio, r.ratio_low, r.ratio_high)
        body.append([*([r.a.library] if several else []), *_point_cells(r.a), *figure_cells(r.a), *figure_cells(r.b),
                     ratio, verdict_text(r), r.violation or Absent("none violated"), ran_change(r)])
    return Table(f"Comparison: B={b_name} / A={a_name}",
                 [*(["configuration"] if several else []), *POINT_COLUMNS, "A", "A 95 % CI", "B", "B 95 % CI",
                  "B/A [95 % CI]",
                  f"verdict ({significant(100 * FALSE_DISCOVERY_RATE, 1)} % FDR)", "tolerance",
                  "what ran (A -> B)"], body,
                 note="B/A: the ratio of the geometric means of the two points' launches with its 95 % interval (log "
                      "scale). A difference is called where its Benjamini-Hochberg adjusted p-value (q) over every "
                      "point compared is at most 0.05; no verdict where a side cannot carry a claim. What ran: the "
                      "protocol or algorithm each side's library said it used (docs/records.md), 'same' where it did "
                      "not change.")


def unmatched_text(u: Unmatched) -> str:
    other = "B" if u.side == "A" else "A"
    return {NO_FIGURE: f"no figure in {other}: {short(u.detail, 120)}",
            NOT_THE_SAME: f"not the same point as {other}'s: {u.detail}",
            ONLY_HERE: f"only in {u.side}" + (f" ({u.detail})" if u.detail else ""),
            AMBIGUOUS: f"several points match as one ({u.detail}): they differ only in the layout of their pairs"}[u.why]


def unmatched_table(c: Comparison, a_name: str, b_name: str) -> Table:
    """The points not compared, each with why."""
    return Table(f"Not compared: points of A={a_name} or B={b_name} without a match",
                 ["side", "configuration", *POINT_COLUMNS, "why"],
                 [[u.side, u.point.library, *_point_cells(u.point), unmatched_text(u)] for u in c.unmatched])


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {what}" for what, n in counts.items() if n)


def summary(c: Comparison, a_name: str, b_name: str) -> list[str]:
    """How every point of both sides was accounted for, and what the comparison found, one line per part: the
    counts add up (each side's points = matched + not matched; matched = each verdict's count)."""
    lines = []
    for name, label, total in (("A", a_name, c.points_a), ("B", b_name, c.points_b)):
        missed = c.not_matched(name)
        other = "B" if name == "A" else "A"
        why = _counted({f"only in {name}": sum(u.why == ONLY_HERE for u in missed),
                        f"with no figure in {other} (failed or unsupported)": sum(u.why == NO_FIGURE for u in missed),
                        f"not the same point as {other}'s (a part of the configuration differs)":
                            sum(u.why == NOT_THE_SAME for u in missed),
                        "ambiguous (differ only in the layout of their pairs)": sum(u.why == AMBIGUOUS for u in missed)})
        lines.append(f"{name} = {label}: {total} points: {total - len(missed)} matched, {len(missed)} not matched"
                     + (f" ({why})" if why else ""))
    verdicts = [r.verdict for r in c.rows]
    different = [r for r in c.rows if r.verdict == DIFFERENT]
    blocked: dict[str, int] = {}
    for r in c.rows:
        if r.verdict == NO_VERDICT:
            for kind in sorted({b.kind for _, b in r.blockers}) or ["no interval"]:
                blocked[kind] = blocked.get(kind, 0) + 1
    lines.append(
        f"{len(c.rows)} matched: {verdicts.count(DIFFERENT)} different at a "
        f"{significant(100 * FALSE_DISCOVERY_RATE, 1)} % false discovery rate"
        + (f" ({_counted({'B better': sum(r.worse_pct < 0 for r in different), 'B worse': sum(r.worse_pct > 0 for r in different)})})" if different else "")
        + f", {verdicts.count(NOT_PROVEN)} not proven, {verdicts.count(NO_VERDICT)} without a verdict"
        + (f" ({', '.join(f'{kind}: {n}' for kind, n in blocked.items())})" if blocked else "")
        + f", {verdicts.count(NO_RATIO)} without a ratio (a launch value of 0)")
    said = [r for r in different if not isinstance(ran_change(r), Absent)]
    if said:
        changed = sum(ran_change(r) != "same" for r in said)
        lines.append(f"of the {len(different)} different, {len(said)} say what ran: {changed} with what ran changed "
                     f"too, {len(said) - changed} with the same protocol or algorithm on both sides")
    if blocked.get(claim_checks.ONE_LAUNCH):
        lines.append("a point of one launch carries no verdict: measure both sides in 2 launches or more "
                     "(gmb run --repetitions N)")
    return lines

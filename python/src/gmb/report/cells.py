# SPDX-License-Identifier: BSD-3-Clause
"""What every table is made of: Table and its Absent cells, the notes and flags a figure's row carries, the sizes as
tables write them, and the selections of results several tables, answers and figures share."""

from __future__ import annotations

from dataclasses import dataclass

from ..results.claim_checks import Blocker, blockers
from ..results.inference import Ratio, ratio
from ..results.model import Results
from ..results.points import Point
from ..results.result_facts import headline, overlap, pairwise, placed
from ..results.stored_rows import Result
from .claims import decide

HIGHER_IS_BETTER = {"bw", "busbw", "rate"}
# above this share of a measured ceiling an MPI figure is not plausible: the row says the ceiling is suspect
SUSPECT_PCT = 105


def difference(a: Point, b: Point) -> Ratio:
    """a / b with its 95 % interval and p-value: inference.ratio over their launches' values, each side's launch
    noise pooled over its series (a difference tested as a difference, not as two intervals that do not overlap)."""
    return ratio(a.values, b.values, a.noise, b.noise)


def claim_blockers(p: Point) -> list[Blocker]:
    """What keeps a point out of any claim (claim_checks.blockers): one launch, busy launches, launch values that agree
    exactly or sit on a coarse lattice (a scheduler tick)."""
    return blockers(p.values, p.busy)


def claimed_ratio(a: Point, b: Point) -> Ratio | None:
    """a / b with its interval where the two points of one metric are proven different: neither is blocked
    (claim_blockers), the 95 % interval of their ratio (difference) excludes 1 and, within a report, the claim
    survives the report's false discovery rate control (claims.decide); None where no claim is made. The ratio a
    claim prints is the one it was decided on."""
    if claim_blockers(a) or claim_blockers(b):
        return None
    r = difference(a, b)
    return r if decide(frozenset((a.key, b.key)) if a.key and b.key else frozenset((id(a), id(b))), r) else None


def clearly_apart(a: Point, b: Point) -> bool:
    """Whether two points of one metric are proven different (claimed_ratio): only then is one of them called
    faster."""
    return claimed_ratio(a, b) is not None


# a point whose slow samples (p95) take ten times the fast ones (p5) or more: its median hides an order of magnitude
NOISY_SPREAD = 10.0

PRECISION_COLUMN = "precision (+- %)"
PRECISION_NOTE = (f"'{PRECISION_COLUMN}': a figure's precision, half the width of its 95 % interval as a % of the "
                  "figure. With several repetitions (launches) the figure is the geometric mean of the launch medians "
                  "and the interval its t-interval on log scale, the launch-to-launch variance pooled over the "
                  "configuration's neighbouring sizes; with one launch it is that launch's own interval of the median, "
                  "and no figure of one launch is said faster than another (launches, not samples, are the "
                  "replicates). 'check': 'cap reached' when an adaptive launch stopped at its iteration or "
                  "time cap before its interval reached the target; 'noisy' when p95 / p5 is "
                  f"{NOISY_SPREAD:g} or more (an order of magnitude between fast and slow samples); 'busy host' when "
                  "some of its launches ran while other work used the cores the ranks needed (its figure may be low, "
                  "and no claim rests on it).")


class Absent(str):
    """A table cell without a value, saying why ("not measured", "link rate unknown"): no cell is a bare empty
    string. A column whose every cell is one of these is left out of its table (see Table)."""


# the operation cell of a record that names neither an operation nor a variant (two-sided latency, bw ...)
NO_OPERATION = Absent("none")
OPERATION_NOTE = ("'operation': what the benchmark measured where it names it (result_facts.operation_label): the "
                  "one-sided operation, synchronisation and window creation ('put flush create'), 'persistent' "
                  "(requests made once, started every iteration), the partition count ('P=16').")


def precision_pct(points: list[Point]) -> float | Absent:
    """The widest precision of some points in % (one decimal), for a PRECISION_COLUMN cell."""
    if not all(p.has_interval for p in points):
        return Absent("no interval: fewer than 6 samples")
    known = [p.precision for p in points if p.precision is not None]
    return round(100 * max(known), 1) if known else Absent("median is 0")


def point_flags(p: Point, where: str = "") -> list[str]:
    """What a reader should check about a point before trusting its figure: its launch stopped at a cap before
    reaching its precision, or its samples spread over an order of magnitude. ``where`` (e.g. " at 1M") is appended
    to each flag."""
    flags = [f"cap reached{where}"] if p.capped else []
    if p.p95 > 0 and p.p95 >= NOISY_SPREAD * p.p5:
        spread = f"{p.p95 / p.p5:.0f}x" if p.p5 > 0 else "unbounded"
        flags.append(f"noisy{where}: p95/p5 {spread}")
    if p.busy:
        flags.append(f"busy host{where}: {p.busy} of {p.reps} launch{'es' if p.reps > 1 else ''}")
    return flags


def check_cell(flags: list[str]) -> str:
    return "; ".join(flags) if flags else Absent("nothing flagged")


def pairwise_bandwidth(record: dict) -> bool:
    """Bandwidth between pairs of ranks (bw, bibw, mbw ...): what ceilings of the same path bound."""
    return pairwise(record) and headline(record) == "bandwidth_GBps"


def pairwise_time_results(results: Results) -> tuple[list[Result], list[Result]]:
    """The results ranked by time between pairs of ranks (latency, mlat, rma_latency, part_latency, managed placements
    ...), as (those of runs that placed managed memory, with the references those runs measured; the others: one-way
    latency). Overlap measurements (part_overlap: an overall time with compute) are not latencies."""
    chosen = results.where(lambda rec: pairwise(rec) and headline(rec) == "time_us" and not overlap(rec))
    placed_runs = {r.run_id for r in chosen if placed(r.record)}
    return [r for r in chosen if r.run_id in placed_runs], [r for r in chosen if r.run_id not in placed_runs]


def latency_results(results: Results) -> list[Result]:
    """One-way latency between pairs of ranks; runs that placed managed memory are left to the managed-memory
    figure."""
    return pairwise_time_results(results)[1]


def collective_results(results: Results) -> list[Result]:
    """The results ranked by bus bandwidth: collective operations (barrier, which moves no data, has none), on two
    ranks or more (a collective on one rank moves nothing: its "bandwidth" is a copy or no work at all)."""
    return results.where(lambda rec: headline(rec) == "busbw_GBps" and rec.get("ranks") != 1)


@dataclass
class Table:
    """A titled table. A column whose every cell is Absent is left out (better than the same reason in every
    row): the note names it, with its reason when all its cells give the same one."""
    title: str
    columns: list[str]
    rows: list[list]
    note: str = ""

    def __post_init__(self):
        empty = [i for i in range(len(self.columns)) if self.rows and all(isinstance(r[i], Absent) for r in self.rows)]
        if not empty:
            return
        left_out = []
        for i in empty:
            reasons = {r[i] for r in self.rows}
            left_out.append(f"{self.columns[i]} ({reasons.pop()})" if len(reasons) == 1 else self.columns[i])
        self.columns = [c for i, c in enumerate(self.columns) if i not in empty]
        self.rows = [[v for i, v in enumerate(r) if i not in empty] for r in self.rows]
        self.note = " ".join(filter(None, [self.note, f"Columns without a value in any row, left out: "
                                                      f"{'; '.join(left_out)}."]))


def size_label(b: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def size_text(b: int) -> str:
    """A size where it stands alone: "8 B", "1K", "64M" (a bare number below 1K says no unit)."""
    label = size_label(b)
    return f"{label} B" if label.isdigit() else label

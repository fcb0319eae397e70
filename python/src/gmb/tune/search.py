# SPDX-License-Identifier: BSD-3-Clause
"""The search of `gmb tune`, apart from running anything: one race per library configuration and path, its arms
(the defaults, each knob value alone, then the winners together), which arms go on after a round, which win, and what
is recommended per size range.

A round gives every arm still racing one more launch (its points at adaptive precision). After it, an arm whose
median beats the defaults' interval at no size is cut (no effect, or worse), and of the others the better half by
best gain goes on (successive halving), as many as the time left allows (plan_round). An arm wins where its interval
lies wholly beyond the defaults' at a size, measured in at least MIN_LAUNCHES launches (a claim holds across
launches). The winners' best values, one per knob, are then measured together ("combined"). The defaults are
measured in every round, never cut."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..campaign.spec import Block

DEFAULTS = "defaults"
COMBINED = "combined"
MIN_LAUNCHES = 3  # launches an arm needs before it can win (the launch-to-launch interval is wide below)


@dataclass(frozen=True)
class Figure:
    """One arm at one size: the median of its launches' medians and its launch-to-launch interval
    (model.point_figure)."""
    median: float
    low: float | None  # None: no interval (one launch of fewer than 6 samples)
    high: float | None
    launches: int


@dataclass
class Arm:
    key: str  # DEFAULTS, COMBINED or NAME=VALUE
    settings: dict[str, str]  # beyond the configuration's own
    knob: str | None = None  # the knob it sets (None: the defaults, the combination)
    # racing | cut | broken | final; failed: its launch failed, a verdict only once the defaults' launches say
    # whether the launch or the setting failed (judge_failures); unmeasured: no figure to set beside the defaults'
    state: str = "racing"
    why: str = ""  # why it was cut, is broken or was not measured
    figures: dict[int, Figure] = field(default_factory=dict)  # by size

    @property
    def launches(self) -> int:
        return min((f.launches for f in self.figures.values()), default=0)


@dataclass
class Race:
    """One library configuration on one path: the block that measures it (its settings left to the arms)."""
    configuration: str
    path: str  # the path's name: "nvlink", "same-gpu", "host-device pinned", "host", "collective allreduce" ...
    kind: str  # knobs.PATHS: what knobs can affect it
    block: Block
    higher_is_better: bool  # bandwidth: higher; time: lower
    metric: str  # the statistic compared (model STAT_COLUMNS prefix)
    arms: list[Arm] = field(default_factory=list)
    note: str = ""  # why it ended early (budget, a broken default)
    untried: str = ""  # why no knob value is tried on it ("": some are)
    # what the defaults' records have in common beside their size (verify.record_identity, and their settings): how
    # `gmb tune --verify` knows this race's records among a run's
    identity: dict | None = None

    def arm(self, key: str) -> Arm | None:
        return next((a for a in self.arms if a.key == key), None)

    @property
    def defaults(self) -> Arm:
        return self.arms[0]

    def racing(self) -> list[Arm]:
        return [a for a in self.arms if a.state in ("racing", "final")]

    @property
    def sizes(self) -> list[int]:
        return sorted(self.defaults.figures)


def gain(race: Race, arm: Arm, size: int) -> float | None:
    """How much better than the defaults ``arm`` is at ``size`` (1.25: 25 % more bandwidth, or 25 % less time per
    operation as a speed ratio); None where either was not measured."""
    a, d = arm.figures.get(size), race.defaults.figures.get(size)
    if a is None or d is None or a.median <= 0 or d.median <= 0:
        return None
    return a.median / d.median if race.higher_is_better else d.median / a.median


def ahead(a, b, higher_is_better: bool) -> bool:
    """Whether ``a``'s interval lies wholly on the better side of ``b``'s (each a Figure or a model Point: anything
    with ``low`` and ``high``); never where either has no interval (None)."""
    if None in (a.low, a.high, b.low, b.high):
        return False
    return a.low > b.high if higher_is_better else a.high < b.low


def apart(race: Race, arm: Arm, size: int) -> int:
    """+1 where ``arm``'s interval lies wholly on the better side of the defaults', -1 on the worse side, 0 where they
    overlap (or either is missing)."""
    a, d = arm.figures.get(size), race.defaults.figures.get(size)
    if a is None or d is None:
        return 0
    return 1 if ahead(a, d, race.higher_is_better) else -1 if ahead(d, a, race.higher_is_better) else 0


def _beats_defaults_somewhere(race: Race, arm: Arm) -> bool:
    """The arm's median lies beyond the defaults' interval, on the better side, at some size (lenient: an early
    round's cut)."""
    d = race.defaults.figures
    for size, f in arm.figures.items():
        if size not in d or d[size].low is None or d[size].high is None:
            continue
        if f.median > d[size].high if race.higher_is_better else f.median < d[size].low:
            return True
    return False


def best_gain(race: Race, arm: Arm) -> tuple[float, int | None]:
    """The arm's largest gain over the defaults and the size it is at (1.0, None when never measured)."""
    found = [(g, s) for s in arm.figures if (g := gain(race, arm, s)) is not None]
    return max(found, default=(1.0, None))


def largest_change(race: Race, arm: Arm) -> tuple[float, int | None]:
    """The arm's gain over the defaults where it differs most from them, better or worse (a ratio: 0.5 is half
    the defaults' figure), and the size it is at (1.0, None when never measured)."""
    found = [(g, s) for s in arm.figures if (g := gain(race, arm, s)) is not None and g > 0]
    return max(found, key=lambda gs: abs(math.log(gs[0])), default=(1.0, None))


def compared_with_defaults(race: Race, arm: Arm) -> bool:
    """Whether the arm and the defaults were both measured at some size."""
    return any(size in race.defaults.figures for size in arm.figures)


def cut_losers(race: Race) -> list[Arm]:
    """After a round: the knob values no better than the defaults at any size are cut (state "cut", why said). A
    value that cannot be set beside the defaults yet (either unmeasured) is left as it is."""
    cut = []
    for a in race.arms:
        if a.state == "racing" and a.key != DEFAULTS and compared_with_defaults(race, a) \
                and not _beats_defaults_somewhere(race, a):
            a.state, a.why = "cut", f"no better than the defaults at any size after {a.launches} launch(es)"
            cut.append(a)
    return cut


def plan_round(races: list[Race], round_number: int, affordable: int, compared: set[int]) -> list[tuple[Race, Arm]]:
    """The launches of round ``round_number`` (from the second on), at most ``affordable``: per race the better half
    of its racing knob values by best gain (successive halving), taken rank by rank over the races, the most
    promising race first, each race's defaults with its first value. The values left out are cut, and why said.
    Races in ``compared`` (their defaults set beside another configuration's) get their defaults to MIN_LAUNCHES
    launches while there is room."""
    open_races = [r for r in races if not r.note]
    ranked = {id(r): sorted((a for a in r.arms if a.state == "racing" and a.key != DEFAULTS),
                            key=lambda a, r=r: best_gain(r, a)[0], reverse=True) for r in open_races}
    keep = {key: math.ceil(len(arms) / 2) for key, arms in ranked.items()}
    order = sorted(open_races, key=lambda r: max((best_gain(r, a)[0] for a in ranked[id(r)]), default=0.0),
                   reverse=True)
    chosen: list[tuple[Race, Arm]] = []
    with_defaults: set[int] = set()
    for rank in range(max(keep.values(), default=0)):
        for race in order:
            arms = ranked[id(race)]
            if rank >= min(keep[id(race)], len(arms)):
                continue
            cost = 1 + (id(race) not in with_defaults)
            if len(chosen) + len(with_defaults) + cost > affordable:
                continue
            chosen.append((race, arms[rank]))
            with_defaults.add(id(race))
    for race in order:
        if id(race) in compared and id(race) not in with_defaults and race.defaults.launches < MIN_LAUNCHES \
                and len(chosen) + len(with_defaults) < affordable:
            with_defaults.add(id(race))
    taken = {id(a) for _, a in chosen}
    for race in open_races:
        for rank, a in enumerate(ranked[id(race)]):
            if id(a) not in taken:
                a.state = "cut"
                a.why = (f"behind the better half after round {round_number}" if rank >= keep[id(race)]
                         else f"no time left for it in round {round_number + 1}")
    return [(race, race.defaults) for race in order if id(race) in with_defaults] + chosen


def winners(race: Race) -> list[Arm]:
    """Arms apart from the defaults on the better side at some size, in at least MIN_LAUNCHES launches."""
    return [a for a in race.arms if a.key != DEFAULTS and a.state in ("racing", "final")
            and a.launches >= MIN_LAUNCHES and any(apart(race, a, s) > 0 for s in a.figures)]


def combination(race: Race) -> dict[str, str] | None:
    """The best winning value of each knob together, when two knobs or more won (None otherwise)."""
    best: dict[str, Arm] = {}
    for a in winners(race):
        if a.knob and (a.knob not in best or best_gain(race, a)[0] > best_gain(race, best[a.knob])[0]):
            best[a.knob] = a
    if len(best) < 2:
        return None
    merged: dict[str, str] = {}
    for a in best.values():
        merged.update(a.settings)
    return merged


@dataclass(frozen=True)
class Range:
    """Sizes ``low``..``high`` of a path where one arm is best: its settings, its gain over the defaults at each size
    and both figures."""
    low: int
    high: int
    arm: str  # DEFAULTS where no setting beat them
    settings: dict[str, str]
    sizes: tuple[tuple[int, float, Figure, Figure], ...]  # (size, gain, the arm's figure, the defaults')


def recommendation(race: Race) -> list[Range]:
    """Per size the best arm that beat the defaults (intervals apart, MIN_LAUNCHES launches), else the defaults;
    consecutive sizes with the same arm make one range."""
    contenders = winners(race) + ([race.arm(COMBINED)] if race.arm(COMBINED) else [])
    contenders = [a for a in contenders if a and a.state != "broken" and a.launches >= MIN_LAUNCHES]
    ranges: list[Range] = []
    for size in race.sizes:
        good = [a for a in contenders if apart(race, a, size) > 0]
        best = max(good, key=lambda a: gain(race, a, size), default=race.defaults)
        entry = (size, gain(race, best, size) or 1.0, best.figures.get(size), race.defaults.figures[size])
        if ranges and ranges[-1].arm == best.key:
            last = ranges[-1]
            ranges[-1] = Range(last.low, size, last.arm, last.settings, last.sizes + (entry,))
        else:
            ranges.append(Range(size, size, best.key, dict(best.settings), (entry,)))
    return ranges


def worst_per_knob(race: Race) -> list[Arm]:
    """Per knob, the value cut after it looked worse than the defaults (intervals apart at some size) that lost the
    most: what to measure again to prove the knob matters."""
    worst: dict[str, tuple[float, Arm]] = {}
    for a in race.arms:
        if a.state != "cut" or not a.knob or not any(apart(race, a, s) < 0 for s in a.figures):
            continue
        loss = min((g for s in a.figures if (g := gain(race, a, s)) is not None), default=1.0)
        if a.knob not in worst or loss < worst[a.knob][0]:
            worst[a.knob] = (loss, a)
    return [a for _, a in worst.values()]


def judge_failures(race: Race) -> None:
    """The values whose launch failed (state "failed"), once the defaults' launches tell a failing setting from a
    failing launch: broken where the defaults were measured; where the defaults' launch failed too (race.note),
    unmeasured, no verdict on the setting. Until then they wait (why says so if the search ends first)."""
    for a in race.arms:
        if a.state != "failed":
            continue
        if race.defaults.figures:
            a.state = "broken"
        elif race.note:
            a.state, a.why = "unmeasured", f"{a.why}, as a launch of the defaults did: no verdict on the setting"


def unmeasured(race: Race, ended: str) -> None:
    """At the end of the search (``ended``: why it ended, e.g. "the budget ran out"): the values never set beside the
    defaults are "unmeasured", and why."""
    for a in race.arms[1:]:
        if a.state == "failed":
            a.state = "unmeasured"
            a.why = f"{a.why}; the defaults were not measured to tell the setting from the launch"
        elif a.state != "broken" and not compared_with_defaults(race, a):
            a.state = "unmeasured"
            a.why = a.why or (f"{ended} before the defaults were measured" if a.figures else
                              f"{ended} before its first launch")


def verdict(race: Race, arm: Arm) -> str:
    """A knob value's effect in words: "better", "worse" or "no difference" (intervals from MIN_LAUNCHES launches or
    more), "broken", "not measured" (nothing to set beside the defaults), or, for a value cut before that, what its
    launches suggested: "cut early (looked better)", "cut early (looked worse)", "cut early (no difference)"."""
    if arm.state == "broken":
        return "broken"
    if arm.state in ("failed", "unmeasured") or not compared_with_defaults(race, arm):
        return "not measured"
    signs = {apart(race, arm, s) for s in arm.figures}
    word = "better" if 1 in signs else "worse" if -1 in signs else "no difference"
    if arm.launches >= MIN_LAUNCHES:
        return word
    return f"cut early ({'looked ' + word if word != 'no difference' else word})"

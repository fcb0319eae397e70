# SPDX-License-Identifier: BSD-3-Clause
"""The search of `gmb tune`, apart from running anything: one race per library configuration and path, its arms
(the defaults, each knob value alone, then the selected values of two knobs or more together), which arms go on after
a round, which are selected, how a selected value is confirmed, and what is recommended per size range.

Selection and confirmation are apart. Selection: a round gives every arm still racing one more launch (its points at
adaptive precision); after it, an arm whose median beats the defaults' interval at no size is cut (no effect, or
worse), and of the others the better half by best gain goes on (successive halving), as many as the time left allows
(plan_round). After MIN_LAUNCHES launches the values still beating the defaults somewhere are selected, the most
promising MAX_CANDIDATES per race (select). Confirmation: fresh launches of each selected value and of the defaults,
interleaved in the same rounds, which played no part in selecting it, decide with inference.confirm, Holm over every
value x size the race tried (tried): only a confirmed value is recommended, and its gain is that of the
confirmation launches alone. The defaults are measured in every round, never cut."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..campaign.spec import Block
from ..results.inference import LEVEL, Confirmation, LaunchNoise, bonferroni_level, confirm, ratio

DEFAULTS = "defaults"
COMBINED = "combined"
MIN_LAUNCHES = 3  # selection launches an arm needs before it can be selected
CONFIRM_LAUNCHES = 6  # fresh launches of a selected value and of the defaults that confirm it (or not)
MAX_CANDIDATES = 3  # values of one race selected for confirmation, the most promising first


@dataclass(frozen=True)
class ArmFigure:
    """One arm at one size: its figure over its launches and its launch-to-launch interval
    (model.point_figure)."""
    median: float
    low: float | None  # None: no interval (one launch of fewer than 6 samples)
    high: float | None
    launches: int
    values: tuple[float, ...] = ()  # each launch's median (model.Point.values): what a claim between arms rests on
    noise: LaunchNoise | None = None  # the launch noise its interval rests on (model.Point.noise)


@dataclass
class Arm:
    key: str  # DEFAULTS, COMBINED or NAME=VALUE
    settings: dict[str, str]  # beyond the configuration's own
    knob: str | None = None  # the knob it sets (None: the defaults, the combination)
    # racing | cut | broken | final; failed: its launch failed, a verdict only once the defaults' launches say
    # whether the launch or the setting failed (judge_failures); unmeasured: no figure to set beside the defaults'
    state: str = "racing"
    why: str = ""  # why it was cut, is broken or was not measured
    figures: dict[int, ArmFigure] = field(default_factory=dict)  # by size, from every launch of the arm
    selected: bool = False  # chosen by the selection for confirmation
    # the confirmation launches alone: per size, launch id -> the launch's value, and their figure
    fresh: dict[int, dict[str, float]] = field(default_factory=dict)
    fresh_figures: dict[int, ArmFigure] = field(default_factory=dict)
    confirmation: Confirmation | None = None  # against the defaults' confirmation launches (confirm_arm)
    confirmed_sizes: list[int] = field(default_factory=list)  # the sizes of confirmation.ratios, in order

    @property
    def launches(self) -> int:
        return min((f.launches for f in self.figures.values()), default=0)

    @property
    def fresh_launches(self) -> int:
        return min((len(v) for v in self.fresh.values()), default=0)


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
    """Whether ``a``'s interval lies wholly on the better side of ``b``'s (each a ArmFigure or a model Point: anything
    with ``low`` and ``high``); never where either has no interval (None)."""
    if None in (a.low, a.high, b.low, b.high):
        return False
    return a.low > b.high if higher_is_better else a.high < b.low


def proven_ahead(a, b, higher_is_better: bool, level: float = LEVEL) -> bool:
    """Whether ``a`` is proven better than ``b`` (each a ArmFigure or a model Point: its launches' ``values`` and
    ``noise``): the ``level`` interval of their ratio over the launches excludes 1 on the better side
    (inference.ratio); never from fewer than 2 launches a side."""
    if len(a.values) < 2 or len(b.values) < 2:
        return False
    return ratio(a.values, b.values, a.noise, b.noise, level=level).apart == (1 if higher_is_better else -1)


def apart(race: Race, arm: Arm, size: int) -> int:
    """+1 where ``arm``'s interval lies wholly on the better side of the defaults', -1 on the worse side, 0 where they
    overlap (or either is missing)."""
    a, d = arm.figures.get(size), race.defaults.figures.get(size)
    if a is None or d is None:
        return 0
    return 1 if ahead(a, d, race.higher_is_better) else -1 if ahead(d, a, race.higher_is_better) else 0


def _beats_defaults_somewhere(race: Race, arm: Arm) -> bool:
    """The arm's median lies beyond the defaults' interval, on the better side, at some size (lenient: an early
    round's cut), or beyond their median where they have no interval (launches that agree exactly)."""
    d = race.defaults.figures
    for size, f in arm.figures.items():
        if size not in d:
            continue
        high = d[size].high if d[size].high is not None else d[size].median
        low = d[size].low if d[size].low is not None else d[size].median
        if f.median > high if race.higher_is_better else f.median < low:
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


def selectable(race: Race) -> list[Arm]:
    """The knob values still racing after MIN_LAUNCHES selection launches whose median beats the defaults' interval
    at some size, the most promising (best gain) first."""
    found = [a for a in race.arms if a.key not in (DEFAULTS, COMBINED) and a.state in ("racing", "final")
             and a.launches >= MIN_LAUNCHES and _beats_defaults_somewhere(race, a)]
    return sorted(found, key=lambda a: best_gain(race, a)[0], reverse=True)


def select(race: Race) -> list[Arm]:
    """The values the selection hands to confirmation: the MAX_CANDIDATES most promising of ``selectable`` (the others
    cut, why said) and, where they set two knobs or more, the best value of each knob together (COMBINED: an arm of
    its own, launched in confirmation only)."""
    found = selectable(race)
    chosen = found[:MAX_CANDIDATES]
    for a in found[MAX_CANDIDATES:]:
        a.state, a.why = "cut", f"not among the {MAX_CANDIDATES} most promising values selected for confirmation"
    for a in chosen:
        a.state, a.selected = "final", True
    together = combination(chosen)
    if together is not None and race.arm(COMBINED) is None:
        chosen.append(Arm(COMBINED, together, state="final", selected=True))
        race.arms.append(chosen[-1])
    return chosen


def combination(chosen: list[Arm]) -> dict[str, str] | None:
    """The first (most promising) value of each knob among ``chosen`` together, when they set two knobs or more (None
    otherwise)."""
    best: dict[str, Arm] = {}
    for a in chosen:
        if a.knob and a.knob not in best:
            best[a.knob] = a
    if len(best) < 2:
        return None
    merged: dict[str, str] = {}
    for a in best.values():
        merged.update(a.settings)
    return merged


def tried(race: Race) -> int:
    """The tests the race's search stands for: every knob value it tried (the combination too) at every size. A
    confirmation is corrected for all of them, not only for the values confirmed: selecting the best of many is
    itself a chance to be fooled."""
    return max(1, len(race.arms) - 1) * max(1, len(race.sizes))


def by_launch(fresh: dict[int, dict[str, float]], sizes: list[int]) -> list[list[float]]:
    """Per size, the values of the launches that measured every one of ``sizes`` (in one order: launch i of every
    size is the same launch)."""
    common = sorted(set.intersection(*(set(fresh[s]) for s in sizes))) if sizes else []
    return [[fresh[s][launch] for launch in common] for s in sizes]


def confirm_arm(race: Race, arm: Arm) -> None:
    """The arm's confirmation (inference.confirm) from its fresh launches against the defaults', Holm over every value
    x size the race tried; None where either side has fewer than two fresh launches at the sizes both measured."""
    fresh_defaults = race.defaults.fresh
    sizes = sorted(s for s in arm.fresh if s in fresh_defaults
                   and all(v > 0 for v in [*arm.fresh[s].values(), *fresh_defaults[s].values()]))
    value, defaults = by_launch(arm.fresh, sizes), by_launch(fresh_defaults, sizes)
    if not sizes or len(value[0]) < 2 or len(defaults[0]) < 2:
        arm.confirmation, arm.confirmed_sizes = None, []
        return
    arm.confirmation = confirm(value, defaults, race.higher_is_better, tried(race))
    arm.confirmed_sizes = sizes


def _launch_means(fresh: dict[int, dict[str, float]], sizes: list[int]) -> list[float]:
    """Each fresh launch's geometric mean over ``sizes``."""
    table = by_launch(fresh, sizes)
    return [math.exp(sum(math.log(row[i]) for row in table) / len(table)) for i in range(len(table[0]))]


def gain_interval(race: Race, arm: Arm) -> tuple[float | None, float | None]:
    """The interval of a confirmed value's gain (Confirmation.gain: over the sizes of its span, from the confirmation
    launches alone) at the confirmation's corrected level: the ratio of the launches' geometric means over those
    sizes. (None, None) where it has none."""
    c = arm.confirmation
    if c is None or c.span is None:
        return None, None
    sizes = arm.confirmed_sizes[c.span[0]:c.span[1] + 1]
    r = ratio(_launch_means(arm.fresh, sizes), _launch_means(race.defaults.fresh, sizes),
              level=bonferroni_level(tried(race)))
    if r.low is None:
        return None, None
    return (r.low, r.high) if race.higher_is_better else (1 / r.high, 1 / r.low)


def proven_sizes(arm: Arm) -> tuple[list[int], list[int]]:
    """The sizes where the arm's confirmation proves it better, and where worse."""
    c = arm.confirmation
    if c is None:
        return [], []
    return ([s for s, b in zip(arm.confirmed_sizes, c.better) if b],
            [s for s, w in zip(arm.confirmed_sizes, c.worse) if w])


def span_sizes(arm: Arm) -> list[int]:
    """The sizes a confirmed value is recommended at: those of its confirmation's span ([] where not confirmed)."""
    c = arm.confirmation
    return [] if c is None or c.span is None else arm.confirmed_sizes[c.span[0]:c.span[1] + 1]


@dataclass(frozen=True)
class Range:
    """Sizes ``low``..``high`` of a path where one arm is best: its settings, per size its gain over the defaults and
    both figures (for a confirmed value, from the confirmation launches alone); for a confirmed value, its gain
    (Confirmation.gain over the sizes of its span, ``span``) with its interval, and the sizes where it is proven
    worse (a mixed value)."""
    low: int
    high: int
    arm: str  # DEFAULTS where no value was confirmed better
    settings: dict[str, str]
    sizes: tuple[tuple[int, float, ArmFigure | None, ArmFigure], ...]  # (size, gain, the arm's figure, the defaults')
    gain: float = 1.0
    gain_low: float | None = None
    gain_high: float | None = None
    span: tuple[int, int] | None = None
    worse: tuple[int, ...] = ()


def _oriented(race: Race, arm: Arm, size: int) -> float:
    r = arm.confirmation.ratios[arm.confirmed_sizes.index(size)].value
    return r if race.higher_is_better else 1 / r


def _best_confirmed(race: Race, confirmed: list[Arm], size: int) -> Arm | None:
    """Of the confirmed values whose span covers ``size``, the one of largest gain (Confirmation.gain: one choice for
    all its sizes, not the noise of one size); the combination only where its gain lies beyond that one's interval
    (a setting that adds nothing is not recommended)."""
    good = [a for a in confirmed if size in span_sizes(a)]
    best = max((a for a in good if a.key != COMBINED), key=lambda a: a.confirmation.gain, default=None)
    together = next((a for a in good if a.key == COMBINED), None)
    if together is not None and (best is None or together.confirmation.gain > (gain_interval(race, best)[1] or math.inf)):
        return together
    return best


def recommendation(race: Race) -> list[Range]:
    """Per size the confirmed value (inference.confirm on its fresh launches) whose span covers it (_best_confirmed),
    else the defaults; consecutive sizes with the same arm make one range."""
    confirmed = [a for a in race.arms if a.key != DEFAULTS and a.state != "broken" and span_sizes(a)]
    ranges: list[Range] = []
    for size in race.sizes:
        best = _best_confirmed(race, confirmed, size)
        if best is None:
            d = race.defaults.figures[size]
            entry, key = (size, 1.0, d, d), DEFAULTS
        else:
            entry, key = (size, _oriented(race, best, size), best.fresh_figures.get(size),
                          race.defaults.fresh_figures[size]), best.key
        if ranges and ranges[-1].arm == key:
            ranges[-1] = replace(ranges[-1], high=size, sizes=ranges[-1].sizes + (entry,))
        elif best is None:
            ranges.append(Range(size, size, DEFAULTS, {}, (entry,)))
        else:
            low, high = gain_interval(race, best)
            span = span_sizes(best)
            ranges.append(Range(size, size, best.key, dict(best.settings), (entry,), best.confirmation.gain, low, high,
                                (span[0], span[-1]), tuple(proven_sizes(best)[1])))
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
    """A knob value's effect in words. From its confirmation (fresh launches, corrected for every value x size the
    race tried): "better" (recommended), "mixed" (better at some sizes, proven worse at others), "worse". Otherwise
    no claim: "selected, not confirmed" (the budget ran out before its confirmation, or its fresh launches did not
    confirm it), "cut early: no claim" (the selection stopped racing it: what its launches suggested is said beside,
    see cut_saw), "broken", "not measured" (nothing to set beside the defaults)."""
    if arm.state == "broken":
        return "broken"
    c = arm.confirmation
    if c is not None and c.mixed:
        return "mixed"
    if c is not None and c.recommended:
        return "better"
    if c is not None and any(c.worse):
        return "worse"
    if arm.selected and arm.state != "failed":
        return "selected, not confirmed"
    if arm.state in ("failed", "unmeasured") or not compared_with_defaults(race, arm):
        return "not measured"
    return "cut early: no claim"


def cut_saw(race: Race, arm: Arm) -> str:
    """What a value's selection launches suggested, no claim: "looked better at 1M in 2 launches", "looked worse at
    8 in 1 launch", "no difference seen in 1 launch" ("" where it was not measured beside the defaults)."""
    if not compared_with_defaults(race, arm):
        return ""
    n = arm.launches - arm.fresh_launches  # the selection's launches (the figures hold the fresh ones too)
    launches = f"in {n} launch{'es' if n != 1 else ''}"
    change, at = largest_change(race, arm)
    signs = {apart(race, arm, s) for s in arm.figures}
    fresh = (f"; {arm.fresh_launches} fresh launches proved it neither better nor worse"
             if arm.confirmation is not None else "")
    if at is None or signs == {0}:
        return f"no difference seen {launches}{fresh}"
    look = "better" if change > 1 and 1 in signs else "worse" if change < 1 and -1 in signs else \
        "better" if 1 in signs else "worse"
    return f"looked {look} {launches}{fresh}"

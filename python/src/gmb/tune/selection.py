# SPDX-License-Identifier: BSD-3-Clause
"""The selection of a `gmb tune` search, apart from running anything: which knob values go on after a round, which
are selected for confirmation and which combine, and what a value's selection launches suggested (no claim).

A round gives every arm still racing one more launch (its points at adaptive precision); after it, an arm whose
median beats the defaults' interval at no size is cut (no effect, or worse), and of the others the better half by
best gain goes on (successive halving), as many as the time left allows (plan_round). After MIN_LAUNCHES launches the
values still beating the defaults somewhere are selected, the most promising MAX_CANDIDATES per race, with the best
value of each knob together where they set two knobs or more (select). The defaults are measured in every round,
never cut. These are screens of what to measure next, cheap and lenient, never claims: a claim rests on fresh
launches that played no part in selecting the value (confirmation.py)."""

from __future__ import annotations

import math

from .races import COMBINED, DEFAULTS, Arm, ArmFigure, Race, best_gain, compared_with_defaults, gain, largest_change

MIN_LAUNCHES = 3  # selection launches an arm needs before it can be selected
MAX_CANDIDATES = 3  # values of one race selected for confirmation, the most promising first


def looks_ahead(a: ArmFigure, b: ArmFigure, higher_is_better: bool) -> bool:
    """Whether ``a``'s interval lies wholly on the better side of ``b``'s; never where either has no interval (None).
    The selection's screen, not a claim (a claim between two figures is confirmation.proven_ahead: the interval of
    their ratio over the launches excludes 1): a selection figure is often of one launch, its interval then of that
    launch's samples, which proven_ahead (two launches a side) cannot weigh at all. It only chooses which cut values
    are measured again to prove a knob can make things worse (worst_per_knob) and words what the selection saw
    (cut_saw)."""
    if None in (a.low, a.high, b.low, b.high):
        return False
    return a.low > b.high if higher_is_better else a.high < b.low


def looks_apart(race: Race, arm: Arm, size: int) -> int:
    """+1 where ``arm``'s interval lies wholly on the better side of the defaults' (looks_ahead, a screen), -1 on the
    worse side, 0 where they overlap (or either is missing)."""
    a, d = arm.figures.get(size), race.defaults.figures.get(size)
    if a is None or d is None:
        return 0
    return 1 if looks_ahead(a, d, race.higher_is_better) else -1 if looks_ahead(d, a, race.higher_is_better) else 0


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


def worst_per_knob(race: Race) -> list[Arm]:
    """Per knob, the value cut after it looked worse than the defaults (intervals apart at some size) that lost the
    most: what to measure again to prove the knob matters."""
    worst: dict[str, tuple[float, Arm]] = {}
    for a in race.arms:
        if a.state != "cut" or not a.knob or not any(looks_apart(race, a, s) < 0 for s in a.figures):
            continue
        loss = min((g for s in a.figures if (g := gain(race, a, s)) is not None), default=1.0)
        if a.knob not in worst or loss < worst[a.knob][0]:
            worst[a.knob] = (loss, a)
    return [a for _, a in worst.values()]


def cut_saw(race: Race, arm: Arm) -> str:
    """What a value's selection launches suggested, no claim: "looked better at 1M in 2 launches", "looked worse at
    8 in 1 launch", "no difference seen in 1 launch" ("" where it was not measured beside the defaults)."""
    if not compared_with_defaults(race, arm):
        return ""
    n = arm.launches - arm.fresh_launches  # the selection's launches (the figures hold the fresh ones too)
    launches = f"in {n} launch{'es' if n != 1 else ''}"
    change, at = largest_change(race, arm)
    signs = {looks_apart(race, arm, s) for s in arm.figures}
    fresh = (f"; {arm.fresh_launches} fresh launches proved it neither better nor worse"
             if arm.confirmation is not None else "")
    if at is None or signs == {0}:
        return f"no difference seen {launches}{fresh}"
    look = "better" if change > 1 and 1 in signs else "worse" if change < 1 and -1 in signs else \
        "better" if 1 in signs else "worse"
    return f"looked {look} {launches}{fresh}"

# SPDX-License-Identifier: BSD-3-Clause
"""The search of `gmb tune` run within the budget: the selection's rounds, then the confirmation's rounds of fresh
launches, each round's launches run by the Tuner (tuner.py). Which values each round launches, which go on and win:
selection.py; what the fresh launches prove: confirmation.py."""

from __future__ import annotations

import sys

from .confirmation import CONFIRM_LAUNCHES
from .races import DEFAULTS, Arm, Race, best_gain
from .selection import MAX_CANDIDATES, MIN_LAUNCHES, cut_losers, plan_round, select, worst_per_knob
from .tuner import Tuner


def search(tuner: Tuner, races: list[Race], compared: set[int]) -> int:
    """Selection, then confirmation. Selection: first every knob value once beside the defaults; those no better
    anywhere are cut. Then, until the leaders have MIN_LAUNCHES launches, the better half of each race
    (selection.plan_round), as many as the time left allows spread over the rounds to go, the confirmation's share
    kept (_reserve, at most half of what is left). The values still ahead are selected (selection.select, with the
    best of two knobs or more together). Confirmation: fresh launches of each selected value and of its race's
    defaults, interleaved (_confirm); then, while time is left, each knob's worst value the same way, so that "worse"
    is proven too. Returns the rounds run. ``compared``: the races whose defaults are set beside another
    configuration's of the same installation (measured MIN_LAUNCHES times even when no knob races)."""
    first = sum(len(race.arms) for race in races) * tuner.launch_estimate()
    if first > 0.5 * tuner.left():
        print(f"gmb tune: warning: the first round alone takes about {first:.0f} s of the {max(tuner.left(), 0):.0f} "
              f"s budget: little is left to select and confirm a gain (a larger --budget, fewer --paths or --knobs)",
              file=sys.stderr)
    tuner.run_round(0, [(race, arm) for race in races for arm in race.arms])
    tuner.update_figures(races)
    for race in races:
        cut_losers(race)
    _say_round(0, races, tuner)
    number = 1
    while number < MIN_LAUNCHES and not tuner.cut_short:
        # the confirmation's share kept aside: what it may need, at most half of what is left
        spare = 0.9 * tuner.left() - min(_reserve(races) * tuner.launch_estimate(), 0.5 * tuner.left())
        affordable = int(max(0.0, spare) / tuner.launch_estimate() / (MIN_LAUNCHES - number))
        work = plan_round(races, number, affordable, compared)
        if not work:
            break
        tuner.run_round(number, work)
        tuner.update_figures(races)
        for race in races:
            cut_losers(race)
        _say_round(number, races, tuner)
        number += 1
    selected = [(race, arm) for race in races if not race.note for arm in select(race)]
    number = _confirm(tuner, races, number, selected)
    return _confirm(tuner, races, number, [(race, arm) for race in races if not race.note
                                           for arm in worst_per_knob(race)])


def _reserve(races: list[Race]) -> int:
    """The launches the confirmation will need, at most: per race still racing, CONFIRM_LAUNCHES launches of its
    defaults and of each value it may select (MAX_CANDIDATES, and their combination)."""
    need = 0
    for race in races:
        racing = len([a for a in race.racing() if a.key != DEFAULTS])
        if racing and not race.note:
            need += CONFIRM_LAUNCHES * (1 + min(racing, MAX_CANDIDATES) + (racing > 1))
    return need


def _confirm(tuner: Tuner, races: list[Race], number: int, arms: list[tuple[Race, Arm]]) -> int:
    """Fresh launches of ``arms`` (race, arm) and of their races' defaults: CONFIRM_LAUNCHES rounds, each launching
    every one once in random order (the values and their defaults interleaved). Taken the most promising first, as
    many as the time left allows for all their launches; the others say why they were not confirmed. Returns the
    next round's number."""
    arms = sorted(((race, arm) for race, arm in arms if arm.state != "broken"),
                  key=lambda ra: best_gain(*ra)[0], reverse=True)
    fits = tuner.left() / tuner.launch_estimate()
    chosen: list[tuple[Race, Arm]] = []
    with_defaults: dict[int, Race] = {}
    left_out = False  # a value the time left cannot confirm: the budget ran out, once those that fit are confirmed
    for race, arm in arms:
        cost = CONFIRM_LAUNCHES * (len(chosen) + len(with_defaults) + 1 + (id(race) not in with_defaults))
        if tuner.cut_short or cost > fits:
            arm.why = arm.why or "the budget ran out before its confirmation"
            left_out = True
            continue
        chosen.append((race, arm))
        with_defaults[id(race)] = race
    for _ in range(CONFIRM_LAUNCHES if chosen else 0):
        if tuner.cut_short:
            break
        tuner.run_round(number, [(race, race.defaults) for race in with_defaults.values()] + chosen, confirming=True)
        tuner.update_figures(races)
        number += 1
    tuner.cut_short = tuner.cut_short or left_out
    for race, arm in chosen:
        if arm.confirmation is None and arm.state != "broken":
            arm.why = arm.why or "the budget ran out before its confirmation launches"
    _say_confirmed(chosen, tuner)
    return number


def _say_confirmed(chosen: list[tuple[Race, Arm]], tuner: Tuner) -> None:
    if chosen:
        better = sum(bool(arm.confirmation and arm.confirmation.recommended) for _, arm in chosen)
        worse = sum(bool(arm.confirmation and any(arm.confirmation.worse)) for _, arm in chosen)
        print(f"gmb tune: confirmation of {len(chosen)} value(s) on fresh launches: {better} proven better, {worse} "
              f"proven worse somewhere; {len(tuner.owner)} launches, {max(0.0, tuner.left()):.0f} s left",
              file=sys.stderr)


def _say_round(number: int, races: list[Race], tuner: Tuner) -> None:
    racing = sum(len(r.racing()) - 1 for r in races)
    broken = sum(a.state == "broken" for r in races for a in r.arms)
    print(f"gmb tune: round {number + 1}: {racing} knob value(s) still racing, {broken} broken; "
          f"{len(tuner.owner)} launches, {max(0.0, tuner.left()):.0f} s left", file=sys.stderr)

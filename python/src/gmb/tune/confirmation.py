# SPDX-License-Identifier: BSD-3-Clause
"""The confirmation of a `gmb tune` search, apart from running anything: what fresh launches prove of a selected
value, what is recommended per size range, a value's verdict, and whether one figure is proven ahead of another.

Fresh launches of each selected value and of the defaults, interleaved in the same rounds, which played no part in
selecting it, decide with claim_checks.confirm, Holm over every value x size the race tried (tried): only a confirmed
value is recommended, and its gain is that of the confirmation launches alone. A claim between two figures outside a
confirmation (configurations compared at their defaults, an answer checked against a run) is proven_ahead. Both rest
on the one decision every claim of the harness makes: the interval of a ratio over launches excludes 1
(inference.ratio)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..results.claim_checks import bonferroni_level, confirm
from ..results.inference import LEVEL, ratio
from .races import COMBINED, DEFAULTS, Arm, ArmFigure, Race, compared_with_defaults

CONFIRM_LAUNCHES = 6  # fresh launches of a selected value and of the defaults that confirm it (or not)


def proven_ahead(a, b, higher_is_better: bool, level: float = LEVEL) -> bool:
    """Whether ``a`` is proven better than ``b`` (each an ArmFigure or a points.Point: its launches' ``values`` and
    ``noise``): the ``level`` interval of their ratio over the launches excludes 1 on the better side
    (inference.ratio, the test of the report's cells.difference; the report adds its blockers and false discovery
    rate, here the caller corrects ``level`` for the claims made together); never from fewer than 2 launches a
    side."""
    if len(a.values) < 2 or len(b.values) < 2:
        return False
    return ratio(a.values, b.values, a.noise, b.noise, level=level).apart == (1 if higher_is_better else -1)


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
    """The arm's confirmation (claim_checks.confirm) from its fresh launches against the defaults', Holm over every
    value x size the race tried; None where either side has fewer than two fresh launches at the sizes both
    measured."""
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
    sizes, with the launch noise the decision pooled (claim_checks.confirm), so that the interval excludes no gain
    the decision proved: each size of the span is proven better with that noise, and so is their mean.
    (None, None) where it has none."""
    c = arm.confirmation
    if c is None or c.span is None:
        return None, None
    sizes = arm.confirmed_sizes[c.span[0]:c.span[1] + 1]
    r = ratio(_launch_means(arm.fresh, sizes), _launch_means(race.defaults.fresh, sizes), c.noise_value,
              c.noise_defaults, level=bonferroni_level(tried(race)))
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
    if together is not None and (best is None or
                                 together.confirmation.gain > (gain_interval(race, best)[1] or math.inf)):
        return together
    return best


def recommendation(race: Race) -> list[Range]:
    """Per size the confirmed value (claim_checks.confirm on its fresh launches) whose span covers it
    (_best_confirmed), else the defaults; consecutive sizes with the same arm make one range."""
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


def verdict(race: Race, arm: Arm) -> str:
    """A knob value's effect in words. From its confirmation (fresh launches, corrected for every value x size the
    race tried): "better" (recommended), "mixed" (better at some sizes, proven worse at others), "worse". Otherwise
    no claim: "selected, not confirmed" (the budget ran out before its confirmation, or its fresh launches did not
    confirm it), "cut early: no claim" (the selection stopped racing it: what its launches suggested is said beside,
    see selection.cut_saw), "broken", "not measured" (nothing to set beside the defaults)."""
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

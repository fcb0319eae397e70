# SPDX-License-Identifier: BSD-3-Clause
"""What a `gmb tune` search is made of, apart from running anything: one race per library configuration and path, its
arms (the defaults, each knob value alone, the combination of the selected values) with their figures per size, an
arm's gain over the defaults, and the states a failed or never compared arm ends in. Which arms go on and win:
selection.py; what their fresh launches prove: confirmation.py."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..campaign.spec import Block
from ..results.claim_checks import Confirmation
from ..results.inference import LaunchNoise

DEFAULTS = "defaults"
COMBINED = "combined"


@dataclass(frozen=True)
class ArmFigure:
    """One arm at one size: its figure over its launches and its launch-to-launch interval
    (points.point_figure)."""
    median: float
    low: float | None  # None: no interval (one launch of fewer than 6 samples)
    high: float | None
    launches: int
    values: tuple[float, ...] = ()  # each launch's median (points.Point.values): what a claim between arms rests on
    noise: LaunchNoise | None = None  # the launch noise its interval rests on (points.Point.noise)


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

# SPDX-License-Identifier: BSD-3-Clause
"""`gmb tune`'s search proven by simulation: its own functions (selection.cut_losers, plan_round, select;
confirmation.confirm_arm, recommendation, verdict) on simulated launches with realistic launch noise (log-normal, 3 %,
half shared by the sizes of a launch, within-launch noise, a few slow outlier launches), deterministic seeds, no
timing. Sessions of 10 races x
80 values all equal to the defaults make a false recommendation (or say "better") in at most 5 % of sessions; a real
+10 % value is found and its printed gain is unbiased; a selected value its fresh launches do not confirm is not
recommended; a value better at some sizes and worse at others is reported as mixed; a cut value is never "better"."""

import math
from functools import lru_cache

import numpy as np
import pytest

from gmb.campaign.spec import Block
from gmb.results.t_distribution import t_quantile
from gmb.tune import confirmation, selection
from gmb.tune.races import COMBINED, DEFAULTS, Arm, ArmFigure, Race

SIZES = (8, 1024, 65536, 1 << 20, 4 << 20)
TRUTH = np.array([0.002, 0.5, 9.0, 20.0, 22.0])  # GB/s per size
NOISE = 0.03  # launch-to-launch, on log scale
WITHIN = 0.01  # a launch's own median, sample to sample
OUTLIERS = 0.02  # the chance of a launch being 15 % slow at every size


class Machine:
    """Simulated launches: ``factors[key]`` per size is an arm's true effect (1.0: equal to the defaults)."""

    def __init__(self, rng, factors=None):
        self.rng, self.factors, self.launched = rng, factors or {}, 0

    def launch(self, key: str) -> dict[int, float]:
        rng = self.rng
        logs = (np.log(TRUTH * self.factors.get(key, 1.0)) + rng.normal(0, NOISE * math.sqrt(0.5))
                + rng.normal(0, NOISE * math.sqrt(0.5), len(SIZES)) + rng.normal(0, WITHIN, len(SIZES))
                - (math.log1p(0.15) if rng.random() < OUTLIERS else 0.0))
        self.launched += 1
        return dict(zip(SIZES, np.exp(logs).tolist()))


@lru_cache(maxsize=None)
def _t(df: int) -> float:
    return t_quantile(0.975, df)


def selection_figures(launches: list[dict[int, float]]) -> dict[int, ArmFigure]:
    """An arm's figures from its selection launches as the model computes them, in short: one launch, its median with
    its within-launch interval; several, the geometric mean with the t interval of the launch noise pooled over the
    arm's sizes. (The guarantee rests on the confirmation's fresh launches alone, whatever the selection saw.)"""
    logs = np.log(np.array([[launch[s] for s in SIZES] for launch in launches]))
    n = len(launches)
    mean = logs.mean(axis=0)
    if n == 1:
        half = np.full(len(SIZES), 1.96 * WITHIN)
    else:
        pooled = ((logs - mean) ** 2).sum() / ((n - 1) * len(SIZES))
        half = np.full(len(SIZES), _t((n - 1) * len(SIZES)) * math.sqrt(pooled / n))
    return {s: ArmFigure(math.exp(m), math.exp(m - h), math.exp(m + h), n) for s, m, h in zip(SIZES, mean, half)}


def new_race(values: int, name: str = "race") -> Race:
    race = Race("sim", name, "host", Block(["bw"]), True, "bw", [Arm(DEFAULTS, {})])
    race.arms += [Arm(f"K{v // 4}={v}", {f"K{v // 4}": str(v)}, f"K{v // 4}") for v in range(values)]
    return race


def run_search(races: list[Race], machine: Machine) -> None:
    """The harness's search on simulated launches, time no object: round 1 every arm, then the better half to
    MIN_LAUNCHES launches (selection.plan_round), the values still ahead selected (selection.select) and confirmed on
    CONFIRM_LAUNCHES fresh launches of each and of the defaults (confirmation.confirm_arm)."""
    seen: dict[int, list] = {}

    def launch_round(work):
        for race, arm in work:
            seen.setdefault(id(arm), []).append(machine.launch(arm.key))
            arm.figures = selection_figures(seen[id(arm)])
        for race in races:
            selection.cut_losers(race)

    launch_round([(race, arm) for race in races for arm in race.arms])
    for number in range(1, selection.MIN_LAUNCHES):
        launch_round(selection.plan_round(races, number, 10 ** 6, set()))
    for race in races:
        candidates = selection.select(race)
        for arm in [race.defaults] + candidates:
            for i in range(confirmation.CONFIRM_LAUNCHES):
                launch = machine.launch(arm.key)
                for size in SIZES:
                    arm.fresh.setdefault(size, {})[f"c{i}"] = launch[size]
            arm.fresh_figures = selection_figures([{s: arm.fresh[s][f"c{i}"] for s in SIZES}
                                                   for i in range(confirmation.CONFIRM_LAUNCHES)])
            if arm.key == COMBINED:
                arm.figures = arm.fresh_figures
        for arm in candidates:
            confirmation.confirm_arm(race, arm)


def claims(race: Race) -> set[str]:
    """The values a race recommends or calls better (or mixed)."""
    recommended = {r.arm for r in confirmation.recommendation(race) if r.arm != DEFAULTS}
    return recommended | {a.key for a in race.arms[1:] if confirmation.verdict(race, a) in ("better", "mixed")}


def test_sessions_of_values_equal_to_the_defaults_recommend_nothing_in_at_least_95_percent_of_sessions():
    rng = np.random.default_rng(20261128)
    sessions, false, selected = 80, 0, 0
    for _ in range(sessions):
        races = [new_race(80, f"path {i}") for i in range(10)]
        run_search(races, Machine(rng))
        false += any(claims(race) for race in races)
        selected += sum(a.selected for race in races for a in race.arms)
        for race in races:  # a value selected and not confirmed says so; no cut value is better
            for a in race.arms[1:]:
                assert confirmation.verdict(race, a) in ("cut early: no claim", "selected, not confirmed", "worse")
    assert selected > sessions * 10  # the selection did pick values: the confirmation is what held them back
    # none of 80 (nor of 100 with another seed): the chance is far below 5 %, as the correction over every value x
    # size tried makes it (about 0.3 % per race for the 3 values it confirms of 80)
    assert false / sessions <= 0.05, f"{false} of {sessions} sessions recommended a value no better than the defaults"


def test_a_real_10_percent_gain_is_recommended_with_its_gain_unbiased():
    rng = np.random.default_rng(7)
    found, printed, intervals = 0, [], []
    searches = 30
    for _ in range(searches):
        race = new_race(80)
        run_search([race], Machine(rng, {"K0=0": 1.10}))
        (rec,) = [r for r in confirmation.recommendation(race) if r.arm != DEFAULTS] or [None]
        assert claims(race) <= {"K0=0", COMBINED}
        if rec is not None and rec.arm == "K0=0":
            found += 1
            printed.append(rec.gain)
            intervals.append(rec.gain_low <= 1.10 <= rec.gain_high)
            assert confirmation.verdict(race, race.arm("K0=0")) == "better"
            assert rec.sizes[0][2].launches == confirmation.CONFIRM_LAUNCHES  # its figures: the confirmation launches
    # 6 fresh launches a side, corrected for 400 values x sizes: found in 2 of 3 searches or more (8 launches: 4 of 5)
    assert found / searches >= 0.6, f"found in {found} of {searches} searches"
    assert np.mean(printed) == pytest.approx(1.10, abs=0.02), f"printed gain {np.mean(printed):.4f}"
    assert all(intervals)


def test_a_value_better_at_some_sizes_and_worse_at_others_is_mixed_with_both_ranges():
    rng = np.random.default_rng(3)
    race = new_race(8)
    run_search([race], Machine(rng, {"K0=0": np.array([0.7, 0.7, 1.0, 1.4, 1.4])}))
    arm = race.arm("K0=0")
    assert arm.selected and confirmation.verdict(race, arm) == "mixed"
    assert confirmation.proven_sizes(arm) == ([1 << 20, 4 << 20], [8, 1024])
    (rec,) = [r for r in confirmation.recommendation(race) if r.arm != DEFAULTS]
    assert (rec.low, rec.high, rec.worse) == (1 << 20, 4 << 20, (8, 1024))
    assert rec.gain == pytest.approx(1.4, rel=0.05)


def test_a_selected_value_its_fresh_launches_do_not_confirm_is_not_recommended():
    """A value that looked 30 % better in every selection launch (a lucky start) and equals the defaults on fresh
    launches: selected, not confirmed, the defaults recommended."""
    rng = np.random.default_rng(5)
    race = new_race(4)
    machine = Machine(rng, {"K0=0": 1.3})
    launch = machine.launch

    def lucky_then_equal(key):  # better while the selection looks, equal once it is selected
        return launch(key) if not race.arm("K0=0").selected else dict(zip(SIZES, Machine(rng).launch(key).values()))

    machine.launch = lucky_then_equal
    run_search([race], machine)
    arm = race.arm("K0=0")
    assert arm.selected and arm.confirmation is not None and not arm.confirmation.recommended
    assert confirmation.verdict(race, arm) == "selected, not confirmed"
    assert [r.arm for r in confirmation.recommendation(race)] == [DEFAULTS]


def test_a_cut_value_is_never_better_whatever_its_launches_looked_like():
    race = new_race(2)
    n = 1
    race.defaults.figures = {8: ArmFigure(10, 9.9, 10.1, n)}
    race.arm("K0=0").figures = {8: ArmFigure(30, 29, 31, n)}  # looked 3x better in one launch, then cut (no time)
    race.arm("K0=0").state = "cut"
    race.arm("K0=1").figures = {8: ArmFigure(10, 9.9, 10.1, selection.MIN_LAUNCHES)}
    race.arm("K0=1").state = "cut"
    assert confirmation.verdict(race, race.arm("K0=0")) == "cut early: no claim"
    assert selection.cut_saw(race, race.arm("K0=0")) == "looked better in 1 launch"
    assert selection.cut_saw(race, race.arm("K0=1")) == "no difference seen in 3 launches"
    assert [r.arm for r in confirmation.recommendation(race)] == [DEFAULTS]


def test_a_confirmed_gain_s_interval_never_contradicts_its_decision():
    """The gain a confirmation prints rests on the launch noise its decision pooled over the sizes: a value proven
    better has a gain interval wholly above no gain, even where its one size's launches alone are spread (an
    interval from them alone crossed 1 on a 2-core machine: "+54.6 % [-28.9, +236.1]" for a confirmed value)."""
    import random

    from gmb.campaign.spec import Block
    from gmb.tune.confirmation import confirm_arm, gain_interval
    from gmb.tune.races import DEFAULTS, Arm, Race

    rng = random.Random(3)
    sizes = [8, 1024, 65536, 1 << 20, 1 << 24]
    for trial in range(40):
        defaults, arm = Arm(DEFAULTS, {}), Arm("K=1", {"K": "1"}, knob="K")
        for size in sizes:
            gain = 1.6 if size == sizes[-1] else 1.0
            spread = 0.6 if size == sizes[-1] else 0.05  # the largest size's launches far apart, as on a busy host
            defaults.fresh[size] = {f"d{i}": rng.lognormvariate(0, spread) for i in range(6)}
            arm.fresh[size] = {f"a{i}": gain * rng.lognormvariate(0, spread) for i in range(6)}
        defaults.figures = dict.fromkeys(sizes)  # the sizes the race measured (Race.sizes)
        race = Race("lib", "collective bcast", "collective", Block(["coll"]), True, "busbw", [defaults, arm])
        confirm_arm(race, arm)
        low, high = gain_interval(race, arm)
        if arm.confirmation and arm.confirmation.span:
            assert low is not None and low > 1 and high >= low, (trial, low, high)

# SPDX-License-Identifier: BSD-3-Clause
"""The statistics behind every claim (results/inference.py): quantiles, a point's interval from its launches, ratios
paired and unpaired, fastest of several, multiplicity, a search's confirmation, what blocks a claim, numbers printed
with their digits."""

import math
import random

import pytest

from gmb.results.claim_checks import (BUSY, NO_SPREAD, ONE_LAUNCH, QUANTISED, benjamini_hochberg, bh_adjusted, blockers,
                                      bonferroni_level, confirm, fcr_level, holm, lattice_step, launches_needed)
from gmb.results.significant_digits import ratio_text, significant
from gmb.results.inference import (LaunchNoise, estimate, fastest, launch_noise, paired_differences, paired_noise,
                                   per_launch, precision, ratio, ratio_of_ratios)
from gmb.results.t_distribution import t_cdf, t_quantile

# t(0.975, df) from published tables
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042, 120: 1.980}


@pytest.mark.parametrize("df, t", T975.items())
def test_t_quantile_matches_the_tables(df, t):
    assert t_quantile(0.975, df) == pytest.approx(t, abs=1e-3)
    assert t_quantile(0.025, df) == pytest.approx(-t, abs=1e-3)
    assert t_cdf(t_quantile(0.9, df), df) == pytest.approx(0.9, abs=1e-9)


@pytest.mark.parametrize("df", [0.7, 1.3, 2.5, 4.2, 9.7, 300])
def test_t_quantile_holds_in_the_far_tail_a_correction_asks_for(df):
    for p in (1 - 0.05 / 1600, 1 - 1e-7):
        assert t_cdf(-t_quantile(p, df), df) == pytest.approx(1 - p, rel=1e-8)


def test_t_quantile_takes_fractional_degrees_of_freedom_and_tends_to_the_normal():
    assert t_quantile(0.975, 2) < t_quantile(0.975, 1.5) < t_quantile(0.975, 1)
    assert t_quantile(0.975, 1e6) == pytest.approx(1.95996, abs=1e-4)
    assert t_quantile(0.975, math.inf) == pytest.approx(1.95996, abs=1e-4)
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


# ------------------------------------------------------------------------------------------------- a point's interval
def test_one_launch_gives_no_interval():
    e = estimate([100.0])
    assert (e.value, e.low, e.high, e.launches, e.precision) == (100.0, None, None, 1, None)
    assert [b.kind for b in blockers([100.0])] == [ONE_LAUNCH]


def test_interval_is_the_t_interval_of_the_mean_log_with_pooled_noise():
    noise = LaunchNoise(0.02 ** 2, 40)
    e = estimate([100.0, 104.0], noise)
    centre = math.sqrt(100 * 104)
    half = t_quantile(0.975, 40) * 0.02 / math.sqrt(2)
    assert e.value == pytest.approx(centre)
    assert (e.low, e.high) == pytest.approx((centre * math.exp(-half), centre * math.exp(half)))
    # two launches with pooled noise: a usable interval (+-2.9 %), not the t(1) = 12.7 one of their own spread
    assert e.precision < 0.03
    assert estimate([100.0, 104.0]).precision > 0.2


def test_interval_shrinks_as_launches_are_added_and_never_widens_to_the_launch_range():
    noise = LaunchNoise(0.02 ** 2, 60)
    widths = [estimate([100.0 * (1 + 0.02 * (-1) ** i) for i in range(n)], noise).precision for n in (2, 5, 10, 50)]
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] < 0.006  # 50 launches at 2 % noise: about +-0.57 %, inside the launches' +-2 % range


def test_interval_of_a_positive_quantity_stays_above_zero():
    e = estimate([0.5665, 3.914])  # the launches behind "[-0.5665, 3.914] GB/s"
    assert e.low > 0 and e.high > e.value > e.low


def test_pooled_noise_is_the_sum_of_squares_over_the_degrees_of_freedom():
    points = [[100, 102, 98], [10.0, 10.4], [5.0]]
    logs = [[math.log(x) for x in p] for p in points[:2]]
    ss = sum(sum((x - sum(p) / len(p)) ** 2 for x in p) for p in logs)
    noise = launch_noise(points)
    assert noise.df == 3 and noise.variance == pytest.approx(ss / 3)
    assert launch_noise([[5.0], [7.0]]) is None
    with pytest.raises(ValueError, match="positive"):
        launch_noise([[1.0, 0.0]])


# ----------------------------------------------------------------------------------------------------- differences
def test_a_consistent_4x_difference_is_called_with_its_ratio():
    # managed memory: ucx about 69 us, ob1 about 300 us, launches consistent within a few %
    r = ratio([300.0, 290.0, 310.0], [69.0, 70.0, 68.5])
    assert r.apart == 1 and r.value == pytest.approx(4.3, rel=0.02)
    assert 3.5 < r.low < r.value < r.high < 5.5 and r.p < 0.001


def test_paired_by_round_removes_what_a_round_shared():
    # both sides move together round to round (+-10 %), A 5 % above B in every round
    rounds = [0, 1, 2, 3]
    b = [100.0, 110.0, 90.0, 105.0]
    a = [x * 1.05 for x in b]
    paired = ratio(a, b, rounds_a=rounds, rounds_b=rounds, pair_noise=LaunchNoise(0.005 ** 2, 30))
    welch = ratio(a, b)
    assert paired.paired and not welch.paired
    assert paired.apart == 1 and welch.apart == 0
    assert paired.value == pytest.approx(1.05)


def test_rounds_that_do_not_match_fall_back_to_welch():
    assert paired_differences([1, 2], [0, 1], [1, 2], [0, 2]) is None
    assert paired_differences([1, 2], [0, 0], [1, 2], [0, 0]) is None
    assert paired_differences([1, 2], None, [1, 2], [0, 1]) is None
    assert not ratio([1.0, 1.1], [1.0, 1.2], rounds_a=[0, 1], rounds_b=[1, 2]).paired
    assert paired_noise([[0.01, -0.01], [], [0.02, 0.0]]).df == 2


def test_a_side_of_one_launch_gives_no_ratio_interval():
    r = ratio([10.0], [5.0, 5.1], LaunchNoise(0.01, 20), LaunchNoise(0.01, 20))
    assert r.value == pytest.approx(10 / math.sqrt(5 * 5.1)) and r.low is None and r.p is None and r.apart == 0


def test_swapping_a_and_b_gives_the_reciprocal_ratio_and_the_same_verdict():
    a, b = [10.0, 10.5, 9.8], [12.0, 12.4, 11.9]
    ab, ba = ratio(a, b), ratio(b, a)
    assert ab.value * ba.value == pytest.approx(1)
    assert (ab.low * ba.high, ab.high * ba.low) == pytest.approx((1, 1))
    assert ab.p == pytest.approx(ba.p) and ab.apart == -ba.apart != 0


def test_a_10000x_ratio_is_printed_with_its_digits():
    r = ratio([4000.0, 4100.0, 3950.0], [0.40, 0.41, 0.395])
    assert r.value == pytest.approx(10000, rel=0.01)
    assert ratio_text(10000, 9500, 10623) == "10000x [9500, 10600]"
    assert ratio_text(1 / 10000, 1 / 10600, 1 / 9500) == "0.000100x [0.0000943, 0.000105]"
    assert ratio_text(1.0512, 1.0498, 1.0526) == "1.051x [1.050, 1.053]"
    assert ratio_text(2.5) == "2.50x"


def test_significant_digits_never_cut_the_integer_part():
    assert (significant(10623), significant(0.0001234), significant(1.0), significant(123456)) == \
           ("10600", "0.000123", "1.00", "123000")


def test_precision_is_half_the_log_width():
    assert precision(100 / 1.03, 103) == pytest.approx(0.03)
    e = estimate([100.0, 101.0, 99.0])
    assert e.precision == pytest.approx(math.sqrt(e.high / e.low) - 1)


def test_fastest_of_three_needs_to_be_apart_from_every_other():
    noise = LaunchNoise(0.01 ** 2, 60)
    a, b, c = [10.0, 10.1, 9.9], [12.0, 12.1, 11.9], [10.05, 10.15, 9.95]  # c overlaps a; b is far behind
    f = fastest([a, b, c], lower_is_better=True, noises=[noise] * 3)
    assert f.index == 0 and f.ratios[0] is None
    assert f.ratios[1].apart == -1 and f.ratios[2].apart == 0 and not f.proven
    assert f.p == pytest.approx(f.ratios[2].p)
    clear = fastest([a, b, [11.0, 11.1, 10.9]], lower_is_better=True, noises=[noise] * 3)
    assert clear.proven and clear.p == max(clear.ratios[1].p, clear.ratios[2].p)
    assert fastest([a, b], lower_is_better=False).index == 1
    # paired by round, each pair's noise pooled elsewhere: the comparisons are ratio's, paired
    rounds = [[0, 1, 2]] * 3
    paired = fastest([a, b, c], True, rounds=rounds, pair_noises={(2, 0): LaunchNoise(0.001 ** 2, 30)})
    assert paired.ratios[2].paired and paired.ratios[2].apart == -1


# ------------------------------------------------------------------------------------------------------ many claims
def test_benjamini_hochberg_matches_its_definition():
    p = [0.01, 0.04, 0.03, 0.20, 0.005]
    assert bh_adjusted(p) == pytest.approx([0.025, 0.05, 0.05, 0.20, 0.025])
    assert benjamini_hochberg(p) == [True, True, True, False, True]
    assert benjamini_hochberg(p, q=0.01) == [False, False, False, False, False]
    assert fcr_level(4, 5) == pytest.approx(0.96)


def test_holm_counts_every_test_the_search_tried():
    p = [0.0005, 0.01, 0.03]
    assert holm(p) == [True, True, True]
    assert holm(p, tried=80) == [True, False, False]  # 0.0005 <= 0.05/80; 0.01 > 0.05/79
    assert holm([0.04, 0.001]) == [True, True]
    assert bonferroni_level(80) == pytest.approx(1 - 0.05 / 80)


# --------------------------------------------------------------------------------------------- a search's confirmation
def _flat(n, value, spread=0.01):
    return [value * (1 + spread * ((i % 3) - 1)) for i in range(n)]


def test_a_value_better_everywhere_is_recommended_with_the_gain_of_its_confirmation():
    sizes = 4
    defaults = [_flat(5, 10.0) for _ in range(sizes)]
    value = [_flat(5, 12.0) for _ in range(sizes)]
    c = confirm(value, defaults, higher_is_better=True, tried=80)
    assert c.recommended and not c.mixed and c.span == (0, 3)
    assert c.gain == pytest.approx(1.2)
    assert all(r.low > 1 for r in c.ratios)


def test_a_mixed_sign_value_names_both_ranges_and_is_recommended_only_where_better():
    defaults = [_flat(5, 10.0) for _ in range(4)]
    value = [_flat(5, 12.0), _flat(5, 12.0), _flat(5, 10.0), _flat(5, 8.0)]
    c = confirm(value, defaults, higher_is_better=True, tried=80)
    assert c.mixed and c.better == [True, True, False, False] and c.worse == [False, False, False, True]
    assert c.span == (0, 1) and c.gain == pytest.approx(1.2)
    # a time: lower is better, the gain is the speed ratio
    t = confirm([_flat(5, 8.0)], [_flat(5, 10.0)], higher_is_better=False, tried=1)
    assert t.better == [True] and t.gain == pytest.approx(1.25)


def test_a_value_no_better_than_the_defaults_is_never_recommended():
    defaults = [_flat(5, 10.0) for _ in range(3)]
    c = confirm([_flat(5, 10.02) for _ in range(3)], defaults, higher_is_better=True, tried=80)
    assert not c.recommended and c.gain == 1.0 and not any(c.better)
    with pytest.raises(ValueError, match="same sizes"):
        confirm([_flat(5, 1.0)], [], higher_is_better=True, tried=1)


# ---------------------------------------------------------------------------------------- claims that cannot be made
def test_busy_launches_block_a_claim():
    b = blockers([10.0, 10.2, 10.1], busy=2)
    assert [(x.kind, x.count, x.of) for x in b] == [(BUSY, 2, 3)]


def test_samples_on_a_4ms_tick_are_quantised():
    samples = [4000.0] * 12 + [8000.0] * 3 + [12000.0]
    assert lattice_step(samples) == pytest.approx(4000)
    b = blockers([4000.0, 4000.0, 8000.0, 4000.0])
    assert [(x.kind, x.step) for x in b] == [(QUANTISED, 4000.0)]
    b = blockers([4001.3, 3990.2], samples=samples)
    assert [(x.kind, x.step) for x in b] == [(QUANTISED, 4000.0)]
    assert [x.kind for x in blockers([4000.0, 4000.0, 4000.0])] == [NO_SPREAD]


def test_measurements_that_resolve_the_work_are_not_quantised():
    import random
    rng = random.Random(3)
    samples = [10.0 * math.exp(rng.gauss(0, 0.01)) for _ in range(50)]
    assert lattice_step(samples) is None
    assert blockers([10.0, 10.1, 9.95], samples=samples) == []


def test_launches_needed_to_settle_a_difference():
    noise = LaunchNoise(0.03 ** 2, 200)
    n = launches_needed(1.10, noise, noise)
    # normal approximation: (1.96 + 0.84)^2 * 2 * 0.03^2 / log(1.1)^2 = 1.6: at least 2 launches
    assert n == 2
    small = launches_needed(1.02, noise, noise)
    assert small == math.ceil(2 * 0.03 ** 2 * ((t_quantile(0.975, 400) + t_quantile(0.8, 400)) / math.log(1.02)) ** 2)
    assert launches_needed(1.0, noise, noise) is None


def test_points_of_the_same_launches_do_not_pass_a_shared_launch_effect_for_independent_evidence():
    # two launches, eight sizes: the second launch 5 % slower at every size (a shared effect), sizes otherwise exact
    shared = [{"l1": 10.0 * 2 ** s, "l2": 10.5 * 2 ** s} for s in range(8)]
    noise = launch_noise(shared)
    assert noise.df == pytest.approx(1.0)  # one launch-to-launch difference seen, not eight
    assert noise.variance == pytest.approx(math.log(1.05) ** 2 / 2)
    # the same values as plain sequences: launches unknown, taken as independent (1 df per point)
    assert launch_noise([list(p.values()) for p in shared]).df == 8
    # effects that differ from size to size and launch to launch: close to S (n - 1) degrees of freedom
    import random
    rng = random.Random(5)
    independent = [{f"l{j}": 10.0 * math.exp(rng.gauss(0, 0.03)) for j in range(5)} for _ in range(8)]
    assert launch_noise(independent).df > 16


def test_a_launch_missing_a_size_puts_that_size_in_a_group_of_its_own():
    points = [{"l1": 10.0, "l2": 10.2, "l3": 9.9}, {"l1": 20.0, "l2": 20.3, "l3": 19.8}, {"l1": 5.0, "l3": 5.1}]
    noise = launch_noise(points)
    two = launch_noise(points[:2])
    one = launch_noise(points[2:])
    assert noise.df == pytest.approx(two.df + one.df)
    assert noise.variance == pytest.approx((two.variance * two.df + one.variance * one.df) / noise.df)


def test_a_launch_that_measured_a_point_twice_counts_once():
    # a run with references (or --chunks 4,4) writes two records of one point in one launch: one launch, no interval
    values = per_launch([("launch-1", 10.0), ("launch-1", 10.4)])
    assert list(values) == ["launch-1"] and values["launch-1"] == pytest.approx(math.sqrt(104))
    assert estimate(list(values.values())).low is None
    two = per_launch([("a", 10.0), ("b", 10.4), ("a", 10.0)])
    assert len(two) == 2 and estimate(list(two.values())).low is not None
    assert len(per_launch([(None, 1.0), (None, 2.0)])) == 2


def test_a_size_proven_worse_between_better_ones_splits_the_recommended_range():
    defaults = [_flat(5, 10.0) for _ in range(5)]
    value = [_flat(5, 12.0), _flat(5, 10.0), _flat(5, 8.0), _flat(5, 12.0), _flat(5, 12.0)]
    c = confirm(value, defaults, higher_is_better=True, tried=80)
    assert c.better == [True, False, False, True, True] and c.worse == [False, False, True, False, False]
    assert c.mixed and c.span == (3, 4) and c.gain == pytest.approx(1.2)


def test_a_ratio_of_two_growths_holds_its_level_and_finds_a_real_difference():
    """Two configurations' growths (time at 2 nodes / at 1), 3 launches a point at 3 % launch noise: with equal
    growths the ratio of ratios' 95 % interval excludes 1 in about 5 % of trials; a growth 15 % lower is found in
    most."""
    rng = random.Random(7)

    def launches(centre):
        return [centre * math.exp(rng.gauss(0, 0.03)) for _ in range(3)]

    def called(growth_a, growth_b):
        ga = ratio(launches(10 * growth_a), launches(10.0))
        gb = ratio(launches(10 * growth_b), launches(10.0))
        return ratio_of_ratios(ga, gb).apart != 0

    trials = 2000
    false = sum(called(1.2, 1.2) for _ in range(trials)) / trials
    assert 0.03 < false < 0.07
    assert sum(called(1.2 * 0.85, 1.2) for _ in range(500)) / 500 > 0.6
    # without an interval on either side, no interval and no claim
    one = ratio([12.0], [10.0])
    assert ratio_of_ratios(one, ratio(launches(12), launches(10))).low is None

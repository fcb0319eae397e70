# SPDX-License-Identifier: BSD-3-Clause
"""The claim rules of results/inference.py proven by simulation, with deterministic seeds: realistic launch noise
(log-normal launch effects of 2-5 %, part shared by all sizes of a launch, part by all configurations of a
repetition round, within-launch noise, a few slow outlier launches). A report of equal configurations makes a false
"different" or "fastest" claim in at most 5 % of reports; a true 10 % difference is found with 80 % power or more at
5 launches and 3 % launch noise; a tune-like search (10 races x 80 values x sizes) that selects on some launches and
confirms on fresh ones makes a false recommendation in at most 5 % of sessions, finds a real +5 % gain and prints it
without the winner's curse."""

import math

import numpy as np

from gmb.results.claim_checks import benjamini_hochberg, confirm
from gmb.results.inference import fastest, launch_noise, paired_differences, paired_noise, ratio

OUTLIER_SLOWDOWN = 0.15  # an outlier launch: every size 15 % slow (another job, a cold cache)


def launches(rng, truth, n, sigma, rounds_effect=None, within=0.01, outliers=0.05):
    """Launch values [launch][size] of one configuration: ``truth`` per size times log-normal launch effects of
    ``sigma`` (half shared by the sizes of a launch, half per point), within-launch noise, slow outlier launches and
    the round's shared effect; ``outliers``: the chance of a launch being an outlier."""
    sizes = len(truth)
    logs = (np.log(truth)[None, :] + rng.normal(0, sigma * math.sqrt(0.5), (n, 1))
            + rng.normal(0, sigma * math.sqrt(0.5), (n, sizes)) + rng.normal(0, within, (n, sizes))
            + np.where(rng.random((n, 1)) < outliers, math.log1p(OUTLIER_SLOWDOWN), 0.0))
    if rounds_effect is not None:
        logs += rounds_effect[:, None]
    return np.exp(logs)


def report_claims(configs, lower_is_better=True):
    """The report's claim rule over several configurations (each [launch][size], launch i in round i): per size every
    pairwise ratio (paired by round, the pair's noise pooled over its sizes) and "fastest" (apart from every other),
    Benjamini-Hochberg over all of the report's claims. Returns the claims made: ("pair", size, i, j, sign) and
    ("fastest", size, i)."""
    count, sizes = len(configs), configs[0].shape[1]
    rounds = list(range(configs[0].shape[0]))
    noises = [launch_noise([dict(enumerate(c[:, s])) for s in range(sizes)]) for c in configs]
    pair_noise = {}
    for i in range(count):
        for j in range(i + 1, count):
            pair_noise[i, j] = paired_noise(paired_differences(configs[i][:, s], rounds, configs[j][:, s], rounds)
                                            for s in range(sizes))
    claims, pvalues = [], []
    for s in range(sizes):
        columns = [c[:, s].tolist() for c in configs]
        for i in range(count):
            for j in range(i + 1, count):
                r = ratio(columns[i], columns[j], rounds_a=rounds, rounds_b=rounds, pair_noise=pair_noise[i, j])
                claims.append(("pair", s, i, j, 1 if r.value > 1 else -1))
                pvalues.append(r.p)
        f = fastest(columns, lower_is_better, noises, [rounds] * count, pair_noise)
        if f.proven:
            claims.append(("fastest", s, f.index))
            pvalues.append(f.p)
    return [c for c, made in zip(claims, benjamini_hochberg(pvalues)) if made]


def test_a_report_of_equal_configurations_makes_a_false_claim_in_at_most_5_percent_of_reports():
    rng = np.random.default_rng(20261128)
    reports, false = 600, 0
    for _ in range(reports):
        n = int(rng.choice([2, 3, 5]))
        rounds_effect = rng.normal(0, 0.01, n)
        truth = np.geomspace(2.0, 2000.0, 8)
        configs = [launches(rng, truth, n, rng.uniform(0.02, 0.05), rounds_effect) for _ in range(4)]
        false += bool(report_claims(configs))
    # at most 5 %, within two binomial standard errors of this many reports (Benjamini-Hochberg holds a report of
    # equal configurations at exactly q = 5 %)
    assert false / reports <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reports), f"{false} of {reports} reports: a false claim"


def test_a_true_10_percent_difference_is_found_with_80_percent_power_at_5_launches_and_3_percent_noise():
    rng = np.random.default_rng(7)
    reports, found, tests, false_share = 100, 0, 0, []
    for _ in range(reports):
        rounds_effect = rng.normal(0, 0.01, 5)
        truth = np.geomspace(2.0, 2000.0, 8)
        fast, other = (launches(rng, truth, 5, 0.03, rounds_effect, outliers=0.02) for _ in range(2))
        slow = launches(rng, truth * 1.10, 5, 0.03, rounds_effect, outliers=0.02)
        claims = report_claims([fast, slow, other])
        true_pairs = {("pair", s, 0, 1, -1) for s in range(8)} | {("pair", s, 1, 2, 1) for s in range(8)}
        found += len(true_pairs & set(claims))
        tests += len(true_pairs)
        # fast and other are equal: a difference between them, or either called fastest, is false
        false = [c for c in claims if c not in true_pairs]
        false_share.append(len(false) / max(len(claims), 1))
    assert found / tests >= 0.80, f"power {found / tests:.2f}"
    assert np.mean(false_share) <= 0.05, f"false discovery rate {np.mean(false_share):.3f}"


def search_session(rng, races=10, values=10, sizes=8, gain=None, noise=0.02, select_launches=2,
                   confirm_launches=10, candidates=3, outliers=0.02):
    """One `gmb tune`-like session: per race, every value and the defaults measured in ``select_launches`` launches,
    the ``candidates`` values with the best mean log gain over the sizes selected, then confirmed on fresh launches of
    the value and of the defaults with Holm over every value x size the session tried. ``gain``: the true gain of
    value 0 (bandwidth, higher is better; the others equal the defaults). Returns, per race, the confirmations of
    the values it recommends, by value."""
    tried = races * values * sizes
    truth = np.geomspace(1.0, 20.0, sizes)
    out = []
    for _ in range(races):
        factors = [gain if (v == 0 and gain) else 1.0 for v in range(values)]
        defaults = launches(rng, truth, select_launches, noise, outliers=outliers)
        means = [np.mean(np.log(launches(rng, truth * f, select_launches, noise, outliers=outliers)) - np.log(defaults).mean(axis=0))
                 for f in factors]
        chosen = [v for v in np.argsort(means)[::-1][:candidates] if means[v] > 0]
        fresh_defaults = launches(rng, truth, confirm_launches, noise, outliers=outliers).T.tolist()
        recommended = {}
        for v in chosen:
            fresh = launches(rng, truth * factors[v], confirm_launches, noise, outliers=outliers).T.tolist()
            c = confirm(fresh, fresh_defaults, higher_is_better=True, tried=tried)
            if c.recommended:
                recommended[int(v)] = c
        out.append(recommended)
    return out


def test_a_search_of_equal_values_recommends_none_in_at_least_95_percent_of_sessions():
    rng = np.random.default_rng(11)
    sessions = 60
    false = sum(any(race for race in search_session(rng)) for _ in range(sessions))
    assert false / sessions <= 0.05, f"{false} of {sessions} sessions recommended a value no better"


def test_a_real_5_percent_gain_is_recommended_and_printed_from_fresh_launches_without_the_winners_curse():
    rng = np.random.default_rng(12)
    found, printed, wrong = 0, [], 0
    races = 0
    for _ in range(10):
        for race in search_session(rng, gain=1.05):
            races += 1
            if 0 in race:
                found += 1
                printed.append(race[0].gain)
            wrong += any(v != 0 for v in race)
    power = found / races
    assert power >= 0.5, f"power {power:.2f}"
    assert abs(np.mean(printed) - 1.05) < 0.005, f"printed gain {np.mean(printed):.4f}"
    assert wrong == 0
    print(f"power {power:.2f}, printed gain {np.mean(printed):.4f}")


def test_comparing_two_runs_of_the_same_configurations_calls_at_most_5_percent_of_points_different():
    """`gmb compare`-like: two runs of 2 configurations x 20 sizes, each point's ratio (Welch, each side's noise
    pooled over its configuration's sizes and launches), Benjamini-Hochberg over the points compared; the same
    answer with A and B swapped."""
    rng = np.random.default_rng(3)
    comparisons, with_false, share = 100, 0, []
    for _ in range(comparisons):
        truth = np.geomspace(1.0, 1000.0, 20)
        pvalues, swapped = [], []
        for _ in range(2):
            sigma = rng.uniform(0.02, 0.05)
            a, b = launches(rng, truth, 2, sigma), launches(rng, truth, 2, sigma)
            noise_a, noise_b = (launch_noise([dict(enumerate(x[:, s])) for s in range(20)]) for x in (a, b))
            pvalues += [ratio(a[:, s].tolist(), b[:, s].tolist(), noise_a, noise_b).p for s in range(20)]
            swapped += [ratio(b[:, s].tolist(), a[:, s].tolist(), noise_b, noise_a).p for s in range(20)]
        made = benjamini_hochberg(pvalues)
        assert made == benjamini_hochberg(swapped)
        with_false += any(made)
        share.append(sum(made) / len(made))
    assert with_false / comparisons <= 0.05 and np.mean(share) <= 0.05

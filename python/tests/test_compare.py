# SPDX-License-Identifier: BSD-3-Clause
"""`gmb compare`: every point of both sides accounted for, differences tested as differences (the ratio's interval on
log scale, Benjamini-Hochberg over the points compared), numbers with the digits they need; on synthetic records and
on points built directly (the simulations)."""

import math

import numpy as np
import pytest
import synth
from test_inference_simulation import launches

from gmb.cli import main
from gmb.report import compare, compare_words, tolerances
from gmb.results.model import Results
from gmb.results.points import Point, PointKey, PointLaunch, point_figure, series_noise
from gmb.results.run_conditions import RunConditions
from gmb.results.store import open_results

SIZES = [8, 64, 512, 4096, 32768, 262144]


def _series(values, benchmark="latency", memory="host", busy=(), prefix="a") -> list[Point]:
    """One configuration's points from its launch values [launch][size] (launch i of every size is one launch), as
    points.combine makes them: each point's figure and interval from its launches and its pooled noise."""
    values = np.asarray(values, dtype=float)
    keys = [PointKey("lib", "{}", benchmark, None, f'{{"recv": "{memory}", "send": "{memory}"}}', "direct", None,
                     False, "{}", 2, 1, None, "host", size, "message", "bw" if benchmark == "bw" else "t")
            for size in SIZES[:values.shape[1]]]
    by_key = {key: [PointLaunch(f"{prefix}{i}", i, i in busy, float(values[i, s]), None, None)
                    for i in range(values.shape[0])] for s, key in enumerate(keys)}
    noise = series_noise(by_key)
    points = []
    for key, ls in by_key.items():
        series = noise[key]
        median, low, high = point_figure(ls, series)
        points.append(Point("lib", key.benchmark, None, f"{memory}:{memory}", "direct", 2, key.bytes, "host", None,
                            key.metric, median, low, high, median, median, len(ls), busy=sum(x.busy for x in ls),
                            config=RunConditions.parse(""), key=key, launches=tuple(ls), noise=series))
    return points


def _match(a_points, b_points):
    lib = frozenset({"lib"})
    return compare.match(compare.Side(a_points, [], lib), compare.Side(b_points, [], lib))


def _run(rng, truth, n, sigma=0.03):
    return launches(rng, truth, n, sigma, outliers=0.0)


def test_a_and_b_swapped_match_the_same_points_with_the_same_verdicts_and_inverse_ratios():
    rng = np.random.default_rng(1)
    truth = np.geomspace(1, 1000, len(SIZES))
    a = _series(_run(rng, truth, 3)) + _series(_run(rng, truth[:4], 3), memory="device")
    b = _series(_run(rng, truth * 1.3, 4)) + _series(_run(rng, truth[:3], 2), memory="device", prefix="b")
    ab, ba = _match(a, b), _match(b, a)
    assert len(ab.rows) == len(ba.rows) == len(SIZES) + 3
    forward = {(r.memory, r.bytes): r for r in ab.rows}
    backward = {(r.memory, r.bytes): r for r in ba.rows}
    assert forward.keys() == backward.keys()
    for k, x in forward.items():
        y = backward[k]
        assert x.ratio * y.ratio == pytest.approx(1) and x.ratio_low * y.ratio_high == pytest.approx(1)
        assert x.verdict == y.verdict and x.q == pytest.approx(y.q)
        assert x.worse_pct * y.worse_pct <= 0  # B worse one way is B better the other
    assert all(forward["host:host", s].verdict == compare.DIFFERENT for s in SIZES)
    assert [(u.side, u.point.bytes, u.why) for u in ab.unmatched] == [("A", 4096, compare.ONLY_HERE)]
    assert [(u.side, u.point.bytes, u.why) for u in ba.unmatched] == [("B", 4096, compare.ONLY_HERE)]


def test_a_10000x_ratio_is_printed_with_its_digits_and_a_bound_never_goes_below_zero():
    rng = np.random.default_rng(2)
    truth = np.geomspace(1, 1000, len(SIZES))
    a = _series(_run(rng, truth, 3))
    # B: 10,000x the time at every size; at 8 B two launches 100x apart (a t-interval on the linear scale reached
    # below zero there)
    b_values = _run(rng, truth * 1e4, 2)
    b_values[1, 0] = b_values[0, 0] * 100
    b = _series(b_values, prefix="b")
    c = _match(a, b)
    table = compare_words.as_table(c.rows, "a", "b")
    col = {name: i for i, name in enumerate(table.columns)}
    for r, cells in zip(c.rows, table.rows):
        assert 0 < r.ratio_low < r.ratio < r.ratio_high and 0 < r.b.low < r.b.median < r.b.high
        assert "0.000" not in cells[col["B/A [95 % CI]"]] and "[-" not in cells[col["B 95 % CI"]]
    big = c.rows[-1]
    assert big.ratio == pytest.approx(1e4, rel=0.1) and big.verdict == compare.DIFFERENT
    text = table.rows[-1][col["B/A [95 % CI]"]]
    assert text.startswith(("9", "10", "11")) and "x [" in text and text.count(".") == 0, text
    assert table.rows[-1][col["verdict (5 % FDR)"]].startswith("B worse")
    wide = table.rows[0][col["B 95 % CI"]]
    low = float(wide[1:wide.index(",")])
    assert low > 0 and "+-" in wide


def test_a_real_2x_difference_with_3_launches_each_is_called():
    rng = np.random.default_rng(4)
    truth = np.geomspace(1, 1000, len(SIZES))
    called = []
    for _ in range(20):
        c = _match(_series(_run(rng, truth, 3)), _series(_run(rng, 2 * truth, 3), prefix="b"))
        called += [r.verdict == compare.DIFFERENT and r.worse_pct == pytest.approx(100, rel=0.2) for r in c.rows]
    assert all(called)


def test_a_and_a_runs_call_at_most_5_percent_of_points_different_and_a_10_percent_shift_is_found():
    """Two runs of the same configurations (3 % launch noise, half shared by the sizes of a launch, 1 % within-launch
    noise; 2-5 launches a run) compared through compare.match: Benjamini-Hochberg over the points keeps false calls
    rare. Measured (seed 5, 300 comparisons of 12 points): 0.83 % of points called, a false call in 4.0 % of
    comparisons (the false discovery rate where nothing differs); a true 10 % difference at 5 launches: 98 % of
    points called."""
    rng = np.random.default_rng(5)
    truth = np.geomspace(1, 1000, len(SIZES))
    comparisons, points, called, with_false = 300, 0, 0, 0
    for _ in range(comparisons):
        n_a, n_b = rng.integers(2, 6, size=2)
        a = _series(_run(rng, truth, n_a)) + _series(_run(rng, truth, n_a), benchmark="bw")
        b = _series(_run(rng, truth, n_b), prefix="b") + _series(_run(rng, truth, n_b), benchmark="bw", prefix="b")
        verdicts = [r.verdict for r in _match(a, b).rows]
        points += len(verdicts)
        called += verdicts.count(compare.DIFFERENT)
        with_false += compare.DIFFERENT in verdicts
    print(f"A/A: {called / points:.2%} of points called, a false call in {with_false / comparisons:.1%}")
    assert called / points <= 0.05 and with_false / comparisons <= 0.06  # 0.05 and a binomial margin
    found = []
    for _ in range(30):
        c = _match(_series(_run(rng, truth, 5)), _series(_run(rng, 1.1 * truth, 5), prefix="b"))
        found += [r.verdict == compare.DIFFERENT for r in c.rows]
    print(f"10 %: {np.mean(found):.0%} of points called")
    assert np.mean(found) >= 0.8


def test_busy_launches_and_launches_that_agree_exactly_get_no_verdict_and_say_why():
    rng = np.random.default_rng(6)
    truth = np.geomspace(1, 1000, len(SIZES))
    a = _series(_run(rng, truth, 3), busy=(1,))
    equal = np.vstack([truth, truth])
    c = _match(a, _series(equal * 3, prefix="b"))
    assert all(r.verdict == compare.NO_VERDICT and not r.significant for r in c.rows)
    text = compare_words.verdict_text(c.rows[0])
    assert text == "no verdict: A 1 of 3 launches on a busy host; B launches agree exactly", text
    assert tolerances.check(c.rows, {"default": {"max_regression_pct": 1}}) == []  # a tolerance needs a verdict


def test_the_tolerance_check_uses_the_verdict():
    """A point violates its tolerance where its difference is called, B is worse, and by more than the tolerance."""
    rng = np.random.default_rng(7)
    truth = np.geomspace(1, 1000, len(SIZES))
    a = _series(_run(rng, truth, 4))
    b = _series(_run(rng, truth * np.array([1.0, 1.0, 1.0, 1.3, 1.3, 0.7]), 4), prefix="b")
    c = _match(a, b)
    bad = tolerances.check(c.rows, {"default": {"max_regression_pct": 10}})
    assert [r.bytes for r in bad] == [4096, 32768]  # 30 % slower; 30 % faster is no regression
    assert all(r.significant and r.violation.endswith("worse > 10%") for r in bad)


def _unmatched_store(tmp_path):
    """A (Open MPI) and B (MPICH), 2 launches each: 8 B and 64 B latency on both; 512 B only in A; 1K in A, refused
    in B (unsupported); bw at 1M with window 64 in A and window 16 in B."""
    recs = []
    for version, lat_sizes, window in (("Open MPI v5.0.7", [8, 64, 512, 1024], 64), ("MPICH Version: 4.0.2", [8, 64], 16)):
        for launch in range(2):
            rid = f"{version.split()[0]}-{launch}"
            recs.append(synth.context(rid, "latency", version))
            recs += synth.pt2pt_results(rid, "latency", lat_sizes, seed=launch)
            if version.startswith("MPICH"):
                refused = synth.unsupported(rid, "latency", "the library refuses this size", "host", "host")
                recs.append({**refused, "bytes": 1024, "strategy": "direct"})
            bw = synth.context(f"{rid}-bw", "bw", version)
            bw["options"]["benchmark"] = {"window": window}
            recs += [bw, *synth.pt2pt_results(f"{rid}-bw", "bw", [1 << 20], seed=launch, window=window)]
    return synth.write_jsonl(tmp_path / "both.jsonl", recs)


def test_every_point_not_matched_is_listed_with_why_and_the_counts_add_up(tmp_path, capsys):
    f = _unmatched_store(tmp_path)
    c = compare.compare(*[Results.load(open_results(f))] * 2, "openmpi-5.0.7", "mpich-4.0.2")
    assert sorted((r.benchmark, r.bytes) for r in c.rows) == [("latency", 8), ("latency", 64)]
    why = {(u.side, u.point.benchmark, u.point.bytes): (u.why, u.detail) for u in c.unmatched}
    assert why == {("A", "latency", 512): (compare.ONLY_HERE, ""),
                   ("A", "latency", 1024): (compare.NO_FIGURE, "unsupported: the library refuses this size"),
                   ("A", "bw", 1 << 20): (compare.NOT_THE_SAME, "options A window=64, B window=16"),
                   ("B", "bw", 1 << 20): (compare.NOT_THE_SAME, "options B window=16, A window=64")}
    assert c.points_a == len(c.rows) + len(c.not_matched("A")) == 5
    assert c.points_b == len(c.rows) + len(c.not_matched("B")) == 3
    assert main(["compare", str(f), str(f), "--a-library", "openmpi-5.0.7", "--b-library", "mpich-4.0.2"]) == 0
    out, err = capsys.readouterr()
    assert "A = openmpi-5.0.7: 5 points: 2 matched, 3 not matched (1 only in A, 1 with no figure in B (failed or " \
           "unsupported), 1 not the same point as B's (a part of the configuration differs))" in err, err
    assert "B = mpich-4.0.2: 3 points: 2 matched, 1 not matched (1 not the same point as A's" in err
    assert "2 matched: " in err
    assert "no figure in B: unsupported: the library refuses this size" in out
    assert "not the same point as B's: options A window=64, B window=16" in out and "only in A" in out
    # swapped: the same accounting, sides named the other way
    swapped = compare.compare(*[Results.load(open_results(f))] * 2, "mpich-4.0.2", "openmpi-5.0.7")
    assert sorted((u.side, u.point.bytes, u.why) for u in swapped.unmatched) == sorted(
        ({"A": "B", "B": "A"}[u.side], u.point.bytes, u.why) for u in c.unmatched)


def test_a_figure_and_its_interval_keep_the_digits_they_need():
    p = _series([[1.2345e-4] * len(SIZES), [1.2349e-4] * len(SIZES), [1.2341e-4] * len(SIZES)])[0]
    figure, bounds = compare_words.figure_cells(p)
    assert figure != "0.000" and float(figure) == pytest.approx(1.2345e-4, rel=1e-3)
    low, high = (float(x) for x in bounds[1:bounds.index("]")].split(", "))
    assert 0 < low < float(figure) < high
    assert math.isclose(float(bounds.split("+-")[1].split()[0]), 100 * (p.high / p.median - 1), rel_tol=0.05)


def test_a_difference_not_proven_says_how_many_launches_would_resolve_it():
    rng = np.random.default_rng(8)
    truth = np.geomspace(1, 1000, len(SIZES))
    c = _match(_series(_run(rng, truth, 2)), _series(_run(rng, 1.05 * truth, 2), prefix="b"))
    unproven = [r for r in c.rows if r.verdict == compare.NOT_PROVEN]
    assert unproven
    for r in unproven:
        needed = r.launches_needed
        assert needed is not None and needed >= 2
        text = compare_words.verdict_text(r)
        assert text.startswith("not proven (q ")
        if 2 < needed <= compare_words.MOST_LAUNCHES_SUGGESTED:
            assert f"about {needed} launches a side would resolve " in text, text


def test_two_runs_of_several_libraries_are_compared_library_by_library(tmp_path, capsys):
    """A campaign run twice (Open MPI and MPICH in each, MPICH 1.3x slower in the second run, MVAPICH2 in the first
    only): with no library chosen, each library against its namesake, the verdicts decided over all of them; the
    library of one run alone accounted for; the same answer swapped."""
    def run(name, mpich_scale, extra):
        f = tmp_path / f"{name}.jsonl"
        recs = []
        for k, (version, scale) in enumerate([("Open MPI v5.0.7", 1.0), ("MPICH Version: 4.0.2", mpich_scale),
                                              *([("MVAPICH2 Version 2.3.7", 1.0)] if extra else [])]):
            recs += [synth.context(f"{name}{k}", "latency", version),
                     *synth.pt2pt_results(f"{name}{k}", "latency", [8, 64, 512], scale=scale, seed=k)]
        synth.write_jsonl(f, recs)
        return f
    a, b = run("a", 1.0, True), run("b", 1.3, False)
    c = compare.compare(Results.load(open_results(a)), Results.load(open_results(b)))
    by = {(r.a.library, r.bytes): r for r in c.rows}
    assert set(by) == {(lib, s) for lib in ("openmpi-5.0.7", "mpich-4.0.2") for s in (8, 64, 512)}
    assert all(r.a.library == r.b.library for r in c.rows)
    assert all(by["mpich-4.0.2", s].ratio == pytest.approx(1.3, rel=0.05) for s in (8, 64, 512))
    assert all(by["openmpi-5.0.7", s].ratio == pytest.approx(1.0, rel=0.05) for s in (8, 64, 512))
    assert [(u.side, u.point.library, u.why, u.detail) for u in c.unmatched] == \
        [("A", "mvapich-2.3.7", compare.ONLY_HERE, "mvapich-2.3.7 not in B")] * 3
    assert (c.points_a, c.points_b) == (9, 6)
    swapped = compare.compare(Results.load(open_results(b)), Results.load(open_results(a)))
    assert sorted((r.a.library, r.bytes, r.verdict) for r in swapped.rows) == sorted(
        (r.a.library, r.bytes, r.verdict) for r in c.rows)
    assert [u.side for u in swapped.unmatched] == ["B"] * 3
    assert main(["compare", str(a), str(b)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1].split()[0] == "configuration" and "only in A (mvapich-2.3.7 not in B)" in out
    assert f"A = {a}: 9 points: 6 matched, 3 not matched (3 only in A)" in err

# SPDX-License-Identifier: BSD-3-Clause
"""A launch of fewer than 6 samples has no 95 % interval of its median (the engine records null with ci_note; older
engines recorded [min, max]): the harness reads both, and a point resting on such launches is never shown with a
zero-width or invented interval, nor called apart from another."""

import math

import pytest
import synth

from gmb.report import cells, compare, compare_words
from gmb.report.wording import precision_text
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.results.records import RecordError, read_records
from gmb.results.store import Store


def _latency(run_id: str, median_us: float, n: int, interval: tuple | None, library="Open MPI v4.1.4") -> list[dict]:
    """A context and one 8-byte latency result of ``n`` samples, its interval ``interval``: (low, high), or None for
    none (null with ci_note, as today's engine writes a launch of fewer than 6 samples)."""
    rec = synth.pt2pt_results(run_id, "latency", [8])[0]
    stats = {**synth.stats(median_us, n=n), "median": median_us}
    if interval is None:
        stats.update(ci95_low=None, ci95_high=None, ci_note="fewer than 6 samples: no 95% order-statistic interval "
                                                            "of the median")
    else:
        stats.update(ci95_low=interval[0], ci95_high=interval[1])
    rec["time_us"] = stats
    return [synth.context(run_id, "latency", library), rec]


def _store(tmp_path, *launches: list[dict]) -> Store:
    st = Store(":memory:")
    for k, records in enumerate(launches):
        path = synth.write_jsonl(tmp_path / f"{records[0]['run_id']}-{k}.jsonl", records)
        read_records(path, validate=True)  # the schema takes a null interval with its note
        st.ingest(path)
    return st


def _point(st: Store):
    (p,) = combine(Results.load(st).ok("latency"))
    return p


def test_a_launch_recorded_without_an_interval_gives_a_point_without_one(tmp_path):
    p = _point(_store(tmp_path, _latency("a", 5.0, 3, None)))
    assert p.reps == 1 and p.median == 5.0
    assert not p.has_interval and p.low is None and p.high is None and p.precision is None
    assert cells.precision_pct([p]) == "no interval: fewer than 6 samples"
    assert precision_text(p.precision, False) == "no interval"


def test_an_older_engines_min_max_below_six_samples_is_not_taken_for_an_interval(tmp_path):
    p = _point(_store(tmp_path, _latency("a", 5.0, 5, (4.0, 7.0))))
    assert not p.has_interval and p.precision is None
    six = _point(_store(tmp_path, _latency("b", 5.0, 6, (4.0, 7.0))))
    assert (six.low, six.high) == (4.0, 7.0)


def test_several_launches_without_their_own_intervals_give_the_launch_to_launch_interval(tmp_path):
    p = _point(_store(tmp_path, _latency("a", 10.0, 1, None), _latency("b", 11.0, 1, None)))
    # two launch medians 10 and 11 (log scale): their mean +- t(0.975, 1) 12.706 * sd / sqrt 2; nothing else widens it
    assert p.reps == 2 and p.has_interval
    half = 12.706 * math.log(1.1) / 2
    assert p.median == pytest.approx(110 ** 0.5)
    assert p.low == pytest.approx(110 ** 0.5 * math.exp(-half), rel=1e-4)
    assert p.high == pytest.approx(110 ** 0.5 * math.exp(half), rel=1e-4)


def test_a_one_sample_point_is_apart_from_nothing_and_compare_says_it_has_no_interval(tmp_path):
    a = _store(tmp_path, _latency("a", 1.0, 1, None))
    b = _store(tmp_path, _latency("b", 2.0, 100, (1.99, 2.01)))
    one, tight = _point(a), _point(b)
    assert not cells.clearly_apart(one, tight) and not cells.clearly_apart(tight, one)
    (row,) = compare.compare(Results.load(a), Results.load(b)).rows
    assert row.ratio == pytest.approx(2.0) and (row.ratio_low, row.ratio_high) == (None, None)
    assert not row.significant and row.verdict == compare.NO_VERDICT
    cells_of = dict(zip((t := compare_words.as_table([row], "a", "b")).columns, t.rows[0]))
    assert "A 95 % CI" not in cells_of and "A 95 % CI (no interval)" in t.note  # its only cell: left out, said
    assert cells_of["B/A [95 % CI]"] == "2.00x"
    assert cells_of["B 95 % CI"] == "[1.99, 2.01] +-0.50 % (one launch)"
    assert cells_of["verdict (5 % FDR)"] == "no verdict: A one launch; B one launch"


def test_half_an_interval_is_not_stored(tmp_path):
    records = _latency("a", 5.0, 3, None)
    records[1]["time_us"]["ci95_high"] = 6.0
    path = synth.write_jsonl(tmp_path / "half.jsonl", records)
    with pytest.raises(RecordError, match="ci95_low and ci95_high both null where there is no interval"):
        read_records(path, validate=False)

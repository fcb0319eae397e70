# SPDX-License-Identifier: BSD-3-Clause
"""The quick campaign of a node with four GPUs (python/tests/data/h200-x4-quick: 4 x H200, NV18 all-to-all; the
lab's Open MPI 5.0.7 under pml ob1 and ucx, the system's Open MPI 4.1.6, NCCL 2.28.3), two repetitions of every
point: claims rest on both launches, the collectives run on four ranks beside NCCL, and every figure stays under
the copy ceiling of its path."""

import json

import pytest
from conftest import DATA, check_report_in_chromium, quick_campaign_store

from gmb.report import answers
from gmb.report.answers_words import collective_sentence, strategy_sentence
from gmb.report import tables
from gmb.report.html import build_html
from gmb.results.significant_digits import ratio_text
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.report import render_text, answers_data

AWARE = {"openmpi-5.0.7-ob1", "openmpi-5.0.7-ucx"}
NOT_AWARE = {"openmpi-4.1.6-ob1", "openmpi-4.1.6-ucx"}


@pytest.fixture(scope="module")
def store():
    return quick_campaign_store(DATA / "h200-x4-quick")


@pytest.fixture(scope="module")
def ans(store):
    return answers.answers(Results.load(store))


def _path(ans: answers_data.Answers, path: str) -> answers_data.PathAnswer:
    return next(p for p in ans.paths if p.path == path)


def test_every_point_comes_from_two_launches_on_a_quiet_host(store, ans):
    launches = store.launches()
    assert len(launches) == 94 and {x["repetition"] for x in launches} == {1, 2}
    loads = [json.loads(x["load"]) for x in launches]
    assert all(x["busy"] is False and x["cpus"] == 64 for x in loads)
    points = combine(Results.load(store).ok("bw"))
    assert points and all(p.reps == 2 and not p.busy for p in points)
    # the claims rest on both launches: none is said to hold within one launch only
    assert not ans.notes and "within one launch" not in render_text.answers_text(answers.answers(Results.load(store)))


def test_nvlink_pair_and_same_gpu_name_the_faster_pml_across_launches(ans):
    pair = _path(ans, "NVLink pair")
    assert pair.bytes == 64 << 20 and pair.ceiling == "p2p-ce"  # 385.7 GB/s, the largest copy there (p2p-ipc 385.3)
    assert {f.library for f in pair.figures} == AWARE | {"nccl"} and sorted(pair.not_at_size) == sorted(NOT_AWARE)
    assert pair.fastest == "openmpi-5.0.7-ob1" and pair.slowest == "openmpi-5.0.7-ucx"
    assert pair.ratio.value == pytest.approx(1.36, abs=0.02)
    same = _path(ans, "same GPU")
    assert (same.fastest, same.slowest) == ("openmpi-5.0.7-ob1", "openmpi-5.0.7-ucx") and same.ratio.value > 2.5


def test_host_device_paths_and_the_strategy(ans):
    pinned = _path(ans, "pinned host -> device")
    assert (pinned.fastest, pinned.slowest) == ("openmpi-5.0.7-ucx", "openmpi-5.0.7-ob1") and pinned.ratio.value > 10
    strategy = next(s for s in ans.strategies if s.library == "openmpi-5.0.7-ob1")
    # gmb's pipelined-gpu lifts pml ob1 to within precision of pml ucx's own path
    assert strategy.beats and strategy.strategy.startswith("pipelined-gpu") and strategy.ratio.value > 10
    assert "not proven apart from the fastest configuration's, openmpi-5.0.7-ucx's own" in strategy_sentence(strategy)


def test_collectives_on_four_ranks_put_nccl_first(ans):
    device = {c.operation: c for c in ans.collectives if c.memory == "device"}
    assert set(device) == {"allreduce", "alltoall", "bcast"}
    for c in device.values():
        assert c.ranks == 4 and c.bytes == 16 << 20 and c.fastest == "nccl" and c.figures[0].library == "nccl"
        assert {f.library for f in c.figures} == AWARE | {"nccl"}
    assert device["allreduce"].ratio.value > 100  # Open MPI reduces device memory on the host
    # "x times" with the interval of the ratio it was tested on
    r = device["allreduce"].ratio
    assert 1 < r.low < r.value < r.high and f"nccl fastest, {ratio_text(r.value, r.low, r.high)} " in collective_sentence(device["allreduce"])
    host = {c.operation: c for c in ans.collectives if c.memory == "host"}
    assert all(c.fastest is None and {f.library for f in c.figures} == NOT_AWARE for c in host.values())


def test_no_figure_of_a_device_path_exceeds_its_ceiling(store):
    table = tables.fraction_of_peak(Results.load(store))
    rows = [dict(zip(table.columns, r)) for r in table.rows]
    device = [r for r in rows if "device" in r["memory"] and isinstance(r["% of ceiling"], float)]
    assert AWARE | {"nccl"} <= {r["library"] for r in device}
    assert all(r["% of ceiling"] <= 100 for r in device)


def test_report_of_the_four_gpu_run(store, tmp_path):
    html = build_html(Results.load(store))
    assert "NVLink pair" in html and "nccl" in html and "(within one launch)" not in html
    check_report_in_chromium(html, tmp_path)

# SPDX-License-Identifier: BSD-3-Clause
"""The ceiling of a figure is the one that bounds it: the largest copy measured on its path, the aggregate's ceiling
for several pairs at once, the copy there and the copy back for host <-> device both ways, and one computation of
the % of ceiling for the answers and the tables (synthetic records)."""

import pytest
import synth

from conftest import described
from gmb.report import answers, render_text, tables
from gmb.results import peaks, records, result_facts
from gmb.results.model import Results
from gmb.results.store import Store

M = 1 << 20
BIG = 64 * M


def _peak(op: str, path: str, gbps: float, nbytes: int = BIG) -> dict:
    return {"schema": "gmb.record/1", "type": "result", "run_id": "p", "benchmark": "peaks", "status": "ok",
            "bytes": nbytes, "operation": op, "bandwidth_GBps": {**synth.stats(gbps, spread=0.01), "median": gbps},
            "path": {"class": path, "link": path, "nominal_GBps": None}, "metrics": {"pair": f"{op}-{path}"}}


def _bw(gbps: float, bench: str = "bw", send: str = "device", recv: str = "device", path: str = "nvlink",
        strategy: str = "direct", nbytes: int = BIG, nominal: float | None = None, **extra) -> dict:
    return {"schema": "gmb.record/1", "type": "result", "benchmark": bench, "status": "ok", "bytes": nbytes,
            "memory": {"send": send, "recv": recv}, "size_convention": "message", "strategy": strategy, "window": 64,
            "ranks": 2 * extra.get("pairs", 1), "headline": "bandwidth_GBps", "validation": "passed",
            "buffer_allocation": "once-per-launch",
            "bandwidth_GBps": {**synth.stats(gbps), "median": gbps, "ci95_low": gbps * 0.99,
                               "ci95_high": gbps * 1.01},
            "time_us": synth.stats(nbytes / gbps / 1e3 * 64),
            "path": {"class": path, "link": path, "nominal_GBps": nominal}, **extra}


def _store(tmp_path, per_library: dict[str, list[dict]], ceilings: list[dict], aware: dict | None = None) -> Store:
    """Each library's records in a launch of its own, the ceilings in another; ``aware``: library -> its context's
    CUDA-awareness (default aware)."""
    st = Store()
    f = synth.write_jsonl(tmp_path / "peaks.jsonl", [synth.context("p", "peaks", cuda=True), *ceilings])
    st.ingest(f, library="ceilings", validate=records.validator() is not None)
    for i, (lib, recs) in enumerate(per_library.items()):
        ctx = synth.context(f"r{i}", recs[0]["benchmark"], "Open MPI v5.0.7", world_size=max(r["ranks"] for r in recs),
                            cuda=True)
        ctx["mpi"]["gpu_awareness"]["verdict"] = (aware or {}).get(lib, "aware")
        f = synth.write_jsonl(tmp_path / f"{i}.jsonl", [ctx, *[{**r, "run_id": f"r{i}"} for r in recs]])
        st.ingest(f, library=lib, validate=records.validator() is not None)
    return described(st)


def _row(t, benchmark: str, memory: str):
    col = {c: i for i, c in enumerate(t.columns)}
    (row,) = [r for r in t.rows if r[col["benchmark"]] == benchmark and r[col["memory"]] == memory]
    return {c: row[i] for c, i in col.items()}


def test_an_sm_copy_faster_than_the_copy_engine_bounds_a_gpu_pair(tmp_path):
    """p2p-sm (how NCCL moves data) measured faster than p2p-ce and p2p-ipc: it is the bound, named, and NCCL's
    figure reads below 100 % of it (against p2p-ipc it read 117 %, 'ceiling suspect'). At a size where the copy
    engine is faster, the copy engine bounds."""
    st = _store(tmp_path, {"nccl": [_bw(340.0), _bw(150.0, nbytes=M)]},
                [_peak("p2p-ipc", "nvlink", 290.0), _peak("p2p-ce", "nvlink", 300.0), _peak("p2p-sm", "nvlink", 350.0),
                 _peak("p2p-ipc", "nvlink", 160.0, M), _peak("p2p-ce", "nvlink", 170.0, M),
                 _peak("p2p-sm", "nvlink", 120.0, M)])
    results = Results.load(st)
    c = peaks.ceilings(results)
    assert c.at("bw", "nvlink", "device", "device", BIG) == ("p2p-sm", pytest.approx(350.0))
    assert c.at("bw", "nvlink", "device", "device", M) == ("p2p-ce", pytest.approx(170.0))
    assert c.at("bibw", "nvlink", "device", "device", BIG) == ("p2p-sm x2", pytest.approx(700.0))
    row = _row(tables.fraction_of_peak(results), "bw", "device:device")
    assert (row["ceiling"], row["% of ceiling"]) == ("p2p-sm", pytest.approx(97.1))
    assert "ceiling suspect" not in str(row.get("check", ""))
    (nv,) = answers.answers(results).paths
    assert nv.ceiling == "p2p-sm" and nv.figures[0].pct_of_ceiling == pytest.approx(97.14, abs=0.01)


def test_a_measured_bidirectional_copy_wins_over_twice_a_faster_one_way_copy(tmp_path):
    st = _store(tmp_path, {"lib": [_bw(500.0, "bibw")]},
                [_peak("p2p-ipc", "nvlink", 290.0), _peak("p2p-ce", "nvlink", 300.0),
                 _peak("p2p-ipc-bidir", "nvlink", 560.0)])
    assert peaks.ceilings(Results.load(st)).at("bibw", "nvlink", "device", "device", BIG) == \
        ("p2p-ipc-bidir", pytest.approx(560.0))


def test_a_staged_figure_has_one_percent_of_ceiling_in_the_answers_and_the_table(tmp_path):
    """A library that is not CUDA-aware answers the NVLink path through staged-pinned: its % is of the staging
    copies' ceiling (min(d2h-pinned, h2d-pinned)) in the answers as in the table, and the answer names that ceiling
    beside the path's own (p2p-ipc)."""
    st = _store(tmp_path, {"aware": [_bw(300.0)], "unaware": [_bw(20.0, strategy="staged-pinned")]},
                [_peak("p2p-ipc", "nvlink", 380.0), _peak("h2d-pinned", "host-device", 50.0),
                 _peak("d2h-pinned", "host-device", 40.0)], aware={"unaware": "not aware"})
    results = Results.load(st)
    (nv,) = answers.answers(results).paths
    staged = next(f for f in nv.figures if f.library == "unaware")
    t = tables.fraction_of_peak(results)
    col = {c: i for i, c in enumerate(t.columns)}
    (row,) = [r for r in t.rows if r[col["library"]] == "unaware"]
    assert row[col["ceiling"]] == "min(d2h-pinned, h2d-pinned)" and row[col["% of ceiling"]] == 50.0
    assert staged.pct_of_ceiling == pytest.approx(50.0)
    assert staged.own_ceiling == "min(d2h-pinned, h2d-pinned) 40.0 GB/s"
    assert nv.ceiling == "p2p-ipc" and next(f for f in nv.figures if f.library == "aware").own_ceiling == ""
    text = " ".join(render_text.answers_text(answers.answers(results)).split())
    assert "unaware (not CUDA-aware: staged-pinned) 20.0 GB/s" in text
    assert "%, 50.0 % of min(d2h-pinned, h2d-pinned) 40.0 GB/s)" in text and "%, 78.9 % of ceiling)" in text


@pytest.mark.parametrize("memory", ["pinned:device", "device:pinned"])
def test_bibw_between_host_and_device_is_bounded_by_the_copy_there_and_the_copy_back(tmp_path, memory):
    """Both directions at once between pinned host memory and a GPU: h2d-pinned one way, d2h-pinned the other
    (50 + 40 GB/s), not twice h2d-pinned (100); a measured bidirectional copy wins."""
    send, recv = memory.split(":")
    st = _store(tmp_path, {"lib": [_bw(81.0, "bibw", send, recv, "host-device"), _bw(45.0, "bw", send, recv,
                                                                                       "host-device")]},
                [_peak("h2d-pinned", "host-device", 50.0), _peak("d2h-pinned", "host-device", 40.0)])
    results = Results.load(st)
    c = peaks.ceilings(results)
    there, back = ("h2d-pinned", "d2h-pinned") if send == "pinned" else ("d2h-pinned", "h2d-pinned")
    assert c.at("bibw", "host-device", send, recv, BIG) == (f"{there} + {back}", pytest.approx(90.0))
    assert c.at("bw", "host-device", send, recv, BIG) == (there, pytest.approx(50.0 if send == "pinned" else 40.0))
    row = _row(tables.fraction_of_peak(results), "bibw", memory)
    assert (row["ceiling"], row["% of ceiling"]) == (f"{there} + {back}", 90.0)
    (tmp_path / "b").mkdir()
    st = _store(tmp_path / "b", {"lib": [_bw(81.0, "bibw", send, recv, "host-device")]},
                [_peak("h2d-pinned", "host-device", 50.0), _peak("d2h-pinned", "host-device", 40.0),
                 _peak(f"{there}-bidir", "host-device", 85.0)])
    assert peaks.ceilings(Results.load(st)).at("bibw", "host-device", send, recv, BIG) == \
        (f"{there}-bidir", pytest.approx(85.0))


def _pairs(hosts: list[tuple[str, str]], gpus: list[tuple], path: str) -> list[dict]:
    return [{"ranks": [i, i + len(hosts)], "hosts": list(h), "gpus": list(g),
             "path": {"class": path, "link": path, "nominal_GBps": 478.0 if path == "nvlink" else None}}
            for i, (h, g) in enumerate(zip(hosts, gpus))]


def _mbw(gbps: float, memory: str, path: str, pair_paths: list[dict] | None) -> dict:
    send, recv = memory.split(":")
    nominal = 478.0 if path == "nvlink" else None
    rec = _bw(gbps, "mbw", send, recv, path, nominal=nominal, pairs=4)
    if pair_paths is not None:
        rec["pair_paths"] = pair_paths
    return rec


def test_mbw_over_4_pairs_is_compared_with_the_aggregate_ceiling(tmp_path):
    """mbw over 4 pairs (aggregate bytes/s): four pairs on separate GPUs of NVLink add up (4 x p2p-ipc, nominal
    4 x 478 GB/s); four pairs between two hosts share the network between them (its ceiling once); four host pairs
    on one host share its memory; four pairs on two GPUs share them. None reads up to 400 % of one pair's ceiling."""
    gpus8 = [(f"0000:{i:02x}:00.0", f"0000:{i + 4:02x}:00.0") for i in range(4)]
    gpus2 = [("0000:01:00.0", "0000:02:00.0")] * 4
    one_host, two_hosts = [("a", "a")] * 4, [("a", "b")] * 4
    st = _store(tmp_path, {
        "separate": [_mbw(1400.0, "device:device", "nvlink", _pairs(one_host, gpus8, "nvlink"))],
        "network": [_mbw(9.2, "pinned:pinned", "inter-node", _pairs(two_hosts, [(None, None)] * 4, "inter-node"))],
        "host": [_mbw(36.0, "host:host", "host", _pairs(one_host, [(None, None)] * 4, "host"))],
        "shared-gpus": [_mbw(350.0, "pinned:device", "host-device", None),
                        _mbw(360.0, "device:device", "nvlink", _pairs(one_host, gpus2, "nvlink"))]},
        [_peak("p2p-ipc", "nvlink", 380.0), _peak("network", "inter-node", 10.0), _peak("host-copy", "host", 40.0),
         _peak("h2d-pinned", "host-device", 50.0)])
    t = tables.fraction_of_peak(Results.load(st))
    col = {c: i for i, c in enumerate(t.columns)}
    got = {(r[col["library"]], r[col["memory"]]): (r[col["pairs"]], r[col["ceiling"]], r[col["ceiling GB/s"]],
                                                   r[col["% of ceiling"]]) for r in t.rows}
    assert got[("separate", "device:device")] == (4, "4 x p2p-ipc", 1520.0, 92.1)
    assert got[("network", "pinned:pinned")] == (4, "network, host buffers (shared by 4 pairs)", 10.0, 92.0)
    assert got[("host", "host:host")] == (4, "host-copy (shared by 4 pairs)", 40.0, 90.0)
    assert got[("shared-gpus", "device:device")] == (4, "p2p-ipc (shared by 4 pairs)", 380.0, 94.7)
    # a record of an engine before pair_paths: no ceiling, and why
    pageable = got[("shared-gpus", "pinned:device")]
    assert pageable[1] == f"none: {peaks.PAIRS_NOT_RECORDED}" and pageable[3] == "no ceiling at 64M"
    (row,) = [r for r in t.rows if r[col["library"]] == "separate"]
    assert row[col["nominal GB/s"]] == 4 * 478.0 and row[col["% of nominal"]] == pytest.approx(73.2)
    assert not any("ceiling suspect" in str(r[col["check"]]) for r in t.rows if "check" in col)


def test_pair_layout_groups_the_pairs_that_share_a_resource():
    rec = _mbw(1.0, "device:device", "nvlink",
               _pairs([("a", "a")] * 4, [("g0", "g4"), ("g1", "g5"), ("g0", "g6"), ("g2", "g7")], "nvlink"))
    layout = result_facts.pair_layout(rec)
    assert layout.count == 4 and sorted(g.pairs for g in layout.groups) == [1, 1, 2]  # two pairs share g0
    assert result_facts.pair_layout({**rec, "pairs": 1}) is None
    assert result_facts.pair_layout({k: v for k, v in rec.items() if k != "pair_paths"}).groups is None

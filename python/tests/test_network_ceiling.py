# SPDX-License-Identifier: BSD-3-Clause
"""The network's own ceiling in the report: the best tool at a size bounds an inter-node row and the Answers name
it; the table lists every tool, its device and the tools that did not run with why; where nothing was measured,
the Answers and the table say why."""

import synth
from conftest import described
from test_answers import _bw, _flat

from gmb.report import answers, render_text, tables
from gmb.results.model import Results
from gmb.results.store import Store

M = 1 << 20
NOT_USED = {"ib_write_bw": "no RDMA (verbs) device in /sys/class/infiniband on host h1, rank 0"}


def _network(tool: str, gbps: float, nbytes: int = M, **metrics) -> dict:
    return {"schema": "gmb.record/1", "type": "result", "benchmark": "peaks", "operation": "network", "status": "ok",
            "bytes": nbytes, "bandwidth_GBps": {**synth.stats(gbps), "median": gbps},
            "time_us": synth.stats(nbytes / gbps / 1e3), "path": {"class": "inter-node", "link": tool, "nominal_GBps": None},
            "metrics": {"pair": "rank0:h1->rank1:h2", "tool": tool, "sender_host": "h1", "receiver_host": "h2",
                        "sender_device": "eth0", "receiver_device": "eth0", "tools_not_used": NOT_USED, **metrics}}


def _unsupported_network(reason: str) -> dict:
    return {"schema": "gmb.record/1", "type": "result", "benchmark": "peaks", "operation": "network",
            "status": "unsupported", "reason": reason, "bytes": M,
            "path": {"class": "inter-node", "link": "the network between two hosts", "nominal_GBps": None}}


def _results(tmp_path, records: list[dict]) -> Results:
    st = Store()
    f = synth.write_jsonl(tmp_path / "r.jsonl", [synth.context("r0", "bw", "Open MPI v5.0.7", cuda=True),
                                                 *[{**r, "run_id": "r0"} for r in records]])
    st.ingest(f, library="lib-a")
    return Results.load(described(st))


def test_the_best_tool_bounds_the_inter_node_row_and_is_named(tmp_path):
    r = _results(tmp_path, [_network("gmb-tcp", 4.0, one_way_latency_us={"median": 12.0}),
                            _network("ucx_perftest", 5.0), _bw("", 4.5, 4.4, 4.6, M, path="inter-node")])
    (pair,) = answers.answers(r).paths
    assert pair.ceiling == "network" and pair.ceiling_GBps == 5.0
    assert round(pair.figures[0].pct_of_ceiling) == 90
    assert "ceiling network (ucx_perftest) 5.00 GB/s" in _flat(render_text.answers_text(answers.answers(r)))
    (t,) = [t for t in tables.all_tables(r) if t.title.startswith("Network ceiling")]
    by_tool = {row[1]: row for row in t.rows}
    assert by_tool["gmb-tcp"][2:6] == ["eth0", "1M", 4.0, 12.0] and by_tool["ucx_perftest"][4] == 5.0
    assert by_tool["ib_write_bw"][-1] == "not used: " + NOT_USED["ib_write_bw"]


def test_without_a_network_ceiling_the_answer_says_why(tmp_path):
    why = "no tool measured the network: gmb-tcp: no non-loopback IPv4 address is up on host h2, rank 1"
    r = _results(tmp_path, [_unsupported_network(why), _bw("", 4.5, 4.4, 4.6, M, path="inter-node")])
    (pair,) = answers.answers(r).paths
    assert pair.ceiling_GBps is None and why in pair.no_ceiling
    (t,) = [t for t in tables.all_tables(r) if t.title.startswith("Network ceiling")]
    assert t.rows[0][-1] == "not measured: " + why


def test_without_a_peaks_launch_across_hosts_the_answer_says_so(tmp_path):
    r = _results(tmp_path, [_bw("", 4.5, 4.4, 4.6, M, path="inter-node")])
    (pair,) = answers.answers(r).paths
    assert "no peaks launch ran across two hosts" in pair.no_ceiling
    assert not [t for t in tables.all_tables(r) if t.title.startswith("Network ceiling")]


def test_a_one_host_refusal_is_no_news_where_the_network_was_measured(tmp_path):
    r = _results(tmp_path, [_network("gmb-tcp", 4.0),
                            _unsupported_network("all 2 ranks run on one host (h1): the network ceiling needs ranks "
                                                 "on two hosts")])
    (t,) = [t for t in tables.all_tables(r) if t.title.startswith("Network ceiling")]
    assert not [row for row in t.rows if "not measured" in str(row[-1])]

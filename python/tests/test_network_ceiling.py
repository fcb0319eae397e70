# SPDX-License-Identifier: BSD-3-Clause
"""The network's own ceiling in the report: the best tool bounds an inter-node row (from 1 MiB up the best at any
such size, below per size; device buffers by a device-buffer figure where one exists) and the Answers name it with its
buffers and tool; an MPI figure above every tool is said to be the tools' shortfall; the table lists every tool, its
device and streams and the tools that did not run with why; where nothing was measured, the Answers and the table say
why; a record no link could produce is kept as unsupported, never a ceiling."""

import json

import synth
from conftest import described
from test_answers import _bw, _flat

from gmb.report import answers, render_text, tables
from gmb.report.answers_words import ceiling_finding_said, no_ceiling_said
from gmb.results.model import Results
from gmb.results.peaks import ceilings
from gmb.results.store import Store

M = 1 << 20
NOT_USED = {"ib_write_bw": "no RDMA (verbs) device in /sys/class/infiniband on host h1, rank 0"}


def _network(tool: str, gbps: float, nbytes: int = M, operation: str = "network", **metrics) -> dict:
    return {"schema": "gmb.record/1", "type": "result", "benchmark": "peaks", "operation": operation, "status": "ok",
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
    assert "ceiling network, host buffers (ucx_perftest) 5.00 GB/s" in _flat(render_text.answers_text(answers.answers(r)))
    t = _table(r, "Network ceiling")
    cell = {row[1]: dict(zip(t.columns, row)) for row in t.rows}
    assert [cell["gmb-tcp"][c] for c in ("buffers", "device", "size", "GB/s (median)", "one-way latency (us)")] == \
        ["host", "eth0", "1M", 4.0, 12.0]
    assert cell["ucx_perftest"]["GB/s (median)"] == 5.0
    assert cell["ib_write_bw"]["records or reason"] == "not used: " + NOT_USED["ib_write_bw"]


def test_without_a_network_ceiling_the_answer_says_why(tmp_path):
    why = "no tool measured the network: gmb-tcp: no non-loopback IPv4 address is up on host h2, rank 1"
    r = _results(tmp_path, [_unsupported_network(why), _bw("", 4.5, 4.4, 4.6, M, path="inter-node")])
    (pair,) = answers.answers(r).paths
    assert pair.ceiling_GBps is None and why in no_ceiling_said(pair)
    (t,) = [t for t in tables.all_tables(r) if t.title.startswith("Network ceiling")]
    assert t.rows[0][-1] == "not measured: " + why


def test_without_a_peaks_launch_across_hosts_the_answer_says_so(tmp_path):
    r = _results(tmp_path, [_bw("", 4.5, 4.4, 4.6, M, path="inter-node")])
    (pair,) = answers.answers(r).paths
    assert "no peaks launch ran across two hosts" in no_ceiling_said(pair)
    assert not [t for t in tables.all_tables(r) if t.title.startswith("Network ceiling")]


def test_a_one_host_refusal_is_no_news_where_the_network_was_measured(tmp_path):
    r = _results(tmp_path, [_network("gmb-tcp", 4.0),
                            _unsupported_network("all 2 ranks run on one host (h1): the network ceiling needs ranks "
                                                 "on two hosts")])
    (t,) = [t for t in tables.all_tables(r) if t.title.startswith("Network ceiling")]
    assert not [row for row in t.rows if "not measured" in str(row[-1])]


def _table(r: Results, title: str):
    (t,) = [t for t in tables.all_tables(r) if t.title.startswith(title)]
    return t


def _row(t, **cells) -> list:
    (row,) = [row for row in t.rows if all(row[t.columns.index(k)] == v for k, v in cells.items())]
    return row


def test_from_1_mib_up_the_best_stream_rate_at_any_size_bounds_every_size(tmp_path):
    # gmb-tcp at 1 MiB, iperf3 with 4 streams at 16 MiB: a stream's rate does not depend on the message size
    r = _results(tmp_path, [_network("gmb-tcp", 3.9, M, streams=2), _network("iperf3", 4.5, 16 * M, streams=4),
                            _network("gmb-tcp", 2.0, 64 << 10), _bw("", 4.2, 4.1, 4.3, 4 * M, path="inter-node"),
                            _bw("", 1.5, 1.4, 1.6, 64 << 10, path="inter-node"),
                            _bw("", 1.8, 1.7, 1.9, 256 << 10, path="inter-node")])
    avail = ceilings(r)
    assert avail.at("bw", "inter-node", "device", "device", 4 * M) == ("network", 4.5)  # not measured at 4 MiB
    assert avail.at("bw", "inter-node", "device", "device", M) == ("network", 4.5)  # above gmb-tcp's 3.9 there
    assert avail.at("bw", "inter-node", "device", "device", 64 << 10) == ("network", 2.0)  # below 1 MiB: per size
    assert avail.at("bw", "inter-node", "device", "device", 256 << 10) == (None, None)
    row = _row(tables.fraction_of_peak(r), library="lib-a")
    assert row[tables.fraction_of_peak(r).columns.index("ceiling")] == "network, host buffers (iperf3, 4 streams)"
    (pair,) = answers.answers(r).paths
    assert pair.bytes == 4 * M and pair.ceiling_label == "network, host buffers (iperf3, 4 streams)"


def test_an_mpi_figure_above_every_tool_says_the_tools_fell_short_not_that_the_ceiling_is_suspect(tmp_path):
    r = _results(tmp_path, [_network("gmb-tcp", 3.4, 16 * M, streams=1), _network("iperf3", 3.5, M, streams=4),
                            _bw("", 4.0, 3.95, 4.05, 16 * M, path="inter-node")])
    said = ("MPI moved 4.00 GB/s, above every network tool (best: iperf3 3.50 GB/s with 4 streams): the tools did not "
            "reach the link's limit")
    t = tables.fraction_of_peak(r)
    row = _row(t, library="lib-a")
    assert row[t.columns.index("% of ceiling")] == 114.3
    assert said in row[t.columns.index("check")] and "ceiling suspect" not in row[t.columns.index("check")]
    (pair,) = answers.answers(r).paths
    assert ceiling_finding_said(pair) == said
    assert said in _flat(render_text.answers_text(answers.answers(r)))


def test_device_buffers_between_hosts_are_bounded_by_the_largest_network_figure_on_their_kind_of_buffers(tmp_path):
    """A device-buffer ceiling applies to device:device only; the largest applicable figure bounds: on 2 x H200
    across emulated hosts ucx_perftest -m cuda (one stream) moved 2.0 GB/s where NCCL moved 3.65 and gmb-tcp 10.6."""
    ucx_device = _network("ucx_perftest", 3.0, M, operation="network-device", memory="device", streams=1)
    r = _results(tmp_path, [_network("iperf3", 4.5, M, streams=2), ucx_device,
                            _bw("", 2.7, 2.6, 2.8, M, path="inter-node"),
                            _bw("", 4.0, 3.9, 4.1, M, send="host", recv="host", path="inter-node")])
    avail = ceilings(r)
    assert avail.at("bw", "inter-node", "device", "device", M) == ("network", 4.5)  # the larger bounds
    assert avail.at("bw", "inter-node", "host", "host", M) == ("network", 4.5)
    assert avail.at("bw", "inter-node", "host", "device", M) == ("network", 4.5)
    (tmp_path / "faster").mkdir()
    faster = _results(tmp_path / "faster", [_network("iperf3", 2.0, M, streams=1), ucx_device,
                                            _bw("", 2.7, 2.6, 2.8, M, path="inter-node"),
                                            _bw("", 1.5, 1.4, 1.6, M, send="host", recv="host", path="inter-node")])
    avail = ceilings(faster)
    assert avail.at("bw", "inter-node", "device", "device", M) == ("network-device", 3.0)
    assert avail.at("bw", "inter-node", "host", "host", M) == ("network", 2.0)  # never the device-buffer one
    t = tables.fraction_of_peak(faster)
    names = {row[t.columns.index("memory")]: row[t.columns.index("ceiling")] for row in t.rows}
    assert names == {"device:device": "network, device buffers (ucx_perftest)",
                     "host:host": "network, host buffers (iperf3)"}
    t = _table(r, "Network ceiling")
    assert _row(t, tool="ucx_perftest")[t.columns.index("buffers")] == "device"


def test_device_buffers_without_a_device_buffer_ceiling_name_the_host_buffer_one(tmp_path):
    r = _results(tmp_path, [_network("iperf3", 4.5, M, streams=2), _bw("", 2.7, 2.6, 2.8, M, path="inter-node")])
    (pair,) = answers.answers(r).paths
    assert pair.ceiling == "network" and pair.ceiling_label == "network, host buffers (iperf3, 2 streams)"


def _peaks_line(median: str, tool: str) -> str:
    """A peaks network record as a line of text, its bandwidth written as given (1e9999, null, -1 ...)."""
    rec = _network(tool, 1.0)
    rec["run_id"] = "r0"
    text = json.dumps(rec)
    return text.replace('"median": 1.0', f'"median": {median}', 1)


def test_a_peaks_record_no_link_can_produce_is_kept_unsupported_and_never_a_ceiling(tmp_path):
    """1e300 GB/s, a number beyond a double (1e9999), null (what the engine writes for inf or nan), a negative figure:
    each record is kept as unsupported with why; the plausible tools' and the other copies' records of the same file
    are stored and bound the inter-node row."""
    lines = [json.dumps(synth.context("r0", "peaks", "Open MPI v5.0.7", cuda=True)),
             _peaks_line("1e300", "ucx_perftest"), _peaks_line("1e9999", "iperf3"), _peaks_line("null", "fi_pingpong"),
             _peaks_line("-1.5", "ib_write_bw"), json.dumps({**_network("gmb-tcp", 3.9), "run_id": "r0"}),
             json.dumps({**_bw("r0", 3.0, 2.9, 3.1, M, path="inter-node")})]
    f = tmp_path / "r.jsonl"
    f.write_text("\n".join(lines) + "\n")
    st = Store()
    st.ingest(f, library="lib-a")
    r = Results.load(described(st))
    refused = {x.metrics["tool"]: x.reason for x in r.results if x.operation == "network" and x.status == "unsupported"}
    assert set(refused) == {"ucx_perftest", "iperf3", "fi_pingpong", "ib_write_bw"}
    assert all(why.startswith("an implausible figure (network by ") and why.endswith("not a ceiling")
               for why in refused.values()), refused
    assert "above 10000 GB/s" in refused["ucx_perftest"] and "not above 0" in refused["ib_write_bw"]
    assert "not finite numbers" in refused["iperf3"] and "not finite numbers" in refused["fi_pingpong"]
    assert ceilings(r).at("bw", "inter-node", "device", "device", M) == ("network", 3.9)
    assert _row(_table(r, "Network ceiling"), tool="ucx_perftest")[-1].startswith("refused: an implausible figure")

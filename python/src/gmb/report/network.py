# SPDX-License-Identifier: BSD-3-Clause
"""The network's own ceiling between hosts (peaks' ``network`` operation, measured without MPI): which tool measured
it (gmb-tcp, ucx_perftest, ib_write_bw, fi_pingpong), over which device, per host pair and size; the tools that
did not measure it and why; and why nothing was measured where nothing was (one host, no tool usable)."""

from __future__ import annotations

from statistics import median

from ..results.model import Result, Results
from ..results.peaks import ceiling_tool
from .cells import Absent, Table, size_label
from .wording import sig3

NETWORK = "network"


def network_records(results: Results) -> list[Result]:
    return [r for r in results.results if r.benchmark == "peaks" and r.operation == NETWORK]


def _device(r: Result) -> str:
    m = r.metrics
    sender, receiver = m.get("sender_device"), m.get("receiver_device")
    if sender and receiver and sender != receiver:
        return f"{sender} -> {receiver}"
    return sender or receiver or "not recorded"


def _one_way_latency(rs: list[Result]) -> float | Absent:
    values = [r.metrics["one_way_latency_us"]["median"] for r in rs
              if isinstance(r.metrics.get("one_way_latency_us"), dict) and "median" in r.metrics["one_way_latency_us"]]
    return round(median(values), 1) if values else Absent("not measured by this tool")


def network_table(results: Results) -> Table:
    """One row per host pair, tool, device and size measured (median over repetitions), one per tool that did not
    measure a pair (with its reason), and one per reason nothing was measured."""
    measured: dict[tuple, list[Result]] = {}
    not_used: dict[tuple, str] = {}
    nothing: set[str] = set()
    for r in network_records(results):
        if r.status != "ok":
            nothing.add(r.reason or "no reason recorded")
            continue
        hosts = f"{r.metrics.get('sender_host', '?')} -> {r.metrics.get('receiver_host', '?')}"
        measured.setdefault((hosts, r.metrics.get("tool") or "not recorded", _device(r), r.bytes), []).append(r)
        for tool, reason in (r.metrics.get("tools_not_used") or {}).items():
            not_used[(hosts, tool)] = reason
    rows = [[hosts, tool, device, size_label(nbytes), round(median(x.stats["bw"].median for x in rs), 3),
             _one_way_latency(rs), len(rs)]
            for (hosts, tool, device, nbytes), rs in sorted(measured.items())]
    rows += [[hosts, tool, Absent("not used"), Absent("-"), Absent("-"), Absent("-"), f"not used: {reason}"]
             for (hosts, tool), reason in sorted(not_used.items())]
    if not measured:  # a launch on one host says so too; that is no news where another launch measured the network
        rows += [[Absent("none"), Absent("none"), Absent("-"), Absent("-"), Absent("-"), Absent("-"),
                  f"not measured: {reason}"] for reason in sorted(nothing)]
    return Table("Network ceiling between hosts (no MPI)",
                 ["hosts", "tool", "device", "size", "GB/s (median)", "one-way latency (us)", "records or reason"], rows,
                 "The network's own rate between the first ranks of two hosts, by each tool that could run on both: "
                 "gmb-tcp (the engine's TCP stream, with an 8-byte ping-pong), ucx_perftest (UCX tag_bw over its network "
                 "transports), ib_write_bw (RDMA writes), fi_pingpong (libfabric ping-pong). Inter-node figures are "
                 "compared with the best of them at the same size.")


def network_not_measured(results: Results) -> str | None:
    """Why no network ceiling exists, as the records say it (or that none was tried); None when one was measured."""
    records = network_records(results)
    if not records:
        return 'no peaks launch ran across two hosts (a peaks block with path = "inter-node" measures the network)'
    if any(r.status == "ok" for r in records):
        return None
    return "; ".join(sorted({r.reason or "no reason recorded" for r in records}))


def network_ceiling_words(results: Results, nbytes: int, value: float) -> str:
    """The network ceiling at a size, with the tool that measured it: "network (ucx_perftest) 5.00 GB/s"."""
    tool = ceiling_tool(results, (NETWORK, "inter-node", nbytes))
    return f"network ({tool}) {sig3(value)} GB/s" if tool else f"network {sig3(value)} GB/s"

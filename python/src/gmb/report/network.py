# SPDX-License-Identifier: BSD-3-Clause
"""The network's own ceiling between hosts (peaks' records of path class inter-node, measured without MPI: operation
``network`` on host buffers, ``network-device`` on device buffers): which tool measured it (gmb-tcp, iperf3,
ucx_perftest, ib_write_bw, fi_pingpong), over which device, with how many streams, per host pair and size; the tools
that did not measure it and why; why nothing was measured where nothing was (one host, no tool usable); how a
network ceiling is named; and what it means when an MPI figure is above every tool."""

from __future__ import annotations

from statistics import median

from ..results.model import Results
from ..results.peaks import Ceilings, CeilingSource
from ..results.stored_rows import Result
from .cells import Absent, Table, size_label
from .wording import sig3

NETWORK = "network"
INTER_NODE = "inter-node"


def network_records(results: Results) -> list[Result]:
    """peaks' records of the network between hosts (an unsupported one for a size too large names no path)."""
    return [r for r in results.results
            if r.ceiling and (r.path_class == INTER_NODE or r.operation == NETWORK)]


def _device(r: Result) -> str:
    m = r.metrics
    sender, receiver = m.get("sender_device"), m.get("receiver_device")
    if sender and receiver and sender != receiver:
        return f"{sender} -> {receiver}"
    return sender or receiver or "not recorded"


def _buffers(r: Result) -> str:
    return "device" if r.metrics.get("memory") == "device" else "host"


def _one_way_latency(rs: list[Result]) -> float | Absent:
    values = [r.metrics["one_way_latency_us"]["median"] for r in rs
              if isinstance(r.metrics.get("one_way_latency_us"), dict) and "median" in r.metrics["one_way_latency_us"]]
    return round(median(values), 1) if values else Absent("not measured by this tool")


def _streams(rs: list[Result]) -> str | Absent:
    counts = sorted({r.metrics["streams"] for r in rs if isinstance(r.metrics.get("streams"), int)})
    return "/".join(map(str, counts)) if counts else Absent("not recorded")


def _seconds(rs: list[Result]) -> float | Absent:
    values = [r.metrics["seconds_per_run"] for r in rs if isinstance(r.metrics.get("seconds_per_run"), (int, float))]
    return round(median(values), 2) if values else Absent("not recorded")


def network_table(results: Results) -> Table:
    """One row per host pair, tool, buffers, device and size measured (median over repetitions), one per tool that
    did not measure a pair (with its reason), one per record refused as no figure, and one per reason nothing was
    measured."""
    measured: dict[tuple, list[Result]] = {}
    not_used: dict[tuple, str] = {}
    refused: dict[tuple, str] = {}
    nothing: set[str] = set()
    for r in network_records(results):
        hosts = f"{r.metrics.get('sender_host', '?')} -> {r.metrics.get('receiver_host', '?')}"
        tool = r.metrics.get("tool") or "not recorded"
        if r.status != "ok":
            if r.metrics.get("tool"):  # a tool's record the store refused as a figure (record_checks.not_a_figure)
                refused[(hosts, tool, _buffers(r), size_label(r.bytes))] = r.reason or "no reason recorded"
            else:
                nothing.add(r.reason or "no reason recorded")
            continue
        measured.setdefault((hosts, tool, _buffers(r), _device(r), r.bytes), []).append(r)
        for other, reason in (r.metrics.get("tools_not_used") or {}).items():
            not_used[(hosts, other, _buffers(r))] = reason
    rows = [[hosts, tool, buffers, device, size_label(nbytes), round(median(x.stats["bw"].median for x in rs), 3),
             _streams(rs), _seconds(rs), _one_way_latency(rs), len(rs)]
            for (hosts, tool, buffers, device, nbytes), rs in sorted(measured.items())]
    dash = Absent("-")
    rows += [[hosts, tool, buffers, Absent("not used"), dash, dash, dash, dash, dash, f"not used: {reason}"]
             for (hosts, tool, buffers), reason in sorted(not_used.items())]
    rows += [[hosts, tool, buffers, Absent("refused"), size, dash, dash, dash, dash, f"refused: {reason}"]
             for (hosts, tool, buffers, size), reason in sorted(refused.items())]
    if not measured:  # a launch on one host says so too; that is no news where another launch measured the network
        rows += [[Absent("none"), Absent("none"), dash, dash, dash, dash, dash, dash, dash, f"not measured: {reason}"]
                 for reason in sorted(nothing)]
    return Table("Network ceiling between hosts (no MPI)",
                 ["hosts", "tool", "buffers", "device", "size", "GB/s (median)", "streams", "seconds per run",
                  "one-way latency (us)", "records or reason"], rows,
                 "The network's own rate between the first ranks of two hosts, by each tool that could run on both: "
                 "gmb-tcp (the engine's TCP streams, with an 8-byte ping-pong), iperf3 (TCP streams), ucx_perftest "
                 "(UCX tag_bw over its network transports, on host or device buffers), ib_write_bw (RDMA writes), "
                 "fi_pingpong (libfabric ping-pong); gmb-tcp and iperf3 try several streams at once and keep the best "
                 "('streams'). From 1 MiB up a tool's rate does not depend on the message size, so an inter-node "
                 "figure of 1 MiB or more is compared with the best of them at any such size; below 1 MiB, with the "
                 "best at its own size. Device-buffer figures bound transfers between device memory on both sides; "
                 "host-buffer figures bound any.")


def network_not_measured(results: Results) -> str | None:
    """Why no network ceiling exists, as the records say it (or that none was tried); None when one was measured."""
    records = network_records(results)
    if not records:
        return 'no peaks launch ran across two hosts (a peaks block with path = "inter-node" measures the network)'
    if any(r.status == "ok" for r in records):
        return None
    return "; ".join(sorted({r.reason or "no reason recorded" for r in records}))


def is_network(avail: Ceilings, name: str | None) -> bool:
    """Whether a ceiling's name (Ceilings.at: "network", "network-device x2" ...) is one of the network's."""
    c = avail.facts.ceiling((name or "").partition(" ")[0])
    return bool(c and INTER_NODE in c.bounds)


def network_source(avail: Ceilings, name: str, nbytes: int) -> CeilingSource | None:
    """What measured the network ceiling ``name`` at ``nbytes`` (its tool and streams), None where nothing says."""
    return avail.source(name.partition(" ")[0], INTER_NODE, nbytes)


def _streams_words(source: CeilingSource | None) -> str:
    """"4 streams", "2-4 streams" (records that kept different counts); "" where none is recorded or one stream."""
    if source is None or not source.streams or source.streams == (1,):
        return ""
    counts = source.streams
    return (f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}") + " streams"


def _tool_words(source: CeilingSource | None) -> str:
    """"iperf3, 4 streams", "ucx_perftest"; "" where no tool is recorded."""
    if source is None or not source.tool:
        return ""
    streams = _streams_words(source)
    return source.tool + (f", {streams}" if streams else "")


def ceiling_name(avail: Ceilings, name: str, nbytes: int) -> str:
    """A ceiling's name as the tables and answers show it (Ceilings.at's name); a network ceiling's with the buffers
    and the tool it was measured with: "network, device buffers (ucx_perftest)", "network, host buffers (iperf3, 4
    streams) x2". An inter-node transfer between device buffers without a device-buffer ceiling is bounded by the
    host-buffer one, and says so by this name."""
    if not is_network(avail, name):
        return name
    op, _, suffix = name.partition(" ")
    c = avail.facts.ceiling(op)
    buffers = "device buffers" if c and c.buffers == "gpu_memory" else "host buffers"
    tool = _tool_words(network_source(avail, name, nbytes))
    return f"{NETWORK}, {buffers}" + (f" ({tool})" if tool else "") + (f" {suffix}" if suffix else "")


def above_every_tool(source: CeilingSource | None, name: str, mpi_GBps: float, ceiling_GBps: float) -> str:
    """What an inter-node MPI figure above its network ceiling ``name`` (measured as ``source`` says) means: the
    tools did not reach the link's limit (an MPI library cannot move more than the link carries), not that the MPI
    figure is wrong."""
    tool = source.tool if source and source.tool else "a tool"
    streams = _streams_words(source)
    suffix = name.partition(" ")[2]
    return (f"MPI moved {sig3(mpi_GBps)} GB/s, above every network tool (best: {tool} {sig3(ceiling_GBps)} GB/s"
            f"{' with ' + streams if streams else ''}{', ' + suffix if suffix else ''}): the tools did not reach the "
            f"link's limit")

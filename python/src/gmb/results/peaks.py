# SPDX-License-Identifier: BSD-3-Clause
"""Measured ceilings ("achievable peak") and which one bounds a given MPI transfer.

The engine's ``peaks`` benchmark writes one result per copy kind (operation), GPU pair or NUMA pair and size,
measured without MPI: h2d-pinned, d2h-pinned, h2d-pageable, d2h-pageable, d2d, d2d-sm, p2p-ce, p2p-ipc,
p2p-sm, host-copy, host-copy-remote ... each with the path class of what it
copied over (``path.class``: same-gpu, nvlink, pcie, peer, host-device, host, cross-socket, inter-node).

A ceiling is keyed by (operation, path class, bytes): the median over the records of that key (all GPU pairs of
that class, all repetitions), the best over libraries when several ran ``peaks``. An MPI figure is only ever
compared with a ceiling measured at the same message size and over the same path class: a 1 MiB copy that fits
in cache is not the ceiling of a 64 MiB message, and an NVLink pair is not the ceiling of a PCIe pair.

Which copy bounds which path, which side of a transfer is host memory and what a strategy stages through are the
engines' own facts (their stored descriptions: engine_facts.py); this module applies them (``Ceilings``):
  * direct (or no strategy): by the MPI path class; host-device by the host side's memory kind and the
    direction (h2d/d2h, pinned/pageable).
  * staged-pageable, staged-pinned, pipelined on device:device: the data goes through host memory, so the
    slower of the device-to-host and host-to-device copies bounds it: min(d2h-X, h2d-X), X = pageable for
    staged-pageable, pinned otherwise.
  * pipelined-gpu: a host-memory side relays through its own GPU (copy to the GPU, device-to-device MPI, copy
    back), bounded by that side's copy: h2d-X when the sender's data is on the host, d2h-X when the receiver's
    is (X = the host buffer's kind); host:host relayed both ways: min of the two.
Bidirectional bandwidth (bibw, rma_bibw: the description's ``directions``) is compared with twice the one-way ceiling where the two directions use separate
resources (nvlink, pcie, peer, host-device, inter-node: full-duplex links and separate copy engines), and with
the one-way ceiling itself (x1) where they share one memory (same-gpu, host, cross-socket). A measured
bidirectional ceiling (operation name ending in ``-bidir``) wins over either.
"""

from __future__ import annotations

from statistics import median

from .engine_facts import EngineFacts
from .model import Results

# key of a measured ceiling: (operation, path class of the peaks record, bytes)
CeilingKey = tuple[str, "str | None", int]

# paths whose two directions use separate resources: bibw may reach twice the one-way ceiling
DUPLEX_PATHS = {"nvlink", "pcie", "peer", "host-device", "inter-node"}


def measured_ceilings(results: Results) -> dict[CeilingKey, float]:
    """(operation, path class, bytes) -> measured ceiling in GB/s: median over the records of that key (GPU or
    NUMA pairs of that class, repetitions), best over the libraries that ran peaks and over the tools that
    measured it (the network's: gmb-tcp, ucx_perftest, ib_write_bw, fi_pingpong; metrics.tool)."""
    return {key: value for key, (value, _tool) in _best_ceilings(results).items()}


def ceiling_tool(results: Results, key: CeilingKey) -> str | None:
    """The tool whose median is the ceiling of that key (metrics.tool: the network's), or None."""
    return _best_ceilings(results).get(key, (None, None))[1]


def _best_ceilings(results: Results) -> dict[CeilingKey, tuple[float, str | None]]:
    """(operation, path class, bytes) -> (the best median over libraries and tools, the tool that measured it)."""
    groups: dict[tuple, list[float]] = {}
    for r in results.ok("peaks"):
        if "bw" in r.stats and r.operation:
            tool = r.metrics.get("tool")
            groups.setdefault((r.operation, r.path_class, r.bytes, r.library, tool), []).append(r.stats["bw"].median)
    out: dict[CeilingKey, tuple[float, str | None]] = {}
    for (op, path, nbytes, _lib, tool), values in groups.items():
        key = (op, path, nbytes)
        if key not in out or median(values) > out[key][0]:
            out[key] = (median(values), tool)
    return out


def ceilings(results: Results) -> Ceilings:
    return Ceilings(measured_ceilings(results), results.engines)


class Ceilings:
    """The measured ceilings of a store and the engines' facts that say which one bounds a transfer."""

    def __init__(self, measured: dict[CeilingKey, float], facts: EngineFacts):
        self.measured = measured
        self.facts = facts

    def bound_terms(self, path_class: str | None, mem_send: str | None, mem_recv: str | None,
                    strategy: str | None = None) -> list[list[tuple[str, str]]]:
        """What bounds a transfer: a list of terms whose minimum is the ceiling; each term lists (operation, path
        class) candidates, best first (the first measured at the size is used). [] when nothing applies."""
        facts = self.facts
        send_host, recv_host = facts.host_side(mem_send), facts.host_side(mem_recv)
        staged = facts.strategies.get(strategy or "")
        if staged and staged.staged_side == "gpu_backed" and not send_host and not recv_host:
            # device:device through host memory of the strategy's kind: the slower of its two copies
            return [self._copies("d2h", staged.staging_property), self._copies("h2d", staged.staging_property)]
        if staged and staged.staged_side == "host" and (send_host or recv_host):
            # a host side relays through its GPU: bounded by that side's copy
            terms = []
            if send_host:
                terms.append(self._copies("h2d", facts.host_memory(mem_send)))
            if recv_host:
                terms.append(self._copies("d2h", facts.host_memory(mem_recv)))
            return terms
        if path_class == "host-device":
            if send_host:
                return [self._copies("h2d", facts.host_memory(mem_send))]
            return [self._copies("d2h", facts.host_memory(mem_recv))]
        cands = facts.bounding(path_class or "")
        return [[(op, path_class) for op in cands]] if cands else []

    def _copies(self, direction: str, host_memory: str | None) -> list[tuple[str, str]]:
        # a pageable ceiling is sometimes not measured: the pinned one still bounds it (from above)
        ops = self.facts.copies(direction, host_memory or "")
        if host_memory == "pageable":
            ops += self.facts.copies(direction, "page_locked")
        return [(op, "host-device") for op in ops]

    def _term_at(self, term, benchmark: str, nbytes: int) -> tuple[str, float] | None:
        both_ways = self.facts.bidirectional(benchmark)
        for op, path in term:
            if both_ways and (op + "-bidir", path, nbytes) in self.measured:
                return op + "-bidir", self.measured[(op + "-bidir", path, nbytes)]
            if (op, path, nbytes) in self.measured:
                v = self.measured[(op, path, nbytes)]
                if both_ways:
                    return (op + " x2", 2 * v) if path in DUPLEX_PATHS else (op + " x1", v)
                return op, v
        return None

    def at(self, benchmark: str, path_class, mem_send, mem_recv, nbytes: int, strategy: str | None = None):
        """(name, GB/s) of the ceiling bounding this benchmark's bandwidth on that path at that message size, or
        (None, None) when no ceiling of that path was measured at that size. The name says what was used, e.g.
        "p2p-ipc", "p2p-ipc x2", "host-copy x1", "min(d2h-pinned, h2d-pinned)"."""
        terms = self.bound_terms(path_class, mem_send, mem_recv, strategy)
        if not terms:
            return None, None
        got = [self._term_at(t, benchmark, nbytes) for t in terms]
        if any(g is None for g in got):
            return None, None
        if len(got) == 1:
            return got[0]
        return f"min({', '.join(name for name, _ in got)})", min(v for _, v in got)

    def sizes(self, benchmark: str, path_class, mem_send, mem_recv, strategy: str | None = None) -> list[int]:
        """The message sizes at which a ceiling bounding this transfer was measured, ascending."""
        return [b for b in sorted({b for (_op, _path, b) in self.measured})
                if self.at(benchmark, path_class, mem_send, mem_recv, b, strategy)[1] is not None]

    def curve(self, benchmark: str, path_class, mem_send, mem_recv, strategy: str | None = None
              ) -> tuple[tuple[int, str, float], ...]:
        """((bytes, name, GB/s), ...) of the ceiling bounding this transfer at every size it was measured at."""
        return tuple((b, *self.at(benchmark, path_class, mem_send, mem_recv, b, strategy))
                     for b in self.sizes(benchmark, path_class, mem_send, mem_recv, strategy))

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
Where several copies bound a path (GPU pairs: p2p-ipc between processes, p2p-ce and p2p-sm in one process), the
bound is the largest of those measured at the size: a bound is the fastest way the hardware was measured to move
that data without MPI (an SM copy, as NCCL moves data, may beat the copy engine), and the name says which. A
pageable copy falls back to the pinned one only where the pageable one was not measured.
Bidirectional bandwidth (bibw, rma_bibw: the description's ``directions``) is compared with twice the one-way
ceiling where the two directions use separate resources (nvlink, pcie, peer, inter-node: full-duplex links and
separate copy engines), and with the one-way ceiling itself (x1) where they share one memory (same-gpu, host,
cross-socket); host <-> device with the sum of the copy one way and the copy back (h2d-X + d2h-X, X = the host
buffer's kind). A measured bidirectional ceiling (operation name ending in ``-bidir``) wins over any of these.
Several pairs at once (mbw: an aggregate figure) are compared with the aggregate's ceiling: per group of pairs
that share a resource (result_facts.PairLayout: a network link between two hosts, a GPU, a host's memory) that
resource's ceiling once, summed over the groups; the nominal rate likewise (nominal_rate).

The network's ceilings are a stream's rate (the description's ``stream_from_bytes``): a tool streaming messages of
1 MiB or of 64 MiB measures one long transfer, so at every message size from that one up the ceiling is the best
figure the tools measured at any such size (whether or not peaks ran at the MPI figure's own size); below it, per
size. The one measured on GPU buffers (``buffers``: gpu_memory) bounds only transfers between GPU memory on both
sides, and answers before the one on host buffers (which bounds any) wherever it was measured.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from statistics import median

from .engine_facts import EngineFacts
from .model import Results
from .points import Point
from .stored_rows import Result
from .result_facts import PairLayout

# why a multi-pair figure has no ceiling where its record does not say each pair's path
PAIRS_NOT_RECORDED = "pairs not recorded (each pair's path: records of engines before pair_paths)"

# key of a measured ceiling: (operation, path class of the peaks record, bytes)
CeilingKey = tuple[str, "str | None", int]


@dataclass(frozen=True)
class CeilingSource:
    """What a ceiling's figure is: the tool that measured it (the network's: metrics.tool; None for a copy), the
    stream counts its records kept (metrics.streams; () where none says), and the message size it was measured
    at (a stream's ceiling: the size of the best figure)."""
    tool: str | None
    streams: tuple[int, ...]
    bytes: int


# paths whose two directions use separate resources: bibw may reach twice the one-way ceiling (host-device: the
# copy one way and the copy back, Ceilings.bound_terms)
DUPLEX_PATHS = {"nvlink", "pcie", "peer", "host-device", "inter-node"}


def measured_ceilings(results: Results) -> dict[CeilingKey, float]:
    """(operation, path class, bytes) -> measured ceiling in GB/s: median over the records of that key (GPU or
    NUMA pairs of that class, repetitions), best over the libraries that ran peaks and over the tools that
    measured it (the network's: metrics.tool), at the size it was measured at."""
    return {key: value for key, (value, _source) in _best_ceilings(results).items()}


def _best_ceilings(results: Results) -> dict[CeilingKey, tuple[float, CeilingSource]]:
    """(operation, path class, bytes) -> (the best median over libraries and tools, what measured it)."""
    groups: dict[tuple, list[Result]] = {}
    for r in results.ceilings():
        if "bw" in r.stats and r.operation:
            groups.setdefault((r.operation, r.path_class, r.bytes, r.library, r.metrics.get("tool")), []).append(r)
    out: dict[CeilingKey, tuple[float, CeilingSource]] = {}
    for (op, path, nbytes, _lib, tool), rs in groups.items():
        key, value = (op, path, nbytes), median(r.stats["bw"].median for r in rs)
        if key not in out or value > out[key][0]:
            streams = tuple(sorted({r.metrics["streams"] for r in rs if isinstance(r.metrics.get("streams"), int)}))
            out[key] = (value, CeilingSource(tool, streams, nbytes))
    return out


def ceilings(results: Results) -> Ceilings:
    best = _best_ceilings(results)
    return Ceilings({k: v for k, (v, _) in best.items()}, results.engines, {k: src for k, (_, src) in best.items()})


# A term's candidates: tiers of (operation, path class), the first tier with one measured at the size answering
Tiers = tuple[tuple[tuple[str, str], ...], ...]


@dataclass(frozen=True)
class Term:
    """One quantity a transfer is bounded by: the copies that move its data without MPI (``ways``), and for a
    transfer both ways at once whose other direction is another copy (host <-> device: h2d one way, d2h back),
    that direction's copies (``back``)."""
    ways: Tiers
    back: Tiers | None = None

    @property
    def path(self) -> str | None:
        """The path class of its copies (one per term)."""
        return next((path for tier in self.ways for _, path in tier), None)


class Ceilings:
    """The measured ceilings of a store and the engines' facts that say which one bounds a transfer."""

    def __init__(self, measured: dict[CeilingKey, float], facts: EngineFacts,
                 sources: dict[CeilingKey, CeilingSource] | None = None):
        self.measured = measured
        self.facts = facts
        self.sources = sources or {}
        # a stream's ceiling from its stream_from_bytes up: (operation, path) -> the key of its best figure there
        self.streams: dict[tuple[str, str | None], CeilingKey] = {}
        for key, value in measured.items():
            op, path, nbytes = key
            start = self._stream_from(op)
            best = self.streams.get((op, path))
            if start is not None and nbytes >= start and (best is None or value > measured[best]):
                self.streams[(op, path)] = key

    def _stream_from(self, operation: str) -> int | None:
        c = self.facts.ceiling(operation)
        return c.stream_from_bytes if c else None

    def _key_at(self, op: str, path: str | None, nbytes: int) -> CeilingKey | None:
        """The measured figure that bounds ``op`` on ``path`` at ``nbytes``: the one at that size, or for a stream's
        ceiling from its stream_from_bytes up the best at any such size; None without one."""
        start = self._stream_from(op)
        if start is not None and nbytes >= start:
            return self.streams.get((op, path))
        return (op, path, nbytes) if (op, path, nbytes) in self.measured else None

    def source(self, operation: str, path_class: str | None, nbytes: int) -> CeilingSource | None:
        """What measured the figure bounding ``operation`` on that path at that size (None without one)."""
        key = self._key_at(operation, path_class, nbytes)
        return self.sources.get(key) if key else None

    def bound_terms(self, path_class: str | None, mem_send: str | None, mem_recv: str | None,
                    strategy: str | None = None) -> list[Term]:
        """What bounds a transfer: the terms whose minimum is the ceiling. [] when nothing applies."""
        facts = self.facts
        send_host, recv_host = facts.host_side(mem_send), facts.host_side(mem_recv)
        staged = facts.strategies.get(strategy or "")
        if staged and staged.staged_side == "gpu_backed" and not send_host and not recv_host:
            # device:device through host memory of the strategy's kind: the slower of its two copies
            return [Term(self._copies("d2h", staged.staging_property)),
                    Term(self._copies("h2d", staged.staging_property))]
        if staged and staged.staged_side == "host" and (send_host or recv_host):
            # a host side relays through its GPU: bounded by that side's copy
            terms = []
            if send_host:
                terms.append(Term(self._copies("h2d", facts.host_memory(mem_send))))
            if recv_host:
                terms.append(Term(self._copies("d2h", facts.host_memory(mem_recv))))
            return terms
        if path_class == "host-device":
            # one way the host side's copy to (or from) the GPU; both ways at once, that copy and the one back
            host = facts.host_memory(mem_send if send_host else mem_recv)
            there, back = ("h2d", "d2h") if send_host else ("d2h", "h2d")
            return [Term(self._copies(there, host), self._copies(back, host))]
        cands = facts.bounding(path_class or "", (mem_send, mem_recv))
        # the largest of them bounds, one measured on the transfer's own kind of buffers (the network's on GPU
        # buffers) included: a tool's way of moving GPU buffers (one stream, staged through host memory) is not the
        # link's limit, and MPI's or NCCL's own pipelining moves more over the same link
        return [Term((tuple((op, path_class) for op in cands),))] if cands else []

    def _copies(self, direction: str, host_memory: str | None) -> Tiers:
        # a pageable ceiling is sometimes not measured: the pinned one still bounds it (from above), where it is not
        tiers = (tuple((op, "host-device") for op in self.facts.copies(direction, host_memory or "")),)
        if host_memory == "pageable":
            tiers += (tuple((op, "host-device") for op in self.facts.copies(direction, "page_locked")),)
        return tiers

    def _largest(self, tiers: Tiers, nbytes: int, value) -> tuple[str, float] | None:
        """The largest (name, GB/s) of ``value(operation, path class)`` over the first tier that has one: the
        bound is the fastest way the hardware was measured to move that data at that size."""
        for tier in tiers:
            got = [v for op, path in tier if (v := value(op, path, nbytes)) is not None]
            if got:
                return max(got, key=lambda v: v[1])
        return None

    def _one_way(self, op: str, path: str, nbytes: int) -> tuple[str, float] | None:
        key = self._key_at(op, path, nbytes)
        return None if key is None else (op, self.measured[key])

    def _term_at(self, term: Term, benchmark: str, nbytes: int) -> tuple[str, float] | None:
        one_way = self._largest(term.ways, nbytes, self._one_way)
        if not self.facts.bidirectional(benchmark):
            return one_way
        # a measured bidirectional ceiling wins over any made of one-way copies
        measured = self._largest(term.ways, nbytes, lambda op, path, b: self._one_way(op + "-bidir", path, b))
        if measured or one_way is None:
            return measured
        name, value = one_way
        if term.back:  # the other direction is another copy (host <-> device): the two add up
            back = self._largest(term.back, nbytes, self._one_way)
            return (f"{name} + {back[0]}", value + back[1]) if back else None
        # separate resources per direction: twice the one-way ceiling; one shared memory: once
        return (name + " x2", 2 * value) if term.path in DUPLEX_PATHS else (name + " x1", value)

    def at(self, benchmark: str, path_class, mem_send, mem_recv, nbytes: int, strategy: str | None = None,
           pairs: PairLayout | None = None):
        """(name, GB/s) of the ceiling bounding this benchmark's bandwidth on that path at that message size, or
        (None, None) when no ceiling of that path was measured at that size. The name says what was used, e.g.
        "p2p-ipc", "p2p-ipc x2", "h2d-pinned + d2h-pinned", "host-copy x1", "min(d2h-pinned, h2d-pinned)". Several
        pairs at once (``pairs``): the sum over its groups of pairs of each group's ceiling (a group of pairs
        sharing a resource is bounded by that resource once), "4 x p2p-ipc", "network (shared by 4 pairs)"; (None,
        None) where the record does not say each pair's path."""
        if pairs is not None:
            return self._aggregate(benchmark, mem_send, mem_recv, nbytes, strategy, pairs)
        terms = self.bound_terms(path_class, mem_send, mem_recv, strategy)
        if not terms:
            return None, None
        got = [self._term_at(t, benchmark, nbytes) for t in terms]
        if any(g is None for g in got):
            return None, None
        if len(got) == 1:
            return got[0]
        return f"min({', '.join(name for name, _ in got)})", min(v for _, v in got)

    def _aggregate(self, benchmark, mem_send, mem_recv, nbytes, strategy, pairs: PairLayout):
        if not pairs.groups or any(g.path_class is None for g in pairs.groups):
            return None, None
        got = [(g, *self.at(benchmark, g.path_class, mem_send, mem_recv, nbytes, strategy)) for g in pairs.groups]
        if any(v is None for _, _, v in got):
            return None, None
        counts = Counter((name, g.pairs) for g, name, _ in got)
        parts = [(f"{n} x {name}" if n > 1 else name)
                 + (f" ({'each ' if n > 1 else ''}shared by {k} pairs)" if k > 1 else "")
                 for (name, k), n in sorted(counts.items())]
        return " + ".join(parts), sum(v for _, _, v in got)

    def of_point(self, p: Point) -> tuple[str | None, float | None]:
        """The ceiling bounding a point's bandwidth (at): the one computation of a figure's % of ceiling that
        every table, answer and figure uses."""
        return self.at(p.benchmark, p.path_class, p.sides.send, p.sides.recv, p.bytes, p.strategy,
                       p.key.pairs if p.key else None)

    def sizes(self, benchmark: str, path_class, mem_send, mem_recv, strategy: str | None = None,
              pairs: PairLayout | None = None) -> list[int]:
        """The message sizes at which a ceiling bounding this transfer was measured, ascending (a stream's ceiling
        bounds sizes it was not measured at too: ``at`` answers for any size)."""
        return [b for b in sorted({b for (_op, _path, b) in self.measured})
                if self.at(benchmark, path_class, mem_send, mem_recv, b, strategy, pairs)[1] is not None]

    def curve(self, benchmark: str, path_class, mem_send, mem_recv, strategy: str | None = None,
              pairs: PairLayout | None = None) -> tuple[tuple[int, str, float], ...]:
        """((bytes, name, GB/s), ...) of the ceiling bounding this transfer at every size it was measured at."""
        return tuple((b, *self.at(benchmark, path_class, mem_send, mem_recv, b, strategy, pairs))
                     for b in self.sizes(benchmark, path_class, mem_send, mem_recv, strategy, pairs))


def nominal_rate(p: Point, facts: EngineFacts) -> float | None:
    """The nominal link rate a point's bandwidth is compared with: its path's per-direction rate (several pairs at
    once: each group of pairs sharing a link once, summed), doubled for a benchmark counting both directions;
    None when unknown."""
    layout = p.key.pairs if p.key else None
    one = layout.nominal() if layout else p.nominal
    return one * (2 if facts.bidirectional(p.benchmark) else 1) if one else None

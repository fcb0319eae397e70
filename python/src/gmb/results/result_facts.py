# SPDX-License-Identifier: BSD-3-Clause
"""What a result record says of the point it measured: the statistic it is ranked by (headline), where its buffers
were (Sides, memory_label), its operation and variant as one label (operation_label), what kind of measurement it is
(pairwise, overlap, one-sided, persistent, partitioned, placed on managed memory, a ceiling), how its pairs share
what bounds them (pair_layout) and why an adaptive engine stopped (precision_stop)."""

from __future__ import annotations

from dataclasses import dataclass

STAT_OBJECTS = ("time_us", "bandwidth_GBps", "busbw_GBps", "message_rate_Mps")
# A record written before records named their headline is ranked by the first of these it carries: what those
# engines' benchmarks were ranked by (coll: busbw; bw, bibw, mbw, peaks: bandwidth; latency, um, halo, nbc: time)
_HEADLINE_BY_CONTENT = ("busbw_GBps", "bandwidth_GBps", "time_us")


def headline(result: dict) -> str:
    """The statistics object tables, figures and comparisons rank a result by: the record's own ``headline`` (the
    engine's description of its benchmark says which), else, for a record written before records named it,
    busbw_GBps if it carries one, else bandwidth_GBps if it carries one, else time_us."""
    named = result.get("headline")
    if named in STAT_OBJECTS:
        return named
    return next((s for s in _HEADLINE_BY_CONTENT if isinstance(result.get(s), dict)), "time_us")


def precision_stop(result: dict) -> str | None:
    """Why an adaptive engine stopped repeating a point (``precision.stopped``: "converged" when the median's 95 %
    confidence interval reached the target, "iteration cap" or "time cap" when it did not), or None for a record
    timed with a fixed number of iterations."""
    precision = result.get("precision")
    return precision.get("stopped") if isinstance(precision, dict) else None


def pairwise(result: dict) -> bool:
    """A result measured between pairs of ranks (point to point, multi-pair, managed placements): its memory names a
    send and a receive side (collectives name a root and the others, halo its field, peaks none)."""
    memory = result.get("memory")
    return isinstance(memory, dict) and "send" in memory and "recv" in memory


@dataclass(frozen=True)
class Sides:
    """Where a result's buffers were, as its record says: between a pair of ranks a send and a receive side (a
    managed kind with its placement: "managed:device"); a collective or a halo the distinct kinds of its buffers
    (root and others, a field); peaks none. The label ("host:device", "device") is for people and the store's
    memory column; the report decides on the sides."""
    send: str | None = None
    recv: str | None = None
    kinds: tuple[str, ...] = ()  # every kind present, sorted and deduplicated (both sides' for a pair)

    @classmethod
    def of(cls, memory: dict | None) -> Sides:
        if not isinstance(memory, dict) or not memory:
            return cls()
        if "send" in memory or "recv" in memory:
            send, recv = memory.get("send", "?"), memory.get("recv", "?")
            return cls(send, recv, tuple(sorted({send, recv})))
        return cls(kinds=tuple(sorted({str(v) for v in memory.values()})))

    @classmethod
    def of_label(cls, label: str | None) -> Sides:
        """The sides of a label a campaign plans with ("host:device", "managed:host:managed:device", a collective's
        "device"): its memory as the user wrote it."""
        if not label:
            return cls()
        tokens = label.split(":")
        kinds, i = [], 0
        while i < len(tokens):
            # with only two tokens ('managed:device') they are send and recv, not one located kind
            located = len(tokens) > 2 and i + 1 < len(tokens) and tokens[i + 1] in ("host", "device")
            if tokens[i] == "managed" and located:
                kinds.append(f"managed:{tokens[i + 1]}")
                i += 2
            else:
                kinds.append(tokens[i])
                i += 1
        if len(kinds) != 2 or not all(kinds):  # not a pair: a collective's kinds
            return cls(kinds=tuple(sorted(set(label.split(",")))))
        return cls(kinds[0], kinds[1], tuple(sorted(set(kinds))))

    @property
    def pair(self) -> bool:
        """A send and a receive side (point to point)."""
        return self.send is not None and self.recv is not None

    @property
    def managed(self) -> bool:
        return any(k.startswith("managed") for k in self.kinds)

    @property
    def device(self) -> bool:
        """Plain device memory on some side (a managed kind placed on the device, "managed:device", is not)."""
        return "device" in self.kinds

    @property
    def label(self) -> str:
        """'host:device' for a pair (send:recv); otherwise the kinds, comma-separated; '' for none."""
        return f"{self.send}:{self.recv}" if self.pair else ",".join(self.kinds)

    def __lt__(self, other: Sides) -> bool:  # sorted as their labels read
        return self.label < other.label


def memory_label(memory: dict | None) -> str:
    """'host:device' for point to point (send:recv); collectives list the per-rank kinds, deduplicated."""
    return Sides.of(memory).label


def operation_label(result: dict) -> str | None:
    """What a result measured within its benchmark, as one label: its operation and its variant ("put flush create"
    for one-sided put under flush on a window MPI_Win_create made, "allreduce persistent", "persistent", "P=16",
    "P=16 per-block"); None for a record with neither (two-sided latency, bw ...). Records of one benchmark that
    differ here are different points: the store keeps this label in its operation column, so every table, figure
    and comparison that keys on the operation keeps them apart."""
    parts = [str(result[k]) for k in ("operation", "variant") if result.get(k)]
    return " ".join(parts) or None


def overlap(result: dict) -> bool:
    """A result of a communication/computation overlap measurement (non-blocking collectives, partitioned overlap):
    its metrics hold an overlap %, and its time is the overall time with compute, not a latency."""
    metrics = result.get("metrics")
    return isinstance(metrics, dict) and "overlap_pct" in metrics


def one_sided(result: dict) -> bool:
    """A one-sided (RMA) result: it names its call, synchronisation and window creation (``rma``)."""
    return isinstance(result.get("rma"), dict)


def persistent(result: dict) -> bool:
    """A result of the persistent form of a call (MPI_Send_init ..., MPI_Allreduce_init): it names the call and the
    regular form's figure of the same launch (``persistent``)."""
    return isinstance(result.get("persistent"), dict)


def partitioned(result: dict) -> bool:
    """A result of MPI-4 partitioned communication: it names its partition count."""
    return "partitions" in result


def placed(result: dict) -> bool:
    """A result on managed memory with a placement (host or device) per side."""
    return isinstance(result.get("placement"), dict)


@dataclass(frozen=True)
class PairGroup:
    """Pairs of a multi-pair result that share what bounds them: one ceiling for all of them together."""
    path_class: str | None  # None: pairs of different paths share a resource (no ceiling applies)
    pairs: int
    nominal_GBps: float | None  # the per-direction nominal rate of what they share, None when unknown


@dataclass(frozen=True)
class PairLayout:
    """How the pairs of a multi-pair result (mbw, mlat: ranks/2 pairs at once) are laid out: groups of pairs that
    share a resource (a network link between two hosts, a GPU and its links, a host's memory), each bounded by
    its own path's ceiling; separate groups add up. ``groups`` is None where the record does not say each
    pair's path (engines before ``pair_paths``)."""
    count: int
    groups: tuple[PairGroup, ...] | None

    def nominal(self) -> float | None:
        """The aggregate's nominal rate: each group's once, summed; None when one is unknown or not recorded."""
        rates = [g.nominal_GBps for g in self.groups or ()]
        return sum(rates) if rates and all(rates) else None


def _shared_resources(pair: dict, index: int) -> set[tuple]:
    """What a pair's transfer uses that another pair may use too: the network between its two hosts (every pair
    between those hosts shares it), a host's memory (host-to-host pairs of one host), each GPU a side's buffer is
    on (its copy engines and links: pairs with a GPU in common share them). A pair naming none of these (an
    unknown path) shares nothing."""
    path = pair.get("path") or {}
    hosts, gpus = pair.get("hosts") or [], pair.get("gpus") or []
    if path.get("class") == "inter-node" and len(hosts) == 2:
        return {("network", *sorted(map(str, hosts)))}
    if path.get("class") in ("host", "cross-socket") and hosts:
        return {("host memory", str(hosts[0]))}
    used = {("gpu", str(h), str(g)) for h, g in zip(hosts, gpus) if g}
    return used or {("pair", index)}


def pair_layout(result: dict) -> PairLayout | None:
    """The layout of a result's pairs (PairLayout); None for a single pair (its path is the record's ``path``)."""
    count = result.get("pairs")
    if not isinstance(count, int) or count < 2:
        return None
    pairs = result.get("pair_paths")
    if not isinstance(pairs, list) or len(pairs) != count or not all(isinstance(p, dict) for p in pairs):
        return PairLayout(count, None)
    merged: list[tuple[set, list[dict]]] = []  # (resources, pairs) of pairs that share one, transitively
    for i, pair in enumerate(pairs):
        resources = _shared_resources(pair, i)
        joined = [g for g in merged if g[0] & resources]
        merged = [g for g in merged if not g[0] & resources]
        merged.append((resources.union(*(g[0] for g in joined)), [q for g in joined for q in g[1]] + [pair]))
    groups = []
    for _, members in merged:
        paths = [m.get("path") or {} for m in members]
        classes = {p.get("class") for p in paths}
        rates = [p.get("nominal_GBps") for p in paths]
        nominal = min(rates) if all(isinstance(r, (int, float)) and r > 0 for r in rates) else None
        groups.append(PairGroup(classes.pop() if len(classes) == 1 else None, len(members), nominal))
    return PairLayout(count, tuple(sorted(groups, key=lambda g: (g.path_class or "", g.pairs, g.nominal_GBps or 0))))


# The benchmark whose records are ceilings: copies and streams measured without MPI (by the engine's copies, NCCL
# aside, the network tools), the hardware's bound on a path; they measure no library's communication.
CEILINGS = "peaks"


def is_ceiling(result: dict) -> bool:
    """Whether a record is a ceiling (CEILINGS), not a library's figure."""
    return result.get("benchmark") == CEILINGS


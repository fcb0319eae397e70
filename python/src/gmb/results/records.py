# SPDX-License-Identifier: BSD-3-Clause
"""Reading gmb record files (JSON Lines, schema ``gmb.record/1``).

A record file holds one ``context`` line followed by ``result`` lines. The contract lives in the repository's
``schema/record.v1.json``, shipped as an identical copy inside the package (``gmb/schema/record.v1.json``, found with
``importlib.resources``; ``$GMB_SCHEMA`` names another file); validation against it is asked for
(``gmb ingest --validate``) and mandatory in the tests. It needs the ``jsonschema`` package, a dependency of gmb:
validation asked for without it is an error, never skipped.
"""

from __future__ import annotations

import importlib.resources
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import SCHEMA_ID
from ..machine import families
from ..machine.identity import transport_of

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


# Environment variables that are settings of a library or runtime (what can change a figure), by prefix: the family
# table's; the engine records every variable of these prefixes and more (launcher bookkeeping, paths) in its context.
SETTING_PREFIXES = families.setting_prefixes()
# ... except what launchers, images and gmb set per launch or per machine, which is no setting of the library
NOT_SETTINGS = {"CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "CUDA_VERSION", "NCCL_VERSION",
                "OMPI_MCA_PREFIXES", "OMPI_MCA_initial_wdir", "OMPI_MCA_num_procs", "OMPI_MCA_cpu_type",
                "OMPI_MCA_plm", "OMPI_MCA_orte_launch", "OMPI_MCA_ess", "OMPI_MCA_mpi_oversubscribe",
                "OMPI_MCA_shmem_RUNTIME_QUERY_hint", "MPICH_INTERFACE_HOSTNAME", "MPIR_CVAR_CH3_INTERFACE_HOSTNAME",
                "MPIR_CVAR_CH4_INTERFACE_HOSTNAME"}
NOT_SETTING_PREFIXES = ("OMPI_MCA_orte_", "OMPI_MCA_ess_", "OMPI_MCA_pmix", "OMPI_MCA_prte_", "OMPI_MCA_ras_",
                        "OMPI_MCA_state_", "OMPI_MCA_routed", "OMPI_MCA_odls_")
# Options of a benchmark that other fields of a point already name (memory, strategy and chunks, transport, the
# operation and its variant: a one-sided synchronisation and window creation, partitions and their ready mode; a
# launch may sweep several of these) or that say how long or what else to measure, not how: they are not part of the
# configuration.
NOT_CONFIGURATION_OPTIONS = {"send", "recv", "mem", "mem_root", "mem_others", "strategy", "chunks", "transport",
                             "operation", "sync", "window_creation", "partitions", "ready", "references",
                             "compute_sweep", "samples", "copies"}


# Open MPI's mpirun hands its --map-by to the ranks as this variable
MAPPING_VARIABLE = "OMPI_MCA_rmaps_base_mapping_policy"


def settings(context: dict, transport: str = "mpi") -> dict[str, str]:
    """The library and runtime settings a launch ran under (UCX_*, OMPI_MCA_*, MPIR_CVAR_*, NCCL_* ...), from its
    context's environment (rank 0's); NCCL's only where NCCL moved the data (``transport`` "nccl")."""
    env = context.get("environment") or {}
    return {k: str(v) for k, v in sorted(env.items()) if k.startswith(SETTING_PREFIXES) and k not in NOT_SETTINGS
            and not k.startswith(NOT_SETTING_PREFIXES) and (transport == "nccl" or not k.startswith("NCCL_"))
            and not (k == MAPPING_VARIABLE and str(v) == _ranks_per_host_mapping(context))}


def _ranks_per_host_mapping(context: dict) -> str | None:
    """The mapping that puts the launch's ranks as they ran, the same number on each host ("ppr:N:node", what gmb's
    launcher asks for a launch over nodes): no setting of the library, the point's hosts and ranks already say it.
    None where the hosts held different numbers of ranks or the context does not say."""
    per_host: dict[str, int] = {}
    for rank in context.get("ranks") or []:
        if isinstance(rank, dict) and rank.get("host"):
            per_host[rank["host"]] = per_host.get(rank["host"], 0) + 1
    counts = set(per_host.values())
    return f"ppr:{counts.pop()}:node" if len(counts) == 1 else None


def _binding(context: dict) -> str | None:
    """How the ranks were bound, in words that hold on any machine: "unbound" (every rank on the same set of CPUs, as
    --bind-to none leaves them), "1 CPU/rank" (bound to a core or thread), else "N CPUs/rank" (a socket, a NUMA node;
    "N-M" when the ranks' sets differ in size). None when the context does not say."""
    sets = []
    for rank in context.get("ranks") or []:
        cpus = set()
        for part in filter(None, str(rank.get("cpu_binding") or "").split(",")):
            lo, _, hi = part.partition("-")
            try:
                cpus.update(range(int(lo), int(hi or lo) + 1))
            except ValueError:
                return None
        if cpus:
            sets.append(frozenset(cpus))
    if not sets:
        return None
    if len(sets) > 1 and len(set(sets)) == 1 and len(sets[0]) > 1:
        return "unbound"
    lo, hi = min(map(len, sets)), max(map(len, sets))
    return f"{lo} CPU{'s' if hi > 1 else ''}/rank" if lo == hi else f"{lo}-{hi} CPUs/rank"


def configuration(context: dict, result: dict) -> dict:
    """What a result's figure depends on beyond the columns the store keeps of it (library, benchmark, operation,
    memory, strategy, ranks, path, size): the settings (settings()), the benchmark options that change the measured
    work (window, compute, tests, dtype, root, in place, buffer offsets, an explicit batch, the NIC pinning ...), how
    ranks were bound,
    and over how many hosts they ran. Results of one library whose configurations differ are different points."""
    options = (context.get("options") or {}).get("benchmark") or {}
    common = (context.get("options") or {}).get("common") or {}
    work = {k: v for k, v in options.items() if k not in NOT_CONFIGURATION_OPTIONS} if isinstance(options, dict) else {}
    if isinstance(common, dict) and common.get("batch"):  # 0: chosen by the engine, not asked for
        work["batch"] = common["batch"]
    if isinstance(common, dict) and common.get("nic") not in (None, "none"):  # --nic: the card each rank used
        work["nic"] = common["nic"]
    hosts = {r.get("host") for r in context.get("ranks") or [] if r.get("host")}
    transport = str(result.get("transport") or transport_of(context))
    out = {"settings": settings(context, transport), "options": dict(sorted(work.items())), "binding": _binding(context),
           "hosts": len(hosts) or None}
    return {k: v for k, v in out.items() if v not in (None, {}, "")}

def measured_nothing(result: dict) -> str | None:
    """Why an ok result is no measurement: a collective that moved no data (``metrics.op_bytes`` 0, e.g. 3 bytes
    of float, or 1 byte of alltoall over 4 ranks, is no whole element per block) has a time but no transfer, and a
    bandwidth of 0. None for any other result.
    The store keeps such a result as "unsupported" with this reason, never as a figure."""
    metrics = result.get("metrics")
    if result.get("status") != "ok" or not isinstance(metrics, dict) or metrics.get("op_bytes") != 0:
        return None
    dtype = result.get("dtype")
    return (f"the operation moved no data ({result.get('bytes')} B{' of ' + dtype if isinstance(dtype, str) else ''} "
            f"makes no whole element per block: metrics.op_bytes 0), so its figures measure no transfer")


# No link carries more: ten times the fastest per-direction rate of any interconnect known (NVLink 5, 900 GB/s per
# GPU; network cards, 100 GB/s). The engine refuses a network tool printing more (network_tools.hpp,
# kPlausibleNetworkGBps; docs/methodology.md), and the store a record that holds more.
PLAUSIBLE_NETWORK_GBPS = 10_000


# The benchmark whose records are ceilings: copies and streams measured without MPI (by the engine's copies, NCCL
# aside, the network tools), the hardware's bound on a path; they measure no library's communication.
CEILINGS = "peaks"


def is_ceiling(result: dict) -> bool:
    """Whether a record is a ceiling (CEILINGS), not a library's figure."""
    return result.get("benchmark") == CEILINGS


def implausible_ceiling(result: dict) -> str | None:
    """Why an ok peaks result is no ceiling: its bandwidth is not finite numbers (null: the engine writes a non-finite
    figure so), its median is not above 0, or a figure between hosts is above PLAUSIBLE_NETWORK_GBPS (a tool that
    printed nonsense). None for any other result. The store keeps such a result as "unsupported" with this reason,
    never as a ceiling."""
    if not is_ceiling(result) or result.get("status") != "ok":
        return None
    bw = result.get("bandwidth_GBps")
    tool = (result.get("metrics") or {}).get("tool") if isinstance(result.get("metrics"), dict) else None
    what = f"{result.get('operation') or 'a copy'}{' by ' + tool if isinstance(tool, str) else ''}"
    if not _statistics(bw) or "median" not in bw:
        return f"an implausible figure ({what}: bandwidth_GBps {_shown(bw)}, not finite numbers): not a ceiling"
    if bw["median"] <= 0:
        return f"an implausible figure ({what}: {bw['median']} GB/s, not above 0): not a ceiling"
    if (result.get("path") or {}).get("class") == "inter-node" and bw["median"] > PLAUSIBLE_NETWORK_GBPS:
        return (f"an implausible figure ({what}: {bw['median']:.6g} GB/s, above {PLAUSIBLE_NETWORK_GBPS} GB/s, ten "
                f"times the fastest link of any interconnect): not a ceiling")
    return None


def not_a_figure(result: dict) -> str | None:
    """Why an ok result is kept as "unsupported" rather than stored as a figure (measured_nothing,
    implausible_ceiling); None for a figure."""
    return measured_nothing(result) or implausible_ceiling(result)


RESULT_STATUSES = ("ok", "unsupported", "failed", "skipped")  # a result's status, as the record schema has it


INT64 = (-2 ** 63, 2 ** 63 - 1)  # what an SQLite INTEGER holds (and Python's sqlite3 binds): larger is no row


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and \
        (isinstance(value, float) or INT64[0] <= value <= INT64[1])


def _integer(least: int):
    """A check: an integer from ``least`` to the largest the store holds."""
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and least <= v <= INT64[1]


def _shown(value) -> str:
    return json.dumps(value)[:60]


def _field_problems(rec: dict, checks: dict) -> str | None:
    """The first field of ``rec`` that is present (required: also absent) and fails its check: "what must be
    (got ...)". An optional field that is null counts as absent, as the store reads it."""
    for key, (required, ok, what) in checks.items():
        if rec.get(key) is None and not required:
            continue
        if key not in rec:
            return f"no {key} ({what})"
        if not ok(rec[key]):
            return f"{key} must be {what} (got {_shown(rec[key])})"
    return None


def _strings(value) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _path(value) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(k, ""), str) for k in ("class", "link")) and \
        (value.get("nominal_GBps") is None or _number(value["nominal_GBps"]))


# The interval of a statistics object: both numbers, or both null where the launch took too few samples for one (the
# engine then says why in ci_note); every other field a number.
_INTERVAL = ("ci95_low", "ci95_high")


def _statistics(value) -> bool:
    if not isinstance(value, dict):
        return False
    interval = [value.get(k) for k in _INTERVAL if k in value]
    return (all(_number(v) for k, v in value.items() if k not in (*_INTERVAL, "ci_note"))
            and (all(_number(v) for v in interval) or all(v is None for v in interval))
            and isinstance(value.get("ci_note", ""), str))


_CONTEXT_FIELDS = {  # the fields of a context the store and the tables read, and what they must be
    "run_id": (True, lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "benchmark": (False, lambda v: isinstance(v, str), "a string"),
    "world_size": (False, _integer(1), "an integer >= 1 and < 2^63"),
    "mpi": (False, lambda v: isinstance(v, dict) and isinstance(v.get("library_version") or "", str) and
            isinstance(v.get("gpu_awareness") or {}, dict),
            "an object (library_version a string, gpu_awareness an object)"),
    "options": (False, lambda v: isinstance(v, dict) and isinstance(v.get("benchmark") or {}, dict),
                "an object (its benchmark an object)"),
    "nccl": (False, lambda v: isinstance(v, dict), "an object"),
}
_RESULT_FIELDS = {  # the fields of a result the store and the tables read, and what they must be
    "run_id": (True, lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "benchmark": (True, lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "status": (True, lambda v: v in RESULT_STATUSES, f"one of {', '.join(RESULT_STATUSES)}"),
    "bytes": (True, _integer(0), "an integer >= 0 and < 2^63"),
    "ranks": (False, _integer(1), "an integer >= 1 and < 2^63"),
    "reason": (False, lambda v: isinstance(v, str), "a string"),
    **{k: (False, lambda v: isinstance(v, str), "a string") for k in ("operation", "variant", "strategy")},
    "headline": (False, lambda v: v in STAT_OBJECTS, f"one of {', '.join(STAT_OBJECTS)}"),
    "memory": (False, _strings, "an object of memory kinds (strings)"),
    "path": (False, _path, "an object (class and link strings, nominal_GBps a number or null)"),
    "metrics": (False, lambda v: isinstance(v, dict), "an object"),
    **{s: (False, _statistics, "an object of finite numbers (n, median, p5, ...; ci95_low and ci95_high both null "
                               "where there is no interval, ci_note a string)") for s in STAT_OBJECTS},
}


def _impossible_statistics(rec: dict) -> str | None:
    """Statistics no measurement gives: a value below zero (times, bandwidths, rates, their count and spread are
    none of them negative), a median time of zero, min above max, a median outside [min, max]."""
    for name in STAT_OBJECTS:
        st = rec.get(name)
        if not isinstance(st, dict):
            continue
        negative = next((k for k, v in st.items() if _number(v) and v < 0), None)
        if negative:
            return f"{name}.{negative} must be >= 0 (got {_shown(st[negative])})"
        if name == "time_us" and st.get("median") == 0:
            return "time_us.median must be > 0 (got 0)"
        low, high, mid = st.get("min"), st.get("max"), st.get("median")
        if low is not None and high is not None and low > high:
            return f"{name}.min must be <= {name}.max (got min {_shown(low)}, max {_shown(high)})"
        if None not in (low, high, mid) and not low <= mid <= high:
            return (f"{name}.median must lie within [min, max] (got median {_shown(mid)}, min {_shown(low)}, "
                    f"max {_shown(high)})")
    return None


def row_problem(rec: dict) -> str | None:
    """Why a record cannot make a row of the store, or None: a field that the store, the tables or the figures read
    is missing or of the wrong type (bytes an integer >= 0, status one the record schema names, statistics objects
    of numbers, ...), its statistics cannot be (_impossible_statistics), or an ok result lacks the statistic it is
    ranked by. Checked on every record read, with or
    without schema validation, so that no such row is stored as a figure."""
    if rec.get("type") == "context":
        return _field_problems(rec, _CONTEXT_FIELDS)
    if implausible_ceiling(rec):  # kept as unsupported, with why: its statistics are what is wrong with it
        return _field_problems(rec, {k: v for k, v in _RESULT_FIELDS.items() if k not in STAT_OBJECTS})
    problem = _field_problems(rec, _RESULT_FIELDS) or _impossible_statistics(rec)
    if problem is None and rec["status"] == "ok":
        stat = headline(rec)
        if not isinstance(rec.get(stat), dict) or "median" not in rec[stat]:
            problem = f"an ok result without its headline statistic {stat} (an object with a median)"
    return problem


class RecordError(ValueError):
    """A record file that cannot be read as gmb records."""


@dataclass
class RecordFile:
    path: Path
    contexts: list[dict] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)
    result_lines: list[int] = field(default_factory=list)  # the line of each result in the file
    # What a reader should be told about the file though it was read (an incomplete last line dropped, results
    # that measured nothing): ingest prints them, a campaign keeps them in the launch's reason and log
    notes: list[str] = field(default_factory=list)

    def runs_without_context(self) -> dict[str, int]:
        """The run ids of results that no context of this file describes, each with the line of its first result
        (its context must be stored already: a result alone does not say what measured it)."""
        described = {c["run_id"] for c in self.contexts}
        out: dict[str, int] = {}
        for rec, line in zip(self.results, self.result_lines):
            if rec["run_id"] not in described:
                out.setdefault(rec["run_id"], line)
        return out


SCHEMA_RESOURCE = ("schema", "record.v1.json")  # package data of gmb (pyproject.toml: package-data)


class MissingDependency(RecordError):
    """A package validation needs is not installed (exit 2, with how to install it)."""


def schema_path() -> Path | None:
    """The record schema: ``$GMB_SCHEMA``, else the one shipped in the package (gmb/schema/record.v1.json), as a
    file path (None when the package's copy is not a plain file, e.g. gmb imported from a zip)."""
    env = os.environ.get("GMB_SCHEMA")
    if env:
        return Path(env)
    resource = importlib.resources.files("gmb").joinpath(*SCHEMA_RESOURCE)
    return Path(str(resource)) if isinstance(resource, Path) and resource.is_file() else None


def load_schema() -> dict:
    env = os.environ.get("GMB_SCHEMA")
    if env:
        if not Path(env).is_file():
            raise RecordError(f"GMB_SCHEMA={env}: no such file (unset it to use the schema shipped with gmb)")
        try:
            return json.loads(Path(env).read_text(errors="replace"))
        except ValueError as exc:
            raise RecordError(f"GMB_SCHEMA={env}: not a JSON schema, not JSON ({exc}) (unset it to use the schema "
                              f"shipped with gmb)") from None
    resource = importlib.resources.files("gmb").joinpath(*SCHEMA_RESOURCE)
    if not resource.is_file():
        raise RecordError(f"the record schema is missing from the gmb package (gmb/"
                          f"{'/'.join(SCHEMA_RESOURCE)}): reinstall gmb (pip install ./python), or set GMB_SCHEMA "
                          f"to its path")
    return json.loads(resource.read_text(encoding="utf-8"))


def validator():
    """A jsonschema validator for one record line. MissingDependency when jsonschema is not installed: validation
    that was asked for is never skipped."""
    try:
        import jsonschema
    except ImportError:
        raise MissingDependency("validating records needs the jsonschema package, which is not installed: "
                                "pip install 'jsonschema>=4' (a dependency of gmb: reinstalling gmb with pip "
                                "installs it)") from None
    schema = load_schema()
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except (jsonschema.SchemaError, TypeError, AttributeError) as exc:
        env = os.environ.get("GMB_SCHEMA")
        raise RecordError(f"{f'GMB_SCHEMA={env}' if env else 'the record schema shipped with gmb'}: not a JSON schema "
                          f"({str(exc).splitlines()[0]})") from None
    return cls(schema)


def schema_violation(errors) -> str | None:
    """The schema's error that names the field at fault, as "at FIELD: what is wrong" (None: no error). Where the
    record is one of several alternatives (a context or a result), the errors of the alternative it came closest to
    (the fewest errors), and within it the best match, down to the deepest such field; never the whole record."""
    from jsonschema.exceptions import best_match

    best = best_match(errors)
    if best is None:
        return None
    while best.context:
        alternatives: dict = {}
        for e in best.context:
            alternatives.setdefault(e.relative_schema_path[0], []).append(e)
        best = best_match(min(alternatives.values(), key=len))
    field = ".".join(map(str, best.absolute_path)) or "the record"
    message = best.message if len(best.message) <= 200 else best.message[:200] + " ..."
    return f"at {field}: {message}"


JSON_WHITESPACE = " \t\r\n"  # what JSON allows between values; any other character on a line makes it no blank line


def _not_json_number(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite_or_null(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def read_records(path: str | os.PathLike, validate: bool = False) -> RecordFile:
    """Parse a JSONL record file. Blank lines are skipped; a line that is not a gmb record, or a record that cannot
    make a row (row_problem), raises RecordError naming file, line and what is wrong. A truncated last line from a
    killed launch is dropped, and said in ``notes``, when complete records precede it (a file whose only line is
    broken is not a record file)."""
    path = Path(path)
    out = RecordFile(path)
    check = validator() if validate else None
    # JSON Lines end at "\n" only: str.splitlines() would also break inside a record at characters a JSON string
    # may hold as they are (U+2028, U+0085, U+001C-U+001E), and call a line of them blank
    lines = path.read_text(errors="replace").removesuffix("\n").split("\n")
    nothing_measured = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip(JSON_WHITESPACE):
            continue
        try:
            # NaN, Infinity: not JSON, never stored; a number beyond a double (1e9999): null, as the engine writes a
            # figure that is not finite
            rec = json.loads(line, parse_constant=_not_json_number, parse_float=_finite_or_null)
        except ValueError as exc:
            if lineno == len(lines) and (out.contexts or out.results):  # killed mid-write: keep what is complete
                out.notes.append(f"{path}:{lineno}: the last line is an incomplete record (the file ends in the "
                                 f"middle of it, as when its writer is stopped): dropped")
                break
            raise RecordError(f"{path}:{lineno}: not JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(rec, dict) or rec.get("schema") != SCHEMA_ID:
            raise RecordError(f"{path}:{lineno}: not a {SCHEMA_ID} record")
        if check is not None:
            violation = schema_violation(check.iter_errors(rec))
            if violation:
                raise RecordError(f"{path}:{lineno}: schema violation {violation}")
        kind = rec.get("type")
        if kind not in ("context", "result"):
            raise RecordError(f"{path}:{lineno}: unknown record type {kind!r}")
        problem = row_problem(rec)
        if problem:
            raise RecordError(f"{path}:{lineno}: a {kind} record that cannot be stored: {problem}")
        if kind == "context":
            out.contexts.append(rec)
        else:
            out.results.append(rec)
            out.result_lines.append(lineno)
            if measured_nothing(rec):
                nothing_measured.append(lineno)
            elif implausible_ceiling(rec):
                out.notes.append(f"{path}:{lineno}: {implausible_ceiling(rec)}: stored as unsupported")
    if nothing_measured:
        out.notes.append(f"{path}: {len(nothing_measured)} ok result(s) moved no data (metrics.op_bytes 0, a size "
                         f"below one element; line {', '.join(map(str, nothing_measured[:5]))}"
                         f"{', ...' if len(nothing_measured) > 5 else ''}): stored as unsupported, not as figures")
    return out


# SPDX-License-Identifier: BSD-3-Clause
"""What an engine says about itself, and the harness's questions about the engine answered from it.

``gmb-bench list --format json`` (docs/records.md, "The engine's description", schema ``gmb.engine/1``, validated
by schema/engine.v1.json) names the engine's benchmarks (family, the statistics objects their records carry, the
headline one, the transports, whether they take collective operations and whether they take ``--precision``, their
directions, whether they measure overlap, their OMB counterpart, rank bounds, their options and those every
benchmark takes), the run defaults, its memory kinds with their properties and whether this build can allocate
them, its collectives with their NCCL counterparts, its transfer strategies with what they stage through, the
copies ``peaks`` measures with the path classes they bound, the environment variables its records keep (by prefix)
and its features (CUDA, NCCL).
The harness keeps no list of its own of any of these: a second list drifts, and a missing entry silently
changes what is planned or how a figure is ranked. It asks an ``EngineDescription``.

An engine built before it described itself so is refused with the advice to rebuild it (``gmb build`` rebuilds
engines whose sources changed), never planned from guesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..machine import families

SCHEMA = "gmb.engine/1"
# Families whose launches are pairs of ranks with a send and a receive buffer (memory "send:recv"; one-sided: origin
# and target); with several nodes such a launch is placed by its path, not spread over all nodes
POINT_TO_POINT = ("pt2pt", "multi-pair", "rma", "partitioned")


class DescriptionError(ValueError):
    """An engine description the harness cannot use (an engine built before it described itself: rebuild it)."""


@dataclass(frozen=True)
class Option:
    """An option of the engine's command line, as its description lists it."""
    names: tuple[str, ...]  # every spelling: "--window", "-W", "--window-size"
    value: str  # "required", "optional" or "none" (a flag)
    metavar: str = ""  # the value's form, as --help shows it
    choices: tuple[str, ...] = ()  # the accepted values, where the option declares them (--strategy)
    list: bool = False  # the value is a comma-separated list of the choices (--network-tools)


def _options(entries, what: str, source: str) -> tuple[Option, ...]:
    """The options of a description's list."""
    if not isinstance(entries, list) or not all(isinstance(o, dict) and isinstance(o.get("names"), list)
                                                for o in entries):
        raise DescriptionError(f"{source}: its description lists the options of {what} in a form this gmb does "
                               f"not read (a list of objects with names); use a gmb and an engine of the same "
                               f"source tree")
    return tuple(Option(tuple(o["names"]), str(o.get("value", "required")), str(o.get("metavar", "")),
                        tuple(o.get("choices") or ()), o.get("list") is True) for o in entries)


@dataclass(frozen=True)
class Benchmark:
    name: str
    summary: str
    min_ranks: int
    max_ranks: int  # 0: no upper bound
    even_ranks: bool
    family: str
    metrics: tuple[str, ...]  # the statistics objects its result records carry
    headline: str | None  # the one tables and plots rank it by (None: its records carry no figures)
    transports: tuple[str, ...]  # the --transport values it accepts
    operations: bool  # takes collective operation names (gmb-bench coll allreduce)
    adaptive: bool  # takes --precision (adaptive repetitions: the size-sweep runner's benchmarks)
    # "uni" (bw), "bi" (bibw: its figures count both directions at once), None: no transfer between two sides
    directions: str | None
    overlap: bool  # measures how much of a transfer hides behind compute (nbc, part_overlap)
    omb: dict | None  # the OSU Micro-Benchmarks program it stands for ({"program": "osu_bw", ...}), None: none
    options: tuple[Option, ...]  # its own options (those every benchmark takes are the description's ``options``)

    @property
    def point_to_point(self) -> bool:
        return self.family in POINT_TO_POINT

    @property
    def bidirectional(self) -> bool:
        """Its figures count both directions at once: compared with twice a one-way ceiling on duplex paths."""
        return self.directions == "bi"

    @property
    def bandwidth(self) -> bool:
        """A transfer between two sides ranked by its bandwidth (bw, bibw, mbw, rma_bw, part_bw ...)."""
        return self.directions is not None and self.headline == "bandwidth_GBps"

    def ranks_refusal(self, ranks: int) -> str | None:
        """Why this benchmark cannot run on ``ranks`` ranks ("runs on exactly 2 ranks"), None when it can."""
        lo, hi = self.min_ranks or 1, self.max_ranks or 0
        if lo <= ranks and (not hi or ranks <= hi) and not (self.even_ranks and ranks % 2):
            return None
        want = f"exactly {lo}" if lo == hi else f"from {lo} to {hi}" if hi else f"at least {lo}"
        return f"runs on {want} ranks" + (", an even number" if self.even_ranks else "")


@dataclass(frozen=True)
class MemoryKind:
    name: str
    description: str
    available: bool
    reason: str  # why not available ("" when it is)
    gpu_memory: bool  # a GPU pointer a CUDA-unaware MPI must never get
    gpu_backed: bool  # memory the GPU owns or migrates (device, managed)
    placeable: bool  # takes a placement: "managed:host", "managed:device"
    host_accessible: bool  # the CPU reads and writes it directly
    page_locked: bool
    pageable: bool  # ordinary pageable host memory (malloc)
    placement: str | None  # "host" or "device" for a placement of a placeable kind
    base: str  # the kind a placement belongs to ("managed" for "managed:host"), else its own name


@dataclass(frozen=True)
class Collective:
    name: str
    mpi_call: str
    nonblocking_call: str | None
    rooted: bool
    reduction: bool
    busbw_factor: str | None
    nccl_call: str | None
    nccl_reason: str | None  # why NCCL cannot run it (None when it can)
    # how S (bytes) is shared among the ranks (counts.split): "whole" (every rank holds all of S), "equal-blocks",
    # "unequal" (S split among the ranks), "none" (no data)
    split: str | None = None


@dataclass(frozen=True)
class RunDefaults:
    """What a size-sweep run does unless told otherwise (the engine's option defaults)."""
    iters: int
    warmup: int
    iters_large: int
    warmup_large: int
    large_size: int  # sizes from this many bytes up use the *_large counts
    max_seconds: float  # --precision without --max-seconds: a size's timed seconds at most
    window: int  # --window of the windowed benchmarks
    # the samples a size takes at least where the time cap allows (fixed counts that make fewer are topped up within
    # max_seconds); 1 for engines before the rule, which took what the counts made
    min_samples: int = 1


@dataclass(frozen=True)
class Strategy:
    """A transfer strategy: which side copies through staging memory, and which memory kind property picks it."""
    name: str
    chunked: bool
    staged_side: str | None  # "gpu_backed": device or managed sides stage through host memory; "host": host sides
    # relay through their GPU; None: nothing is staged (direct)
    staging_property: str | None  # "pageable", "page_locked", "gpu_memory": the staging memory kind's property


@dataclass(frozen=True)
class Ceiling:
    """A copy ``peaks`` measures and the path classes of the MPI transfers it bounds."""
    operation: str
    bounds: tuple[str, ...]
    direction: str | None  # host<->device copies: "h2d" or "d2h"
    host_memory: str | None  # host<->device copies: the host side's memory kind property ("page_locked", "pageable")
    # a stream's rate (the network's): from this message size up, its best figure at any such size bounds every such
    # size; None: per size (also what an engine described before streams were)
    stream_from_bytes: int | None = None
    buffers: str | None = None  # the memory property both sides of a bounded transfer have ("gpu_memory"); None: any


def _rebuild(source: str, what: str) -> DescriptionError:
    return DescriptionError(
        f"{source}: its description (gmb-bench list --format json) {what}: it was built from other sources than this "
        f"gmb, whose contract ({SCHEMA}, schema/engine.v1.json) requires it; rebuild it (`gmb build` rebuilds the engines whose "
        f"sources changed; an engine declared with `engine = ...` is rebuilt by hand)")


def _fields(entry, keys: tuple[str, ...], what: str, source: str) -> dict:
    if not isinstance(entry, dict):
        raise _rebuild(source, f"lists {what} that is not an object")
    missing = [k for k in keys if k not in entry]
    if missing:
        name = entry.get("name", entry.get("operation"))
        raise _rebuild(source, f"has no {', '.join(missing)} for {what}" + (f" {name!r}" if name else ""))
    return entry


_BENCHMARK_KEYS = ("name", "summary", "min_ranks", "max_ranks", "even_ranks", "family", "metrics", "headline",
                   "transports", "operations", "adaptive", "directions", "overlap", "omb", "options")
_KIND_KEYS = ("name", "available", "gpu_memory", "gpu_backed", "placeable", "host_accessible", "page_locked", "pageable",
              "placement", "base")
_RUN_DEFAULT_KEYS = ("iters", "warmup", "iters_large", "warmup_large", "large_size", "max_seconds", "window")
_STRATEGY_KEYS = ("name", "chunked", "staged_side", "staging")
_CEILING_KEYS = ("operation", "bounds", "direction", "host_memory")
_COLLECTIVE_KEYS = ("name", "mpi_call", "nonblocking_call", "rooted", "reduction", "busbw_factor", "nccl")


class EngineDescription:
    """One engine's description (``raw``: the JSON object as the engine printed it), checked when made."""

    def __init__(self, data: dict, source: str = "the engine"):
        if not isinstance(data, dict):
            raise DescriptionError(f"{source}: its description is not a JSON object")
        schema = data.get("schema")
        if schema is None:
            raise _rebuild(source, 'has no "schema"')
        if schema != SCHEMA:
            raise DescriptionError(f"{source}: describes itself as {schema!r}; this gmb reads {SCHEMA!r} (use a gmb "
                                   f"and an engine of the same source tree)")
        for key in ("options", "run_defaults", "benchmarks", "memory_kinds", "collectives", "strategies", "ceilings",
                    "features"):
            if key not in data:
                raise _rebuild(source, f"has no {key!r}")
        self.raw = data
        self.source = source
        self.benchmarks: dict[str, Benchmark] = {}
        for b in data["benchmarks"]:
            b = _fields(b, _BENCHMARK_KEYS, "benchmark", source)
            self.benchmarks[b["name"]] = Benchmark(
                b["name"], b["summary"], int(b["min_ranks"] or 1), int(b["max_ranks"] or 0), bool(b["even_ranks"]),
                b["family"], tuple(b["metrics"]), b["headline"], tuple(b["transports"]), bool(b["operations"]),
                bool(b["adaptive"]), b["directions"], bool(b["overlap"]), b["omb"],
                _options(b["options"], f"benchmark {b['name']!r}", source))
        self.kinds: dict[str, MemoryKind] = {}
        for k in data["memory_kinds"]:
            k = _fields(k, _KIND_KEYS, "memory kind", source)
            self.kinds[k["name"]] = MemoryKind(
                k["name"], k.get("description", ""), bool(k["available"]), k.get("reason") or "", bool(k["gpu_memory"]),
                bool(k["gpu_backed"]), bool(k["placeable"]), bool(k["host_accessible"]), bool(k["page_locked"]),
                bool(k["pageable"]), k["placement"], k["base"])
        self.collectives: dict[str, Collective] = {}
        for c in data["collectives"]:
            c = _fields(c, _COLLECTIVE_KEYS, "collective", source)
            nccl = c["nccl"] if isinstance(c["nccl"], dict) else {}
            self.collectives[c["name"]] = Collective(
                c["name"], c["mpi_call"], c["nonblocking_call"], bool(c["rooted"]), bool(c["reduction"]),
                c["busbw_factor"], nccl.get("call"), nccl.get("reason"),
                (c.get("counts") or {}).get("split") if isinstance(c.get("counts"), dict) else None)
        d = _fields(data["run_defaults"], _RUN_DEFAULT_KEYS, "run defaults", source)
        self.run_defaults = RunDefaults(int(d["iters"]), int(d["warmup"]), int(d["iters_large"]),
                                        int(d["warmup_large"]), int(d["large_size"]), float(d["max_seconds"]),
                                        int(d["window"]), int(d.get("min_samples", 1)))
        self.strategies: dict[str, Strategy] = {}
        for t in data["strategies"]:
            t = _fields(t, _STRATEGY_KEYS, "strategy", source)
            staging = t["staging"] if isinstance(t["staging"], dict) else {}
            self.strategies[t["name"]] = Strategy(t["name"], bool(t["chunked"]), t["staged_side"],
                                                  staging.get("property"))
        self.ceilings: tuple[Ceiling, ...] = tuple(
            Ceiling(c["operation"], tuple(c["bounds"]), c["direction"], c["host_memory"], c.get("stream_from_bytes"),
                    c.get("buffers"))
            for c in (_fields(c, _CEILING_KEYS, "ceiling", source) for c in data["ceilings"]))
        self.options = _options(data["options"], "every benchmark", source)  # the driver's, every benchmark's
        self.features: dict = dict(data["features"] or {})
        mpi = data.get("mpi")
        if not isinstance(mpi, dict) or not isinstance(mpi.get("features"), dict):
            raise _rebuild(source, "does not say which MPI-4 interfaces its MPI library has (mpi.features)")
        self.mpi: dict = mpi
        # the prefixes of the environment variables its records keep; None: an engine that does not say (one built
        # before it said so, as a stored description of older results may be)
        prefixes = data.get("environment_prefixes")
        self.environment_prefixes: tuple[str, ...] | None = (
            tuple(prefixes) if isinstance(prefixes, list) and all(isinstance(p, str) and p for p in prefixes) else None)

    def check_records_settings(self) -> None:
        """DescriptionError unless the engine's records keep every environment variable the harness treats as a
        setting (families.setting_prefixes()): a setting they do not keep would make launches that differ in it look
        like repetitions of one point. Asked of an engine about to run, not of a description stored with results."""
        if self.environment_prefixes is None:
            raise _rebuild(self.source, "does not say which environment variables its records keep "
                                        "(environment_prefixes)")
        missing = [p for p in families.setting_prefixes() if not p.startswith(self.environment_prefixes)]
        if missing:
            raise _rebuild(self.source, f"says its records keep no {', '.join(f'{p}*' for p in missing)} variables, "
                                        f"which this gmb treats as settings (points that differ in them would be taken "
                                        f"for one point)")

    # ---------------------------------------------------------------- benchmarks
    def benchmark(self, name: str) -> Benchmark | None:
        return self.benchmarks.get(name)

    def of_family(self, *families: str, transport: str | None = None) -> list[str]:
        """The benchmarks of these families (in the engine's order), with ``transport`` among their transports."""
        return [b.name for b in self.benchmarks.values()
                if b.family in families and (transport is None or transport in b.transports)]

    def with_transport(self, transport: str) -> list[str]:
        """The benchmarks that accept ``--transport TRANSPORT``, in the engine's order."""
        return [b.name for b in self.benchmarks.values() if transport in b.transports]

    def accepted_options(self, name: str) -> dict[str, Option] | None:
        """Every option benchmark ``name`` takes (the driver's and its own), by each of its names; None when the
        engine does not list the benchmark."""
        b = self.benchmarks.get(name)
        if b is None:
            return None
        return {n: o for o in (*self.options, *b.options) for n in o.names}

    def point_to_point(self, name: str) -> bool:
        b = self.benchmarks.get(name)
        return bool(b and b.point_to_point)

    def bidirectional(self, name: str) -> bool:
        b = self.benchmarks.get(name)
        return bool(b and b.bidirectional)

    def overlap(self, name: str) -> bool:
        b = self.benchmarks.get(name)
        return bool(b and b.overlap)

    # ---------------------------------------------------------------- memory kinds
    def kind_available(self, name: str) -> tuple[bool, str]:
        """(True, "") when this build can allocate the kind, else (False, why)."""
        k = self.kinds.get(name)
        if k is None:
            return False, "not listed by the engine"
        return k.available, "" if k.available else k.reason

    def kinds_where(self, **properties) -> list[MemoryKind]:
        """The kinds with these property values, e.g. ``kinds_where(gpu_memory=True, placement=None)``."""
        return [k for k in self.kinds.values() if all(getattr(k, p) == v for p, v in properties.items())]

    def first_kind(self, **properties) -> MemoryKind | None:
        found = self.kinds_where(**properties)
        return found[0] if found else None

    def gpu_memory(self, name: str) -> bool:
        """Whether a kind's buffers are GPU pointers that a CUDA-unaware library must never be handed."""
        k = self.kinds.get(name)
        return bool(k and k.gpu_memory)

    # ---------------------------------------------------------------- collectives
    def collective(self, name: str) -> Collective | None:
        return self.collectives.get(name)

    def nccl_refusal(self, operation: str) -> str | None:
        """Why NCCL cannot run a collective operation (the engine's reason), None when it can."""
        c = self.collectives.get(operation)
        if c is None:
            return f"not a collective the engine lists ({', '.join(self.collectives)})"
        return None if c.nccl_call else (c.nccl_reason or "no NCCL counterpart")

    # ---------------------------------------------------------------- features
    def mpi_feature(self, name: str) -> tuple[bool, str]:
        """Whether the engine's MPI library has an MPI-4 interface (``mpi.features``: "partitioned",
        "persistent_collectives"): (True, "") or (False, the engine's reason)."""
        entry = self.mpi["features"].get(name)
        if not isinstance(entry, dict):
            return False, f"the engine does not say whether its MPI library has {name} (mpi.features)"
        if entry.get("available"):
            return True, ""
        return False, entry.get("reason") or f"the engine's MPI library has no {entry.get('calls') or name}"

    @property
    def cuda(self) -> bool:
        return bool(self.features.get("cuda"))

    @property
    def nccl(self) -> bool:
        return bool(self.features.get("nccl"))

    @property
    def plan(self) -> bool:
        """Whether the engine runs several benchmarks in one launch (``gmb-bench plan``; older engines do not)."""
        return bool(self.features.get("plan"))

    @property
    def nccl_version(self) -> str | None:
        return self.features.get("nccl_version")


def known_benchmarks(descriptions) -> dict[str, Benchmark]:
    """Every benchmark some engine lists (the first engine's entry for a name several list)."""
    out: dict[str, Benchmark] = {}
    for d in descriptions:
        for name, b in d.benchmarks.items():
            out.setdefault(name, b)
    return out

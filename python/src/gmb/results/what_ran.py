# SPDX-License-Identifier: BSD-3-Clause
"""What ran behind a figure: the protocol or algorithm the library chose, as the library itself said it while the
launch ran (docs/records.md, "What ran").

A launch is run with variables that make its libraries say what they chose where saying it costs nothing per call
(CAPTURE_ENVIRONMENT): Open MPI names the collective components it selects for each communicator when the
communicator is made (``coll_base_verbose``), UCX prints the protocol table of each endpoint configuration the first
time it selects one (``UCX_PROTO_INFO``, UCX's protocols v2: the default from UCX 1.16, ``UCX_PROTO_ENABLE=y``
before). NCCL's choice is said per call (``NCCL_DEBUG_SUBSYS=TUNING``), which would change the figures of small
collectives, so gmb does not ask for it: it is read where a block's own settings ask NCCL to say it
(``nccl_choices``). What a library cannot say in
a release build (the algorithm inside Open MPI's coll/tuned, MPICH's selection) is named from the settings that force
it, or said to be the library's own choice.

``read_capture`` reads a launch's log once; ``facts`` gives one result record its ``ran`` object: source -> words
("ucx", "coll", "nccl", "mpich")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Set on every launch. Neither is a setting of the library (run_conditions.NOT_SETTINGS): they change what it says,
# at set-up.
CAPTURE_ENVIRONMENT = {"OMPI_MCA_coll_base_verbose": "10", "UCX_PROTO_INFO": "y"}

# the prefix every line of an MPI rank's diagnostics carries: "[host:pid] " (Open MPI), "[stamp] [host:pid:thread] "
# (UCX)
_RANK_PREFIX = re.compile(r"^(?:\[\d+\.\d+\]\s*)?\[([^\]:]+):\s*(\d+)[^\]]*\]\s*")


@dataclass(frozen=True)
class ProtocolRange:
    low: int
    high: int | None  # None: no upper end ("inf")
    protocol: str
    lanes: str

    def holds(self, size: int) -> bool:
        return self.low <= size and (self.high is None or size <= self.high)


@dataclass(frozen=True)
class UcxTable:
    """One of UCX's protocol tables: for one operation ("tagged message by ucp_tag_send*()") from one memory type,
    the protocol it uses for each range of sizes, and over which transport lanes."""
    operation: str
    variant: str  # what UCX's header adds in parentheses ("fast-completion"), or ""
    memory: str  # UCX's memory type: "host", "cuda", "cuda-managed", ...
    ranges: tuple[ProtocolRange, ...]
    to: str = ""  # a rendezvous' data transfer: the receiver's memory type

    @property
    def loopback(self) -> bool:
        """A rank's table for itself (UCX's "self" transport reaches no other rank): not a peer's path."""
        return any(lane.split("/")[0] == "self" for r in self.ranges for lane in r.lanes.split())


@dataclass(frozen=True)
class NcclChoice:
    collective: str  # NCCL's name: "AllReduce"
    nbytes: int
    algorithm: str
    protocol: str
    channels: int | None


@dataclass
class Capture:
    """What a launch's libraries said they chose."""
    ucx: list[UcxTable] = field(default_factory=list)
    # communicator name -> the collective components enabled on it, the highest priority first (Open MPI)
    coll: dict[str, tuple[str, ...]] = field(default_factory=dict)
    nccl: list[NcclChoice] = field(default_factory=list)


def read_capture(lines: list[str]) -> Capture:
    """What the lines of a launch's log say was chosen: UCX's protocol tables and Open MPI's collective components
    (each rank says them: the same table or selection said by several ranks is kept once; where ranks differ, each
    is kept) and NCCL's choices, if the log holds NCCL's TUNING lines."""
    return Capture(ucx=_ucx_tables(lines), coll=_coll_components(lines), nccl=nccl_choices(lines))


# what a library says when CAPTURE_ENVIRONMENT asks it (after the rank's prefix): Open MPI's component framework,
# UCX's table rules and rows; never the error a failed launch's reason is looked for in
_CAPTURE_LINE = re.compile(r"^(?:coll:|mca: base: |\+-{3,}|\|.*\|\s*$)")


def said_what_ran(line: str) -> bool:
    """Whether a log line is one a library wrote because a launch asked it what it chose."""
    return bool(_CAPTURE_LINE.match(_strip(line.strip())[1]))


def _strip(line: str) -> tuple[str | None, str]:
    line = line.replace("\0", "").lstrip()
    m = _RANK_PREFIX.match(line)
    return (f"{m.group(1)}:{m.group(2)}", line[m.end():]) if m else (None, line)


# ---------------------------------------------------------------- UCX

# a table's header: the operation and the memory types, after the endpoint configuration in a cell of its own (UCX
# 1.13: "| 0x55.. ep_cfg[1] | tagged message by ucp_tag_send*() from host memory |") or on the row before (UCX 1.22:
# "| ucp_context_0 intra-node cfg#2 |", then "| tagged message by ucp_tag_send* from cuda/GPU0 |"; "| rendezvous data
# send(multi) from host memory to cuda |"): its last cell
_UCX_OPERATION = re.compile(r"^(?P<op>.*?)\s+from\s+(?P<mem>[\w-]+)(?:/\S+)?(?:\s+memory)?"
                            r"(?:\s+to\s+(?P<to>[\w-]+)(?:/\S+)?(?:\s+memory)?)?$")
_UCX_ROW = re.compile(r"^\|\s*(?P<low>\d+[KMGT]?)(?:\s*\.\.\s*(?P<high>\d+[KMGT]?|inf))?\s*\|(?P<rest>.*)\|\s*$")
_UCX_COLUMNS = re.compile(r"^\|\s*Range\s*\|")  # UCX 1.22's column titles under the header
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _size(text: str) -> int:
    m = re.fullmatch(r"(\d+)([KMGT]?)", text)
    return int(m.group(1)) * _UNITS[m.group(2)]


def _ucx_tables(lines: list[str]) -> list[UcxTable]:
    """UCX's protocol tables (UCX_PROTO_INFO=y): a header row naming the operation and the memory type, then one row
    per size range (range | protocol | lanes), each rank's lines carrying its prefix."""
    tables: list[UcxTable] = []
    open_by_rank: dict[str | None, tuple[str, str, str, str, list[ProtocolRange]]] = {}

    def close(rank):
        if rank in open_by_rank:
            op, variant, mem, to, ranges = open_by_rank.pop(rank)
            table = UcxTable(op, variant, mem, tuple(ranges), to)
            if ranges and table not in tables:
                tables.append(table)

    for line in lines:
        rank, text = _strip(line.rstrip("\n"))
        text = text.strip()
        if not text.startswith("|"):
            if not text.startswith("+"):
                close(rank)
            continue
        row = _UCX_ROW.match(text)
        if row and rank in open_by_rank:
            cells = [c.strip() for c in row.group("rest").split("|")]
            protocol = re.sub(r"^\(\?\)\s*", "", cells[0])
            high = row.group("high") or row.group("low")  # "| 0 | ..." : a range of one size
            high = None if high == "inf" else _size(high)
            open_by_rank[rank][4].append(ProtocolRange(_size(row.group("low")), high, protocol,
                                                       " ".join(c for c in cells[1:] if c)))
        elif not row and not _UCX_COLUMNS.match(text):  # another table's header: its rows are not this one's
            close(rank)
            header = _UCX_OPERATION.match(text.strip("|").split("|")[-1].strip())
            if not header:
                continue
            op = header.group("op")
            variant = ""
            m = re.search(r"\(([^)]+)\)", op)
            if m:
                variant, op = m.group(1), (op[:m.start()] + op[m.end():]).replace("  ", " ")
            open_by_rank[rank] = (op.replace("*()", "*").strip(), variant, header.group("mem"),
                                  header.group("to") or "", [])
    for rank in list(open_by_rank):
        close(rank)
    return tables


# the memory kind of a gmb record -> UCX's name of the memory type its buffer is
UCX_MEMORY = {"host": "host", "pinned": "host", "device": "cuda", "managed": "cuda-managed"}


def _said(tables: list[UcxTable], size: int, wanted) -> dict[str, set[str]]:
    """variant -> the protocols (with their lanes) of the peer tables ``wanted`` accepts, at ``size``."""
    said: dict[str, set[str]] = {}
    for t in tables:
        if t.loopback or not wanted(t):
            continue
        for r in t.ranges:
            if r.holds(size):
                said.setdefault(t.variant, set()).add(f"{r.protocol} over {r.lanes}" if r.lanes else r.protocol)
    return said


def _words(said: dict[str, set[str]]) -> str:
    """One statement where every variant of the operation uses the same protocols, else one per variant."""
    words = {variant: " | ".join(sorted(protocols)) for variant, protocols in said.items()}
    if len(set(words.values())) == 1:
        return next(iter(words.values()))
    return "; ".join(f"{variant or 'plain'}: {w}" for variant, w in sorted(words.items()))


def ucx_protocol(tables: list[UcxTable], memory: str, size: int, recv_memory: str | None = None) -> str | None:
    """The protocols UCX's tables give a tagged message of ``size`` bytes from ``memory`` (a gmb memory kind) to a
    peer, in words ("rendezvous zero-copy read from remote over cma/memory"), one per variant where variants differ
    ("...; fast-completion: ..."); for a rendezvous, with how its data moves into ``recv_memory`` where UCX says it
    ("data: pipeline cuda_copy, ..."). None where no table says."""
    mem = UCX_MEMORY.get(memory, memory)
    tagged = _said(tables, size, lambda t: t.memory == mem and t.operation.startswith("tagged message"))
    if not tagged:
        return None
    words = _words(tagged)
    to = UCX_MEMORY.get(recv_memory or "", recv_memory or "")
    data = _said(tables, size, lambda t: t.memory == mem and t.to == to and t.operation.startswith("rendezvous data send"))
    if data and "rendezvous" in words:
        words += f" (data: {' | '.join(sorted(set().union(*data.values())))})"
    return words


# ---------------------------------------------------------------- Open MPI's collective components

_NEW_COMM = re.compile(r"coll:base:comm_select: new communicator: (?P<name>.+?) \(cid \d+\)")
_SELECTING = re.compile(r"coll:base:comm_select: selecting\s+(?P<comp>\w+), priority\s+(?P<prio>-?\d+), Enabled")


def _coll_components(lines: list[str]) -> dict[str, tuple[str, ...]]:
    """communicator -> the components Open MPI enabled on it, highest priority first (a component of higher priority
    takes every function it provides from those below). Ranks that differ are kept apart by a name of each."""
    current: dict[str | None, str] = {}
    chosen: dict[tuple[str | None, str], list[tuple[int, str]]] = {}
    for line in lines:
        rank, text = _strip(line)
        m = _NEW_COMM.search(text)
        if m:
            current[rank] = m.group("name")
            chosen[(rank, m.group("name"))] = []
            continue
        m = _SELECTING.search(text)
        if m and rank in current:
            chosen[(rank, current[rank])].append((int(m.group("prio")), m.group("comp")))
    out: dict[str, tuple[str, ...]] = {}
    for (rank, comm), comps in chosen.items():
        order = tuple(c for _, c in sorted(comps, key=lambda pc: -pc[0]))
        if comm in out and out[comm] != order:
            comm = f"{comm} (rank {rank})"
        out.setdefault(comm, order)
    return out


# components that serve no blocking collective (libnbc: the non-blocking ones only), or only some (adapt), or that
# wrap the one below them (cuda stages device buffers through host memory, then calls it)
NONBLOCKING_ONLY = {"libnbc"}
SOME_ONLY = {"adapt": {"bcast", "reduce", "ibcast", "ireduce"}}
WRAPPERS = {"cuda", "sync", "monitoring"}


def coll_component(stack: tuple[str, ...], operation: str) -> str | None:
    """The component that runs ``operation`` on a communicator whose enabled components are ``stack`` (highest
    priority first): "tuned", or "cuda over tuned" where a wrapper comes first."""
    blocking = not operation.startswith("i")
    wrappers = []
    for comp in stack:
        if comp in WRAPPERS:
            wrappers.append(comp)
            continue
        if blocking and comp in NONBLOCKING_ONLY:
            continue
        if comp in SOME_ONLY and operation not in SOME_ONLY[comp]:
            continue
        return " over ".join([*wrappers, comp])
    return None


# ---------------------------------------------------------------- NCCL

_NCCL_NAMED = re.compile(r"NCCL INFO (?P<coll>\w+): (?P<bytes>\d+) Bytes -> Algo (?P<algo>\w+) proto (?P<proto>\w+)"
                         r"(?: channel\{Lo\.\.Hi\}=\{(?P<lo>\d+)\.\.(?P<hi>\d+)\})?")
# NCCL before 2.19 printed numbers: its algorithm and protocol enums of that time
_NCCL_ALGORITHMS = ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT")
_NCCL_PROTOCOLS = ("LL", "LL128", "SIMPLE")


def nccl_choices(lines: list[str]) -> list[NcclChoice]:
    """NCCL's choices (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING; rank 0 says them), once per collective and size."""
    out: list[NcclChoice] = []
    for line in lines:
        m = _NCCL_NAMED.search(line)
        if not m:
            continue
        algo, proto = m.group("algo").upper(), m.group("proto").upper()
        if algo.isdigit():
            algo = _NCCL_ALGORITHMS[int(algo)] if int(algo) < len(_NCCL_ALGORITHMS) else algo
        if proto.isdigit():
            proto = _NCCL_PROTOCOLS[int(proto)] if int(proto) < len(_NCCL_PROTOCOLS) else proto
        channels = int(m.group("hi")) - int(m.group("lo")) + 1 if m.group("lo") is not None else None
        choice = NcclChoice(m.group("coll"), int(m.group("bytes")), algo, proto, channels)
        if choice not in out:
            out.append(choice)
    return out


def nccl_words(choices: list[NcclChoice], call: str, nbytes: int) -> str | None:
    """NCCL's choice for a call of NCCL's (the record's own ``metrics.call``: "ncclBroadcast", whose TUNING lines say
    "Broadcast") of ``nbytes`` as NCCL counts them (nccl_bytes)."""
    said = {f"{c.algorithm}/{c.protocol}" + (f", {c.channels} channels" if c.channels else "")
            for c in choices if f"nccl{c.collective}" == call and c.nbytes == nbytes}
    return " | ".join(sorted(said)) or None


def nccl_bytes(result: dict) -> int:
    """The bytes NCCL's TUNING line counts for a collective record: a rank's part where the record's S is split into
    equal blocks among the ranks (allgather, reduce-scatter: counts.split), else S."""
    size, ranks = result["bytes"], result.get("ranks")
    split = (result.get("counts") or {}).get("split")
    return size // ranks if split == "equal-blocks" and isinstance(ranks, int) and ranks > 0 else size


# ---------------------------------------------------------------- one record's facts

def _forced_tuned(settings: dict[str, str], operation: str) -> str:
    """What Open MPI's coll/tuned ran, from the settings that decide it: a forced algorithm, a rules file, else its
    fixed decision (a release build does not say which algorithm that picks)."""
    if settings.get("OMPI_MCA_coll_tuned_use_dynamic_rules") in ("1", "true", "yes"):
        forced = settings.get(f"OMPI_MCA_coll_tuned_{operation}_algorithm")
        if forced not in (None, "0"):
            return f"algorithm {forced} (coll_tuned_{operation}_algorithm)"
        rules = settings.get("OMPI_MCA_coll_tuned_dynamic_rules_filename")
        if rules:
            return f"the rules of {rules.rsplit('/', 1)[-1]}"
    return "fixed decision"


def _mpich(settings: dict[str, str], operation: str) -> str:
    name = f"MPIR_CVAR_{operation.upper()}_INTRA_ALGORITHM"
    forced = settings.get(name)
    if forced and forced != "auto":
        return f"{forced} ({name})"
    json_file = settings.get("MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE")
    if json_file:
        return f"the selection of {json_file.rsplit('/', 1)[-1]}"
    return "auto (MPICH's own selection)"


def facts(result: dict, settings: dict[str, str], family: str | None, capture: Capture) -> dict[str, str]:
    """The ``ran`` object of one result record: what its library said (or its settings decide) it ran for this
    figure. Empty where nothing is known."""
    memory = result.get("memory") or {}
    size = result.get("bytes")
    operation = str(result.get("operation") or "")
    out: dict[str, str] = {}
    if not isinstance(size, int):
        return out
    if result.get("transport") == "nccl":
        words = nccl_words(capture.nccl, str((result.get("metrics") or {}).get("call", "")), nccl_bytes(result))
        if words:
            out["nccl"] = words
        return out
    if "send" in memory:  # between pairs of ranks: the protocol of a message of this size from the sender's memory
        words = ucx_protocol(capture.ucx, str(memory.get("send")), size, str(memory.get("recv")))
        if words:
            out["ucx"] = words
    elif operation and (result.get("metrics") or {}).get("call", "").startswith("MPI_"):
        stack = capture.coll.get("MPI_COMM_WORLD")
        component = coll_component(stack, operation) if stack else None
        if component:
            out["coll"] = component + (f": {_forced_tuned(settings, operation)}" if component.endswith("tuned")
                                       else "")
        if family in ("mpich", "mvapich", "cray-mpich"):
            out["mpich"] = _mpich(settings, operation)
    return out

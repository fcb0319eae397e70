"""Campaigns: a parameter matrix expanded into launches, run with timeouts, resumable, stored.

Campaign file (TOML)::

    [campaign]
    name = "quick"
    repetitions = 3          # separate launches per point, run in randomised order
    order = "random"         # or "sequential"
    seed = 1                 # the shuffle is reproducible; the seed is kept in plan.json
    timeout_s = 300          # per launch; a hung launch is killed and recorded as "timeout"
    stop_library_after = 3   # after this many failed/timed-out launches in a row, a library's remaining
                             # launches are recorded as skipped (a broken library does not eat the time); 0: never
    libraries = ["*"]        # names (see `gmb libs`), "*" = all

    [[run]]                  # one block of the matrix; several blocks allowed
    benchmarks = ["latency", "bw", "bibw"]
    memory = ["host:host", "device:device"]   # send:recv kinds (point to point); omit for others
    strategies = ["direct"]
    sizes = "1:4M"
    ranks = [2]
    gpus = [0, 1]            # optional: CUDA_VISIBLE_DEVICES for the launch (rank i -> i-th listed GPU)
    path = "nvlink"          # optional: the path class this block is meant to exercise
    bind = "core"            # optional: launcher binding
    options = { iters = 1000, warmup = 100, validate = true }   # passed as --iters 1000 ... --validate
    operations = ["allreduce", "bcast"]   # coll / nbc: one launch per operation (gmb-bench coll OP)
    join_operations = false  # true: all operations in one launch (gmb-bench coll allreduce,bcast): less
                             # start-up time; a crash in one operation loses the rest of that launch
    env = { UCX_RNDV_THRESH = "8192" }

Every (block, benchmark, library, memory, strategy, ranks, repetition) is one engine launch writing its own
raw JSONL file. Ceilings (the ``peaks`` benchmark) always run first.

A library with ``transport = "nccl"`` (mpilibs) gets only what NCCL can do: latency, bw and bibw on
device:device buffers with the direct strategy, one GPU per rank, and ``coll`` on device memory
(``options = { mem = "device" }``) for the operations NCCL has; its launches add ``--transport nccl``.
Everything else in a block is skipped for it with the reason.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import tomllib
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from . import identity, launchers, locks
from .mpilibs import MpiLibrary
from .outputs import write_new
from .records import read_records
from .store import Store
from .tomlcheck import array_of_tables, typename
from .topology import Topology

PT2PT = {"latency", "bw", "bibw", "mbw"}
EXIT_STATUS = {0: "ok", 1: "failed", 2: "bad-input", 3: "unsupported", 4: "validation-failed"}


class CampaignError(ValueError):
    pass


@dataclass
class Block:
    benchmarks: list[str]
    memory: list[str] = field(default_factory=lambda: [""])
    strategies: list[str] = field(default_factory=lambda: [""])
    sizes: str | None = None
    ranks: list[int] = field(default_factory=lambda: [2])
    gpus: list[int] | None = None
    path: str | None = None
    bind: str | None = None
    options: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    libraries: list[str] | None = None
    # coll / nbc take an operation as a positional argument (gmb-bench coll allreduce): one launch per
    # operation listed; None: DEFAULT_OPERATIONS
    operations: list[str] | None = None
    join_operations: bool = False  # all operations in one launch (gmb-bench coll allreduce,bcast,...)


# operations given to the benchmarks that need one (``gmb-bench coll OP``) when a block names none
# (one launch per operation: the engine takes one); names as ``gmb-bench coll --help`` lists them
DEFAULT_OPERATIONS = {"coll": ["allreduce", "bcast", "alltoall", "allgather", "reduce_scatter", "barrier"],
                      "nbc": ["allreduce", "bcast", "alltoall"]}
QUICK_OPERATIONS = {"coll": ["allreduce"], "nbc": ["allreduce"]}

# What the engine can do with --transport nccl (the engine refuses the rest with status "unsupported").
NCCL_BENCHMARKS = ("latency", "bw", "bibw", "coll")
NCCL_OPERATIONS = ("bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv", "scatter",
                   "scatterv", "alltoall", "alltoallv", "reduce_scatter_block")
NCCL_NO_OPERATION = {"reduce_scatter": "NCCL reduces-scatters equal counts only: use reduce_scatter_block",
                     "barrier": "NCCL has no barrier"}
# the default campaign's collectives under NCCL (issue 8's set)
NCCL_DEFAULT_OPERATIONS = ["allreduce", "allgather", "reduce_scatter_block", "alltoall", "bcast"]


@dataclass
class Campaign:
    name: str
    blocks: list[Block]
    repetitions: int = 3
    order: str = "random"
    seed: int | None = None
    timeout_s: float = 600
    libraries: list[str] = field(default_factory=lambda: ["*"])
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # (library, what, reason) from generation
    stop_library_after: int = 3

    def to_toml(self) -> str:
        lines = ["[campaign]", f"name = {json.dumps(self.name)}", f"repetitions = {self.repetitions}",
                 f"order = {json.dumps(self.order)}", f"timeout_s = {self.timeout_s}",
                 f"stop_library_after = {self.stop_library_after}",
                 f"libraries = {json.dumps(self.libraries)}"]
        if self.seed is not None:
            lines.append(f"seed = {self.seed}")
        for b in self.blocks:
            lines.append("\n[[run]]")
            for k, v in asdict(b).items():
                if v in (None, {}, [""]):
                    continue
                if isinstance(v, dict):
                    lines.append(f"{k} = {{ " + ", ".join(f"{kk} = {json.dumps(vv)}" for kk, vv in v.items()) + " }")
                else:
                    lines.append(f"{k} = {json.dumps(v)}")
        return "\n".join(lines) + "\n"


def parse_memory(mem: str) -> tuple[str, str]:
    """'host:device' -> (host, device); managed kinds keep their location: 'managed:host:managed:device'."""
    tokens = mem.split(":")
    kinds, i = [], 0
    while i < len(tokens):
        # with only two tokens ('managed:device') they are send and recv, not one located kind
        if tokens[i] == "managed" and len(tokens) > 2 and i + 1 < len(tokens) and tokens[i + 1] in ("host", "device"):
            kinds.append(f"managed:{tokens[i + 1]}")
            i += 2
        else:
            kinds.append(tokens[i])
            i += 1
    if len(kinds) != 2 or not all(kinds):
        raise ValueError(f"memory {mem!r} must be 'send:recv' (e.g. host:device, managed:host:managed:device)")
    return kinds[0], kinds[1]


def _listify(v):
    if v is None:
        return None
    return v if isinstance(v, list) else [v]


def _str_list(v, where: str, key: str, allow_empty: bool = False) -> list[str] | None:
    """A string or a list of strings (None when absent)."""
    if v is None:
        return None
    items = v if isinstance(v, list) else [v]
    if not all(isinstance(x, str) and x for x in items) or (not items and not allow_empty):
        raise CampaignError(f"{where}: {key} must be a string or a list of non-empty strings "
                            f"(got {json.dumps(v, default=str)})")
    return list(items)


def _int_list(v, where: str, key: str, minimum: int) -> list[int] | None:
    if v is None:
        return None
    items = v if isinstance(v, list) else [v]
    if not items or not all(isinstance(x, int) and not isinstance(x, bool) and x >= minimum for x in items):
        raise CampaignError(f"{where}: {key} must be an integer >= {minimum} or a list of them "
                            f"(got {json.dumps(v, default=str)})")
    return list(items)


def _int(v, where: str, key: str, minimum: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < minimum:
        raise CampaignError(f"{where}: {key} must be an integer >= {minimum} (got {json.dumps(v, default=str)})")
    return v


def _table(v, where: str, key: str, scalar_values: bool = True) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise CampaignError(f"{where}: {key} must be a table, e.g. {key} = {{ name = \"value\" }} "
                            f"(got {typename(v)}: {json.dumps(v, default=str)})")
    if scalar_values:
        bad = [k for k, x in v.items() if not isinstance(x, (str, int, float, bool))]
        if bad:
            raise CampaignError(f"{where}: {key}.{bad[0]} must be a string, number or boolean "
                                f"(got {typename(v[bad[0]])})")
    return dict(v)


HEAD_KEYS = {"name", "repetitions", "order", "seed", "timeout_s", "stop_library_after", "libraries"}


def parse_campaign(data: dict, source: str = "campaign") -> Campaign:
    head = data.get("campaign", {})
    if not isinstance(head, dict):
        raise CampaignError(f"{source}: campaign must be a [campaign] table (got {typename(head)})")
    unknown = set(data) - {"campaign", "run"}
    if unknown:
        raise CampaignError(f"{source}: unknown top-level keys {sorted(unknown)} (accepted: [campaign], [[run]])")
    unknown = set(head) - HEAD_KEYS
    if unknown:
        raise CampaignError(f"{source}: [campaign]: unknown keys {sorted(unknown)} "
                            f"(accepted: {', '.join(sorted(HEAD_KEYS))})")
    runs = array_of_tables(data, "run", source, CampaignError, "one per block")
    if not runs:
        raise CampaignError(f"{source}: no [[run]] blocks")
    blocks = []
    known = set(Block.__dataclass_fields__)
    for i, r in enumerate(runs):
        where = f"{source}: [[run]] #{i + 1}"
        unknown = set(r) - known
        if unknown:
            raise CampaignError(f"{where}: unknown keys {sorted(unknown)} (accepted: {', '.join(sorted(known))})")
        if "benchmarks" not in r:
            raise CampaignError(f"{where}: 'benchmarks' is required")
        sizes = r.get("sizes")
        if isinstance(sizes, int) and not isinstance(sizes, bool) and sizes >= 0:
            sizes = str(sizes)
        if sizes is not None and (not isinstance(sizes, str) or not sizes.strip()):
            raise CampaignError(f"{where}: sizes must be a string such as \"1:4M\" or \"1,8,4K\" "
                                f"(got {json.dumps(sizes, default=str)})")
        for key in ("path", "bind"):
            if r.get(key) is not None and not isinstance(r[key], str):
                raise CampaignError(f"{where}: {key} must be a string (got {json.dumps(r[key], default=str)})")
        if not isinstance(r.get("join_operations", False), bool):
            raise CampaignError(f"{where}: join_operations must be true or false")
        b = Block(benchmarks=_str_list(r["benchmarks"], where, "benchmarks"),
                  memory=_str_list(r.get("memory"), where, "memory") or [""],
                  strategies=_str_list(r.get("strategies"), where, "strategies") or [""], sizes=sizes,
                  ranks=_int_list(r.get("ranks"), where, "ranks", 1) or [2],
                  gpus=_int_list(r.get("gpus"), where, "gpus", 0), path=r.get("path"),
                  bind=r.get("bind"), options=_table(r.get("options"), where, "options"),
                  env={k: str(v) for k, v in _table(r.get("env"), where, "env").items()},
                  libraries=_str_list(r.get("libraries"), where, "libraries"),
                  operations=_str_list(r.get("operations"), where, "operations"),
                  join_operations=r.get("join_operations", False))
        for m in b.memory:
            if m:
                try:
                    parse_memory(m)
                except ValueError as exc:
                    raise CampaignError(f"{where}: {exc}") from None
        try:
            if sizes is not None:
                parse_sizes(sizes)
            _check_counts(b.options)
        except ValueError as exc:
            raise CampaignError(f"{where}: {exc}") from None
        blocks.append(b)
    reps = head.get("repetitions", 3)
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise CampaignError(f"{source}: repetitions must be an integer >= 1 (got {json.dumps(reps, default=str)})")
    order = head.get("order", "random")
    if order not in ("random", "sequential"):
        raise CampaignError(f"{source}: order must be 'random' or 'sequential' (got {json.dumps(order, default=str)})")
    stop = head.get("stop_library_after", 3)
    if not isinstance(stop, int) or isinstance(stop, bool) or stop < 0:
        raise CampaignError(f"{source}: stop_library_after must be an integer >= 0 "
                            f"(got {json.dumps(stop, default=str)})")
    seed = head.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise CampaignError(f"{source}: seed must be an integer (got {json.dumps(seed, default=str)})")
    timeout = head.get("timeout_s", 600)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise CampaignError(f"{source}: timeout_s must be a number of seconds > 0 "
                            f"(got {json.dumps(timeout, default=str)})")
    name = head.get("name", Path(source).stem)
    if not isinstance(name, str) or not name.strip():
        raise CampaignError(f"{source}: name must be a non-empty string (got {json.dumps(name, default=str)})")
    return Campaign(name=name, blocks=blocks, repetitions=reps, order=order,
                    seed=seed, timeout_s=float(timeout),
                    libraries=_str_list(head.get("libraries"), f"{source}: [campaign]", "libraries") or ["*"],
                    stop_library_after=stop)


SIZES_ACCEPTED = ("accepted: a byte count with optional K, M or G suffix (powers of 1024), e.g. 8, 4K, 1M; a range "
                  "MIN:MAX in doubling steps, e.g. 1:4M; or a list, e.g. 1,8,4K")
_SIZE = re.compile(r"\s*(\d+)\s*(|B|K|KB|KIB|M|MB|MIB|G|GB|GIB)\s*", re.IGNORECASE)
INT_MAX = 2**31 - 1
# The engine's counts every benchmark takes (gmb-bench BENCH --help), with the least each accepts.
COUNT_OPTIONS = {"iters": 1, "iters-large": 1, "batch": 1, "warmup": 0, "warmup-large": 0}


def parse_size(text: str) -> int:
    """Bytes of one size of the engine's --sizes (8, 4K, 1M, 2GiB ...), or ValueError saying what is accepted."""
    m = _SIZE.fullmatch(text)
    if not m:
        raise ValueError(f"bad size '{text}' ({SIZES_ACCEPTED})")
    return int(m.group(1)) << {"": 0, "B": 0, "K": 10, "M": 20, "G": 30}[m.group(2)[:1].upper()]


def parse_sizes(text: str) -> list[int]:
    """The sizes of a --sizes text as the engine reads them (a range MIN:MAX doubles from MIN, 0 first when MIN is
    0), or ValueError saying what is accepted."""
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 2:
            raise ValueError(f"sizes '{text}': a range is MIN:MAX, sizes doubling from MIN (a step is not "
                             f"accepted; {SIZES_ACCEPTED})")
        lo, hi = (parse_size(t) for t in parts)
        if lo > hi:
            raise ValueError(f"sizes '{text}': MIN is greater than MAX ({SIZES_ACCEPTED})")
        out, s = ([0] if lo == 0 else []), max(lo, 1)
        while s <= hi:
            out.append(s)
            s *= 2
        return out
    return [parse_size(t) for t in text.split(",")]


def _check_counts(options: dict):
    """The shared counts among a block's options (iters = 0 would run, and fail, every launch)."""
    for key, value in options.items():
        least = COUNT_OPTIONS.get(key.replace("_", "-"))
        if least is None:
            continue
        n = value if isinstance(value, int) and not isinstance(value, bool) else \
            int(value) if isinstance(value, str) and value.strip().isdigit() else None
        if n is None or not least <= n <= INT_MAX:
            raise ValueError(f"options.{key} = {json.dumps(value)}: must be a whole number from {least} to {INT_MAX}")
    for key in ("large-size", "large_size"):
        if key in options:
            parse_size(str(options[key]))


def check_against_engines(c: Campaign, caps_by_lib: dict[str, dict]) -> None:
    """What only the engines can say, checked before anything runs: every memory kind a block names is one an
    engine lists (available here or not: an unavailable one is skipped with its reason), and every block's rank
    counts are within its benchmarks' rank bounds (the same in every build)."""
    if not caps_by_lib:
        return
    kinds = {k["name"] for caps in caps_by_lib.values() for k in caps.get("memory_kinds", [])}
    bounds = {}
    for caps in caps_by_lib.values():
        bounds.update(_bench_names(caps))
    for bi, block in enumerate(c.blocks):
        where = f"[[run]] #{bi + 1}"
        for mem in block.memory:
            unknown = [k for k in parse_memory(mem) if k not in kinds] if mem and kinds else []
            if unknown:
                raise CampaignError(f"{where}: memory \"{mem}\": unknown memory kind '{unknown[0]}' (accepted, as "
                                    f"SEND:RECV: {', '.join(sorted(kinds))})")
        for bench in block.benchmarks:
            b = bounds.get(bench)
            if not b:
                continue
            lo, hi, even = b.get("min_ranks") or 1, b.get("max_ranks") or 0, b.get("even_ranks", False)
            for n in block.ranks:
                if n < lo or (hi and n > hi) or (even and n % 2):
                    want = (f"exactly {lo}" if lo == hi else f"from {lo} to {hi}" if hi else f"at least {lo}") + \
                        (", an even number" if even else "")
                    raise CampaignError(f"{where}: {bench} with ranks = {n}: {bench} runs on {want} ranks")


def load_campaign(path: str | Path) -> Campaign:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise CampaignError(f"{path}: no such campaign file") from None
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(f"{path}: not valid TOML: {exc}") from None
    return parse_campaign(data, str(path))


# Every benchmark the engine registers (``gmb-bench list``, whatever the build). A name that neither this list nor
# any engine's list holds is a mistake in the campaign (an error before anything runs); a name that one engine does
# not list (an older or other build) is skipped for that engine with the reason.
KNOWN_BENCHMARKS = ("latency", "bw", "bibw", "mbw", "um", "coll", "nbc", "halo", "peaks", "doctor")


def _did_you_mean(name: str, choices) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def check_library_names(c: Campaign, library_names) -> None:
    """CampaignError when the campaign names a library that is neither found nor declared (a typo): not a skip."""
    known = list(dict.fromkeys(library_names))
    where = [("[campaign] libraries", c.libraries)] + [(f"[[run]] #{i + 1} libraries", b.libraries or [])
                                                       for i, b in enumerate(c.blocks)]
    for what, names in where:
        for n in names:
            if n != "*" and n not in known:
                raise CampaignError(f"{what}: unknown library {n!r}{_did_you_mean(n, known)} "
                                    f"(found or declared: {', '.join(known) or 'none'}; see `gmb libs`)")


def check_benchmark_names(c: Campaign, caps_by_lib: dict[str, dict] | None = None) -> None:
    """CampaignError when a block names a benchmark that no engine has (a typo such as 'bww'). A benchmark that
    some engine lists, or that the engine registers in any build, is planned, or skipped with the reason."""
    known = list(KNOWN_BENCHMARKS)
    for caps in (caps_by_lib or {}).values():
        known += [n for n in _bench_names(caps or {}) if n not in known]
    for i, b in enumerate(c.blocks):
        for n in b.benchmarks:
            if n not in known:
                raise CampaignError(f"[[run]] #{i + 1}: unknown benchmark {n!r}{_did_you_mean(n, known)} "
                                    f"(known: {', '.join(known)})")


# --------------------------------------------------------------------------- default campaign
def _bench_names(caps: dict) -> dict[str, dict]:
    return {b["name"]: b for b in caps.get("benchmarks", [])}


def _kind_ok(caps: dict, kind: str) -> tuple[bool, str]:
    for k in caps.get("memory_kinds", []):
        if k["name"] == kind:
            return bool(k.get("available")), k.get("reason", "") or ""
    return False, "not listed by the engine"


# The generated campaign on a GPU machine has to stay short (minutes, not hours): ~50 launches per repetition,
# each paying MPI and CUDA start-up. Fast paths (device buffers handed to the library or to NCCL, over NVLink or
# inside one GPU) sweep 1 B - 64 MiB; slow ones (host memory, host<->device, staged copies, 2-20 GB/s) stop at
# 4 MiB / 1 MiB, where windows of 64 messages would otherwise take seconds per iteration. Sizes from 64 KiB
# up get 5 timed iterations (each a window of 64 messages for bw/bibw), 200 below. Estimate: docs/harness.md.
# Collectives stop at 16 MiB: a CUDA-aware MPI's allreduce on device buffers ran at ~1 GB/s bus bandwidth there
# (30 ms per 16 MiB call, 160 ms per 64 MiB), already hundreds of times below NCCL; campaigns/nccl-vs-mpi.toml
# goes to 1 GiB.
FAST_SIZES, HOST_SIZES, SLOW_SIZES, COLL_SIZES, NBC_SIZES = "1:64M", "1:4M", "1:1M", "4:16M", "1K:1M"
CEILING_SIZES = "1M,64M"
GPU_PT2PT_OPTIONS = {"iters": 200, "warmup": 20, "iters-large": 5, "warmup-large": 1, "large-size": "64K",
                     "validate": True}
HALO_OPTIONS = {"dims": 3, "grid": "128,128,128", "steps": 10, "warmup": 2, "validate": True}


def default_campaign(topo: Topology, libs: list[MpiLibrary], caps_by_lib: dict[str, dict], quick: bool = False,
                     hosts: int = 1) -> Campaign:
    """A campaign generated from the machine: ceilings first, then per library and path class latency, bw,
    bibw for HH, DD, HD; collectives; overlap; managed placements; halo; with ``hosts`` > 1 (a hostfile of several
    hosts, or several Slurm nodes) HH and DD between two nodes (path "inter-node"). What the build or library
    cannot do is left out with the reason (Campaign.skipped). NCCL libraries (transport "nccl") get DD point to point
    over each GPU link class and the collectives on device memory."""
    skipped: list[tuple[str, str, str]] = []
    blocks: list[Block] = []
    usable = []
    for lib in libs:
        caps = caps_by_lib.get(lib.name)
        if caps is None:
            skipped.append((lib.name, "all", "no engine for this library (run `gmb build`)"))
        else:
            usable.append(lib)
    name = "quick" if quick else "default"
    mpi_libs = [lib for lib in usable if lib.transport == "mpi"]
    if not mpi_libs:
        return Campaign(name=name, blocks=[], skipped=skipped)

    first = mpi_libs[0]
    fcaps = caps_by_lib[first.name]
    gpus = topo.gpus if fcaps.get("features", {}).get("cuda") else []
    if "peaks" in _bench_names(fcaps):
        # 5 samples of 4 copies per ceiling (CVs of copies are well under 1 %), at 1 MiB and 64 MiB: the sizes
        # where MPI figures are put next to them (a fraction of peak compares one size with the same size)
        popts = {} if quick else {"validate": True} if not gpus else {"samples": 5, "copies": 4, "validate": True}
        blocks.append(Block(["peaks"], ranks=[2], options=popts, libraries=[first.name], path="ceilings",
                            sizes=None if quick else CEILING_SIZES))
    else:
        skipped.append((first.name, "peaks", "engine has no peaks benchmark: no measured ceilings"))
    for lib in mpi_libs:
        if quick or not gpus:
            blocks += _host_machine_blocks(lib, caps_by_lib[lib.name], topo, gpus, quick, skipped)
        else:
            blocks += _gpu_machine_blocks(lib, caps_by_lib[lib.name], topo, skipped)
    if hosts > 1:
        for lib in mpi_libs:
            blocks += _inter_node_blocks(lib, caps_by_lib[lib.name], gpus, quick, skipped)
    for lib in usable:
        if lib.transport == "nccl":
            blocks += _nccl_blocks(lib, caps_by_lib[lib.name], topo, quick, skipped)
    return Campaign(name=name, blocks=blocks, skipped=skipped)


def _inter_node_blocks(lib, caps, gpus, quick, skipped) -> list[Block]:
    """Several hosts: latency, bw, bibw between two ranks on two nodes (one rank per node: run_launches places
    launches of path "inter-node" so), host memory and, with GPUs and a CUDA-aware library, device memory."""
    names = _bench_names(caps)
    have = [b for b in ("latency", "bw", "bibw") if b in names]
    if not have:
        return []
    opts = {"iters": 200, "warmup": 20, "validate": True} if quick else dict(GPU_PT2PT_OPTIONS)
    sizes = "1:1M" if quick else HOST_SIZES
    blocks = [Block(have, memory=["host:host"], sizes=sizes, ranks=[2], path="inter-node", options=dict(opts),
                    libraries=[lib.name])]
    if not gpus:
        return blocks
    if not _kind_ok(caps, "device")[0]:
        skipped.append((lib.name, "inter-node device:device", "device memory kind unavailable"))
    elif lib.cuda_aware is not True:
        skipped.append((lib.name, "inter-node device:device", not_aware_reason(lib, short=True)))
    else:
        blocks.append(Block(have, memory=["device:device"], strategies=["direct"], sizes=sizes, ranks=[2], gpus=[0],
                            path="inter-node", options=dict(opts), libraries=[lib.name]))
    return blocks


def not_aware_reason(lib: MpiLibrary, short: bool = False) -> str:
    """Why device pointers are not handed to ``lib`` (its ``cuda_aware`` is False, or None: unknown, planned as
    not aware: a library that cannot move device memory may crash or deliver wrong data)."""
    if lib.cuda_aware is None:
        what = ("CUDA awareness unknown (treated as not aware; `gmb doctor` proves it, declare cuda_aware = true "
                "in the libraries config when it says aware)")
    else:
        what = "library is not CUDA-aware"
    return what if short else what + "; device pointers are not handed to it (staged-pinned instead)"


def _pt2pt_have(lib, caps, skipped) -> list[str]:
    names = _bench_names(caps)
    for b in ("latency", "bw", "bibw"):
        if b not in names:
            skipped.append((lib.name, b, "engine does not list this benchmark"))
    return [b for b in ("latency", "bw", "bibw") if b in names]


def _host_machine_blocks(lib, caps, topo, gpus, quick, skipped) -> list[Block]:
    """--quick, or a machine (or engine) without GPU: host paths; with --quick and GPUs, a short GPU sweep."""
    blocks = []
    sizes = "1:1M" if quick else "1:64M"
    opts = {"iters": 200, "warmup": 20, "validate": True} if quick else \
        {"iters": 1000, "warmup": 100, "iters-large": 100, "warmup-large": 10, "validate": True}
    names = _bench_names(caps)
    have = _pt2pt_have(lib, caps, skipped)
    if have:
        blocks.append(Block(have, memory=["host:host"], sizes=sizes, path="host", options=dict(opts),
                            libraries=[lib.name]))
        blocks += _cross_socket(lib, have, topo, sizes, opts, skipped)
    if not gpus:
        if not quick:
            skipped.append((lib.name, "device memory", "no GPU found (or engine built without CUDA)"))
    elif have and _kind_ok(caps, "device")[0]:
        strategies = ["direct", "staged-pinned"] if lib.cuda_aware is True else ["staged-pinned"]
        if lib.cuda_aware is not True:
            skipped.append((lib.name, "direct device buffers", not_aware_reason(lib)))
        for cls, (i, j) in sorted(topo.gpu_pairs_by_class().items()):
            blocks.append(Block(have, memory=["device:device"], strategies=strategies, sizes=sizes, gpus=[i, j],
                                path=cls, options=dict(opts), libraries=[lib.name]))
    if not quick and "mbw" in names:
        blocks.append(Block(["mbw"], memory=["host:host"], sizes=sizes, ranks=[4] if (os.cpu_count() or 1) >= 4
                            else [2], options=dict(opts), libraries=[lib.name], path="host"))
    for coll in ("coll", "nbc", "halo"):
        if coll not in names:
            if not quick or coll == "coll":
                skipped.append((lib.name, coll, "engine does not list this benchmark"))
            continue
        if quick and coll != "coll":
            continue
        blocks.append(Block([coll], sizes="4:1M" if quick else "4:64M", ranks=[max(2, len(gpus))],
                            gpus=list(range(len(gpus))) if gpus else None, options=dict(opts), libraries=[lib.name],
                            operations=QUICK_OPERATIONS.get(coll) if quick else None))
    return blocks


def _cross_socket(lib, have, topo, sizes, opts, skipped) -> list[Block]:
    if len(topo.numa_nodes) <= 1:
        return []
    if lib.launcher != "mpirun":
        skipped.append((lib.name, "cross-socket", f"no NUMA placement rule for launcher {lib.launcher}"))
        return []
    return [Block(have, memory=["host:host"], sizes=sizes, path="cross-socket", bind="numa", options=dict(opts),
                  libraries=[lib.name])]


def _gpu_machine_blocks(lib, caps, topo, skipped) -> list[Block]:
    """The full default on a GPU machine (issue 7): per path class HH, DD (each GPU link class and same GPU),
    HD; collectives, overlap and halo on all GPUs; managed placements. A library that is not CUDA-aware gets
    the staged strategy instead of device pointers."""
    blocks = []
    opts = dict(GPU_PT2PT_OPTIONS)
    names = _bench_names(caps)
    have = _pt2pt_have(lib, caps, skipped)
    lib_ = [lib.name]
    ngpu = len(topo.gpus)
    if have:
        blocks.append(Block(have, memory=["host:host"], sizes=HOST_SIZES, path="host", options=opts, libraries=lib_))
        blocks += _cross_socket(lib, have, topo, HOST_SIZES, opts, skipped)
    dev_ok, why = _kind_ok(caps, "device")
    if not dev_ok:
        skipped.append((lib.name, "device memory", why or "device memory kind unavailable"))
        return blocks + _collective_blocks(lib, caps, ngpu, device=False, skipped=skipped)
    aware = lib.cuda_aware is True
    if not aware:
        skipped.append((lib.name, "direct device buffers", not_aware_reason(lib)))
    strategy = ["direct"] if aware else ["staged-pinned"]
    dd_sizes = FAST_SIZES if aware else SLOW_SIZES
    if have:
        for cls, (i, j) in sorted(topo.gpu_pairs_by_class().items()):
            blocks.append(Block(have, memory=["device:device"], strategies=strategy, sizes=dd_sizes, gpus=[i, j],
                                path=cls, options=opts, libraries=lib_))
        if aware:
            blocks.append(Block(have, memory=["device:device"], strategies=strategy, sizes=dd_sizes, gpus=[0, 0],
                                path="same-gpu", options=opts, libraries=lib_))
        else:
            skipped.append((lib.name, "same-gpu", "staged through host memory: the same path as between two GPUs"))
        # host <-> device from pinned host memory (pageable: campaigns/gpu-paper.toml; time budget)
        blocks.append(Block(have, memory=["pinned:device"], strategies=strategy, sizes=SLOW_SIZES, gpus=[0],
                            path="host-device", options=opts, libraries=lib_))
    if "um" not in names:
        skipped.append((lib.name, "um (managed placements)", "engine does not list this benchmark"))
    elif not aware:
        skipped.append((lib.name, "um (managed placements)", not_aware_reason(lib, short=True)))
    else:
        mok, why = _kind_ok(caps, "managed")
        if mok:
            pl = [f"managed:{a}:managed:{b}" for a in ("host", "device") for b in ("host", "device")]
            blocks.append(Block(["um"], memory=pl, sizes=SLOW_SIZES, gpus=[0, 1] if ngpu > 1 else [0, 0],
                                path="managed", options=opts, libraries=lib_))
        else:
            skipped.append((lib.name, "um (managed placements)", why or "managed memory unavailable"))
    return blocks + _collective_blocks(lib, caps, ngpu, device=aware, skipped=skipped)


def _collective_blocks(lib, caps, ngpu, device: bool, skipped) -> list[Block]:
    """coll, nbc and halo across all GPUs: on device memory for a CUDA-aware library, else on host memory (halo:
    device field exchanged through the staged strategy)."""
    names = _bench_names(caps)
    blocks = []
    ranks = [max(2, ngpu)]
    gpus = list(range(ngpu)) or None
    mem = {"mem": "device"} if device else {}
    common = {"iters": 200, "warmup": 20, "iters-large": 5, "warmup-large": 1, "large-size": "64K"}
    # coll: the default operations in one launch; nbc (pure, then with compute: several times one call): allreduce,
    # bcast and alltoall in one launch (a library known to crash in one of them on device memory gets it refused
    # with the reason, and the others still run)
    for bench, sizes, extra, ops in (("coll", COLL_SIZES, {"validate": True}, None),
                                     ("nbc", NBC_SIZES, {"iters": 100}, ["allreduce", "bcast", "alltoall"])):
        if bench not in names:
            skipped.append((lib.name, bench, "engine does not list this benchmark"))
            continue
        blocks.append(Block([bench], sizes=sizes, ranks=ranks, gpus=gpus, options=common | extra | mem,
                            libraries=[lib.name], join_operations=True, operations=ops))
    if "halo" not in names:
        skipped.append((lib.name, "halo", "engine does not list this benchmark"))
    elif ngpu:
        strategy = "all" if device else "staged"
        blocks.append(Block(["halo"], ranks=ranks, gpus=gpus, libraries=[lib.name],
                            options=HALO_OPTIONS | {"mem": "device", "strategy": strategy}))
    return blocks


def _nccl_blocks(lib, caps, topo, quick, skipped) -> list[Block]:
    if not caps.get("features", {}).get("nccl"):
        skipped.append((lib.name, "all", "the engine was built without NCCL (features.nccl false)"))
        return []
    if not topo.gpus:
        skipped.append((lib.name, "all", "no GPU found"))
        return []
    opts = {"iters": 200, "warmup": 20, "validate": True} if quick else dict(GPU_PT2PT_OPTIONS)
    blocks = []
    for cls, (i, j) in sorted(topo.gpu_pairs_by_class().items()):
        blocks.append(Block(["latency", "bw", "bibw"], memory=["device:device"], strategies=["direct"],
                            sizes="1:1M" if quick else FAST_SIZES, gpus=[i, j], path=cls, options=opts,
                            libraries=[lib.name]))
    skipped.append((lib.name, "same-gpu", "NCCL needs one GPU per rank"))
    if len(topo.gpus) < 2:
        skipped.append((lib.name, "coll", "NCCL collectives need one GPU per rank: fewer than 2 GPUs"))
        return blocks
    common = {"iters": 200, "warmup": 20, "validate": True} if quick else \
        {"iters": 200, "warmup": 20, "iters-large": 5, "warmup-large": 1, "large-size": "64K", "validate": True}
    blocks.append(Block(["coll"], sizes="4:1M" if quick else COLL_SIZES, ranks=[len(topo.gpus)],
                        gpus=list(range(len(topo.gpus))), options=common | {"mem": "device"},
                        libraries=[lib.name], operations=["allreduce"] if quick else list(NCCL_DEFAULT_OPERATIONS),
                        join_operations=True))
    return blocks


def add_nccl_library(libs: list[MpiLibrary], caps_by_lib: dict[str, dict], engines: dict[str, str],
                     topo: Topology) -> tuple[MpiLibrary | None, str]:
    """For a generated campaign: when GPUs are present, no NCCL library is declared and the engine of some MPI
    library was built with NCCL, add one named "nccl". Its ``via`` (launcher and engine that bootstrap NCCL) is
    the first such library with the ob1 profile (Open MPI's own transports: the most robust bootstrap), else the
    first such library. Returns (library or None, what was decided)."""
    if any(lib.transport == "nccl" for lib in libs):
        return None, "an NCCL library is declared"
    if not topo.gpus:
        return None, "no GPU: no NCCL library"
    with_nccl = [lib for lib in libs if lib.transport == "mpi" and
                 caps_by_lib.get(lib.name, {}).get("features", {}).get("nccl")]
    if not with_nccl:
        return None, "no engine was built with NCCL (features.nccl): no NCCL library"
    via = next((lib for lib in with_nccl if lib.profile == "openmpi-ob1"), with_nccl[0])
    name = "nccl" if "nccl" not in {lib.name for lib in libs} else f"nccl-via-{via.name}"
    from .mpilibs import nccl_library

    lib = nccl_library(via, name)
    caps_by_lib[name] = caps_by_lib[via.name]
    if via.name in engines:
        engines[name] = engines[via.name]
    version = caps_by_lib[via.name].get("features", {}).get("nccl_version")
    return lib, (f"NCCL library {name!r} added, via {via.name!r} (its engine was built with NCCL"
                 f"{' ' + version if version else ''}; launches use its launcher and environment)")


# --------------------------------------------------------------------------- planning
@dataclass
class Launch:
    launch_id: str
    library: str
    benchmark: str
    memory: str
    strategy: str
    ranks: int
    repetition: int
    engine_args: list[str]  # after the engine path, without --out
    env: dict[str, str]
    planned_path: str | None
    bind: str | None
    timeout_s: float


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", s).strip("_") or "x"


def engine_args(bench: str, block: Block, memory: str, strategy: str, operation: str | None = None,
                transport: str = "mpi") -> list[str]:
    a = [bench]
    if operation is None and bench in DEFAULT_OPERATIONS:
        operation = (block.operations or DEFAULT_OPERATIONS[bench])[0]
    if operation:
        a.append(operation)
    if block.sizes:
        a += ["--sizes", str(block.sizes)]
    if memory:
        send, recv = parse_memory(memory)
        a += ["--send", send, "--recv", recv]
    if strategy:
        a += ["--strategy", strategy]
    if transport != "mpi":  # the engine's default; older engines do not know the option
        a += ["--transport", transport]
    for k, v in block.options.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            a.append(flag)
        elif v is False or v is None:
            continue
        else:
            a += [flag, str(v)]
    return a


def nccl_refusal(bench: str, block: Block, memory: str, strategy: str) -> tuple[str, str] | None:
    """(what, reason) when a point of a block cannot run with --transport nccl, else None."""
    if bench not in NCCL_BENCHMARKS:
        return bench, f"runs under MPI only (NCCL transport: {', '.join(NCCL_BENCHMARKS)})"
    if bench == "coll":
        kinds = {block.options.get(k) for k in ("mem", "mem-root", "mem-others", "mem_root", "mem_others")} - {None}
        if kinds != {"device"}:
            return bench, "NCCL moves device memory only (the block needs options mem = \"device\")"
        return None
    if memory != "device:device":
        return f"{bench} {memory or 'host:host'}", "NCCL moves device memory only (device:device)"
    if strategy not in ("", "direct"):
        return f"{bench} {memory} {strategy}", "NCCL is handed device buffers directly (no staging strategy)"
    if block.gpus is not None and len(set(block.gpus)) < len(block.gpus):
        return f"{bench} {memory} gpus {block.gpus}", "NCCL needs one GPU per rank"
    return None


def _operations(bench: str, block: Block, lib: MpiLibrary, name: str, skipped: list) -> list[str | None]:
    """The operation argument of each launch of ``bench``: one per operation, or one joined list."""
    if bench not in DEFAULT_OPERATIONS:
        return [None]
    ops = list(block.operations or DEFAULT_OPERATIONS[bench])
    if lib.transport == "nccl":
        for op in [o for o in ops if o not in NCCL_OPERATIONS]:
            skipped.append((name, f"{bench} {op}", NCCL_NO_OPERATION.get(op, "no NCCL counterpart")))
        ops = [o for o in ops if o in NCCL_OPERATIONS]
    if block.join_operations and ops:
        return [",".join(ops)]
    return ops


def _hands_device_pointers(bench: str, memory: str, strategy: str) -> bool:
    """A point-to-point point whose device buffers go to MPI as they are (the direct strategy, the engine's default
    when none is given)."""
    if strategy == "direct":
        return "device" in memory
    return strategy == "" and bench in PT2PT and bool(memory) and "device" in parse_memory(memory)


def plan(c: Campaign, libs: list[MpiLibrary], caps_by_lib: dict[str, dict] | None = None, hosts: int | None = None
         ) -> tuple[list[Launch], list[tuple[str, str, str]]]:
    """Expand the matrix. Returns (launches in run order, skipped (library, what, reason)). ``hosts``: how many
    hosts the launches may use (--nodes, a hostfile's hosts); 1 skips blocks of path "inter-node", None: unknown."""
    caps_by_lib = caps_by_lib or {}
    by_name = {lib.name: lib for lib in libs}
    skipped = list(c.skipped)
    launches: list[Launch] = []
    for bi, block in enumerate(c.blocks):
        if hosts == 1 and block.path == "inter-node":
            skipped.append(("all", f"block {bi + 1} (inter-node)", "one host: give --nodes 2 or more (srun), or a "
                                                                   "--hostfile with 2 hosts or more"))
            continue
        wanted = block.libraries or c.libraries
        names = list(by_name) if "*" in wanted else wanted
        for name in names:
            if name not in by_name:
                skipped.append((name, f"block {bi + 1}", "library not found or not selected, or it has no engine "
                                                          "(see `gmb libs`, --library)"))
                continue
            lib = by_name[name]
            caps = caps_by_lib.get(name)
            if lib.transport == "nccl" and caps is not None and not caps.get("features", {}).get("nccl"):
                skipped.append((name, f"block {bi + 1}", "the engine was built without NCCL (features.nccl false)"))
                continue
            for bench in block.benchmarks:
                if caps is not None:
                    info = _bench_names(caps).get(bench)
                    if info is None:
                        skipped.append((name, bench, "engine does not list this benchmark"))
                        continue
                if lib.transport == "nccl" and bench not in NCCL_BENCHMARKS:
                    skipped.append((name, *nccl_refusal(bench, block, "", "")))
                    continue
                ops = _operations(bench, block, lib, name, skipped)
                for mem in block.memory:
                    if caps is not None and mem:
                        bad = [k for k in dict.fromkeys(parse_memory(mem)) if not _kind_ok(caps, k)[0]]
                        if bad:
                            skipped.append((name, f"{bench} {mem}", f"memory kind {bad[0]} unavailable: "
                                                                    f"{_kind_ok(caps, bad[0])[1]}"))
                            continue
                    for strat in block.strategies:
                        if lib.transport == "nccl":
                            refused = nccl_refusal(bench, block, mem, strat)
                            if refused:
                                skipped.append((name, *refused))
                                continue
                        elif lib.cuda_aware is not True and _hands_device_pointers(bench, mem, strat):
                            skipped.append((name, f"{bench} {mem} {strat or 'direct'}",
                                            not_aware_reason(lib, short=True)))
                            continue
                        for ranks in block.ranks:
                            min_ranks = (_bench_names(caps).get(bench, {}).get("min_ranks") if caps else None) or 1
                            if ranks < min_ranks:
                                skipped.append((name, f"{bench} n={ranks}", f"needs at least {min_ranks} ranks"))
                                continue
                            env = dict(block.env)
                            if block.gpus is not None:
                                env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in dict.fromkeys(block.gpus))
                            for op, rep in ((o, r) for o in ops for r in range(1, c.repetitions + 1)):
                                b = f"{bench}-{op.replace(',', '+')}" if op else bench
                                lid = _safe(f"b{bi + 1}.{name}.{b}.{mem or 'na'}.{strat or 'na'}.n{ranks}.r{rep}")
                                launches.append(Launch(lid, name, bench, mem, strat, ranks, rep,
                                                       engine_args(bench, block, mem, strat, op, lib.transport), env,
                                                       block.path, block.bind, c.timeout_s))
    peaks = [x for x in launches if x.benchmark == "peaks"]
    rest = [x for x in launches if x.benchmark != "peaks"]
    if c.order == "random":
        rng = random.Random(c.seed)
        rng.shuffle(rest)
    return peaks + rest, skipped


# --------------------------------------------------------------------------- running
def new_results_dir(base: str | Path, name: str) -> Path:
    """results/<campaign>-<UTC time>/, never reusing an existing directory."""
    base = Path(base)
    base.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    d = base / f"{_safe(name)}-{stamp}"
    n = 2
    while True:
        try:
            d.mkdir()
            return d
        except FileExistsError:
            d = base / f"{_safe(name)}-{stamp}-{n}"
            n += 1


class Progress:
    def __init__(self, total: int, stream=None):
        self.total, self.done, self.t0 = total, 0, time.monotonic()
        self.stream = stream or sys.stderr
        self.counts: dict[str, int] = {}

    def update(self, status: str | None = None, current: str = ""):
        if status:
            self.done += 1
            self.counts[status] = self.counts.get(status, 0) + 1
        el = time.monotonic() - self.t0
        eta = el / self.done * (self.total - self.done) if self.done else 0
        width = 24
        fill = int(width * self.done / max(1, self.total))
        counts = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} "
                          f"elapsed {_hms(el)} ETA {_hms(eta) if self.done else '?'} {counts} {current[:40]:<40}")
        self.stream.flush()

    def close(self):
        self.stream.write("\n")
        self.stream.flush()


def _hms(s: float) -> str:
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def write_plan(outdir: Path, c: Campaign, launches: list[Launch], skipped, libs: list[MpiLibrary],
               engines: dict[str, str]):
    data = {"campaign": c.name, "created_utc": datetime.now(timezone.utc).isoformat(), "seed": c.seed,
            "stop_library_after": c.stop_library_after,
            "launches": [asdict(x) for x in launches], "skipped": skipped,
            "libraries": [lib.describe() for lib in libs], "engines": engines}
    write_new(outdir / "plan.json", json.dumps(data, indent=1))
    write_new(outdir / "campaign.toml", c.to_toml())


def read_plan(outdir: Path) -> dict:
    """plan.json of a results directory, checked: a damaged one is a CampaignError naming what is wrong, and
    ``launches`` holds Launch objects."""
    p = Path(outdir) / "plan.json"
    if not p.is_file():
        raise CampaignError(f"{outdir}: not a campaign results directory (no plan.json)")
    try:
        data = json.loads(p.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise CampaignError(f"{p}: damaged, not valid JSON ({exc}); cannot resume") from None
    if not isinstance(data, dict):
        raise CampaignError(f"{p}: damaged, expected a JSON object; cannot resume")
    problems = []
    if not isinstance(data.get("campaign"), str):
        problems.append("'campaign' must be a string")
    if not isinstance(data.get("engines"), dict):
        problems.append("'engines' must be an object")
    if not isinstance(data.get("libraries"), list) or not all(isinstance(d, dict) and isinstance(d.get("name"), str)
                                                              for d in data["libraries"]):
        problems.append("'libraries' must be a list of objects with a name")
    stop = data.get("stop_library_after", 3)
    if not isinstance(stop, int) or isinstance(stop, bool) or stop < 0:
        problems.append("'stop_library_after' must be an integer >= 0")
    launches = data.get("launches")
    fields = set(Launch.__dataclass_fields__)
    if not isinstance(launches, list):
        problems.append("'launches' must be a list")
    else:
        for i, d in enumerate(launches):
            if not isinstance(d, dict) or set(d) != fields:
                problems.append(f"launch #{i + 1} must be an object with the keys {', '.join(sorted(fields))}")
                break
            if not (isinstance(d["launch_id"], str) and isinstance(d["library"], str) and
                    isinstance(d["engine_args"], list) and isinstance(d["env"], dict) and
                    isinstance(d["ranks"], int) and isinstance(d["timeout_s"], (int, float))):
                problems.append(f"launch #{i + 1} ({d.get('launch_id')!r}) has values of the wrong type")
                break
    if problems:
        raise CampaignError(f"{p}: damaged ({'; '.join(problems)}); cannot resume")
    data["launches"] = [Launch(**d) for d in launches]
    return data


def _set_aside(path: Path):
    """Keep an interrupted launch's partial output under a new name (nothing is overwritten)."""
    if not path.exists():
        return
    n = 1
    while (path.with_name(f"{path.name}.interrupted-{n}")).exists():
        n += 1
    path.rename(path.with_name(f"{path.name}.interrupted-{n}"))


def placement(x: Launch, nodes: int | None, ranks_per_node: int | None) -> tuple[int | None, int | None]:
    """(nodes, ranks per node) given to the launcher for one launch. Path "inter-node": one rank per node (on
    ``min(nodes, ranks)`` nodes under srun; mpirun/mpiexec with a hostfile: ppr 1 / -ppn 1). With several nodes,
    a point-to-point launch meant for a path inside a node (host, nvlink, same-gpu, ...) stays on one node, and one
    with no planned path gets one rank per node; everything else runs on all nodes, ``ranks_per_node`` each."""
    if x.planned_path == "inter-node":
        return (min(nodes, x.ranks) if nodes else None), 1
    if nodes and nodes > 1 and x.benchmark in PT2PT:
        return (1, None) if x.planned_path else (min(nodes, x.ranks), 1)
    return nodes, ranks_per_node


def run_launches(outdir: Path, launches: list[Launch], libs: dict[str, MpiLibrary], engines: dict[str, str],
                 store: Store, campaign_name: str, hostfile: str | None = None, progress: bool = True,
                 stream=None, nodes: int | None = None, ranks_per_node: int | None = None,
                 stop_library_after: int = 3, lock: locks.ResultsLock | None = None) -> dict[str, int]:
    """Run the launches not finished yet. After ``stop_library_after`` failed or timed-out launches of one library
    in a row (0: never), its remaining launches are recorded as "skipped" with the reason, not run. ``lock`` (the
    results directory's) is told which launch runs, for a successor should this process die. A launch running
    when gmb is stopped (KeyboardInterrupt, Stopped) is ended and marked "interrupted", and the exception goes on."""
    raw, logs = outdir / "raw", outdir / "logs"
    raw.mkdir(exist_ok=True)
    logs.mkdir(exist_ok=True)
    finished = store.finished_launches()
    todo = [x for x in launches if x.launch_id not in finished]
    bar = Progress(len(todo), stream) if progress else None
    counts: dict[str, int] = {}
    failures_in_a_row: dict[str, int] = {}
    for x in todo:
        lib = libs[x.library]
        if stop_library_after and failures_in_a_row.get(x.library, 0) >= stop_library_after:
            store.record_launch(launch_id=x.launch_id, campaign=campaign_name, library=x.library,
                                benchmark=x.benchmark, repetition=x.repetition, memory=x.memory, strategy=x.strategy,
                                ranks=x.ranks, planned_path=x.planned_path, status="skipped",
                                reason=f"not run: the library's last {stop_library_after} launches failed")
            counts["skipped"] = counts.get("skipped", 0) + 1
            if bar:
                bar.update("skipped", x.launch_id)
            continue
        out = raw / f"{x.launch_id}.jsonl"
        log = logs / f"{x.launch_id}.log"
        _set_aside(out)
        _set_aside(log)
        launcher = launchers.get(lib.launcher)
        spec = launchers.LaunchSpec(ranks=x.ranks, program=[engines[x.library], *x.engine_args, "--out", str(out),
                                                            "--format", "json"],
                                    hostfile=hostfile, bind=x.bind, env=x.env,
                                    **dict(zip(("nodes", "ranks_per_node"), placement(x, nodes, ranks_per_node))))
        argv = launcher.argv(lib, spec)
        env = launcher.environment(lib, spec)
        started = datetime.now(timezone.utc).isoformat()
        row = dict(launch_id=x.launch_id, campaign=campaign_name, library=x.library, benchmark=x.benchmark,
                   repetition=x.repetition, memory=x.memory, strategy=x.strategy, ranks=x.ranks,
                   planned_path=x.planned_path, argv=argv, started_utc=started, raw_file=str(out.relative_to(outdir)),
                   log_file=str(log.relative_to(outdir)))
        store.forget_launch(x.launch_id)
        store.record_launch(**row, status="running")
        if bar:
            bar.update(current=x.launch_id)
        t0 = time.monotonic()
        try:
            status, rc, reason = _execute(argv, env, log, x.timeout_s, started=lambda pid: lock and lock.running(
                x.launch_id, session=pid, record_file=str(out.resolve())))
        except (KeyboardInterrupt, Stopped) as exc:
            store.record_launch(**row, status="interrupted", wall_s=round(time.monotonic() - t0, 3),
                                reason=f"gmb was stopped ({_stop_signal(exc)})")
            raise
        finally:
            if lock:
                lock.running(None)
        wall = time.monotonic() - t0
        with store.transaction(f"the records of launch {x.launch_id}"):  # figures and "finished" go together
            status, reason = _store_records(store, out, log, lib, x, status, reason)
            store.record_launch(**row, status=status, rc=rc, reason=reason, wall_s=round(wall, 3))
        failures_in_a_row[x.library] = failures_in_a_row.get(x.library, 0) + 1 \
            if status in ("failed", "timeout", identity.WRONG_LIBRARY) else 0
        counts[status] = counts.get(status, 0) + 1
        if bar:
            bar.update(status, x.launch_id)
    if bar:
        bar.close()
    return counts


def _store_records(store: Store, out: Path, log: Path, lib: MpiLibrary, x: Launch, status: str, reason: str
                   ) -> tuple[str, str]:
    """Store what a launch wrote, after checking that it ran the planned library: a launch whose records name
    another MPI library (identity.mismatch) is "wrong-library" and none of its figures are stored (its raw file
    stays). Returns the launch's (status, reason)."""
    records = None
    if out.exists():
        try:
            records = read_records(out)
        except Exception as exc:  # a broken record file is a failed launch, not a crashed campaign
            return "failed", f"records unreadable: {exc}"
        wrong = next((why for why in (identity.mismatch(lib, ctx) for ctx in records.contexts) if why), None)
        if wrong:
            return identity.WRONG_LIBRARY, f"{wrong}; its figures were not stored (raw file kept)"
    if status != "ok" and not (records and records.contexts):  # died before saying what it ran
        swapped = _swapped_library(log)
        if swapped:
            return identity.WRONG_LIBRARY, swapped
    if records is None:
        return ("failed", "engine wrote no record file") if status == "ok" else (status, reason)
    n = store.ingest(records, library=x.library, repetition=x.repetition, launch_id=x.launch_id)
    if n == 0 and status == "ok":
        return "failed", "engine wrote no result records"
    return status, reason


def _swapped_library(log: Path) -> str:
    """The engine's start-up warning that it runs another MPI library than it was built against (printed before
    MPI_Init, so it survives a crash inside the swapped library), or ""."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return ""
    m = re.search(r"gmb-bench: warning: MPI library swapped: ([^\n]*)", text)
    return f"the engine ran another MPI library than it was built for: {m.group(1)}" if m else ""


class Stopped(Exception):
    """gmb was told to stop (SIGTERM, SIGHUP) by a user, a batch system or `timeout`."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop_signal(exc: BaseException) -> str:
    """The signal that stopped gmb: Stopped names its own; KeyboardInterrupt is SIGINT."""
    return "SIGINT" if isinstance(exc, KeyboardInterrupt) else str(exc)


@contextmanager
def stop_on_signals():
    """SIGTERM and SIGHUP raise Stopped (SIGINT raises KeyboardInterrupt) wherever gmb is, so that the launch
    running is stopped with everything it started and marked interrupted; signals that follow while it stops are
    ignored, so the stopping itself is not cut short."""
    def stop(signum, frame):
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        raise Stopped(signum)

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _execute(argv, env, log: Path, timeout_s: float, started=lambda pid: None) -> tuple[str, int | None, str]:
    """Run one launch in a session of its own (``started`` is told its id: the launcher's pid), wait for it at most
    ``timeout_s``; a timeout or gmb being stopped ends every process of the session."""
    with open(log, "x") as lf:
        lf.write("$ " + " ".join(argv) + "\n")
        lf.flush()
        try:
            proc = subprocess.Popen(argv, stdout=lf, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        except OSError as exc:
            lf.write(f"gmb: cannot start: {exc}\n")
            return "failed", None, f"cannot start {argv[0]}: {exc}"
        try:
            started(proc.pid)
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _stop_launch(proc)
            lf.write(f"\ngmb: killed after {timeout_s:g} s (timeout)\n")
            return "timeout", None, f"killed after {timeout_s:g} s"
        except (KeyboardInterrupt, Stopped) as exc:
            _stop_launch(proc)
            lf.write(f"\ngmb: stopped ({_stop_signal(exc)}): launch ended\n")
            raise
        # A launcher that died (killed, crashed) may leave ranks running; they would share the next launch's cores.
        outlived = locks.stop_session(proc.pid)
        if outlived:
            lf.write(f"\ngmb: {len(outlived)} process(es) of the launch outlived its launcher (pids "
                     f"{', '.join(map(str, sorted(outlived)))}): stopped\n")
    status = EXIT_STATUS.get(rc, "failed")
    reason = "" if rc == 0 else _last_error(log) or f"exit status {rc}"
    return status, rc, reason


def _stop_launch(proc: subprocess.Popen):
    """End the launcher and everything it started: every process of its session, even those that left its
    process group or outlived the launcher."""
    locks.stop_session(proc.pid)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# A library's own diagnostic among a failed launch's output (UCX "UCX  ERROR", Open MPI "[host:pid] ... error",
# signals); the launcher's closing banner ("prterun detected that one or more processes exited ...") is not one.
_LIBRARY_ERROR = re.compile(r"\bERROR\b|\berror\b|Segmentation fault|\bSIG(SEGV|BUS|ABRT|ILL|FPE)\b|Killed")
_LOG_PREFIX = re.compile(r"^(\[[^\]]*\]\s*)+")  # "[1795408113.106396] [vm:15516:0]" time and process stamps


def _last_error(log: Path) -> str:
    """Why a launch did not end well, from its log: the engine's own last word (a "gmb-bench:" line, or the reason
    of its last unsupported/failed record), followed by the first error the library printed, which is usually the
    cause (e.g. "MPI_Waitall failed: MPI_ERR_IN_STATUS" after "UCX ERROR cuMemcpyDtoDAsync ... invalid argument").
    Without either: the last line that is not launcher decoration."""
    lines = [ln.strip() for ln in log.read_text(errors="replace").replace("\0", "").splitlines() if ln.strip()]
    engine = ""
    for ln in reversed(lines):
        if ln.startswith("gmb-bench:"):
            engine = ln
            break
        if ln.startswith("{") and '"reason"' in ln:  # an engine record (--format json): its reason, not the JSON
            try:
                rec = json.loads(ln)
            except ValueError:
                rec = None
            if isinstance(rec, dict) and rec.get("reason") and rec.get("status") != "ok":
                what = " ".join(str(rec[k]) for k in ("benchmark", "operation") if rec.get(k))
                engine = f"{what}: {rec['reason']}" if what else str(rec["reason"])
                break
    cause = next((_LOG_PREFIX.sub("", ln) for ln in lines
                  if not ln.startswith(("gmb-bench:", "$ ", "{")) and _LIBRARY_ERROR.search(ln)), "")
    if engine and cause and cause not in engine:
        return f"{engine} [first library error: {cause}]"[:500]
    if engine or cause:
        return (engine or cause)[:500]
    for ln in reversed(lines):
        if not ln.startswith(("$ ", "{")) and not set(ln) <= set("-=*"):
            return ln[:300]
    return ""


def copy_campaign_file(src: Path, outdir: Path):
    write_new(outdir / f"source-{src.name}", src.read_bytes())

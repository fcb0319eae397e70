# SPDX-License-Identifier: BSD-3-Clause
"""Planning: a campaign expanded into engine launches (one per block, benchmark, library, memory, strategy, ranks,
operation, setting set and repetition), with what cannot run skipped and the reason. The results directory they are
written to, and the plan saved there: results_dir.py."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace

from ..machine.launchers import binding_conflict
from ..machine.mpilibs import MpiLibrary
from ..engine.description import Benchmark, EngineDescription
from .environments import environments
from .sizes import parse_sizes
from .spec import DEFAULT_OPERATIONS, Block, Campaign, parse_memory


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
    family: str  # the benchmark's family (engine description): how its launches are placed on several nodes
    nodes: int | None = None  # the node count it runs on (a block over node counts); None: the session's hosts
    scaling: str | None = None  # "strong" or "weak": one node count of a collective scaling series
    isolate: bool = False  # with a campaign's bundle: never shares an engine launch (run/bundles.py)


def safe_name(s: str) -> str:
    """``s`` as a file name takes it (a launch id, a results directory's name)."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", s).strip("_") or "x"


def engine_args(bench: str, block: Block, memory: str, strategy: str, operation: str | None = None,
                transport: str = "mpi", sizes: str | None = None) -> list[str]:
    """The engine's command line for one launch (after the engine's path, without --out); ``sizes``: instead of the
    block's (a weak-scaling launch's)."""
    a = [bench]
    if operation:
        a.append(operation)
    if sizes or block.sizes:
        a += ["--sizes", str(sizes or block.sizes)]
    if memory:
        send, recv = parse_memory(memory)
        a += ["--send", send, "--recv", recv]
    if strategy:
        a += ["--strategy", strategy]
    if transport != "mpi":  # the engine's default
        a += ["--transport", transport]
    if block.nic:
        a += ["--nic", block.nic]
    for k, v in block.options.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            a.append(flag)
        elif v is False or v is None:
            continue
        else:
            a += [flag, str(v)]
    return a


def not_aware_reason(lib: MpiLibrary, short: bool = False) -> str:
    """Why device pointers are not handed to ``lib`` (its ``cuda_aware`` is False, or None: unknown, planned as
    not aware: a library that cannot move device memory may crash or deliver wrong data)."""
    if lib.cuda_aware is None:
        what = ("CUDA awareness unknown (treated as not aware; `gmb doctor` proves it, declare cuda_aware = true "
                "in the libraries config when it says aware)")
    else:
        what = "library is not CUDA-aware"
    return what if short else what + "; device pointers are not handed to it (staged-pinned instead)"


# the options of a block that give a benchmark's memory by role (--mem, --mem-root, --mem-others), as a block may
# spell them
ROLE_MEMORY_OPTIONS = ("mem", "mem-root", "mem-others", "mem_root", "mem_others")


def memory_kinds(block: Block, memory: str) -> list[str]:
    """The memory kinds a launch of ``block`` allocates: those of its SEND:RECV pair ``memory`` ("": none) and those
    the block's options give by role."""
    kinds = list(parse_memory(memory)) if memory else []
    kinds += [str(block.options[k]) for k in ROLE_MEMORY_OPTIONS if block.options.get(k) is not None]
    return list(dict.fromkeys(kinds))


def unavailable_memory(desc: EngineDescription, block: Block, memory: str, gpus_elsewhere: bool = False
                       ) -> tuple[str, str] | None:
    """(kind, why) of the first memory kind a launch of ``block`` with ``memory`` needs that its engine cannot
    allocate (an engine built without CUDA has no device memory), None when it has them all. ``gpus_elsewhere``: the
    launches run on nodes with GPUs (`gmb slurm --gpus-per-node`), so a kind an engine built with CUDA lacks only
    for want of a usable GPU where it was asked is taken as there."""
    for kind in memory_kinds(block, memory):
        available, why = desc.kind_available(kind)
        if not available and not (gpus_elsewhere and desc.cuda and kind in desc.kinds):
            return kind, why
    return None


def nccl_refusal(desc: EngineDescription, b: Benchmark, block: Block, memory: str, strategy: str
                 ) -> tuple[str, str] | None:
    """(what, reason) when a point of a block cannot run with --transport nccl, else None."""
    bench = b.name
    if "nccl" not in b.transports:
        return bench, f"runs under MPI only (NCCL transport: {', '.join(desc.with_transport('nccl'))})"
    if b.operations:  # memory by role (--mem, --mem-root, --mem-others)
        kinds = memory_kinds(block, "")
        if not kinds or not all(desc.gpu_memory(k) for k in kinds):
            return bench, "NCCL moves device memory only (the block needs options mem = \"device\")"
        return None
    if not memory or not all(desc.gpu_memory(k) for k in parse_memory(memory)):
        return f"{bench} {memory or 'host:host'}", "NCCL moves device memory only (device:device)"
    if strategy not in ("", "direct"):
        return f"{bench} {memory} {strategy}", "NCCL is handed device buffers directly (no staging strategy)"
    if block.gpus is not None and len(set(block.gpus)) < len(block.gpus):
        return f"{bench} {memory} gpus {block.gpus}", "NCCL needs one GPU per rank"
    return None


def _operations(desc: EngineDescription, b: Benchmark, block: Block, lib: MpiLibrary, skipped: list
                ) -> list[str | None]:
    """The operation argument of each launch of ``b``: one per operation, or one joined list, of those the engine
    lists (the others skipped with the reason). A block without operations gets DEFAULT_OPERATIONS."""
    if not b.operations:
        return [None]
    if not block.operations and b.name not in DEFAULT_OPERATIONS:
        skipped.append((lib.name, b.name, "takes a collective operation: name them in the block (operations = "
                                          f"[...]; the engine's: {', '.join(desc.collectives)})"))
        return []
    ops = listed_operations(lib, desc, b.name, block.operations or DEFAULT_OPERATIONS[b.name], skipped)
    if lib.transport == "nccl":
        refusals = {op: desc.nccl_refusal(op) for op in ops}
        skipped += [(lib.name, f"{b.name} {op}", why) for op, why in refusals.items() if why]
        ops = [op for op, why in refusals.items() if not why]
    if block.join_operations and ops:
        return [",".join(ops)]
    return ops


def listed_operations(lib: MpiLibrary, desc: EngineDescription, bench: str, operations: list[str],
                      skipped: list) -> list[str]:
    """The ``operations`` the engine lists, in order; each other one is skipped with the reason."""
    skipped += [(lib.name, f"{bench} {op}", "not a collective the engine lists") for op in operations
                if op not in desc.collectives]
    return [op for op in operations if op in desc.collectives]


def _hands_device_pointers(desc: EngineDescription, b: Benchmark, memory: str, strategy: str) -> bool:
    """A point whose GPU memory goes to MPI as it is (the direct strategy; for point to point also no strategy,
    the engine's default being direct)."""
    if not memory or strategy not in ("direct", "") or (strategy == "" and not b.point_to_point):
        return False
    return any(desc.gpu_memory(k) for k in parse_memory(memory))


def plan(c: Campaign, libs: list[MpiLibrary], descriptions: dict[str, EngineDescription], hosts: int | None = None,
         gpus_elsewhere: bool = False, node_gpus: int | None = None) -> tuple[list[Launch], list[tuple[str, str, str]]]:
    """Expand the matrix. Returns (launches in run order, skipped (library, what, reason)). ``descriptions``: each
    library's engine description (a library without one is skipped). ``hosts``: how many hosts the launches may use
    (--nodes, a hostfile's hosts); 1 skips blocks of path "inter-node", None: unknown. ``gpus_elsewhere``: the
    launches run on nodes with GPUs, not here (unavailable_memory). ``node_gpus``: how many GPUs each node of the
    launches has (None: unknown), for visible_gpus."""
    by_name = {lib.name: lib for lib in libs}
    skipped = list(c.skipped)
    launches: list[Launch] = []
    for bi, block in enumerate(c.blocks):
        if hosts == 1 and block.path == "inter-node":
            skipped.append(("all", f"block {bi + 1} (inter-node)", "one host: give --nodes 2 or more (srun), or a "
                                                                   "--hostfile with 2 hosts or more"))
            continue
        if block.nodes and hosts and max(block.nodes) > hosts:
            skipped += [("all", f"block {bi + 1} on {n} nodes", f"the session has {hosts} host(s) (--nodes, the "
                                                                 f"hostfile)") for n in block.nodes if n > hosts]
            block = replace(block, nodes=[n for n in block.nodes if n <= hosts])
            if not block.nodes:
                continue
        wanted = block.libraries or c.libraries
        names = list(by_name) if "*" in wanted else wanted
        for name in names:
            if name not in by_name:
                skipped.append((name, f"block {bi + 1}", "library not found or not selected, or it has no engine "
                                                          "(see `gmb libs`, --library)"))
                continue
            lib, desc = by_name[name], descriptions.get(name)
            if desc is None:
                skipped.append((name, f"block {bi + 1}", "no engine described itself for this library (run `gmb "
                                                          "build`)"))
                continue
            if lib.transport == "nccl" and not desc.nccl:
                skipped.append((name, f"block {bi + 1}", "the engine was built without NCCL (features.nccl false)"))
                continue
            envs = environments(bi, block, lib, skipped)
            for bench in block.benchmarks if envs else ():
                launches += _launches(c, bi, block, lib, desc, bench, envs, skipped, gpus_elsewhere, node_gpus)
    peaks = [x for x in launches if x.family == "peaks"]
    rest = [x for x in launches if x.family != "peaks"]
    if c.order == "random":
        rng = random.Random(c.seed)
        rng.shuffle(rest)
    return peaks + rest, skipped


def visible_gpus(gpus: list[int] | None, node_gpus: int | None) -> dict[str, str]:
    """CUDA_VISIBLE_DEVICES for a block's GPUs (rank i on the i-th listed GPU), or none where it would change nothing
    on nodes of ``node_gpus`` GPUs: every GPU of the node listed once, in order, so that each rank sees what it sees
    without it and is on the GPU the engine picks anyway (its local rank modulo the GPUs it sees). A launch without
    the variable shares an engine launch with blocks of host memory (bundles.sharing_key compares environments)."""
    if gpus is None:
        return {}
    listed = list(dict.fromkeys(gpus))
    if node_gpus is not None and listed == list(range(node_gpus)):
        return {}
    return {"CUDA_VISIBLE_DEVICES": ",".join(str(g) for g in listed)}


def _launches(c: Campaign, bi: int, block: Block, lib: MpiLibrary, desc: EngineDescription, bench: str,
              envs: list[tuple[str, dict[str, str]]], skipped: list, gpus_elsewhere: bool = False,
              node_gpus: int | None = None) -> list[Launch]:
    """The launches of one benchmark of one block for one library, once per (launch id suffix, environment) of
    ``envs`` (environments.py), with what cannot run skipped."""
    name, b = lib.name, desc.benchmark(bench)
    if b is None:
        skipped.append((name, bench, "engine does not list this benchmark"))
        return []
    if lib.transport == "nccl" and "nccl" not in b.transports:
        skipped.append((name, *nccl_refusal(desc, b, block, "", "")))
        return []
    clash = binding_conflict(block.bind, lib)
    if clash:
        skipped.append((name, f"{bench} (block {bi + 1})", clash))
        return []
    ops = _operations(desc, b, block, lib, skipped)
    out = []
    for mem in block.memory:
        missing = unavailable_memory(desc, block, mem, gpus_elsewhere)
        if missing:
            kind, why = missing
            skipped.append((name, f"{bench} {mem}" if mem else f"{bench} on {kind} memory (block {bi + 1})",
                            f"memory kind {kind} unavailable: {why}"))
            continue
        for strat in block.strategies:
            if lib.transport == "nccl":
                refused = nccl_refusal(desc, b, block, mem, strat)
                if refused:
                    skipped.append((name, *refused))
                    continue
            elif lib.cuda_aware is not True and _hands_device_pointers(desc, b, mem, strat):
                skipped.append((name, f"{bench} {mem} {strat or 'direct'}", not_aware_reason(lib, short=True)))
                continue
            for nodes, ranks in _placements(block):
                refused = b.ranks_refusal(ranks)
                if refused:
                    skipped.append((name, f"{bench} n={ranks}", refused))
                    continue
                if nodes == 1 and ranks == 1 and b.family in ("collective", "nbc"):
                    skipped.append((name, f"{bench} on 1 node", "a collective on one rank moves no data: with "
                                    "ranks_per_node = 1 the series starts at 2 nodes (ranks_per_node 2 or more "
                                    "measures one node too)"))
                    continue
                gpus = visible_gpus(block.gpus, node_gpus)
                for op, sizes in (g for o in ops for g in _scaled(desc, block, o, ranks)):
                    args = engine_args(bench, block, mem, strat, op, lib.transport, sizes)
                    label = f"{bench}-{op.replace(',', '+')}" if op else bench
                    where = f".N{nodes}" if nodes else ""
                    for suffix, env in envs:
                        for rep in range(1, (block.repetitions or c.repetitions) + 1):
                            lid = safe_name(f"b{bi + 1}.{name}.{label}.{mem or 'na'}.{strat or 'na'}.n{ranks}{where}"
                                        f"{suffix}.r{rep}")
                            out.append(Launch(lid, name, bench, mem, strat, ranks, rep, list(args), {**env, **gpus},
                                              block.path, block.bind, c.timeout_s, b.family, nodes,
                                              (block.scaling or "strong") if nodes else None, block.isolate))
    return out


def _placements(block: Block) -> list[tuple[int | None, int]]:
    """(node count, ranks) of each launch of a block: over its node counts, ranks_per_node on each; else its ranks
    on the session's hosts."""
    if block.nodes:
        return [(n, n * (block.ranks_per_node or 1)) for n in block.nodes]
    return [(None, r) for r in block.ranks]


def _scaled(desc: EngineDescription, block: Block, operation: str | None, ranks: int
            ) -> list[tuple[str | None, str | None]]:
    """(operation argument, sizes) of the launches of one operation argument: the block's sizes, except under weak
    scaling, where an operation that splits S among the ranks (counts.split) keeps each rank's share: its sizes
    grow with the ranks from the block's first node count (a launch of its own when joined with others)."""
    if block.scaling != "weak" or not block.nodes or not operation or not block.sizes:
        return [(operation, None)]
    ops = operation.split(",")
    split = [op for op in ops if (desc.collective(op) and desc.collective(op).split) in ("equal-blocks", "unequal")]
    whole = [op for op in ops if op not in split]
    first = block.nodes[0] * (block.ranks_per_node or 1)
    sizes = ",".join(str(s * ranks // first) for s in parse_sizes(block.sizes))
    return ([(",".join(whole), None)] if whole else []) + ([(",".join(split), sizes)] if split else [])

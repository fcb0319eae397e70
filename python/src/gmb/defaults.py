# SPDX-License-Identifier: BSD-3-Clause
"""The campaign generated from the machine when no campaign file is given (`gmb run`, `gmb plan`): what each
library's engine can do on this topology, sized to take minutes; what cannot run is left out with the reason.
NCCL libraries get what NCCL can do, and a generated campaign gets an NCCL library when an engine has NCCL."""

from __future__ import annotations

import os
from typing import NamedTuple

from .engine_description import EngineDescription
from .mpilibs import MpiLibrary, nccl_library
from .plan import listed_operations, not_aware_reason
from .spec import Block, Campaign
from .topology import Topology

# --quick: one operation per collective benchmark
QUICK_OPERATIONS = {"coll": ["allreduce"], "nbc": ["allreduce"]}
# the default campaign's collectives under NCCL: the operations of campaigns/nccl-vs-mpi.toml, so that a generated
# run and that campaign give figures of the same points
NCCL_DEFAULT_OPERATIONS = ["allreduce", "allgather", "reduce_scatter_block", "alltoall", "bcast"]

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


def default_campaign(topo: Topology, libs: list[MpiLibrary], descriptions: dict[str, EngineDescription],
                     quick: bool = False, hosts: int = 1) -> Campaign:
    """A campaign generated from the machine: ceilings first, then per library and path class the point-to-point
    benchmarks for HH, DD, HD; the multi-pair ones; collectives; overlap; managed placements; halo; with ``hosts``
    > 1 (a hostfile of several hosts, or several Slurm nodes) HH and DD between two nodes (path "inter-node").
    Benchmarks are chosen by family from each engine's description, so a new benchmark of a family gets that
    family's blocks. What the build or library cannot do is left out with the reason (Campaign.skipped). NCCL
    libraries (transport "nccl") get DD point to point over each GPU link class and the collectives on device
    memory."""
    skipped: list[tuple[str, str, str]] = []
    blocks: list[Block] = []
    usable = []
    for lib in libs:
        if lib.name not in descriptions:
            skipped.append((lib.name, "all", "no engine for this library (run `gmb build`)"))
        else:
            usable.append(lib)
    name = "quick" if quick else "default"
    mpi_libs = [lib for lib in usable if lib.transport == "mpi"]
    if not mpi_libs:
        return Campaign(name=name, blocks=[], skipped=skipped)

    first = mpi_libs[0]
    fdesc = descriptions[first.name]
    gpus = topo.gpus if fdesc.cuda else []
    if quick and gpus:
        blocks += _quick_gpu_blocks(topo, mpi_libs, descriptions, skipped)
    else:
        ceilings = fdesc.of_family("peaks")
        if ceilings:
            # 5 samples of 4 copies per ceiling (CVs of copies are well under 1 %), at 1 MiB and 64 MiB: the sizes
            # where MPI figures are put next to them (a fraction of peak compares one size with the same size)
            popts = {} if quick else {"validate": True} if not gpus else {"samples": 5, "copies": 4, "validate": True}
            blocks.append(Block(ceilings, ranks=[2], options=popts, libraries=[first.name], path="ceilings",
                                sizes=QUICK_HOST_CEILING_SIZES if quick else CEILING_SIZES))
        else:
            skipped.append((first.name, "peaks", "engine has no peaks benchmark: no measured ceilings"))
        for lib in mpi_libs:
            if gpus:
                blocks += _gpu_machine_blocks(lib, descriptions[lib.name], topo, skipped)
            else:
                blocks += _host_machine_blocks(lib, descriptions[lib.name], topo, quick, skipped)
    if hosts > 1:
        for lib in mpi_libs:
            blocks += _inter_node_blocks(lib, descriptions[lib.name], gpus, quick, skipped)
    for lib in usable:
        if lib.transport == "nccl":
            blocks += _nccl_blocks(lib, descriptions[lib.name], topo, quick, skipped)
    return Campaign(name=name, blocks=blocks, skipped=skipped, repetitions=QUICK_REPETITIONS if quick else 3)


# --quick answers the question in minutes: per library configuration and path class one latency and one bandwidth
# launch, device collectives in one launch, managed memory device to device, two repetitions in random order (a claim
# must hold across launches: they differ more than the samples of one launch, tables.launch_interval). Each size
# is repeated until its median's 95 % confidence interval is within +-3 % (QUICK_ADAPTIVE), or a cap (iterations,
# or a second of timed samples) is reached and the record says so. Sizes are few, and the ceilings are measured at
# every bandwidth size from 64 KiB up, so that every bandwidth row has its ceiling at the size it states.
# With --precision the iteration counts are caps only: high, so that the time cap (--max-seconds) bounds a size and
# cheap points are batched into samples of >= 200 us as usual (the engine's batching keeps >= 10 samples under the
# iteration cap). An engine without adaptive repetitions gets fixed counts.
QUICK_REPETITIONS = 2
QUICK_ADAPTIVE = {"iters": 100000, "warmup": 10, "iters-large": 1000, "warmup-large": 2, "large-size": "1M",
                  "validate": True, "precision": 0.03, "max-seconds": 1.0}
QUICK_FIXED = {"iters": 200, "warmup": 20, "iters-large": 20, "warmup-large": 2, "large-size": "1M", "validate": True}
QUICK_LATENCY_SIZES = "8,1K,64K,1M"
QUICK_FAST_SIZES = "8,64K,1M,16M,64M"  # device to device buffers handed to the library: NVLink, one GPU
QUICK_SLOW_SIZES = "8,64K,1M,4M"  # host memory, host <-> device, staged: 2-50 GB/s, a window is 64 messages
QUICK_CEILING_SIZES = "64K,1M,4M,16M,64M"  # the bandwidth sizes above, from 64 KiB up
QUICK_COLL_SIZES = "8,64K,1M,16M"
QUICK_HOST_CEILING_SIZES = "64K,1M"  # --quick without GPUs: host bandwidth sweeps 1 B - 1 MiB
QUICK_COLL_OPERATIONS = ["allreduce", "bcast", "alltoall"]
QUICK_MANAGED_SIZES = "8,64K,1M"


def _quick_gpu_blocks(topo, mpi_libs, descriptions, skipped) -> list[Block]:
    """--quick on a GPU node: ceilings at the sizes measured, then per MPI library configuration latency and bandwidth
    per path class (device to device per GPU link class and on one GPU, host <-> device from pinned and pageable
    memory, host), managed memory device to device, device allreduce/bcast/alltoall; the pipelined-gpu strategy next
    to the first CUDA-aware library's pinned host -> device path (NCCL's blocks: _nccl_blocks)."""
    first = descriptions[mpi_libs[0].name]
    blocks = []
    ceilings = first.of_family("peaks")
    if ceilings:
        blocks.append(Block(ceilings, ranks=[2], options={"samples": 5, "copies": 4}, libraries=[mpi_libs[0].name],
                            path="ceilings", sizes=QUICK_CEILING_SIZES))
    else:
        skipped.append((mpi_libs[0].name, "peaks", "engine has no peaks benchmark: no measured ceilings"))
    strategy_shown = False
    for lib in mpi_libs:
        desc = descriptions[lib.name]
        lib_blocks, aware = _quick_library_blocks(lib, desc, topo, skipped)
        blocks += lib_blocks
        bw = _quick_pt2pt(desc, "bandwidth_GBps")
        dev, _ = _gpu_kind(desc)
        if aware and bw and dev and not strategy_shown:
            blocks.append(_quick_block(desc, [bw], lib, memory=f"{_host_kind(desc, True)}:{dev}",
                                       strategy="pipelined-gpu", sizes=QUICK_SLOW_SIZES, gpus=[0],
                                       path="host-device"))
            strategy_shown = True
    return blocks


def _quick_pt2pt(desc: EngineDescription, headline: str) -> str | None:
    """The first point-to-point benchmark the engine lists with this headline (latency: time_us, bw:
    bandwidth_GBps)."""
    return next((n for n in desc.of_family("pt2pt") if desc.benchmark(n).headline == headline), None)


def _quick_latency_and_bandwidth(desc: EngineDescription, transport: str = "mpi") -> list[tuple[str, str | None]]:
    """(benchmark, sizes) of the quick campaign's latency and bandwidth benchmarks that take ``transport``: the
    latency's sizes, None for the bandwidth (its sizes depend on the path)."""
    picked = ((_quick_pt2pt(desc, "time_us"), QUICK_LATENCY_SIZES), (_quick_pt2pt(desc, "bandwidth_GBps"), None))
    return [(b, sizes) for b, sizes in picked if b and transport in desc.benchmark(b).transports]


def _quick_block(desc, benchmarks, lib, memory="", strategy="", sizes=None, gpus=None, path=None, ranks=None,
                 options=None, **more) -> Block:
    """A block of the quick campaign, with quick_options."""
    return Block(list(benchmarks), memory=[memory], strategies=[strategy], sizes=sizes, gpus=gpus, path=path,
                 ranks=ranks or [2], options=quick_options(desc, benchmarks) | (options or {}), libraries=[lib.name],
                 **more)


def quick_options(desc: EngineDescription, benchmarks: list[str]) -> dict:
    """The quick campaign's options: each size repeated until its precision is reached (QUICK_ADAPTIVE) where every
    benchmark takes --precision, else fixed counts (QUICK_FIXED)."""
    return dict(QUICK_ADAPTIVE if all(desc.benchmark(b).adaptive for b in benchmarks) else QUICK_FIXED)


def _quick_library_blocks(lib, desc, topo, skipped) -> tuple[list[Block], bool]:
    """One MPI library configuration's quick blocks, and whether its device buffers went to it directly."""
    pt2pt = _quick_latency_and_bandwidth(desc)
    if not pt2pt:
        skipped.append((lib.name, "point to point", "the engine lists no latency or bandwidth benchmark"))
    host = _host_kind(desc, False)
    blocks = [_quick_block(desc, [b], lib, f"{host}:{host}", sizes=sizes or QUICK_SLOW_SIZES, path="host")
              for b, sizes in pt2pt]
    dev, why = _gpu_kind(desc)
    if dev is None:
        skipped.append((lib.name, "device memory", why))
        return blocks + _quick_collectives(lib, desc, topo, None, skipped), False
    aware = lib.cuda_aware is True
    pairs = sorted(topo.gpu_pairs_by_class().items())
    if not aware:
        skipped.append((lib.name, "direct device buffers", not_aware_reason(lib)))
        skipped.append((lib.name, MPI4_ON_DEVICE, not_aware_reason(lib, short=True)))
        for what in ("same-gpu", "host-device", "managed memory"):
            skipped.append((lib.name, what, "not CUDA-aware: device buffers only through gmb's staged strategy, "
                                            "measured between two GPUs"))
        for cls, (i, j) in pairs[:1]:
            blocks += [_quick_block(desc, [b], lib, f"{dev}:{dev}", "staged-pinned", sizes or QUICK_SLOW_SIZES,
                                    [i, j], cls) for b, sizes in pt2pt]
        return blocks + _quick_collectives(lib, desc, topo, None, skipped), False
    places = [(cls, [i, j]) for cls, (i, j) in pairs] + [("same-gpu", [0, 0])]
    for cls, gpus in places:
        blocks += [_quick_block(desc, [b], lib, f"{dev}:{dev}", "direct", sizes or QUICK_FAST_SIZES, gpus, cls)
                   for b, sizes in pt2pt]
    for page_locked in (True, False):
        blocks += [_quick_block(desc, [b], lib, f"{_host_kind(desc, page_locked)}:{dev}", "direct",
                                sizes or QUICK_SLOW_SIZES, [0], "host-device") for b, sizes in pt2pt]
    on_gpus, device = _gpu_places(desc, topo, dev, QUICK_FAST_SIZES, QUICK_SLOW_SIZES, QUICK_LATENCY_SIZES,
                                  QUICK_LATENCY_SIZES, classes=1)
    blocks += mpi4_and_rma_blocks(lib, desc, on_gpus, device, list(range(len(topo.gpus))),
                                  lambda b: quick_options(desc, b), skipped, quick=True)
    blocks += _quick_managed(lib, desc, topo, skipped)
    return blocks + _quick_collectives(lib, desc, topo, dev, skipped), True


def _quick_managed(lib, desc, topo, skipped) -> list[Block]:
    """Managed memory placed on the device on both sides (MD-MD), between two GPUs where there are two."""
    names = desc.of_family("managed")
    base = desc.first_kind(placeable=True, placement=None)
    if not names or base is None or not base.available:
        skipped.append((lib.name, "managed memory", "the engine lists no managed-memory benchmark" if not names else
                        (base and base.reason) or "managed memory unavailable"))
        return []
    on_device = next((k.name for k in desc.kinds_where(base=base.name, placement="device")), None)
    if on_device is None:
        skipped.append((lib.name, "managed memory", f"no placement of {base.name} on the device"))
        return []
    return [_quick_block(desc, names, lib, f"{on_device}:{on_device}", sizes=QUICK_MANAGED_SIZES,
                         gpus=[0, 1] if len(topo.gpus) > 1 else [0, 0], path="managed")]


def _quick_collectives(lib, desc, topo, device: str | None, skipped) -> list[Block]:
    """allreduce, bcast and alltoall in one launch over every GPU: on device memory for a CUDA-aware library, on
    host memory otherwise."""
    blocks = []
    ngpu = len(topo.gpus)
    for bench in desc.of_family("collective"):
        ops = _listed(lib, desc, bench, QUICK_COLL_OPERATIONS, skipped)
        blocks.append(_quick_block(desc, [bench], lib, sizes=QUICK_COLL_SIZES, gpus=list(range(ngpu)),
                                   ranks=[max(2, ngpu)], options={"mem": device} if device else {},
                                   operations=ops, join_operations=True))
    if not blocks:
        skipped.append((lib.name, "collective", "the engine lists no benchmark of family collective"))
    return blocks


def _gpu_kind(desc: EngineDescription) -> tuple[str | None, str]:
    """The kind of GPU memory (cudaMalloc) and whether it is available: (its name, "") or (None, why not)."""
    k = desc.first_kind(gpu_memory=True, placement=None)
    if k is None:
        return None, "the engine lists no GPU memory kind"
    return (k.name, "") if k.available else (None, k.reason or f"{k.name} memory unavailable")


def _host_kind(desc: EngineDescription, page_locked: bool) -> str:
    """The host memory kind, pageable (malloc) or page-locked (pinned)."""
    k = desc.first_kind(host_accessible=True, gpu_backed=False, page_locked=page_locked, placement=None)
    return k.name if k else ("pinned" if page_locked else "host")


def _listed(lib, desc, bench: str, operations: list[str] | None, skipped) -> list[str] | None:
    """The operations of this campaign's policy (QUICK_OPERATIONS, NCCL_DEFAULT_OPERATIONS) that the engine lists;
    the others are skipped with the reason. None stays None (the planner's DEFAULT_OPERATIONS)."""
    return None if operations is None else listed_operations(lib, desc, bench, operations, skipped)


def _pt2pt(lib, desc, skipped) -> list[str]:
    """The point-to-point benchmarks (one pair of ranks) of the engine, in its order."""
    have = desc.of_family("pt2pt")
    if not have:
        skipped.append((lib.name, "point to point", "the engine lists no benchmark of family pt2pt"))
    return have


def _inter_node_blocks(lib, desc, gpus, quick, skipped) -> list[Block]:
    """Several hosts: the point-to-point benchmarks between two ranks on two nodes (one rank per node:
    run_launches places launches of path "inter-node" so), host memory and, with GPUs and a CUDA-aware library,
    device memory."""
    have = desc.of_family("pt2pt")
    if not have:
        return []
    opts = quick_options(desc, have) if quick else dict(GPU_PT2PT_OPTIONS)
    sizes = "1:1M" if quick else HOST_SIZES
    host = _host_kind(desc, False)
    blocks = [Block(have, memory=[f"{host}:{host}"], sizes=sizes, ranks=[2], path="inter-node", options=dict(opts),
                    libraries=[lib.name])]
    if not gpus:
        return blocks
    dev, _ = _gpu_kind(desc)
    if dev is None:
        skipped.append((lib.name, "inter-node device:device", "device memory kind unavailable"))
    elif lib.cuda_aware is not True:
        skipped.append((lib.name, "inter-node device:device", not_aware_reason(lib, short=True)))
    else:
        blocks.append(Block(have, memory=[f"{dev}:{dev}"], strategies=["direct"], sizes=sizes, ranks=[2], gpus=[0],
                            path="inter-node", options=dict(opts), libraries=[lib.name]))
    return blocks


def _host_machine_blocks(lib, desc, topo, quick, skipped) -> list[Block]:
    """A machine (or engine) without GPU: host paths (--quick: a short sweep of them)."""
    blocks = []
    sizes = "1:1M" if quick else "1:64M"
    opts = quick_options(desc, desc.of_family("pt2pt")) if quick else \
        {"iters": 1000, "warmup": 100, "iters-large": 100, "warmup-large": 10, "validate": True}
    have = _pt2pt(lib, desc, skipped)
    host = _host_kind(desc, False)
    if have:
        blocks.append(Block(have, memory=[f"{host}:{host}"], sizes=sizes, path="host", options=dict(opts),
                            libraries=[lib.name]))
        blocks += _cross_socket(lib, have, f"{host}:{host}", topo, sizes, opts, skipped)
    if not quick:
        skipped.append((lib.name, "device memory", "no GPU found (or engine built without CUDA)"))
        blocks += mpi4_and_rma_blocks(lib, desc, [Place(f"{host}:{host}", "host", None, sizes, sizes)], None, None,
                                      lambda b: dict(opts), skipped)
    multi = desc.of_family("multi-pair")
    if not quick and multi:
        blocks.append(Block(multi, memory=[f"{host}:{host}"], sizes=sizes, ranks=[4] if (os.cpu_count() or 1) >= 4
                            else [2], options=dict(opts), libraries=[lib.name], path="host"))
    for family in ("collective", "nbc", "halo"):
        names = desc.of_family(family)
        if not names:
            if not quick or family == "collective":
                skipped.append((lib.name, family, f"the engine lists no benchmark of family {family}"))
            continue
        if quick and family != "collective":
            continue
        for bench in names:
            blocks.append(Block([bench], sizes="4:1M" if quick else "4:64M", ranks=[2],
                                options=quick_options(desc, [bench]) if quick else dict(opts),
                                libraries=[lib.name],
                                operations=_listed(lib, desc, bench, QUICK_OPERATIONS.get(bench) if quick else None,
                                                   skipped)))
    return blocks


def _cross_socket(lib, have, memory, topo, sizes, opts, skipped) -> list[Block]:
    if len(topo.numa_nodes) <= 1:
        return []
    if lib.launcher != "mpirun":
        skipped.append((lib.name, "cross-socket", f"no NUMA placement rule for launcher {lib.launcher}"))
        return []
    return [Block(have, memory=[memory], sizes=sizes, path="cross-socket", bind="numa", options=dict(opts),
                  libraries=[lib.name])]


def _gpu_machine_blocks(lib, desc, topo, skipped) -> list[Block]:
    """The full default on a GPU machine: per path class HH, DD (each GPU link class and same GPU),
    HD; collectives, overlap and halo on all GPUs; managed placements. A library that is not CUDA-aware gets
    the staged strategy instead of device pointers."""
    blocks = []
    opts = dict(GPU_PT2PT_OPTIONS)
    have = _pt2pt(lib, desc, skipped)
    lib_ = [lib.name]
    ngpu = len(topo.gpus)
    host = _host_kind(desc, False)
    if have:
        blocks.append(Block(have, memory=[f"{host}:{host}"], sizes=HOST_SIZES, path="host", options=opts,
                            libraries=lib_))
        blocks += _cross_socket(lib, have, f"{host}:{host}", topo, HOST_SIZES, opts, skipped)
    dev, why = _gpu_kind(desc)
    aware = lib.cuda_aware is True
    # latencies up to 1 MiB (beyond, a ping-pong measures bandwidth, which the bandwidth blocks do)
    places, device = [Place(f"{host}:{host}", "host", None, HOST_SIZES, SLOW_SIZES, every_variant=False)], None
    if dev is not None and aware:
        on_gpus, device = _gpu_places(desc, topo, dev, FAST_SIZES, SLOW_SIZES, SLOW_SIZES, SLOW_SIZES)
        places += on_gpus
    elif dev is not None:
        skipped.append((lib.name, MPI4_ON_DEVICE, not_aware_reason(lib, short=True)))
    mpi4 = mpi4_and_rma_blocks(lib, desc, places, device, list(range(ngpu)), lambda b: dict(GPU_PT2PT_OPTIONS),
                               skipped)
    if dev is None:
        skipped.append((lib.name, "device memory", why))
        return blocks + mpi4 + _collective_blocks(lib, desc, ngpu, device=None, skipped=skipped)
    if not aware:
        skipped.append((lib.name, "direct device buffers", not_aware_reason(lib)))
    strategy = ["direct"] if aware else ["staged-pinned"]
    dd_sizes = FAST_SIZES if aware else SLOW_SIZES
    if have:
        for cls, (i, j) in sorted(topo.gpu_pairs_by_class().items()):
            blocks.append(Block(have, memory=[f"{dev}:{dev}"], strategies=strategy, sizes=dd_sizes, gpus=[i, j],
                                path=cls, options=opts, libraries=lib_))
        if aware:
            blocks.append(Block(have, memory=[f"{dev}:{dev}"], strategies=strategy, sizes=dd_sizes, gpus=[0, 0],
                                path="same-gpu", options=opts, libraries=lib_))
        else:
            skipped.append((lib.name, "same-gpu", "staged through host memory: the same path as between two GPUs"))
        # host <-> device from pinned host memory (pageable: campaigns/gpu-paper.toml; time budget)
        blocks.append(Block(have, memory=[f"{_host_kind(desc, True)}:{dev}"], strategies=strategy, sizes=SLOW_SIZES,
                            gpus=[0], path="host-device", options=opts, libraries=lib_))
    blocks += mpi4 + _managed_blocks(lib, desc, ngpu, aware, skipped)
    return blocks + _collective_blocks(lib, desc, ngpu, device=dev if aware else None, skipped=skipped)


def _managed_blocks(lib, desc, ngpu, aware, skipped) -> list[Block]:
    """The managed-memory benchmarks over every placement of a placeable (managed) kind on both sides."""
    names = desc.of_family("managed")
    what = f"{'/'.join(names) or 'um'} (managed placements)"
    if not names:
        skipped.append((lib.name, what, "the engine lists no benchmark of family managed"))
        return []
    if not aware:
        skipped.append((lib.name, what, not_aware_reason(lib, short=True)))
        return []
    base = desc.first_kind(placeable=True, placement=None)
    if base is None or not base.available:
        skipped.append((lib.name, what, (base and base.reason) or "managed memory unavailable"))
        return []
    placed = [k.name for where in ("host", "device") for k in desc.kinds_where(base=base.name, placement=where)]
    pl = [f"{a}:{b}" for a in placed for b in placed]
    return [Block(names, memory=pl, sizes=SLOW_SIZES, gpus=[0, 1] if ngpu > 1 else [0, 0], path="managed",
                  options=dict(GPU_PT2PT_OPTIONS), libraries=[lib.name])]


def _collective_blocks(lib, desc, ngpu, device: str | None, skipped) -> list[Block]:
    """collectives, non-blocking collectives and halo across all GPUs: on ``device`` memory for a CUDA-aware
    library, else on host memory (halo: device field exchanged through the staged strategy)."""
    blocks = []
    ranks = [max(2, ngpu)]
    gpus = list(range(ngpu)) or None
    mem = {"mem": device} if device else {}
    common = {"iters": 200, "warmup": 20, "iters-large": 5, "warmup-large": 1, "large-size": "64K"}
    # collectives: the default operations in one launch; nbc (pure, then with compute: several times one call):
    # allreduce, bcast and alltoall in one launch (a library known to crash in one of them on device memory gets it
    # refused with the reason, and the others still run)
    for family, sizes, extra, ops in (("collective", COLL_SIZES, {"validate": True}, None),
                                      ("nbc", NBC_SIZES, {"iters": 100}, ["allreduce", "bcast", "alltoall"])):
        names = desc.of_family(family)
        if not names:
            skipped.append((lib.name, family, f"the engine lists no benchmark of family {family}"))
        for bench in names:
            blocks.append(Block([bench], sizes=sizes, ranks=ranks, gpus=gpus, options=common | extra | mem,
                                libraries=[lib.name], join_operations=True,
                                operations=_listed(lib, desc, bench, ops, skipped)))
    halo = desc.of_family("halo")
    if not halo:
        skipped.append((lib.name, "halo", "the engine lists no benchmark of family halo"))
    elif ngpu:
        dev, _ = _gpu_kind(desc)
        strategy = "all" if device else "staged-pinned"
        for bench in halo:
            blocks.append(Block([bench], ranks=ranks, gpus=gpus, libraries=[lib.name],
                                options=HALO_OPTIONS | {"mem": dev or "device", "strategy": strategy}))
    return blocks


# ---------------------------------------------------------------- one-sided, persistent and partitioned
# One-sided (RMA), full campaign: between GPUs (and on a machine without GPUs, host to host) the latency of every
# kind of operation under flush (passive target: one lock per size, MPI_Win_flush per operation) and the bandwidth
# of put and get under flush and under fence (active target); host to host and host to device beside GPUs, put and
# get under flush (each variant is a launch of its own: the campaign has to stay within half an hour);
# --quick: put's bandwidth on every path and put's latency between GPUs, under flush (the quick campaign answers
# in about two minutes: each launch costs seconds of start-up). Windows made by MPI_Win_create (the engine's
# default), over the benchmark's buffers of any memory kind.
RMA_LATENCY_OPERATIONS = ["put", "get", "acc", "fop", "cas"]
RMA_BANDWIDTH = [("put", "flush"), ("get", "flush"), ("put", "fence"), ("get", "fence")]
RMA_LATENCY_OPERATIONS_BESIDE, RMA_BANDWIDTH_BESIDE = ["put", "get"], [("put", "flush"), ("get", "flush")]
QUICK_RMA_LATENCY_OPERATIONS = ["put"]
QUICK_RMA_BANDWIDTH = [("put", "flush")]
# --quick: 16 operations per flush, not 64: where a library's one-sided path is slow (Open MPI 5.0.7's osc/ucx put
# from pinned host memory into a device window: 0.17 GB/s), a window of 64 x 4 MiB took the launch 19 s
QUICK_RMA_WINDOW = 16
# fop and cas move one 8-byte element, whatever the size asked; the integer operations whole elements
RMA_SINGLE_ELEMENT_SIZES = "8"
# partition counts swept in one launch (--partitions); part_overlap: both ready modes and the compute sweep, in one
# launch (the overlap curve), on device memory only: its kernel marks partitions ready per block
PARTITIONS, QUICK_PARTITIONS = "1,4,16,64", "8"
PART_OVERLAP_OPTIONS = {"ready": "both", "compute-sweep": True}
PART_OVERLAP_SIZES, QUICK_PART_OVERLAP_SIZES = "64K,1M,16M", "4M"
NO_FEATURES = "no mpi.features: built before the one-sided, persistent and partitioned benchmarks; rebuild it"


class Place(NamedTuple):
    """Where a pair of ranks is measured: their memory (send:recv), the path class, the GPUs, the sizes swept for
    bandwidth and those for latency; ``every_variant``: every one-sided operation and synchronisation of the full
    campaign (else put and get under flush)."""
    memory: str
    path: str
    gpus: list[int] | None
    sizes: str
    latency_sizes: str
    every_variant: bool = True


# what a library that is not CUDA-aware is not measured with
MPI4_ON_DEVICE = "one-sided, persistent and partitioned on device memory"


def _gpu_places(desc, topo, dev: str, sizes: str, slow_sizes: str, latency_sizes: str, slow_latency_sizes: str,
                classes: int | None = None) -> tuple[list[Place], Place]:
    """Device memory between two GPUs (one pair per GPU link class, the first ``classes`` of them; one GPU when
    there is no pair) and from pinned host memory to a GPU; and the first device:device place."""
    pairs = sorted(topo.gpu_pairs_by_class().items())[:classes] or [("same-gpu", (0, 0))]
    between = [Place(f"{dev}:{dev}", cls, [i, j], sizes, latency_sizes) for cls, (i, j) in pairs]
    to_gpu = Place(f"{_host_kind(desc, True)}:{dev}", "host-device", [0], slow_sizes, slow_latency_sizes,
                   every_variant=False)
    return between + [to_gpu], between[0]


def _rma_sizes(sizes: str) -> str:
    """A sweep from 8 B on: the integer operations (acc: 4 B elements) and the one-element ones (fop, cas: 8 B)
    refuse smaller sizes, and put and get are compared with them."""
    return "8:" + sizes[2:] if sizes.startswith("1:") else sizes


def mpi4_and_rma_blocks(lib, desc: EngineDescription, places: list[Place], device: Place | None,
                        gpus: list[int] | None, options_for, skipped, quick: bool = False) -> list[Block]:
    """One library's one-sided, persistent and partitioned blocks. ``places``: where its point-to-point blocks
    measure (host memory first, then device memory where it takes device pointers); ``device``: its device:device
    place (None: none, and part_overlap is skipped with the reason); ``gpus``: all GPUs (collectives), None without;
    ``options_for(benchmarks)``: the campaign's options for a block (quick_options, or the full campaign's counts).
    --quick: one-sided put (bandwidth on every place, latency between GPUs) and part_overlap. Each part only where
    the engine lists its benchmarks and its MPI library has the interface (mpi.features), else skipped with the
    engine's reason."""
    def block(benchmarks, place, sizes, extra):
        return Block(list(benchmarks), memory=[place.memory], sizes=sizes, gpus=place.gpus, path=place.path,
                     options=options_for(benchmarks) | extra, libraries=[lib.name])

    blocks = []
    # one-sided: one block per operation and synchronisation (the engine measures one per launch)
    latency, bandwidth = _by_headline(desc, "rma")
    if not (latency or bandwidth):
        skipped.append((lib.name, "one-sided (rma)", "the engine lists no benchmark of family rma"))
    for place in places:
        operations, syncs = ((QUICK_RMA_LATENCY_OPERATIONS, QUICK_RMA_BANDWIDTH) if quick else
                             (RMA_LATENCY_OPERATIONS, RMA_BANDWIDTH) if place.every_variant else
                             (RMA_LATENCY_OPERATIONS_BESIDE, RMA_BANDWIDTH_BESIDE))
        for op in operations if latency and (place.every_variant or not quick) else ():
            sizes = RMA_SINGLE_ELEMENT_SIZES if op in ("fop", "cas") else _rma_sizes(place.latency_sizes)
            blocks.append(block([latency], place, sizes, {"op": op, "sync": "flush"}))
        for op, sync in syncs if bandwidth else ():
            blocks.append(block([bandwidth], place, _rma_sizes(place.sizes),
                                {"op": op, "sync": sync} | ({"window": QUICK_RMA_WINDOW} if quick else {})))
    # persistent: the regular and the persistent form in one launch; point-to-point latency and bandwidth (host and
    # device memory), the collective allreduce where the library has persistent collectives; not in --quick
    collectives = desc.mpi_feature("persistent_collectives")
    if collectives is None:
        skipped.append((lib.name, "persistent", f"the engine does not describe its MPI-4 interfaces ({NO_FEATURES})"))
    else:
        latency, bandwidth = _by_headline(desc, "pt2pt")
        for place in [p for p in ([] if quick else places[:1] + [device]) if p]:
            blocks += [block([b], place, sizes, {"persistent": True})
                       for b, sizes in ((latency, place.latency_sizes), (bandwidth, place.sizes)) if b]
        if not collectives[0]:
            skipped.append((lib.name, "persistent collectives", collectives[1]))
        elif not quick:
            mem = {"mem": device.memory.partition(":")[0]} if device else {}
            blocks += [Block([bench], sizes=COLL_SIZES, ranks=[max(2, len(gpus or ()))], gpus=gpus,
                             options=options_for([bench]) | mem | {"persistent": True}, libraries=[lib.name],
                             operations=_listed(lib, desc, bench, ["allreduce"], skipped))
                       for bench in desc.of_family("collective")]
    # partitioned: the transfers over a sweep of partition counts (host and device memory), and part_overlap on
    # device memory
    names = desc.of_family("partitioned")
    feature = desc.mpi_feature("partitioned")
    why_not = ("the engine lists no benchmark of family partitioned" if not names else
               f"the engine does not describe its MPI-4 interfaces ({NO_FEATURES})" if feature is None else feature[1])
    if why_not:
        skipped.append((lib.name, "partitioned", why_not))
        return blocks
    transfers = [n for n in names if not desc.overlap(n)]
    overlap = [n for n in names if desc.overlap(n)]
    for place in [p for p in ([] if quick or not transfers else places[:1] + [device]) if p]:
        blocks.append(block(transfers, place, place.sizes, {"partitions": PARTITIONS}))
    if overlap and device is None:
        skipped += [(lib.name, n, "its kernel marks the partitions ready: device memory handed to a CUDA-aware "
                                  "library on a GPU only") for n in overlap]
    elif overlap:
        blocks.append(block(overlap, device, QUICK_PART_OVERLAP_SIZES if quick else PART_OVERLAP_SIZES,
                            PART_OVERLAP_OPTIONS | {"partitions": QUICK_PARTITIONS if quick else PARTITIONS}))
    return blocks


def _by_headline(desc: EngineDescription, family: str) -> tuple[str | None, str | None]:
    """The first benchmark of a family ranked by time (latency) and the first ranked by one-way bandwidth."""
    names = [n for n in desc.of_family(family) if not desc.overlap(n)]
    latency = next((n for n in names if desc.benchmark(n).headline == "time_us"), None)
    bandwidth = next((n for n in names if desc.benchmark(n).bandwidth and not desc.bidirectional(n)), None)
    return latency, bandwidth


def _nccl_blocks(lib, desc, topo, quick, skipped) -> list[Block]:
    """An NCCL library: its point-to-point benchmarks on device memory over each GPU link class, its collectives
    on device memory over all GPUs (--quick: the quick campaign's latency, bandwidth and collectives)."""
    if not desc.nccl:
        skipped.append((lib.name, "all", "the engine was built without NCCL (features.nccl false)"))
        return []
    if not topo.gpus:
        skipped.append((lib.name, "all", "no GPU found"))
        return []
    dev = _gpu_kind(desc)[0] or "device"
    blocks = []
    pt2pt = desc.of_family("pt2pt", transport="nccl")
    for cls, (i, j) in sorted(topo.gpu_pairs_by_class().items()) if pt2pt else ():
        if quick:  # latency and bandwidth, as for the MPI libraries
            blocks += [_quick_block(desc, [b], lib, f"{dev}:{dev}", "direct", sizes or QUICK_FAST_SIZES, [i, j], cls)
                       for b, sizes in _quick_latency_and_bandwidth(desc, transport="nccl")]
        else:
            blocks.append(Block(pt2pt, memory=[f"{dev}:{dev}"], strategies=["direct"], sizes=FAST_SIZES, gpus=[i, j],
                                path=cls, options=dict(GPU_PT2PT_OPTIONS), libraries=[lib.name]))
    skipped.append((lib.name, "same-gpu", "NCCL needs one GPU per rank"))
    if len(topo.gpus) < 2:
        skipped.append((lib.name, "coll", "NCCL collectives need one GPU per rank: fewer than 2 GPUs"))
        return blocks
    if quick:
        return blocks + _quick_collectives(lib, desc, topo, dev, skipped)
    # NCCL times 20 calls per sample at least (as nccl-tests): 200 calls make 10 samples at every size
    common = {"iters": 200, "warmup": 20, "iters-large": 200, "warmup-large": 5, "large-size": "64K", "validate": True}
    for bench in desc.of_family("collective", transport="nccl"):
        blocks.append(Block([bench], sizes=COLL_SIZES, ranks=[len(topo.gpus)], gpus=list(range(len(topo.gpus))),
                            options=common | {"mem": dev}, libraries=[lib.name], join_operations=True,
                            operations=_listed(lib, desc, bench, NCCL_DEFAULT_OPERATIONS, skipped)))
    return blocks


def add_nccl_library(libs: list[MpiLibrary], descriptions: dict[str, EngineDescription], engines: dict[str, str],
                     topo: Topology) -> tuple[MpiLibrary | None, str]:
    """For a generated campaign: when GPUs are present, no NCCL library is declared and the engine of some MPI
    library was built with NCCL, add one named "nccl". Its ``via`` (launcher and engine that bootstrap NCCL) is
    the first such library that is CUDA-aware, with the ob1 profile before others (Open MPI's own transports: the
    most robust bootstrap), else the first with the ob1 profile, else the first. Returns (library or None, what was decided)."""
    if any(lib.transport == "nccl" for lib in libs):
        return None, "an NCCL library is declared"
    if not topo.gpus:
        return None, "no GPU: no NCCL library"
    with_nccl = [lib for lib in libs if lib.transport == "mpi" and lib.name in descriptions and
                 descriptions[lib.name].nccl]
    if not with_nccl:
        return None, "no engine was built with NCCL (features.nccl): no NCCL library"
    # a CUDA-aware library first: NCCL needs none, but its launches then run the library a GPU node is measured with
    via = min(with_nccl, key=lambda lib: (lib.cuda_aware is not True, lib.profile != "openmpi-ob1"))
    name = "nccl" if "nccl" not in {lib.name for lib in libs} else f"nccl-via-{via.name}"
    lib = nccl_library(via, name)
    descriptions[name] = descriptions[via.name]
    if via.name in engines:
        engines[name] = engines[via.name]
    version = descriptions[via.name].nccl_version
    return lib, (f"NCCL library {name!r} added, via {via.name!r} (its engine was built with NCCL"
                 f"{' ' + version if version else ''}; launches use its launcher and environment)")

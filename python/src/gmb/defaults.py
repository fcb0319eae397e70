"""The campaign generated from the machine when no campaign file is given (`gmb run`, `gmb plan`): what each
library's engine can do on this topology, sized to take minutes; what cannot run is left out with the reason.
NCCL libraries get what NCCL can do, and a generated campaign gets an NCCL library when an engine has NCCL."""

from __future__ import annotations

import os

from .mpilibs import MpiLibrary
from .plan import not_aware_reason
from .spec import Block, Campaign, bench_names, kind_ok
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
    if "peaks" in bench_names(fcaps):
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
    names = bench_names(caps)
    have = [b for b in ("latency", "bw", "bibw") if b in names]
    if not have:
        return []
    opts = {"iters": 200, "warmup": 20, "validate": True} if quick else dict(GPU_PT2PT_OPTIONS)
    sizes = "1:1M" if quick else HOST_SIZES
    blocks = [Block(have, memory=["host:host"], sizes=sizes, ranks=[2], path="inter-node", options=dict(opts),
                    libraries=[lib.name])]
    if not gpus:
        return blocks
    if not kind_ok(caps, "device")[0]:
        skipped.append((lib.name, "inter-node device:device", "device memory kind unavailable"))
    elif lib.cuda_aware is not True:
        skipped.append((lib.name, "inter-node device:device", not_aware_reason(lib, short=True)))
    else:
        blocks.append(Block(have, memory=["device:device"], strategies=["direct"], sizes=sizes, ranks=[2], gpus=[0],
                            path="inter-node", options=dict(opts), libraries=[lib.name]))
    return blocks


def _pt2pt_have(lib, caps, skipped) -> list[str]:
    names = bench_names(caps)
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
    names = bench_names(caps)
    have = _pt2pt_have(lib, caps, skipped)
    if have:
        blocks.append(Block(have, memory=["host:host"], sizes=sizes, path="host", options=dict(opts),
                            libraries=[lib.name]))
        blocks += _cross_socket(lib, have, topo, sizes, opts, skipped)
    if not gpus:
        if not quick:
            skipped.append((lib.name, "device memory", "no GPU found (or engine built without CUDA)"))
    elif have and kind_ok(caps, "device")[0]:
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
    """The full default on a GPU machine: per path class HH, DD (each GPU link class and same GPU),
    HD; collectives, overlap and halo on all GPUs; managed placements. A library that is not CUDA-aware gets
    the staged strategy instead of device pointers."""
    blocks = []
    opts = dict(GPU_PT2PT_OPTIONS)
    names = bench_names(caps)
    have = _pt2pt_have(lib, caps, skipped)
    lib_ = [lib.name]
    ngpu = len(topo.gpus)
    if have:
        blocks.append(Block(have, memory=["host:host"], sizes=HOST_SIZES, path="host", options=opts, libraries=lib_))
        blocks += _cross_socket(lib, have, topo, HOST_SIZES, opts, skipped)
    dev_ok, why = kind_ok(caps, "device")
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
        mok, why = kind_ok(caps, "managed")
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
    names = bench_names(caps)
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

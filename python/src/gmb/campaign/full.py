# SPDX-License-Identifier: BSD-3-Clause
"""The full generated campaign's blocks (``gmb run`` without a campaign file): every path class of a GPU machine, the
host paths of a machine without GPU, and two nodes' point to point with several hosts."""

from __future__ import annotations

import os

from .from_description import gpu_kind, host_kind, listed, pt2pt_benchmarks
from .mpi4_and_rma import MPI4_ON_DEVICE, Place, gpu_places, mpi4_and_rma_blocks
from .plan import not_aware_reason
from .quick import QUICK_OPERATIONS, quick_options
from .spec import Block
from .sweeps import COLL_SIZES, FAST_SIZES, GPU_PT2PT_OPTIONS, HALO_OPTIONS, HOST_SIZES, NBC_SIZES, SLOW_SIZES


def inter_node_blocks(lib, desc, gpus, quick, skipped) -> list[Block]:
    """Several hosts: the point-to-point benchmarks between two ranks on two nodes (one rank per node:
    run_launches places launches of path "inter-node" so) on host and pinned memory and, with GPUs and a CUDA-aware
    library (NCCL: device memory only), device memory; and whole nodes at once: every GPU of one node paired with
    the same GPU index of the other (the multi-pair benchmarks on 2 nodes, one rank per GPU: the multi-rail
    pattern)."""
    transport = "nccl" if lib.transport == "nccl" else None
    have = desc.of_family("pt2pt", transport=transport)
    if not have:
        return []
    opts = quick_options(desc, have) if quick else dict(GPU_PT2PT_OPTIONS)
    sizes = "1:1M" if quick else HOST_SIZES
    hosts = [] if transport else [host_kind(desc, False)] + ([host_kind(desc, True)] if gpus else [])
    memory = [f"{k}:{k}" for k in hosts if desc.kind_available(k)[0]]
    blocks = [Block(have, memory=memory, sizes=sizes, ranks=[2], path="inter-node", options=dict(opts),
                    libraries=[lib.name])] if memory else []
    if not gpus:
        return blocks
    dev, _ = gpu_kind(desc)
    if dev is None:
        skipped.append((lib.name, "inter-node device:device", "device memory kind unavailable"))
        return blocks
    if lib.cuda_aware is not True and not transport:
        skipped.append((lib.name, "inter-node device:device", not_aware_reason(lib, short=True)))
        return blocks
    blocks.append(Block(have, memory=[f"{dev}:{dev}"], strategies=["direct"], sizes=sizes, ranks=[2], gpus=[0],
                        path="inter-node", options=dict(opts), libraries=[lib.name]))
    multi = desc.of_family("multi-pair", transport=transport)
    if multi and len(gpus) > 1:
        blocks.append(Block(multi, memory=[f"{dev}:{dev}"], strategies=["direct"], sizes=sizes,
                            gpus=list(range(len(gpus))),
                            path="inter-node", nodes=[2], ranks_per_node=len(gpus), options=dict(opts),
                            libraries=[lib.name]))
    return blocks


def host_machine_blocks(lib, desc, topo, quick, skipped) -> list[Block]:
    """A machine (or engine) without GPU: host paths (--quick: a short sweep of them)."""
    blocks = []
    sizes = "1:1M" if quick else "1:64M"
    opts = quick_options(desc, desc.of_family("pt2pt")) if quick else \
        {"iters": 1000, "warmup": 100, "iters-large": 100, "warmup-large": 10, "validate": True}
    have = pt2pt_benchmarks(lib, desc, skipped)
    host = host_kind(desc, False)
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
                                operations=listed(lib, desc, bench, QUICK_OPERATIONS.get(bench) if quick else None,
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


def gpu_machine_blocks(lib, desc, topo, skipped) -> list[Block]:
    """The full default on a GPU machine: per path class HH, DD (each GPU link class and same GPU),
    HD; collectives, overlap and halo on all GPUs; managed placements. A library that is not CUDA-aware gets
    the staged strategy instead of device pointers."""
    blocks = []
    opts = dict(GPU_PT2PT_OPTIONS)
    have = pt2pt_benchmarks(lib, desc, skipped)
    lib_ = [lib.name]
    ngpu = len(topo.gpus)
    host = host_kind(desc, False)
    if have:
        blocks.append(Block(have, memory=[f"{host}:{host}"], sizes=HOST_SIZES, path="host", options=opts,
                            libraries=lib_))
        blocks += _cross_socket(lib, have, f"{host}:{host}", topo, HOST_SIZES, opts, skipped)
    dev, why = gpu_kind(desc)
    aware = lib.cuda_aware is True
    # latencies up to 1 MiB (beyond, a ping-pong measures bandwidth, which the bandwidth blocks do)
    places, device = [Place(f"{host}:{host}", "host", None, HOST_SIZES, SLOW_SIZES, every_variant=False)], None
    if dev is not None and aware:
        on_gpus, device = gpu_places(desc, topo, dev, FAST_SIZES, SLOW_SIZES, SLOW_SIZES, SLOW_SIZES)
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
        blocks.append(Block(have, memory=[f"{host_kind(desc, True)}:{dev}"], strategies=strategy, sizes=SLOW_SIZES,
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
                                operations=listed(lib, desc, bench, ops, skipped)))
    halo = desc.of_family("halo")
    if not halo:
        skipped.append((lib.name, "halo", "the engine lists no benchmark of family halo"))
    elif ngpu:
        dev, _ = gpu_kind(desc)
        strategy = "all" if device else "staged-pinned"
        for bench in halo:
            blocks.append(Block([bench], ranks=ranks, gpus=gpus, libraries=[lib.name],
                                options=HALO_OPTIONS | {"mem": dev or "device", "strategy": strategy}))
    return blocks

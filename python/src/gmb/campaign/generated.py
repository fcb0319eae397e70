# SPDX-License-Identifier: BSD-3-Clause
"""The campaign generated from the machine when no campaign file is given (`gmb run`, `gmb plan`): what each
library's engine can do on this topology, sized to take minutes; what cannot run is left out with the reason.
NCCL libraries get what NCCL can do, and a generated campaign gets an NCCL library when an engine has NCCL."""

from __future__ import annotations

from ..engine.description import EngineDescription
from ..machine.mpilibs import MpiLibrary
from ..machine.topology import Topology
from .from_description import gpu_kind, listed
from .full import gpu_machine_blocks, host_machine_blocks, inter_node_blocks
from .quick import (QUICK_FAST_SIZES, QUICK_HOST_CEILING_SIZES, quick_block, quick_collectives, quick_gpu_blocks,
                    quick_latency_and_bandwidth)
from .spec import Block, Campaign
from .sweeps import CEILING_REPETITIONS, CEILING_SIZES, COLL_SIZES, FAST_SIZES, GPU_PT2PT_OPTIONS

# the default campaign's collectives under NCCL: the operations of campaigns/nccl-vs-mpi.toml, so that a generated
# run and that campaign give figures of the same points
NCCL_DEFAULT_OPERATIONS = ["allreduce", "allgather", "reduce_scatter_block", "alltoall", "bcast"]

# launches per point of a generated campaign (quick or not): enough for a claim across launches to carry a test
# (with two, a 4x difference could read "within precision"); bundled (run/bundles.py), so that a repetition costs
# one engine start-up per library configuration rather than one per launch
GENERATED_REPETITIONS = 5


def default_campaign(topo: Topology, libs: list[MpiLibrary], descriptions: dict[str, EngineDescription],
                     quick: bool = False, hosts: int = 1) -> Campaign:
    """A campaign generated from the machine: ceilings first, then per library and path class the point-to-point
    benchmarks for HH, DD, HD; the multi-pair ones; collectives; overlap; managed placements; halo; with ``hosts``
    > 1 (a hostfile of several hosts, or several Slurm nodes) between two nodes (path "inter-node"): a pair on
    host, pinned and device memory, and every GPU of a node with its counterpart on the other (full.inter_node_blocks),
    for each library configuration and NCCL.
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
        blocks += quick_gpu_blocks(topo, mpi_libs, descriptions, skipped)
    else:
        ceilings = fdesc.of_family("peaks")
        if ceilings:
            # 5 samples of 4 copies per ceiling (CVs of copies are well under 1 %), at 1 MiB and 64 MiB: the sizes
            # where MPI figures are put next to them (a fraction of peak compares one size with the same size)
            popts = {} if quick else {"validate": True} if not gpus else {"samples": 5, "copies": 4, "validate": True}
            blocks.append(Block(ceilings, ranks=[2], options=popts, libraries=[first.name], path="ceilings",
                                sizes=QUICK_HOST_CEILING_SIZES if quick else CEILING_SIZES,
                                repetitions=CEILING_REPETITIONS))
        else:
            skipped.append((first.name, "peaks", "engine has no peaks benchmark: no measured ceilings"))
        for lib in mpi_libs:
            if gpus:
                blocks += gpu_machine_blocks(lib, descriptions[lib.name], topo, skipped)
            else:
                blocks += host_machine_blocks(lib, descriptions[lib.name], topo, quick, skipped)
    if hosts > 1:
        # the network's own ceiling: peaks with one rank on each of two nodes measures the network between them
        # with every tool both can run (each tool run is a server and a client: 5 samples keep it short)
        ceilings = fdesc.of_family("peaks")
        if ceilings:
            blocks.append(Block(ceilings, ranks=[2], path="inter-node", libraries=[first.name],
                                options={"samples": 5, "copies": 4},
                                sizes=QUICK_HOST_CEILING_SIZES if quick else CEILING_SIZES,
                                repetitions=CEILING_REPETITIONS))
        for lib in usable:
            blocks += inter_node_blocks(lib, descriptions[lib.name], gpus, quick, skipped)
    for lib in usable:
        if lib.transport == "nccl":
            blocks += _nccl_blocks(lib, descriptions[lib.name], topo, quick, skipped)
    return Campaign(name=name, blocks=blocks, skipped=skipped, repetitions=GENERATED_REPETITIONS,
                    bundle=True)


def _nccl_blocks(lib, desc, topo, quick, skipped) -> list[Block]:
    """An NCCL library: its point-to-point benchmarks on device memory over each GPU link class, its collectives
    on device memory over all GPUs (--quick: the quick campaign's latency, bandwidth and collectives)."""
    if not desc.nccl:
        skipped.append((lib.name, "all", "the engine was built without NCCL (features.nccl false)"))
        return []
    if not topo.gpus:
        skipped.append((lib.name, "all", "no GPU found"))
        return []
    dev = gpu_kind(desc)[0] or "device"
    blocks = []
    pt2pt = desc.of_family("pt2pt", transport="nccl")
    for cls, (i, j) in sorted(topo.gpu_pairs_by_class().items()) if pt2pt else ():
        if quick:  # latency and bandwidth, as for the MPI libraries
            blocks += [quick_block(desc, [b], lib, f"{dev}:{dev}", "direct", sizes or QUICK_FAST_SIZES, [i, j], cls)
                       for b, sizes in quick_latency_and_bandwidth(desc, transport="nccl")]
        else:
            blocks.append(Block(pt2pt, memory=[f"{dev}:{dev}"], strategies=["direct"], sizes=FAST_SIZES, gpus=[i, j],
                                path=cls, options=dict(GPU_PT2PT_OPTIONS), libraries=[lib.name]))
    skipped.append((lib.name, "same-gpu", "NCCL needs one GPU per rank"))
    if len(topo.gpus) < 2:
        skipped.append((lib.name, "coll", "NCCL collectives need one GPU per rank: fewer than 2 GPUs"))
        return blocks
    if quick:
        return blocks + quick_collectives(lib, desc, topo, dev, skipped)
    # NCCL times 20 calls per sample at least (as nccl-tests): 200 calls make 10 samples at every size
    common = {"iters": 200, "warmup": 20, "iters-large": 200, "warmup-large": 5, "large-size": "64K", "validate": True}
    for bench in desc.of_family("collective", transport="nccl"):
        blocks.append(Block([bench], sizes=COLL_SIZES, ranks=[len(topo.gpus)], gpus=list(range(len(topo.gpus))),
                            options=common | {"mem": dev}, libraries=[lib.name], join_operations=True,
                            operations=listed(lib, desc, bench, NCCL_DEFAULT_OPERATIONS, skipped)))
    return blocks


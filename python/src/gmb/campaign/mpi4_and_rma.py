# SPDX-License-Identifier: BSD-3-Clause
"""The generated campaigns' one-sided (RMA), persistent and partitioned blocks, for the full and the quick
campaign."""

from __future__ import annotations

from typing import NamedTuple

from ..engine.description import EngineDescription
from .from_description import host_kind, listed
from .spec import Block
from .sweeps import COLL_SIZES

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


def gpu_places(desc, topo, dev: str, sizes: str, slow_sizes: str, latency_sizes: str, slow_latency_sizes: str,
                classes: int | None = None) -> tuple[list[Place], Place]:
    """Device memory between two GPUs (one pair per GPU link class, the first ``classes`` of them; one GPU when
    there is no pair) and from pinned host memory to a GPU; and the first device:device place."""
    pairs = sorted(topo.gpu_pairs_by_class().items())[:classes] or [("same-gpu", (0, 0))]
    between = [Place(f"{dev}:{dev}", cls, [i, j], sizes, latency_sizes) for cls, (i, j) in pairs]
    to_gpu = Place(f"{host_kind(desc, True)}:{dev}", "host-device", [0], slow_sizes, slow_latency_sizes,
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
                         operations=listed(lib, desc, bench, ["allreduce"], skipped))
                   for bench in desc.of_family("collective")]
    # partitioned: the transfers over a sweep of partition counts (host and device memory), and part_overlap on
    # device memory
    names = desc.of_family("partitioned")
    feature = desc.mpi_feature("partitioned")
    why_not = "the engine lists no benchmark of family partitioned" if not names else feature[1]
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

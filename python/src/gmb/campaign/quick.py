# SPDX-License-Identifier: BSD-3-Clause
"""The quick campaign (``gmb run --quick``): its sizes and counts, and its blocks on a GPU node, per library
configuration and path class one latency and one bandwidth launch, sized to answer in minutes."""

from __future__ import annotations

from ..engine.description import EngineDescription
from .from_description import gpu_kind, host_kind, listed
from .mpi4_and_rma import MPI4_ON_DEVICE, gpu_places, mpi4_and_rma_blocks
from .plan import not_aware_reason
from .spec import Block
from .sweeps import CEILING_REPETITIONS

# --quick: one operation per collective benchmark
QUICK_OPERATIONS = {"coll": ["allreduce"], "nbc": ["allreduce"]}

# --quick answers the question in minutes: per library configuration and path class one latency and one bandwidth
# launch, device collectives in one launch, managed memory device to device, five repetitions (GENERATED_REPETITIONS)
# in random order, bundled. A claim must hold across launches, and launches differ far more than the samples of one
# launch (points.point_figure; on one H200 the same bw block's launch medians differed by 1.5x where one launch's
# interval was +-1 %): the time goes into launches, not into a launch's precision. Each size is repeated until its
# median's 95 % confidence interval is within +-5 % (QUICK_ADAPTIVE), or a cap (iterations, or a quarter of a second
# of timed samples) is reached and the record says so. Sizes are few, and the ceilings are measured at
# every bandwidth size from 64 KiB up, so that every bandwidth row has its ceiling at the size it states.
# With --precision the iteration counts are caps only: high, so that the time cap (--max-seconds) bounds a size and
# cheap points are batched into samples of >= 200 us as usual (the engine's batching keeps >= 10 samples under the
# iteration cap). An engine without adaptive repetitions gets fixed counts.
QUICK_ADAPTIVE = {"iters": 100000, "warmup": 10, "iters-large": 1000, "warmup-large": 2, "large-size": "1M",
                  "validate": True, "precision": 0.05, "max-seconds": 0.25}
QUICK_FIXED = {"iters": 200, "warmup": 20, "iters-large": 20, "warmup-large": 2, "large-size": "1M", "validate": True}
QUICK_LATENCY_SIZES = "8,1K,64K,1M"
QUICK_FAST_SIZES = "8,64K,1M,16M,64M"  # device to device buffers handed to the library: NVLink, one GPU
QUICK_SLOW_SIZES = "8,64K,1M,4M"  # host memory, host <-> device, staged: 2-50 GB/s, a window is 64 messages
QUICK_CEILING_SIZES = "64K,1M,4M,16M,64M"  # the bandwidth sizes above, from 64 KiB up
QUICK_COLL_SIZES = "8,64K,1M,16M"
QUICK_HOST_CEILING_SIZES = "64K,1M"  # --quick without GPUs: host bandwidth sweeps 1 B - 1 MiB
QUICK_COLL_OPERATIONS = ["allreduce", "bcast", "alltoall"]
QUICK_MANAGED_SIZES = "8,64K,1M"


def quick_gpu_blocks(topo, mpi_libs, descriptions, skipped) -> list[Block]:
    """--quick on a GPU node: ceilings at the sizes measured, then per MPI library configuration latency and bandwidth
    per path class (device to device per GPU link class and on one GPU, host <-> device from pinned and pageable
    memory, host), managed memory device to device, device allreduce/bcast/alltoall; the pipelined-gpu strategy next
    to the first CUDA-aware library's pinned host -> device path (NCCL's blocks: generated._nccl_blocks)."""
    first = descriptions[mpi_libs[0].name]
    blocks = []
    ceilings = first.of_family("peaks")
    if ceilings:
        blocks.append(Block(ceilings, ranks=[2], options={"samples": 5, "copies": 4}, libraries=[mpi_libs[0].name],
                            path="ceilings", sizes=QUICK_CEILING_SIZES, repetitions=CEILING_REPETITIONS))
    else:
        skipped.append((mpi_libs[0].name, "peaks", "engine has no peaks benchmark: no measured ceilings"))
    strategy_shown = False
    for lib in mpi_libs:
        desc = descriptions[lib.name]
        lib_blocks, aware = _quick_library_blocks(lib, desc, topo, skipped)
        blocks += lib_blocks
        bw = _quick_pt2pt(desc, "bandwidth_GBps")
        dev, _ = gpu_kind(desc)
        if aware and bw and dev and not strategy_shown:
            blocks.append(quick_block(desc, [bw], lib, memory=f"{host_kind(desc, True)}:{dev}",
                                       strategy="pipelined-gpu", sizes=QUICK_SLOW_SIZES, gpus=[0],
                                       path="host-device"))
            strategy_shown = True
    return blocks


def _quick_pt2pt(desc: EngineDescription, headline: str) -> str | None:
    """The first point-to-point benchmark the engine lists with this headline (latency: time_us, bw:
    bandwidth_GBps)."""
    return next((n for n in desc.of_family("pt2pt") if desc.benchmark(n).headline == headline), None)


def quick_latency_and_bandwidth(desc: EngineDescription, transport: str = "mpi") -> list[tuple[str, str | None]]:
    """(benchmark, sizes) of the quick campaign's latency and bandwidth benchmarks that take ``transport``: the
    latency's sizes, None for the bandwidth (its sizes depend on the path)."""
    picked = ((_quick_pt2pt(desc, "time_us"), QUICK_LATENCY_SIZES), (_quick_pt2pt(desc, "bandwidth_GBps"), None))
    return [(b, sizes) for b, sizes in picked if b and transport in desc.benchmark(b).transports]


def quick_block(desc, benchmarks, lib, memory="", strategy="", sizes=None, gpus=None, path=None, ranks=None,
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
    pt2pt = quick_latency_and_bandwidth(desc)
    if not pt2pt:
        skipped.append((lib.name, "point to point", "the engine lists no latency or bandwidth benchmark"))
    host = host_kind(desc, False)
    blocks = [quick_block(desc, [b], lib, f"{host}:{host}", sizes=sizes or QUICK_SLOW_SIZES, path="host")
              for b, sizes in pt2pt]
    dev, why = gpu_kind(desc)
    if dev is None:
        skipped.append((lib.name, "device memory", why))
        return blocks + quick_collectives(lib, desc, topo, None, skipped), False
    aware = lib.cuda_aware is True
    pairs = sorted(topo.gpu_pairs_by_class().items())
    if not aware:
        skipped.append((lib.name, "direct device buffers", not_aware_reason(lib)))
        skipped.append((lib.name, MPI4_ON_DEVICE, not_aware_reason(lib, short=True)))
        for what in ("same-gpu", "host-device", "managed memory"):
            skipped.append((lib.name, what, "not CUDA-aware: device buffers only through gmb's staged strategy, "
                                            "measured between two GPUs"))
        for cls, (i, j) in pairs[:1]:
            blocks += [quick_block(desc, [b], lib, f"{dev}:{dev}", "staged-pinned", sizes or QUICK_SLOW_SIZES,
                                    [i, j], cls) for b, sizes in pt2pt]
        return blocks + quick_collectives(lib, desc, topo, None, skipped), False
    places = [(cls, [i, j]) for cls, (i, j) in pairs] + [("same-gpu", [0, 0])]
    for cls, gpus in places:
        blocks += [quick_block(desc, [b], lib, f"{dev}:{dev}", "direct", sizes or QUICK_FAST_SIZES, gpus, cls)
                   for b, sizes in pt2pt]
    for page_locked in (True, False):
        blocks += [quick_block(desc, [b], lib, f"{host_kind(desc, page_locked)}:{dev}", "direct",
                                sizes or QUICK_SLOW_SIZES, [0], "host-device") for b, sizes in pt2pt]
    on_gpus, device = gpu_places(desc, topo, dev, QUICK_FAST_SIZES, QUICK_SLOW_SIZES, QUICK_LATENCY_SIZES,
                                  QUICK_LATENCY_SIZES, classes=1)
    blocks += mpi4_and_rma_blocks(lib, desc, on_gpus, device, list(range(len(topo.gpus))),
                                  lambda b: quick_options(desc, b), skipped, quick=True)
    blocks += _quick_managed(lib, desc, topo, skipped)
    return blocks + quick_collectives(lib, desc, topo, dev, skipped), True


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
    return [quick_block(desc, names, lib, f"{on_device}:{on_device}", sizes=QUICK_MANAGED_SIZES,
                         gpus=[0, 1] if len(topo.gpus) > 1 else [0, 0], path="managed")]


def quick_collectives(lib, desc, topo, device: str | None, skipped) -> list[Block]:
    """allreduce, bcast and alltoall in one launch over every GPU: on device memory for a CUDA-aware library, on
    host memory otherwise."""
    blocks = []
    ngpu = len(topo.gpus)
    for bench in desc.of_family("collective"):
        ops = listed(lib, desc, bench, QUICK_COLL_OPERATIONS, skipped)
        blocks.append(quick_block(desc, [bench], lib, sizes=QUICK_COLL_SIZES, gpus=list(range(ngpu)),
                                   ranks=[max(2, ngpu)], options={"mem": device} if device else {},
                                   operations=ops, join_operations=True))
    if not blocks:
        skipped.append((lib.name, "collective", "the engine lists no benchmark of family collective"))
    return blocks

# SPDX-License-Identifier: BSD-3-Clause
"""The paths `gmb tune` searches settings on, for one library configuration: device buffers between two GPUs (one
pair per link class) and on one GPU, host -> device from page-locked and pageable memory, host memory, between
hosts, and an allreduce on device memory over every GPU (host memory without GPUs). Each is one block of the
bandwidth benchmark (the allreduce: the collective benchmark), at few sizes from 8 B up, each size repeated to
adaptive precision; the round gives the precision (``round_options``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..campaign.from_description import gpu_kind, host_kind
from ..campaign.plan import plan
from ..campaign.quick import QUICK_ADAPTIVE, QUICK_FIXED
from ..campaign.spec import Block, Campaign, parse_memory
from ..errors import UsageError
from ..engine.configurations import Configuration
from ..machine.topology import Topology

FAST_SIZES = "8,64K,1M,16M"  # device buffers handed to the library: NVLink, one GPU
SLOW_SIZES = "8,64K,1M,4M"  # host memory, host <-> device, between hosts
COLLECTIVE_SIZES = "8,1K,64K,1M,16M"  # small ones: latency-bound protocols (NCCL's LL) differ there
COLLECTIVE = "allreduce"
# the other collectives searched, each on a path of its own where a library offers its algorithm choice
# (knobs.Knob.operations): their path tries those knobs only (the runtimes' knobs are tried on the allreduce)
ALGORITHM_COLLECTIVES = ("bcast", "allgather", "alltoall", "reduce")
# ranks of a collective on host memory: enough for the algorithms to differ (recursive doubling and ring are one
# exchange apart on 2), few enough for a small machine (the launcher oversubscribes)
HOST_COLLECTIVE_RANKS = 4

# per round, the target precision of a size's median (the engine's --precision) and its time cap (--max-seconds):
# cheap and coarse first, finer for the arms that go on
ROUND_PRECISION = ((0.05, 0.25), (0.03, 0.5), (0.02, 1.0))


@dataclass(frozen=True)
class TunePath:
    name: str  # as the answer names it: "nvlink", "same-gpu", "host-device pinned", "collective allreduce" ...
    kind: str  # knobs.PATHS
    block: Block
    # only its operation's algorithm knobs are tried (catalogue.offered); with none offered it makes no race
    algorithms_only: bool = False


def round_options(block: Block, round_number: int) -> Block:
    """The block as round ``round_number`` measures it: its precision and time cap, where it is adaptive."""
    if "precision" not in block.options:
        return block
    precision, seconds = ROUND_PRECISION[min(round_number, len(ROUND_PRECISION) - 1)]
    return replace(block, options={**block.options, "precision": precision, "max-seconds": seconds})


def _options(desc, bench: str) -> dict:
    return dict(QUICK_ADAPTIVE if desc.benchmark(bench).adaptive else QUICK_FIXED)


def tune_paths(conf: Configuration, topo: Topology, hosts: int, skipped: list) -> list[TunePath]:
    """The paths of one configuration, by what its engine and the machine have; what cannot be measured goes to
    ``skipped`` ((configuration, path, why))."""
    lib, desc = conf.library, conf.description
    bw = next((n for n in desc.of_family("pt2pt") if desc.benchmark(n).headline == "bandwidth_GBps"), None)
    coll = next(iter(desc.of_family("collective")), None)
    dev, why_no_device = gpu_kind(desc)
    nccl = lib.transport == "nccl"
    aware = nccl or lib.cuda_aware is True
    out: list[TunePath] = []

    def pt2pt(name, kind, memory, sizes, gpus=None, path=None):
        out.append(TunePath(name, kind, Block([bw], memory=[memory], strategies=["direct"] if dev else [""],
                                              sizes=sizes, gpus=gpus, path=path or name, options=_options(desc, bw),
                                              libraries=[lib.name])))

    if bw is None:
        skipped.append((lib.name, "point to point", "the engine lists no bandwidth benchmark"))
    elif dev and aware and topo.gpus:
        for cls, (i, j) in sorted(topo.gpu_pairs_by_class().items()):
            pt2pt(cls, "device", f"{dev}:{dev}", FAST_SIZES, [i, j])
        if not nccl:
            pt2pt("same-gpu", "device", f"{dev}:{dev}", FAST_SIZES, [0, 0])
            for page_locked in (True, False):
                host = host_kind(desc, page_locked)
                pt2pt(f"host-device {'pinned' if page_locked else 'pageable'}", "host-device", f"{host}:{dev}",
                      SLOW_SIZES, [0], "host-device")
    elif topo.gpus and not nccl:
        skipped.append((lib.name, "device memory", why_no_device if dev is None else
                        "not CUDA-aware: device buffers are not handed to it"))
    if bw and not nccl:
        host = host_kind(desc, False)
        pt2pt("host", "host", f"{host}:{host}", SLOW_SIZES)
        if hosts > 1:
            pt2pt("inter-node", "inter-node", f"{host}:{host}", SLOW_SIZES)
    if coll is None:
        skipped.append((lib.name, "collective", "the engine lists no collective benchmark"))
    elif COLLECTIVE not in desc.collectives:
        skipped.append((lib.name, "collective", f"the engine lists no {COLLECTIVE}"))
    else:
        on_device = bool(dev and aware and topo.gpus)
        if nccl and not on_device:
            skipped.append((lib.name, "collective", "NCCL moves device memory only, and there is none here"))
        else:
            ranks = max(2, len(topo.gpus)) if on_device else HOST_COLLECTIVE_RANKS
            others = [] if nccl else [op for op in ALGORITHM_COLLECTIVES if op in desc.collectives]
            for op in [COLLECTIVE, *others]:
                out.append(TunePath(f"collective {op}", "collective",
                                    Block([coll], sizes=COLLECTIVE_SIZES, ranks=[ranks],
                                          gpus=list(range(len(topo.gpus))) if on_device else None,
                                          options={**_options(desc, coll), **({"mem": dev} if on_device else {})},
                                          operations=[op], libraries=[lib.name], path="collective"),
                                    algorithms_only=op != COLLECTIVE))
    return out


def campaign_paths(campaign: Campaign, conf: Configuration, skipped: list) -> list[TunePath]:
    """The blocks of a campaign file as paths of ``conf`` (those that name it, or every library): each must make one
    launch per set of settings (one benchmark, memory, strategy, rank count, operation or joined operations, node
    count); a block that makes none for it (it cannot run there) goes to ``skipped`` with the planner's reason.
    Named by the block's path, else its number; its kind (the knobs it is offered) from its benchmark and memory."""
    lib, desc = conf.library, conf.description
    out = []
    for number, block in enumerate(campaign.blocks, start=1):
        wanted = block.libraries or campaign.libraries
        if "*" not in wanted and lib.name not in wanted:
            continue
        one = replace(block, libraries=[lib.name], settings=None)
        launches, refused = plan(Campaign(campaign.name, [one], repetitions=1), [lib], {lib.name: desc})
        if len(launches) > 1:
            raise UsageError(f"{campaign.name}: block {number}: gmb tune measures each set of settings in one launch: "
                             f"it makes {len(launches)} for {lib.name} (give one benchmark, memory, strategy, rank "
                             "count and node count, and one operation or join_operations = true)")
        if not launches:
            skipped += [(lib.name, f"block {number}", why) for _, _, why in refused]
            continue
        out.append(TunePath(block.path or f"block {number}", _kind(desc, one), one))
    return out


def _kind(desc, block: Block) -> str:
    """The knobs.PATHS kind of a block: a collective's, else by where its buffers are and its planned path."""
    family = desc.benchmark(block.benchmarks[0]).family
    if family in ("collective", "nbc"):
        return "collective"
    if block.path in ("inter-node", "host-device", "host"):
        return block.path
    memory = block.memory[0]
    on_gpu = [desc.gpu_memory(k) for k in parse_memory(memory)] if memory else [False]
    return "device" if all(on_gpu) else "host-device" if any(on_gpu) else "host"

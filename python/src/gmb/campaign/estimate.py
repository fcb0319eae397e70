# SPDX-License-Identifier: BSD-3-Clause
"""A rough duration estimate of planned launches, so that a campaign can be fitted into a time budget
before the machine is held (``gmb plan`` prints it).

Model (checked against 44 finished launches of the default campaign on 4 x H200 NVLink: 184 s estimated, 213 s
measured, then against the whole default campaign on 2 x H200, 144 finished launches: 827 s estimated, 845 s
measured; a library's slow fallback path takes longer still; see docs/campaigns.md):
each launch pays a start-up (launcher, MPI_Init, CUDA context: ``START_S`` + ``PER_RANK_S`` per rank), then per
message size (warm-up + timed iterations) x the time of one iteration at the path's bandwidth:
by the benchmark's family and headline (its engine's description): a point-to-point benchmark ranked by time
(latency, mlat) 2 x (alpha + bytes / beta), one ranked by bandwidth (bw, mbw) a window of W messages (each with a
per-message cost on GPU paths), bibw both ways; collectives one call per operation (nbc: three); managed
placements one placement and two references with a placing cost per iteration; peaks by its copies; halo and
doctor a fixed time. One-sided (rma) and partitioned transfers as point to point (ranked by time: a ping-pong;
by bandwidth: a window), once per partition count swept; part_overlap as nbc (pure, then with compute: three calls
per iteration, nineteen with --compute-sweep's nine compute fractions), once per ready mode and partition count;
--persistent measures everything twice (the regular form, then the persistent one). Bandwidths per path class
(``BETA_GBPS``) are the low end of what was measured (ob1's host<->device path ran at about 2.6 GB/s); staged
strategies are capped at ``STAGED_GBPS``.
"""

from __future__ import annotations

from dataclasses import asdict

from ..engine.description import Benchmark, DescriptionError, EngineDescription
from .plan import Launch
from .sizes import parse_size, parse_sizes

START_S = 2.3
PER_RANK_S = 0.3
ALPHA_US = 5.0
# One message's own cost where it is far above ALPHA_US (ob1 and ucx between processes on one GPU: 90 us and more)
ALPHA_US_OF_PATH = {"same-gpu": 90.0}
# Each message of a bw/bibw window on GPU paths costs this much beyond its bytes (ob1 on 2 x H200: 7 us between
# GPUs, 10 us on one GPU); host messages overlap and cost almost nothing
WINDOW_MSG_US = {"nvlink": 7.0, "pcie": 7.0, "same-gpu": 10.0, "host-device": 3.0, "inter-node": 2.0}
# um: the placement and its two references (host-host, device-device) are measured in one launch, every iteration
# one sample with the pages placed first (touch kernels, CPU touches, synchronisation)
UM_CONFIGS = 3
UM_ITER_US = 700.0
NCCL_INIT_S = 1.5  # communicator creation over MPI
BETA_GBPS = {"host": 10.0, "cross-socket": 6.0, "host-device": 2.5, "nvlink": 300.0, "pcie": 20.0,
             "same-gpu": 1000.0, "inter-node": 10.0, "managed": 0.3}
COLL_GBPS = 0.4  # a CUDA-aware MPI's allreduce on device buffers can be this slow, hundreds of times below NCCL
STAGED_GBPS = 4.0
FIXED_S = {"halo": 4.0, "doctor": 2.0}  # by family; halo: 128^3 per rank, 10 steps per strategy
PEAKS_S_PER_COPY_SAMPLE = 0.1  # ~40 ceilings x one 64 MiB copy (peaks: --samples x --copies each)
NBC_CALLS = 3  # nbc: pure, then overall with compute of about the pure time (per iteration)
# --compute-sweep: pure, then overall at compute 0, 0.25 ... 2 x pure: 1 + sum(1 + f) = 19 calls' time
SWEEP_CALLS = 19
# the counts a launch runs with: its options, else the engine's run defaults (the description's)
COUNTS = ("iters", "warmup", "iters-large", "warmup-large", "large-size", "window")


def _options(args: list[str]) -> dict[str, str]:
    out, i = {}, 0
    while i < len(args):
        if args[i].startswith("--") and i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[args[i][2:]] = args[i + 1]
            i += 2
        else:
            i += 1
    return out


def start_seconds(x: Launch) -> float:
    """A launch's start-up: the launcher, MPI_Init, CUDA contexts, NCCL's communicator."""
    return START_S + PER_RANK_S * x.ranks + (NCCL_INIT_S if "--transport" in x.engine_args else 0)


def launch_seconds(x: Launch, descriptions: dict[str, EngineDescription]) -> float:
    """Estimated wall time of one launch (start-up included)."""
    desc = descriptions.get(x.library)
    if desc is None:
        raise DescriptionError(f"no engine description of library {x.library!r} to estimate its launches by")
    b = desc.benchmark(x.benchmark)
    family = b.family if b else x.family
    start = start_seconds(x)
    if family in FIXED_S:
        return start + FIXED_S[family]
    opts = _options(x.engine_args[1:])
    if family == "peaks":
        return start + 2 + PEAKS_S_PER_COPY_SAMPLE * int(opts.get("samples", 10)) * int(opts.get("copies", 8))
    defaults = asdict(desc.run_defaults)
    num = {k: int(parse_size(opts[k])) if k in opts else defaults[k.replace("-", "_")] for k in COUNTS}
    sizes = parse_sizes(opts.get("sizes", "1:4M"))
    path = x.planned_path or "host"
    beta = BETA_GBPS.get(path, 8.0) * 1e3  # bytes per microsecond
    if x.strategy and x.strategy != "direct":
        beta = min(beta, STAGED_GBPS * 1e3)
    operations = bool(b and b.operations)
    if operations:
        beta = COLL_GBPS * 1e3 * (50 if "--transport" in x.engine_args else 1)
    calls = len(x.engine_args[1].split(",")) if operations and len(x.engine_args) > 1 else 1
    if b and b.overlap:
        calls *= SWEEP_CALLS if "--compute-sweep" in x.engine_args else NBC_CALLS
    # what one launch measures several times over: each partition count swept, each ready mode, the persistent form
    sweeps = len(opts.get("partitions", "1").split(",")) * (2 if opts.get("ready") == "both" else 1) * (
        2 if "--persistent" in x.engine_args else 1)
    # --batch N: each timed sample is N iterations back to back, so at least N timed iterations per size (without
    # --validate, which times every iteration on its own)
    batch = int(opts["batch"]) if "batch" in opts and "--validate" not in x.engine_args else 1
    alpha = ALPHA_US_OF_PATH.get(path, ALPHA_US)
    msg = WINDOW_MSG_US.get(path, 0.0)
    # --precision: a size's timed samples stop at --max-seconds at the latest (the estimate takes the cap)
    timed_cap_us = float(opts.get("max-seconds", desc.run_defaults.max_seconds)) * 1e6 if "precision" in opts else None
    total_us = 0.0
    for nbytes in sizes:
        large = nbytes >= num["large-size"]
        timed = num["iters-large"] if large else num["iters"]
        timed = -(-timed // batch) * batch
        warmup = num["warmup-large"] if large else num["warmup"]
        one = _iteration_us(b, family, alpha + nbytes / beta, alpha, msg, nbytes / beta, num["window"],
                            calls)
        timed_us = timed * one if timed_cap_us is None else min(timed * one, timed_cap_us)
        if timed_cap_us is None and timed // batch < desc.run_defaults.min_samples:
            # the engine tops fixed counts of fewer samples up to its minimum, within its default time cap
            timed_us = max(timed_us, min(desc.run_defaults.min_samples * batch * one, desc.run_defaults.max_seconds * 1e6))
        total_us += sweeps * (warmup * one + timed_us)
    return start + total_us / 1e6


def _iteration_us(b: Benchmark | None, family: str | None, one: float, alpha: float, msg: float,
                  transfer: float, window: int, calls: int) -> float:
    """One timed iteration: ``one`` message of ``transfer`` us after ``alpha``; a window of ``window`` of them."""
    if b is not None and b.point_to_point and not b.overlap:
        if b.headline == "time_us":  # ping-pong
            return 2 * one
        return alpha + (2 if b.bidirectional else 1) * window * (msg + transfer)
    if family == "managed":
        return UM_CONFIGS * (UM_ITER_US + 2 * one)
    return calls * one  # collectives and anything else: one call per iteration and operation


def over_timeout(launches: list[Launch], descriptions: dict[str, EngineDescription], margin: float = 1.0
                 ) -> list[tuple[Launch, float]]:
    """Launches whose estimate (times ``margin``) exceeds their timeout: (launch, estimated seconds)."""
    return [(x, t) for x in launches if (t := launch_seconds(x, descriptions)) * margin > x.timeout_s]


def campaign_seconds(launches: list[Launch], descriptions: dict[str, EngineDescription],
                     shared: list[list[Launch]] = ()) -> float:
    """Estimated wall time of the launches. ``shared``: groups of them that run as the blocks of one engine launch
    (bundles): a bundle's blocks after its first start nothing of their own (the largest start-up stands for all)."""
    saved = sum(sum(map(start_seconds, group)) - max(map(start_seconds, group)) for group in shared if group)
    return sum(launch_seconds(x, descriptions) for x in launches) - saved


def summary(launches: list[Launch], descriptions: dict[str, EngineDescription],
            shared: list[list[Launch]] = ()) -> str:
    """'N launches, about M min' with the three most expensive kinds of launch (``shared``: campaign_seconds)."""
    by_kind: dict[str, list[float]] = {}
    for x in launches:
        by_kind.setdefault(f"{x.library} {x.benchmark} {x.planned_path or ''}".strip(), []).append(
            launch_seconds(x, descriptions))
    total = campaign_seconds(launches, descriptions, shared)
    top = sorted(by_kind.items(), key=lambda kv: -sum(kv[1]))[:3]
    parts = ", ".join(f"{k}: {sum(v):.0f} s" for k, v in top)
    shared_said = f"; {len(shared)} engine launches share their start-ups" if shared else ""
    return f"{len(launches)} launches, estimated {total / 60:.1f} min ({total:.0f} s; largest: {parts}{shared_said})"

# SPDX-License-Identifier: BSD-3-Clause
"""The full generated campaign's sizes and counts (``gmb run`` without a campaign file, and without --quick),
shared by its MPI, one-sided/persistent/partitioned and NCCL blocks."""

# The generated campaign on a GPU machine has to stay short (minutes, not hours): ~50 launches per repetition,
# each paying MPI and CUDA start-up. Fast paths (device buffers handed to the library or to NCCL, over NVLink or
# inside one GPU) sweep 1 B - 64 MiB; slow ones (host memory, host<->device, staged copies, 2-20 GB/s) stop at
# 4 MiB / 1 MiB, where windows of 64 messages would otherwise take seconds per iteration. Sizes from 64 KiB
# up get 5 timed iterations (each a window of 64 messages for bw/bibw; the engine adds samples up to 10 where they fit
# in its time cap: methodology.md "At least 10 samples per size"), 200 below. Estimate: docs/campaigns.md.
# Collectives stop at 16 MiB: a CUDA-aware MPI's allreduce on device buffers ran at ~1 GB/s bus bandwidth there
# (30 ms per 16 MiB call, 160 ms per 64 MiB), already hundreds of times below NCCL; campaigns/nccl-vs-mpi.toml
# goes to 1 GiB.
FAST_SIZES, HOST_SIZES, SLOW_SIZES, COLL_SIZES, NBC_SIZES = "1:64M", "1:4M", "1:1M", "4:16M", "1K:1M"
CEILING_SIZES = "1M,64M"
# launches of a generated campaign's ceilings (peaks): references, not claims (a copy's samples vary well under 1 %);
# the network's, with every tool a server and a client, took 64 s a launch between two emulated hosts
CEILING_REPETITIONS = 2
GPU_PT2PT_OPTIONS = {"iters": 200, "warmup": 20, "iters-large": 5, "warmup-large": 1, "large-size": "64K",
                     "validate": True}
HALO_OPTIONS = {"dims": 3, "grid": "128,128,128", "steps": 10, "warmup": 2, "validate": True}

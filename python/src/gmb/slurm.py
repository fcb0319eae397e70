"""`gmb slurm CAMPAIGN`: a batch script that runs a campaign inside a Slurm allocation, optionally sweeping
node counts (strong scaling: same sizes at every count; weak scaling: sizes given per node count)."""

from __future__ import annotations

import shlex

from .spec import Campaign


def batch_script(campaign_file: str, c: Campaign, nodes: list[int], ranks_per_node: int, gpus_per_node: int,
                 time_limit: str = "01:00:00", partition: str | None = None, account: str | None = None,
                 results: str = "results", gmb: str = "gmb") -> str:
    if not nodes or any(not isinstance(n, int) or n < 1 for n in nodes):
        raise ValueError(f"node counts must be integers >= 1 (got {nodes})")
    if ranks_per_node < 1 or gpus_per_node < 0:
        raise ValueError("ranks per node must be >= 1 and GPUs per node >= 0")
    max_nodes = max(nodes)
    lines = ["#!/bin/bash", f"#SBATCH --job-name=gmb-{c.name}", f"#SBATCH --nodes={max_nodes}",
             f"#SBATCH --ntasks-per-node={ranks_per_node}", f"#SBATCH --time={time_limit}",
             "#SBATCH --output=gmb-%j.out"]
    if gpus_per_node:
        # GPUs per node, not per task: per-task isolation breaks CUDA IPC between ranks of a node
        lines.append(f"#SBATCH --gpus-per-node={gpus_per_node}")
    if partition:
        lines.append(f"#SBATCH --partition={partition}")
    if account:
        lines.append(f"#SBATCH --account={account}")
    # `gmb run` exits 1 when a launch failed (2 on bad input): the sweep goes on with the next node count and the
    # job exits non-zero at the end, naming the node counts that failed
    lines += ["set -euo pipefail", f"# campaign: {campaign_file}; node-count sweep: {' '.join(map(str, nodes))}",
              "failed=\"\"",
              f"for N in {' '.join(str(n) for n in sorted(set(nodes)))}; do",
              f"  if ! {gmb} run {shlex.quote(campaign_file)} --launcher srun --nodes \"$N\" "
              f"--ranks-per-node {ranks_per_node} --results {shlex.quote(results)} "
              f"--name {shlex.quote(c.name)}-N\"$N\"; then",
              "    failed=\"$failed $N\"",
              "    echo \"gmb: the run on $N node(s) had failures; going on\" >&2",
              "  fi",
              "done",
              "if [ -n \"$failed\" ]; then",
              "  echo \"gmb: node counts with failures:$failed\" >&2",
              "  exit 1",
              "fi", ""]
    return "\n".join(lines)

"""`gmb slurm CAMPAIGN`: a batch script that runs a campaign inside a Slurm allocation, optionally sweeping
node counts (strong scaling: same sizes at every count; weak scaling: sizes given per node count)."""

from __future__ import annotations

import shlex

from .campaign import Campaign


def batch_script(campaign_file: str, c: Campaign, nodes: list[int], ranks_per_node: int, gpus_per_node: int,
                 time_limit: str = "01:00:00", partition: str | None = None, account: str | None = None,
                 results: str = "results", gmb: str = "gmb") -> str:
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
    lines += ["set -euo pipefail", f"# campaign: {campaign_file}; node-count sweep: {' '.join(map(str, nodes))}",
              f"for N in {' '.join(str(n) for n in sorted(nodes))}; do",
              f"  {gmb} run {shlex.quote(campaign_file)} --launcher srun --nodes \"$N\" "
              f"--ranks-per-node {ranks_per_node} --results {shlex.quote(results)} --name {shlex.quote(c.name)}-N\"$N\"",
              "done", ""]
    return "\n".join(lines)

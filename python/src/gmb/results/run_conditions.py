# SPDX-License-Identifier: BSD-3-Clause
"""What a result's figure depends on beyond the store's columns of it (library, benchmark, operation, memory,
strategy, ranks, path, size), read from its launch's context: the library's and runtime's settings, the benchmark
options that change the measured work, how the ranks were bound and over how many hosts they ran. ``configuration``
gives it for the store (canonical JSON in its ``config`` column), ``RunConditions`` reads it back; results of one
library whose configurations differ are different points."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..machine import families
from ..machine.identity import transport_of
from .what_ran import CAPTURE_ENVIRONMENT

# Environment variables that are settings of a library or runtime (what can change a figure), by prefix: the family
# table's; the engine records every variable of these prefixes and more (launcher bookkeeping, paths) in its context.
SETTING_PREFIXES = families.setting_prefixes()
# ... except what launchers, images and gmb set per launch or per machine, which is no setting of the library (the
# variables that make a library say what it chose among them)
NOT_SETTINGS = {*CAPTURE_ENVIRONMENT, "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "CUDA_VERSION", "NCCL_VERSION",
                "OMPI_MCA_PREFIXES", "OMPI_MCA_initial_wdir", "OMPI_MCA_num_procs", "OMPI_MCA_cpu_type",
                "OMPI_MCA_plm", "OMPI_MCA_orte_launch", "OMPI_MCA_ess", "OMPI_MCA_mpi_oversubscribe",
                "OMPI_MCA_shmem_RUNTIME_QUERY_hint", "MPICH_INTERFACE_HOSTNAME", "MPIR_CVAR_CH3_INTERFACE_HOSTNAME",
                "MPIR_CVAR_CH4_INTERFACE_HOSTNAME"}
NOT_SETTING_PREFIXES = ("OMPI_MCA_orte_", "OMPI_MCA_ess_", "OMPI_MCA_pmix", "OMPI_MCA_prte_", "OMPI_MCA_ras_",
                        "OMPI_MCA_state_", "OMPI_MCA_routed", "OMPI_MCA_odls_")
# Options of a benchmark that other fields of a point already name (memory, strategy and chunks, transport, the
# operation and its variant: a one-sided synchronisation and window creation, partitions and their ready mode; a
# launch may sweep several of these) or that say how long or what else to measure, not how: they are not part of the
# configuration.
NOT_CONFIGURATION_OPTIONS = {"send", "recv", "mem", "mem_root", "mem_others", "strategy", "chunks", "transport",
                             "operation", "sync", "window_creation", "partitions", "ready", "references",
                             "compute_sweep", "samples", "copies"}


# Open MPI's mpirun hands its --map-by to the ranks as this variable
MAPPING_VARIABLE = "OMPI_MCA_rmaps_base_mapping_policy"


def settings(context: dict, transport: str = "mpi") -> dict[str, str]:
    """The library and runtime settings a launch ran under (UCX_*, OMPI_MCA_*, MPIR_CVAR_*, NCCL_* ...), from its
    context's environment (rank 0's); NCCL's only where NCCL moved the data (``transport`` "nccl")."""
    env = context.get("environment") or {}
    return {k: str(v) for k, v in sorted(env.items()) if k.startswith(SETTING_PREFIXES) and k not in NOT_SETTINGS
            and not k.startswith(NOT_SETTING_PREFIXES) and (transport == "nccl" or not k.startswith("NCCL_"))
            and not (k == MAPPING_VARIABLE and str(v) == _ranks_per_host_mapping(context))}


def _ranks_per_host_mapping(context: dict) -> str | None:
    """The mapping that puts the launch's ranks as they ran, the same number on each host ("ppr:N:node", what gmb's
    launcher asks for a launch over nodes): no setting of the library, the point's hosts and ranks already say it.
    None where the hosts held different numbers of ranks or the context does not say."""
    per_host: dict[str, int] = {}
    for rank in context.get("ranks") or []:
        if isinstance(rank, dict) and rank.get("host"):
            per_host[rank["host"]] = per_host.get(rank["host"], 0) + 1
    counts = set(per_host.values())
    return f"ppr:{counts.pop()}:node" if len(counts) == 1 else None


def _binding(context: dict) -> str | None:
    """How the ranks were bound, in words that hold on any machine: "unbound" (every rank on the same set of CPUs, as
    --bind-to none leaves them), "1 CPU/rank" (bound to a core or thread), else "N CPUs/rank" (a socket, a NUMA node;
    "N-M" when the ranks' sets differ in size). None when the context does not say."""
    sets = []
    for rank in context.get("ranks") or []:
        cpus = set()
        for part in filter(None, str(rank.get("cpu_binding") or "").split(",")):
            lo, _, hi = part.partition("-")
            try:
                cpus.update(range(int(lo), int(hi or lo) + 1))
            except ValueError:
                return None
        if cpus:
            sets.append(frozenset(cpus))
    if not sets:
        return None
    if len(sets) > 1 and len(set(sets)) == 1 and len(sets[0]) > 1:
        return "unbound"
    lo, hi = min(map(len, sets)), max(map(len, sets))
    return f"{lo} CPU{'s' if hi > 1 else ''}/rank" if lo == hi else f"{lo}-{hi} CPUs/rank"


def configuration(context: dict, result: dict) -> dict:
    """What a result's figure depends on beyond the columns the store keeps of it (library, benchmark, operation,
    memory, strategy, ranks, path, size): the settings (settings()), the benchmark options that change the measured
    work (window, compute, tests, dtype, root, in place, buffer offsets, an explicit batch, the NIC pinning ...), how
    ranks were bound,
    and over how many hosts they ran. Results of one library whose configurations differ are different points."""
    options = (context.get("options") or {}).get("benchmark") or {}
    common = (context.get("options") or {}).get("common") or {}
    work = {k: v for k, v in options.items() if k not in NOT_CONFIGURATION_OPTIONS} if isinstance(options, dict) else {}
    if isinstance(common, dict) and common.get("batch"):  # 0: chosen by the engine, not asked for
        work["batch"] = common["batch"]
    if isinstance(common, dict) and common.get("nic") not in (None, "none"):  # --nic: the card each rank used
        work["nic"] = common["nic"]
    hosts = {r.get("host") for r in context.get("ranks") or [] if r.get("host")}
    transport = str(result.get("transport") or transport_of(context))
    out = {"settings": settings(context, transport), "options": dict(sorted(work.items())), "binding": _binding(context),
           "hosts": len(hosts) or None}
    return {k: v for k, v in out.items() if v not in (None, {}, "")}


@dataclass(frozen=True)
class RunConditions:
    """What a result's figure depends on beyond its other fields (configuration): the library's settings, the
    benchmark options that change the measured work, the binding and the number of hosts."""
    settings: dict
    options: dict
    binding: str | None
    hosts: int | None
    canonical: str  # as the store keeps it: canonical JSON, "" for none

    @classmethod
    def parse(cls, text: str | None) -> RunConditions:
        c = json.loads(text or "{}")
        return cls(c.get("settings") or {}, c.get("options") or {}, c.get("binding"), c.get("hosts"), text or "")

    def get(self, part: str):
        """A part by its name in configuration ("settings", "options", "binding", "hosts"), None when unset."""
        return getattr(self, part) or None

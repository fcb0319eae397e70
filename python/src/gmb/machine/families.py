# SPDX-License-Identifier: BSD-3-Clause
"""MPI families, one entry each: how a family is told from its version text, launched, configured for GPUs and what
of its environment are its settings. Detection, the launchers, the launch check, the records' settings and the
report all read this table: a new family is one entry here (and its tests)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class KnownDefect:
    """A defect of a family's library that the engine refuses to run into (src/core/known_issues.cpp, ``known_crash``,
    which names the family by its title: "Open MPI", "MPICH"): the versions it holds for, the MPI calls it hits (as
    the engine names them; empty: every call of a kind) and what happens."""
    versions: str
    calls: tuple[str, ...]
    what: str


@dataclass(frozen=True)
class Family:
    name: str  # how gmb names the family: a library's ``family``, the start of its label (openmpi-4.1.6)
    title: str  # how a person (and the engine's known_issues.cpp) names it: "Open MPI"
    # lower-case words of an MPI_Get_library_version text (or a compiler wrapper's) that name the family
    version_patterns: tuple[str, ...]
    launcher: str  # the registered launcher its libraries use unless declared otherwise
    srun_mpi: str | None  # srun's PMI plugin for it (None: the site's MpiDefault)
    setting_prefixes: tuple[str, ...]  # environment variables that are its settings (what can change a figure)
    behaviour_prefixes: tuple[str, ...]  # those the report shows as changing how it behaves (settings and wiring)
    # built-in GPU profiles (METHODOLOGY "Placement"): name -> launcher_args and env; a declared library may override
    gpu_profiles: dict[str, dict] = field(default_factory=dict)
    known_defects: tuple[KnownDefect, ...] = ()
    # the family it is built from: its version text names that one too (MVAPICH's and Cray MPICH's say MPICH)
    derived_from: str | None = None


FAMILIES: tuple[Family, ...] = (
    Family("openmpi", "Open MPI", ("open mpi",), launcher="mpirun", srun_mpi="pmix",
           setting_prefixes=("OMPI_MCA_",), behaviour_prefixes=("OMPI_", "PRTE_MCA_"),
           gpu_profiles={
               # UCX picks cuda_copy/cuda_ipc itself when built with CUDA. Its memory-type cache can take device
               # pointers for host memory (with CUDA 13 + UCX 1.22 the engine's awareness proof crashed until it was
               # turned off): the driver is asked about every pointer instead. Device buffers freed and allocated
               # again then arrive wrong (the doctor's fresh-buffer check); the engine allocates once per launch.
               "openmpi-ucx": {"launcher_args": ["--mca", "pml", "ucx"],
                               "env": {"UCX_MEMTYPE_CACHE": "n", "UCX_WARN_UNUSED_ENV_VARS": "n"}},
               "openmpi-ob1": {"launcher_args": ["--mca", "pml", "ob1", "--mca", "btl", "smcuda,self,vader"],
                               "env": {}}},
           known_defects=(
               KnownDefect("up to 5.0", (), "non-blocking and persistent reductions on device memory: "
                           "coll/libnbc applies the reduction on the CPU and reads device memory as host memory "
                           "(SIGSEGV in NBC_Progress) unless UCC is on"),)),
    Family("mpich", "MPICH", ("mpich",), launcher="mpiexec", srun_mpi="pmi2",
           setting_prefixes=("MPIR_CVAR_", "MPICH_"), behaviour_prefixes=("MPICH_", "MPIR_CVAR_"),
           gpu_profiles={
               # MPICH (ch4:ucx) built with CUDA crashes in UCX's shared-memory transport on device buffers while
               # UCX's memory-type cache is on (as Open MPI's pml ucx does). Its GPU support is on by default; the
               # profile says so for a site that turns it off. Both settings are harmless for an MPICH without CUDA
               # or without UCX.
               "mpich": {"launcher_args": [],
                         "env": {"MPIR_CVAR_ENABLE_GPU": "1", "UCX_MEMTYPE_CACHE": "n",
                                 "UCX_WARN_UNUSED_ENV_VARS": "n"}}},
           known_defects=(
               KnownDefect("4.0", ("MPI_Reduce",),
                           "MPI_IN_PLACE at a root other than 0 from 4 KiB on reads from the MPI_IN_PLACE address"),
               KnownDefect("4.0", ("MPI_Scatter_init",),
                           "the second start of a persistent scatter fails in MPI_Wait (\"Invalid communicator\")"),
               KnownDefect("4.0", ("MPI_Gather", "MPI_Igather", "MPI_Gather_init"),
                           "built with CUDA, the binomial gather packs a struct spanning device and host memory on "
                           "the CPU from 4 ranks on once a block reaches MPIR_CVAR_GATHER_VSMALL_MSG_SIZE"))),
    Family("mvapich", "MVAPICH", ("mvapich",), derived_from="mpich", launcher="mpiexec", srun_mpi="pmi2",
           setting_prefixes=("MV2_",), behaviour_prefixes=("MV2_",),
           gpu_profiles={"mvapich2-gdr": {"launcher_args": [], "env": {"MV2_USE_CUDA": "1"}}}),
    Family("cray-mpich", "Cray MPICH", ("cray",), derived_from="mpich", launcher="srun", srun_mpi=None,
           setting_prefixes=("MPICH_",), behaviour_prefixes=("MPICH_",),
           gpu_profiles={"cray-mpich": {"launcher_args": [], "env": {"MPICH_GPU_SUPPORT_ENABLED": "1"}}}),
    Family("intelmpi", "Intel MPI", ("intel",), launcher="mpiexec", srun_mpi="pmi2",
           setting_prefixes=("I_MPI_",), behaviour_prefixes=("I_MPI_",)),
)
BY_NAME = {f.name: f for f in FAMILIES}

# Environment variables of the runtimes below the MPI libraries (UCX, libfabric, PSM2, UCC, HCOLL, NCCL, CUDA, OpenMP)
# that are settings of a launch whatever its MPI family
RUNTIME_SETTING_PREFIXES = ("UCX_", "FI_", "PSM2_", "UCC_", "HCOLL_", "NCCL_", "CUDA_", "OMP_")
# ... and those the report shows as changing behaviour: the GPU data path's runtimes (UCX, NCCL, CUDA), then the
# fabrics' (libfabric, HCOLL, PSM2) and gmb's own
GPU_RUNTIME_BEHAVIOUR_PREFIXES = ("UCX_", "NCCL_", "CUDA_")
FABRIC_BEHAVIOUR_PREFIXES = ("FI_", "HCOLL_", "PSM2_", "GMB_")


def _prefixes(of_families: tuple[str, ...], runtime: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*of_families, *runtime]))


def setting_prefixes() -> tuple[str, ...]:
    """Prefixes of the environment variables that are settings of a library or its runtimes."""
    return _prefixes(tuple(p for f in FAMILIES for p in f.setting_prefixes), RUNTIME_SETTING_PREFIXES)


def behaviour_prefixes() -> tuple[str, ...]:
    """Prefixes of the environment variables that change how an MPI library, its runtimes or gmb behave, in the order
    the report lists them: the first family's (Open MPI), the GPU runtimes', the other families', the fabrics'."""
    first, *others = FAMILIES
    return _prefixes((*first.behaviour_prefixes, *GPU_RUNTIME_BEHAVIOUR_PREFIXES,
                      *(p for f in others for p in f.behaviour_prefixes)), FABRIC_BEHAVIOUR_PREFIXES)


def gpu_profiles() -> dict[str, dict]:
    """Every built-in GPU profile by name: its family, launcher_args and env."""
    return {name: {"family": f.name, **profile} for f in FAMILIES for name, profile in f.gpu_profiles.items()}


def title(family: str) -> str:
    """How a person names a family: "Open MPI" for openmpi (the name itself when unknown)."""
    return BY_NAME[family].title if family in BY_NAME else family


def launcher(family: str) -> str:
    """The registered launcher a library of ``family`` uses unless declared otherwise."""
    return BY_NAME[family].launcher if family in BY_NAME else "mpiexec"


def srun_mpi(family: str) -> str | None:
    return BY_NAME[family].srun_mpi if family in BY_NAME else None


def library_family(version_text: str) -> str | None:
    """The MPI family an MPI_Get_library_version text names (openmpi, mvapich, cray-mpich, mpich, intelmpi), or
    None. A library derived from another names that one too: the derived family is the one it is."""
    low = version_text.lower()
    named = [f for f in FAMILIES if any(p in low for p in f.version_patterns)]
    derived = [f for f in named if f.derived_from]
    return (derived or named)[0].name if named else None


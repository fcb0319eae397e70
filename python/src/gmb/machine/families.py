# SPDX-License-Identifier: BSD-3-Clause
"""MPI families, one entry each: how a family is told from its version text, launched, configured for GPUs and what
of its environment are its settings. Detection, the launchers, the launch check, the records' settings and the
report all read this table: a new family is one entry here (and its tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import family_tools
from . import knobs as knobs_mod


@dataclass(frozen=True)
class KnownDefect:
    """A defect of a family's library that the engine refuses to run into (src/portable/known_issues.cpp, ``known_crash``,
    which names the family by its title: "Open MPI", "MPICH"): the versions it holds for, the MPI calls it hits (as
    the engine names them; empty: every call of a kind) and what happens."""
    versions: str
    calls: tuple[str, ...]
    what: str


@dataclass(frozen=True)
class VersionTool:
    """A program installed beside a family's launcher that says the library's version more exactly than the
    launcher does (MPICH's ``mpichversion``): its name, and the pattern whose first group is the version."""
    program: str
    pattern: str


@dataclass(frozen=True)
class GpuConfiguration:
    """One configuration a campaign generated on a GPU node measures a found library of the family as: under the
    library's name and ``-<suffix>``, with the GPU profile ``profile``; ``fit`` (launcher arguments, the library's
    components -> launcher arguments) cuts the profile's arguments to what the build has."""
    suffix: str
    profile: str
    fit: Callable[[list[str], dict[str, set[str]]], list[str]] | None = None


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
    # the family it is built from: its version text names that one too (MVAPICH's and Cray MPICH's say MPICH), and a
    # library of one may report itself as the other
    derived_from: str | None = None
    # detection (detect.py): lower-case words of its launcher's ``--version`` text that name it (none: the launcher
    # does not say, as srun), patterns whose first group is the version in that text (tried in turn, after
    # version_tool), the names its launchers have on PATH besides mpirun and mpiexec, the Debian alternatives
    # suffix of its programs (mpirun.openmpi, mpicc.openmpi), and where it is commonly installed
    launcher_words: tuple[str, ...] = ()
    launcher_version: tuple[str, ...] = ()
    version_tool: VersionTool | None = None
    launcher_names: tuple[str, ...] = ()
    alternatives_suffix: str | None = None
    install_globs: tuple[str, ...] = ()
    # its compiler wrapper (identity.py): the flag that lists its library directories alone (else the -L and run-path
    # flags of -show / -showme count), the flags that make it name its library and version
    wrapper_libdirs_flag: str | None = None
    wrapper_version_flags: tuple[str, ...] = ("-v",)
    # what its build has (mpilibs.py), asked of its own tools in the launcher's directory with the library's
    # environment: CUDA awareness (None: unknown; the engine's doctor proves it), components by framework
    built_with_cuda: Callable[[Path, dict[str, str]], bool | None] | None = None
    built_without_cuda: str | None = None  # how the doctor says that query's "no" (it names the tool and the answer)
    components: Callable[[Path, dict[str, str]], dict[str, set[str]]] | None = None
    # a found library on a GPU node (mpilibs.py): the GPU profile it runs with under its own name, and the
    # configurations a generated campaign measures instead where the build has the components they need
    gpu_profile: str | None = None
    gpu_configurations: tuple[GpuConfiguration, ...] = ()
    gpu_configurations_need: tuple[tuple[str, str], ...] = ()  # (framework, component)
    gpu_configuration_kind: str = "GPU"  # what its configurations differ in, as a person says it: "a pml configuration"
    # settings `gmb tune` searches (knobs.py): its own and those of the runtimes below it; how its library lists its
    # parameters (bin directory, environment -> layer -> listing); the layers a configuration of it uses (its
    # settings, launcher's --mca included, and its MPI_Get_library_version text)
    knobs: tuple[knobs_mod.Knob, ...] = ()
    knob_listings: Callable[[Path, dict[str, str]], dict[str, knobs_mod.Listing]] | None = None
    knob_layers: Callable[[dict[str, str], str], set[str]] | None = None


# How MPICH's launcher (Hydra) and mpichversion say its version; MVAPICH ships the same programs
HYDRA_VERSION = (r"Version:\s*(\S+)",)
MPICHVERSION = VersionTool("mpichversion", r"MPICH Version:\s*(\S+)")

FAMILIES: tuple[Family, ...] = (
    Family("openmpi", "Open MPI", ("open mpi",), launcher="mpirun", srun_mpi="pmix",
           setting_prefixes=("OMPI_MCA_",), behaviour_prefixes=("OMPI_", "PRTE_MCA_"),
           # "mpirun (Open MPI) 4.1.6"; ORTE's and PRRTE's mpirun name their runtime
           launcher_words=("open mpi", "openrte", "open-rte"),
           launcher_version=(r"\)\s*(\d+\.\d+(?:\.\d+)?\S*)", r"(\d+\.\d+\.\d+\S*)"),
           launcher_names=("mpirun.openmpi", "mpiexec.openmpi"), alternatives_suffix=".openmpi",
           install_globs=("/opt/*/ompi/bin/mpirun", "/opt/openmpi*/bin/mpirun"),
           wrapper_libdirs_flag="-showme:libdirs", wrapper_version_flags=("-showme:version", "-v"),
           built_with_cuda=family_tools.ompi_info_cuda_support, components=family_tools.ompi_info_components,
           built_without_cuda="ompi_info says mpi_built_with_cuda_support=false",
           knobs=knobs_mod.OPEN_MPI_KNOBS + knobs_mod.UCX_KNOBS, knob_listings=knobs_mod.openmpi_listings,
           knob_layers=family_tools.openmpi_layers,
           # left to itself the library picks one pml; which one moves GPU data faster, or moves it at all, is what a
           # GPU node's campaign is for: where it has UCX, both are measured (one installation, one engine)
           gpu_configurations=(GpuConfiguration("ob1", "openmpi-ob1", fit=family_tools.btls_present),
                               GpuConfiguration("ucx", "openmpi-ucx")),
           gpu_configurations_need=(("pml", "ucx"),), gpu_configuration_kind="pml",
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
           launcher_words=("hydra", "mpich"), launcher_version=HYDRA_VERSION, version_tool=MPICHVERSION,
           launcher_names=("mpiexec.mpich", "mpirun.mpich", "mpiexec.hydra"), alternatives_suffix=".mpich",
           install_globs=("/opt/mpich*/bin/mpiexec", "/opt/*/mpich/bin/mpiexec"),
           knobs=knobs_mod.MPICH_KNOBS + knobs_mod.UCX_KNOBS, knob_listings=knobs_mod.mpich_listings,
           knob_layers=family_tools.mpich_layers,
           # without it an MPICH built with CUDA over UCX crashes on device memory
           gpu_profile="mpich",
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
           launcher_words=("mvapich",), launcher_version=HYDRA_VERSION, version_tool=MPICHVERSION,
           gpu_profiles={"mvapich2-gdr": {"launcher_args": [], "env": {"MV2_USE_CUDA": "1"}}}),
    Family("cray-mpich", "Cray MPICH", ("cray",), derived_from="mpich", launcher="srun", srun_mpi=None,
           setting_prefixes=("MPICH_",), behaviour_prefixes=("MPICH_",),
           gpu_profiles={"cray-mpich": {"launcher_args": [], "env": {"MPICH_GPU_SUPPORT_ENABLED": "1"}}}),
    Family("intelmpi", "Intel MPI", ("intel",), launcher="mpiexec", srun_mpi="pmi2",
           setting_prefixes=("I_MPI_",), behaviour_prefixes=("I_MPI_",),
           launcher_words=("intel",), launcher_version=(r"(\d{4}(?:\.\d+)*)",)),
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


def of(family: str) -> Family:
    """The family's entry; a family gmb does not know ("unknown", a declared one) gets one that knows nothing of it:
    named as it is, launched by mpiexec, srun's default PMI plugin, no tools, profiles or configurations."""
    return BY_NAME.get(family) or Family(family, family, (), launcher="mpiexec", srun_mpi=None,
                                         setting_prefixes=(), behaviour_prefixes=())


def title(family: str) -> str:
    """How a person names a family: "Open MPI" for openmpi (the name itself when unknown)."""
    return of(family).title


def launcher(family: str) -> str:
    """The registered launcher a library of ``family`` uses unless declared otherwise."""
    return of(family).launcher


def srun_mpi(family: str) -> str | None:
    return of(family).srun_mpi


def _named(text: str, words: Callable[[Family], tuple[str, ...]]) -> Family | None:
    """The family whose ``words`` the text holds; a library derived from another names that one too: the derived
    family is the one it is. Else the first in the table."""
    low = text.lower()
    named = [f for f in FAMILIES if any(w in low for w in words(f))]
    derived = [f for f in named if f.derived_from]
    return (derived or named)[0] if named else None


def library_family(version_text: str) -> str | None:
    """The MPI family an MPI_Get_library_version text names (openmpi, mvapich, cray-mpich, mpich, intelmpi), or
    None."""
    named = _named(version_text, lambda f: f.version_patterns)
    return named.name if named else None


def launcher_family(version_text: str) -> Family | None:
    """The family whose launcher's ``--version`` says ``version_text``, or None (srun's says no MPI)."""
    return _named(version_text, lambda f: f.launcher_words)


def one_library(family: str, other: str) -> bool:
    """Whether a library of ``family`` may name itself ``other``: the same family, or one derived from the other
    (a Cray MPICH declared as an MPICH)."""
    derived = {(f.name, f.derived_from) for f in FAMILIES if f.derived_from}
    return family == other or (family, other) in derived or (other, family) in derived


# SPDX-License-Identifier: BSD-3-Clause
"""MPI libraries and their GPU configurations.

A *library* here is an MPI installation plus how to run it (launcher, launcher arguments, environment).
One installation can appear as several libraries (e.g. Open MPI with ``pml ucx`` and with ``ob1``). The ones found
on the machine come from detect.py, the declared ones from libraries files (libraries.py).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import families, identity

# Built-in GPU profiles (METHODOLOGY "Placement"), from the family table; a declared library may override any field.
PROFILES: dict[str, dict] = families.gpu_profiles()


class ConfigError(ValueError):
    pass


@dataclass
class MpiLibrary:
    name: str
    family: str  # openmpi | mpich | mvapich | cray-mpich | intelmpi | unknown
    version: str
    prefix: str
    launcher_path: str  # the mpirun/mpiexec/srun executable
    launcher: str = ""  # registered launcher name (launchers.py)
    cxx: str | None = None  # mpicxx of this library
    cc: str | None = None
    launcher_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    profile: str | None = None
    source: str = "detected"  # detected | declared
    cuda_aware: bool | None = None  # static answer (ompi_info) or declared; None = unknown
    engine: str | None = None  # explicit engine binary (else the build cache)
    # how the engine moves data: "mpi", or "nccl" (an NCCL "library": launched, built and bootstrapped through
    # the MPI library named by ``via``, whose launcher, environment and engine it shares)
    transport: str = "mpi"
    via: str | None = None
    env_unset: list[str] = field(default_factory=list)  # variables removed from this library's processes
    path_remove: list[str] = field(default_factory=list)  # PATH / LD_LIBRARY_PATH entries under these dropped
    cmake_args: list[str] = field(default_factory=list)  # extra CMake arguments for this installation's engine
    # where this installation's MPI library files are (identity.library_dirs): a launch that loaded its MPI from
    # anywhere else ran another library
    library_dirs: list[str] = field(default_factory=list)
    # library and bin directories of the other installations found (identity.isolate), removed from PATH and
    # LD_LIBRARY_PATH of this library's processes
    isolate_from: list[str] = field(default_factory=list)

    @property
    def identity(self) -> str:
        """Stable identity of the installation (what the engine build depends on)."""
        return f"{self.family}-{self.version}@{self.prefix}:{self.cc or self.cxx or ''}"

    @property
    def build_hash(self) -> str:
        return hashlib.sha256(self.identity.encode()).hexdigest()[:16]

    def describe(self) -> dict:
        return {"name": self.name, "family": self.family, "version": self.version, "prefix": self.prefix,
                "launcher": self.launcher, "launcher_path": self.launcher_path, "cxx": self.cxx,
                "launcher_args": self.launcher_args, "env": self.env, "profile": self.profile,
                "source": self.source, "cuda_aware": self.cuda_aware, "identity": self.identity,
                "build_hash": self.build_hash, "transport": self.transport, "via": self.via,
                "env_unset": self.env_unset, "path_remove": self.path_remove, "cmake_args": self.cmake_args,
                "library_dirs": self.library_dirs, "isolate_from": self.isolate_from}

    def process_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment this library's processes (launcher, compiler wrappers, engine) run with: ``base``
        (default os.environ) without ``env_unset`` variables, without PATH / LD_LIBRARY_PATH entries under a
        ``path_remove`` prefix or naming another installation's directory (``isolate_from``), then the library's
        ``env`` on top. E.g. a system Open MPI next to another Open MPI whose lib/ is on LD_LIBRARY_PATH (same
        libmpi.so.40 soname) must not see that lib/."""
        env = dict(os.environ if base is None else base)
        for name in self.env_unset:
            env.pop(name, None)
        for name in PATH_VARIABLES:
            if name in env:
                kept = [d for d in env[name].split(os.pathsep) if d and not _under_any(d, self.path_remove)]
                env[name] = identity.without_dirs(os.pathsep.join(kept), self.isolate_from)
        env.update(self.env)
        return env

    def find_library_dirs(self) -> None:
        """Fill ``library_dirs`` from the compiler wrapper (or the prefix), in the library's own environment."""
        env = replace(self, isolate_from=[]).process_env()
        self.library_dirs = identity.library_dirs(identity.wrapper_library_dirs(self.cc, self.family, env), self.prefix)


PATH_VARIABLES = ("PATH", "LD_LIBRARY_PATH")
TRANSPORTS = ("mpi", "nccl")


def _under_any(directory: str, prefixes: list[str]) -> bool:
    d = os.path.normpath(directory)
    return any(d == os.path.normpath(p) or d.startswith(os.path.normpath(p) + os.sep) for p in prefixes)


def tool_output(argv: list[str], timeout: float = 15, env: dict[str, str] | None = None) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        return (p.stdout or "") + (p.stderr or "")
    except (OSError, subprocess.TimeoutExpired):
        return ""


def cuda_aware_static(lib: MpiLibrary) -> bool | None:
    """Open MPI: ompi_info's mpi_built_with_cuda_support. Others: unknown (the engine's doctor proves it)."""
    if lib.family != "openmpi":
        return None
    d = Path(lib.launcher_path).parent
    info = d / "ompi_info"
    if not info.exists():
        return None
    out = tool_output([str(info), "--parsable", "--all"], timeout=30, env=lib.process_env())
    m = re.search(r"mpi_built_with_cuda_support:value:(true|false)", out)
    return (m.group(1) == "true") if m else None


def ompi_components(lib: MpiLibrary) -> dict[str, set[str]]:
    """Open MPI's MCA components by framework (``{"pml": {"ob1", "ucx", ...}, "btl": {...}}``), from ompi_info run in
    the library's environment; {} when it cannot be asked."""
    info = Path(lib.launcher_path).parent / "ompi_info"
    if lib.family != "openmpi" or not info.exists():
        return {}
    found: dict[str, set[str]] = {}
    for m in re.finditer(r"^mca:(\w+):(\w+):", tool_output([str(info), "--parsable"], timeout=30, env=lib.process_env()),
                         re.MULTILINE):
        found.setdefault(m.group(1), set()).add(m.group(2))
    return found


# the pmls of an Open MPI with UCX that a GPU node's generated campaign measures as configurations of their own
PMLS = ("ob1", "ucx")


def configuration_names(libs: list[MpiLibrary]) -> dict[str, str]:
    """The names gpu_configurations may give (configuration name -> the installation's name), for each Open MPI."""
    return {_configuration_name(lib, pml): lib.name for lib in libs if lib.family == "openmpi" for pml in PMLS}


def _configuration_name(lib: MpiLibrary, pml: str) -> str:
    return f"{lib.name}-{pml}"


def gpu_configurations(libs: list[MpiLibrary]) -> list[MpiLibrary]:
    """The configurations a GPU node's generated campaign measures, from the libraries found there (not declared, no
    profile): each Open MPI that has the UCX pml becomes two, measured under names of their own, "<name>-ob1" (Open
    MPI's own transports: profile openmpi-ob1, its BTL list cut to the components this build has) and "<name>-ucx"
    (profile openmpi-ucx): left to itself the library picks one pml, and which one moves GPU data faster, or moves it
    at all, is what a GPU node's campaign is for; both share one engine (one installation). Each MPICH runs with its
    GPU profile (mpich), under its own name: without it an MPICH built with CUDA over UCX crashes on device memory.
    Other libraries are kept as they are."""
    out = []
    for lib in libs:
        components = ompi_components(lib) if lib.family == "openmpi" and _found_as_is(lib) else {}
        if "ucx" not in components.get("pml", set()):
            out.append(with_gpu_support(lib))
            continue
        for pml in PMLS:
            conf = apply_profile(replace(lib, name=_configuration_name(lib, pml)), f"openmpi-{pml}")
            conf.launcher_args = _btl_present(conf.launcher_args, components.get("btl", set()))
            out.append(conf)
    return out


def with_gpu_support(lib: MpiLibrary) -> MpiLibrary:
    """A GPU node's MPICH found as is (not declared, no profile): with its GPU profile, under the same name. Others
    as they are."""
    return apply_profile(lib, "mpich") if lib.family == "mpich" and _found_as_is(lib) else lib


def _found_as_is(lib: MpiLibrary) -> bool:
    return lib.source == "detected" and not lib.profile and lib.transport == "mpi"


def _btl_present(launcher_args: list[str], btls: set[str]) -> list[str]:
    """``--mca btl LIST`` of a pml ob1 configuration made of the BTLs this build has (Open MPI refuses to start when
    one named is missing): smcuda (device buffers between the processes of a node; CUDA builds only), else the
    shared-memory BTL (sm, called vader before Open MPI 5), then self, then tcp for other nodes."""
    if not btls:
        return list(launcher_args)
    local = next((b for b in ("smcuda", "sm", "vader") if b in btls), None)
    wanted = ",".join(b for b in (local, "self", "tcp" if "tcp" in btls else None) if b)
    args = list(launcher_args)
    for i in range(len(args) - 2):
        if args[i] == "--mca" and args[i + 1] == "btl":
            args[i + 2] = wanted
    return args


def apply_profile(lib: MpiLibrary, profile: str) -> MpiLibrary:
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    p = PROFILES[profile]
    return replace(lib, profile=profile, launcher_args=[*p["launcher_args"], *lib.launcher_args],
                   env={**p["env"], **lib.env})


def nccl_library(via: MpiLibrary, name: str = "nccl", env: dict | None = None, launcher_args: list[str] = (),
                 source: str = "derived") -> MpiLibrary:
    """An NCCL transport library on top of the MPI library ``via``: same installation (so the same engine),
    launcher, environment; NCCL does not need a CUDA-aware MPI, so CUDA awareness does not apply."""
    return replace(via, name=name, transport="nccl", via=via.name, source=source, cuda_aware=None,
                   env={**via.env, **(env or {})}, launcher_args=[*via.launcher_args, *launcher_args],
                   env_unset=list(via.env_unset), path_remove=list(via.path_remove), cmake_args=list(via.cmake_args))

# SPDX-License-Identifier: BSD-3-Clause
"""MPI libraries and their GPU configurations.

A *library* here is an MPI installation plus how to run it (launcher, launcher arguments, environment).
One installation can appear as several libraries (e.g. Open MPI with ``pml ucx`` and with ``ob1``). The ones found
on the machine come from detect.py, the declared ones from libraries files (libraries.py).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import families, identity

# Built-in GPU profiles (METHODOLOGY "Placement"), from the family table; a declared library may override any field.
PROFILES: dict[str, dict] = families.gpu_profiles()


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class MpiLibrary:
    """One library, never changed once built: each step that completes one (its family, its library directories, its
    profile, the installations kept out of its environment) returns a new one (dataclasses.replace)."""

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
    # library and bin directories of the other installations found (identity.isolated), removed from PATH and
    # LD_LIBRARY_PATH of this library's processes
    isolate_from: list[str] = field(default_factory=list)
    # knobs a user added for `gmb tune` to search beside the family's catalogue: NAME -> the values to try
    knobs: dict[str, list[str]] = field(default_factory=dict)

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
                "library_dirs": self.library_dirs, "isolate_from": self.isolate_from,
                **({"knobs": self.knobs} if self.knobs else {})}

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

    def with_library_dirs(self) -> MpiLibrary:
        """This library with ``library_dirs`` from the compiler wrapper (or the prefix), asked in its own
        environment."""
        env = replace(self, isolate_from=[]).process_env()
        dirs = identity.library_dirs(identity.wrapper_library_dirs(self.cc, self.family, env), self.prefix)
        return replace(self, library_dirs=dirs)


PATH_VARIABLES = ("PATH", "LD_LIBRARY_PATH")
TRANSPORTS = ("mpi", "nccl")


def _under_any(directory: str, prefixes: list[str]) -> bool:
    d = os.path.normpath(directory)
    return any(d == os.path.normpath(p) or d.startswith(os.path.normpath(p) + os.sep) for p in prefixes)


def cuda_aware_static(lib: MpiLibrary) -> bool | None:
    """What the family's own tools say of the build's CUDA awareness (Open MPI: ompi_info's
    mpi_built_with_cuda_support); None when it has none to ask (the engine's doctor proves it)."""
    query = families.of(lib.family).built_with_cuda
    return query(Path(lib.launcher_path).parent, lib.process_env()) if query else None


def not_cuda_aware_because(lib: MpiLibrary) -> str:
    """Who says a library is not CUDA-aware: its family's tool (Open MPI's ompi_info), else its declaration."""
    return families.of(lib.family).built_without_cuda or "declared cuda_aware = false"


def components(lib: MpiLibrary) -> dict[str, set[str]]:
    """The components of the build by framework, as the family's own tools list them (Open MPI's MCA components:
    ``{"pml": {"ob1", "ucx", ...}, "btl": {...}}``); {} when they cannot be asked."""
    query = families.of(lib.family).components
    return query(Path(lib.launcher_path).parent, lib.process_env()) if query else {}


def configuration_names(libs: list[MpiLibrary]) -> dict[str, str]:
    """The names gpu_configurations may give (configuration name -> the installation's name)."""
    return {_configuration_name(lib, conf): lib.name
            for lib in libs for conf in families.of(lib.family).gpu_configurations}


def _configuration_name(lib: MpiLibrary, conf: families.GpuConfiguration) -> str:
    return f"{lib.name}-{conf.suffix}"


def gpu_configurations(libs: list[MpiLibrary]) -> list[MpiLibrary]:
    """The configurations a GPU node's generated campaign measures, from the libraries found there (not declared, no
    profile): a library whose build has the components its family's GPU configurations need becomes one library per
    configuration, measured under a name of its own (an Open MPI with UCX: "<name>-ob1", profile openmpi-ob1, its BTL
    list cut to the components this build has, and "<name>-ucx", profile openmpi-ucx), all sharing one engine (one
    installation); any other is measured with its family's GPU profile (with_gpu_support)."""
    out = []
    for lib in libs:
        family = families.of(lib.family)
        split = bool(family.gpu_configurations) and _found_as_is(lib)
        built = components(lib) if split else {}
        if not split or not all(c in built.get(framework, set()) for framework, c in family.gpu_configurations_need):
            out.append(with_gpu_support(lib))
            continue
        for conf in family.gpu_configurations:
            configured = apply_profile(replace(lib, name=_configuration_name(lib, conf)), conf.profile)
            if conf.fit:
                configured = replace(configured, launcher_args=conf.fit(configured.launcher_args, built))
            out.append(configured)
    return out


def with_gpu_support(lib: MpiLibrary) -> MpiLibrary:
    """A GPU node's library found as is (not declared, no profile) with its family's GPU profile (MPICH's), under the
    same name. Others as they are."""
    profile = families.of(lib.family).gpu_profile
    return apply_profile(lib, profile) if profile and _found_as_is(lib) else lib


def _found_as_is(lib: MpiLibrary) -> bool:
    return lib.source == "detected" and not lib.profile and lib.transport == "mpi"


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
    return replace(via, name=name, transport="nccl", via=via.name, source=source, cuda_aware=None, knobs={},
                   env={**via.env, **(env or {})}, launcher_args=[*via.launcher_args, *launcher_args],
                   env_unset=list(via.env_unset), path_remove=list(via.path_remove), cmake_args=list(via.cmake_args))

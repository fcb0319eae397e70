# SPDX-License-Identifier: BSD-3-Clause
"""Which MPI library a launch really ran, and keeping each library's launches to their own library.

Several MPI installations can share a soname (Open MPI's ``libmpi.so.40``, MPICH's ``libmpi.so.12``), so an
``LD_LIBRARY_PATH`` set up for one (a module, a vendor's env script) swaps it in under an engine built for
another, and the figures of one library land under the other's name. Three layers keep that from happening:

1. **Run path** (the engine's build): the engine searches its own MPI's library directories before
   ``LD_LIBRARY_PATH`` (``GMB_PIN_MPI_LIBRARY``, cmake/GmbMpiLibrary.cmake).
2. **Environment**: each library's processes (launcher, engine, compiler wrappers) run without the library and
   bin directories of every other MPI installation found on the machine (``MpiLibrary.isolate_from``).
3. **Check**: every engine names the library object it loaded, on every rank (``mpi.library_object``,
   ``ranks[].mpi_library``); a launch whose library lies outside the planned library's directories, or whose
   version string disagrees with the planned library's version, is a failed launch (``wrong-library``) whose
   figures are not stored. ``gmb ingest`` applies the same check to records it is given a known library for, and
   stores records under a name it knows no library by only when the name says what the records say
   (``unknown_name_mismatch``).

A library's directories are the ones its compiler wrapper reports (``mpicc -showme:libdirs``, ``mpicc -show``),
each also with symbolic links resolved and with the directory its ``libmpi`` really lives in.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

from . import families

# Directories every program needs on PATH: never removed, even when another MPI's launcher lives there.
SYSTEM_BIN_DIRS = ("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin")
MPI_LIBRARY_FILE = re.compile(r"^lib(mpi|mpich|mpi_abi)\.so")
WRONG_LIBRARY = "wrong-library"  # the launch status of a mismatch


def _real(path: str) -> str:
    return os.path.realpath(path)


def under(path: str, directories) -> bool:
    """``path`` (symbolic links resolved) lies in one of ``directories`` (or below it)."""
    p = _real(path)
    for d in directories:
        d = _real(d)
        if p == d or p.startswith(d.rstrip(os.sep) + os.sep):
            return True
    return False


@functools.lru_cache(maxsize=None)
def _wrapper_output(argv: tuple[str, ...], env_items: tuple[tuple[str, str], ...]) -> str:
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=30, env=dict(env_items))
        return p.stdout if p.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def wrapper_library_dirs(cc: str | None, family: str, env: dict[str, str]) -> list[str]:
    """The library directories the compiler wrapper ``cc`` links from: what the family's flag for them says (Open
    MPI's ``-showme:libdirs``), else the ``-L`` and run-path flags of ``-show`` / ``-showme`` (MPICH, MVAPICH, Intel
    MPI)."""
    if not cc:
        return []
    items = tuple(sorted(env.items()))
    dirs: list[str] = []
    libdirs_flag = families.of(family).wrapper_libdirs_flag
    if libdirs_flag:
        dirs = _wrapper_output((cc, libdirs_flag), items).split()
    if not dirs:
        for flag in ("-show", "-showme"):
            out = _wrapper_output((cc, flag), items)
            dirs = re.findall(r"(?:^|\s)-L\s*(\S+)", out) + re.findall(r"-rpath[,=](\S+?)(?:[,\s]|$)", out)
            if dirs:
                break
    return [d for d in dict.fromkeys(dirs) if os.path.isabs(d)]


def library_dirs(wrapper_dirs: list[str], prefix: str) -> list[str]:
    """Where an installation's MPI library files are: the wrapper's directories (else ``prefix``/lib, lib64), each
    as given and with links resolved, and the directory every ``libmpi*.so*`` in them really lives in (Debian's
    ``openmpi/lib`` holds links into ``/usr/lib/x86_64-linux-gnu``). A wrapper directory without an MPI library file
    is a dependency's (an MPICH built against a UCX elsewhere names that UCX's lib/ too), shared with other
    installations, and left out: each installation's processes are kept away from the others' directories, and an Open
    MPI that finds its UCX through LD_LIBRARY_PATH would lose it. Where none holds one, all of them count."""
    dirs = list(wrapper_dirs) or [str(Path(prefix) / d) for d in ("lib", "lib64") if (Path(prefix) / d).is_dir()]
    found: dict[str, list[str]] = {}
    for d in dirs:
        if os.path.isdir(d):
            found[d] = [os.path.dirname(_real(os.path.join(d, f))) for f in sorted(os.listdir(d))
                        if MPI_LIBRARY_FILE.match(f)]
    holding = [d for d, files in found.items() if files] or list(found)
    out: list[str] = []
    for d in holding:
        out += [os.path.normpath(d), _real(d), *found[d]]
    return list(dict.fromkeys(out))


def bin_dirs(lib) -> list[str]:
    """Where an installation's launcher and wrappers are (as given and with links resolved)."""
    out = []
    for exe in (lib.launcher_path, lib.cc, lib.cxx):
        if exe and os.path.isabs(exe):
            out += [os.path.dirname(exe), os.path.dirname(_real(exe))]
    return list(dict.fromkeys(out))


def isolated(libs: list) -> list:
    """``libs``, each with its ``isolate_from``: the library and bin directories of every other installation in
    ``libs`` (declared or detected), less the library's own and the system's bin directories."""
    out = []
    for lib in libs:
        own = set(lib.library_dirs) | set(bin_dirs(lib))
        foreign: list[str] = []
        for other in libs:
            if other is lib:
                continue
            foreign += [d for d in [*other.library_dirs, *bin_dirs(other)]
                        if d not in own and d not in SYSTEM_BIN_DIRS]
        out.append(replace(lib, isolate_from=list(dict.fromkeys(foreign))))
    return out


def without_dirs(value: str, directories: list[str]) -> str:
    """A PATH-like value without the entries that are (links to) one of ``directories``."""
    if not directories:
        return value
    drop = {os.path.normpath(d) for d in directories} | {_real(d) for d in directories}
    kept = [e for e in value.split(os.pathsep) if e and os.path.normpath(e) not in drop and _real(e) not in drop]
    return os.pathsep.join(kept)


# --------------------------------------------------------------------------- the check
def _version_in(version: str, text: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(version)}(?![\d])", text) is not None


def first_line(text: str) -> str:
    return next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")


def library_object(context: dict) -> dict:
    """Rank 0's ``mpi.library_object`` of a context record ({} for engines before it)."""
    return (context.get("mpi") or {}).get("library_object") or {}


def loaded_objects(context: dict) -> set[str]:
    """Every MPI library file a context record names: rank 0's ``mpi.library_object`` and each rank's
    ``mpi_library`` (engines before these fields name none)."""
    obj = library_object(context)
    out = {obj.get("loaded_realpath") or obj.get("loaded")}
    out |= {r.get("mpi_library") for r in context.get("ranks") or [] if isinstance(r, dict)}
    return {p for p in out if p}


def expected(lib) -> str:
    """How a library is named in a mismatch: "Open MPI 4.1.6 from /usr"."""
    return f"{families.title(lib.family)} {lib.version} from {lib.prefix}"


def mismatch(lib, context: dict) -> str | None:
    """Why the run a context record describes did not run ``lib`` (None when it did, or when the record cannot
    tell): a library object outside the library's directories (its prefix when they are unknown) on any rank, a
    version string of another family, or one that does not contain the library's version. NCCL libraries are
    checked as the MPI library they are launched through."""
    text = (context.get("mpi") or {}).get("library_version") or ""
    problems = []
    allowed = lib.library_dirs or ([lib.prefix] if lib.prefix else [])
    outside = sorted(path for path in loaded_objects(context) if allowed and not under(path, allowed))
    if outside:
        problems.append("loaded " + ", ".join(outside))
    family = families.library_family(text)
    known_family = lib.family not in ("", "unknown")
    if text and known_family and family and not families.one_library(lib.family, family):
        problems.append("its version string names another library")
    elif text and lib.version not in ("", "unknown") and not _version_in(lib.version, text):
        problems.append(f"its version string does not say {lib.version}")
    if not problems:
        return None
    said = first_line(text)
    return f"expected {expected(lib)}, {'; '.join(problems)}" + (f" ({said})" if said else "")


_VERSION = re.compile(r"\d+(?:\.\d+)+")


def unknown_name_mismatch(name: str, context: dict) -> str | None:
    """Why the run a context record describes cannot be stored under ``name``, a name gmb knows no library by (neither
    found nor declared), or None: the name must contain the family of the run's own label (library_label:
    openmpi-4.1.4, mpich-4.0.2, nccl-2.28.9) and, where it holds a version, that version (or its start: 4.1 for
    4.1.4). A name that cannot be checked so is not trusted: its figures would be stored under a library they may
    not be."""
    label = library_label(context)
    version = _VERSION.search(label)
    family = label[:version.start()].rstrip("-") if version else label
    named = _VERSION.search(name)
    if family in name.lower().replace(" ", "") and not (
            named and version and version.group() != named.group() and
            not version.group().startswith(named.group() + ".")):
        return None
    return f"its records say {label}"


def check_engine(lib, mpi: dict | None) -> str | None:
    """The same check on the ``mpi`` object of ``gmb-bench list --format json`` run in the library's environment:
    what the engine will load when launched for ``lib`` (None when it is the library's own, or the engine is too old
    to say)."""
    if not isinstance(mpi, dict):
        return None
    return mismatch(lib, {"mpi": mpi})


def installed_engine_mismatch(lib, mpi: dict | None) -> str | None:
    """Why an installed engine (``$GMB_ENGINE``, a ``gmb-bench`` on PATH) was not built for ``lib`` (None when it
    was), from the ``mpi`` object of its ``gmb-bench list --format json`` run in the library's environment: the MPI
    library it was linked against (``library_object.linked``, from its build info) must lie in the library's
    directories (its prefix when they are unknown), and what it loads there must pass ``check_engine`` (the loaded
    object, the version string's family and version). An engine that cannot say which MPI it was built against is
    not taken for any library (declare it with ``engine = ...`` to use it anyway)."""
    obj = mpi.get("library_object") if isinstance(mpi, dict) else None
    obj = obj if isinstance(obj, dict) else {}
    linked = obj.get("linked_realpath") or obj.get("linked")
    if not linked:
        return ("it does not say which MPI library it was built against (no mpi.library_object.linked in its "
                "`list --format json`: an older engine); declare it with engine = \"...\" to use it anyway")
    allowed = lib.library_dirs or ([lib.prefix] if lib.prefix else [])
    if allowed and not under(linked, allowed):
        said = first_line(mpi.get("library_version") or "")
        return f"built against {linked}, not {expected(lib)}" + (f" ({said})" if said else "")
    return check_engine(lib, mpi)



def transport_of(context: dict) -> str:
    """The engine's transport for this run, from the context's ``options.benchmark.transport`` (the engine's
    benchmark options; each result repeats it in its own ``transport``); "mpi" when absent (engines before NCCL,
    benchmarks without a transport)."""
    bench_opts = (context.get("options") or {}).get("benchmark") or {}
    return str(bench_opts.get("transport") or "mpi") if isinstance(bench_opts, dict) else "mpi"


def nccl_label(context: dict) -> str:
    """'nccl-2.28.9' from the run-time NCCL version the engine records in the context (``nccl.version``),
    else 'nccl'."""
    nccl = context.get("nccl") or {}
    version = nccl.get("version") if isinstance(nccl, dict) else None
    return f"nccl-{version}" if version else "nccl"


def library_label(context: dict) -> str:
    """A short library name from a context's MPI version string, e.g. 'Open MPI v4.1.4' -> openmpi-4.1.4.
    A run over the NCCL transport is labelled by NCCL (nccl_label), not by the MPI that bootstrapped it."""
    if transport_of(context) == "nccl":
        return nccl_label(context)
    text = (context.get("mpi") or {}).get("library_version", "") or ""
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", text)
    version = m.group(1) if m else "unknown"
    family = families.library_family(text)
    if family:
        return f"{family}-{version}"
    return text.split()[0].lower() if text.strip() else "unknown"


# --------------------------------------------------------------------------- launcher and wrapper
def wrapper_says(cc: str, family: str, env: dict[str, str]) -> str:
    """The compiler wrapper's own account of its library, asked with the family's flags: Open MPI's
    ``-showme:version`` ("mpicc: Open MPI 4.1.4 (Language: C)"), MPICH's ``-v`` ("mpicc for MPICH version 4.0.2"); ""
    when it says nothing."""
    items = tuple(sorted(env.items()))
    for flag in families.of(family).wrapper_version_flags:
        line = next((ln for ln in _wrapper_output((cc, flag), items).splitlines()
                     if families.library_family(ln) and re.search(r"\d+\.\d+", ln)), "")
        if line:
            return line.strip()
    return ""


def launcher_and_wrapper(lib, env: dict[str, str]) -> str | None:
    """Why ``lib``'s launcher and compiler wrapper belong to different installations (None when they agree or
    cannot tell): an engine built with one and launched by the other mixes two MPIs. Told by the wrapper's
    family and version against the launcher's, then by the installation prefix each resolves to."""
    if not lib.cc or not lib.launcher_path or Path(lib.launcher_path).name == "srun":
        return None
    said = wrapper_says(lib.cc, lib.family, env)
    family = families.library_family(said) if said else None
    if said and lib.family not in ("", "unknown") and family and family != lib.family:
        return (f"launcher {lib.launcher_path} is {lib.family} {lib.version}, compiler wrapper {lib.cc} says "
                f"{said!r}")
    if said and lib.version not in ("", "unknown") and not _version_in(lib.version, said):
        return (f"launcher {lib.launcher_path} is {lib.family} {lib.version}, compiler wrapper {lib.cc} says "
                f"{said!r}")
    launcher_prefix = Path(_real(lib.launcher_path)).parent.parent
    wrapper_prefix = Path(_real(lib.cc)).parent.parent
    if launcher_prefix != wrapper_prefix:
        return (f"launcher {lib.launcher_path} is installed under {launcher_prefix}, compiler wrapper {lib.cc} "
                f"under {wrapper_prefix}")
    return None

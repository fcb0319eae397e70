# SPDX-License-Identifier: BSD-3-Clause
"""The engine build cache: where each installation's engine is built, what its build stamp records, and whether the
engine there is current.

Cache layout: ``$GMB_CACHE`` (default ``~/.cache/gmb``) ``/engines/<family>-<version>-<key>/`` holding
the CMake build tree, ``build.log`` and ``gmb-build.json`` (library identity and fingerprint, hash of the engine
sources, CUDA settings). The key hashes the identity (family, version, prefix, mpicc) and the engine source
root (resolved path), so another library, or another checkout sharing the cache, gets another directory; a
build is redone when the engine sources change, when the installation was
reinstalled (fingerprint: ``mpicc -show`` and the libmpi files), or when the CUDA settings differ.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

from . import sources
from ..machine.mpilibs import MpiLibrary


def cache_dir() -> Path:
    """``$GMB_CACHE``, default ``~/.cache/gmb``: engines are built under its engines/ (the doctor keeps its answers
    under doctor/)."""
    return Path(os.environ.get("GMB_CACHE", Path.home() / ".cache" / "gmb"))


def build_dir(lib: MpiLibrary, root: Path | None = None) -> Path:
    """Per installation and engine source tree, not per declared name: libraries that differ only in launcher
    settings or environment (e.g. Open MPI with pml ucx and with ob1) share one engine; two checkouts (``root``,
    default ``sources.repo_root()``, resolved) sharing one ``$GMB_CACHE`` get one directory each instead of
    rebuilding over each other's engine."""
    root = root if root is not None else sources.repo_root()
    source = str(Path(root).resolve()) if root is not None else ""
    key = hashlib.sha256(f"{lib.identity}\0{source}".encode()).hexdigest()[:16]
    return cache_dir() / "engines" / f"{lib.family}-{lib.version}-{key}"


def library_fingerprint(lib: MpiLibrary) -> str:
    """What the installation looks like now: the wrapper's flags (``mpicc -show``) and the size and mtime of
    the MPI shared libraries it links. Changes when the library is reinstalled or rebuilt at the same version."""
    h = hashlib.sha256(lib.identity.encode())
    if lib.cc:
        try:
            show = subprocess.run([lib.cc, "-show"], capture_output=True, text=True, timeout=30,
                                  env=build_env(lib)).stdout
        except (OSError, subprocess.TimeoutExpired):
            show = ""
        h.update(show.encode())
        libdirs = re.findall(r"-L(\S+)", show) + [str(Path(lib.prefix) / "lib")]
        for d in libdirs:
            for so in sorted(Path(d).glob("libmpi*.so")):
                try:
                    st = so.resolve().stat()
                except OSError:
                    continue
                h.update(f"{so.resolve()}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


def engine_path(lib: MpiLibrary, root: Path | None = None) -> Path:
    if lib.engine:
        return Path(lib.engine)
    return build_dir(lib, root) / "gmb-bench"


def pins_mpi_library(cmake_args: list[str]) -> bool:
    """Whether an engine built with these CMake arguments searches its MPI's directories before LD_LIBRARY_PATH
    (``GMB_PIN_MPI_LIBRARY``, default ON; the last value given counts)."""
    pinned = True
    for a in cmake_args:
        m = re.match(r"-DGMB_PIN_MPI_LIBRARY(?::BOOL)?=(.*)$", a)
        if m:
            value = m.group(1).strip().upper()  # CMake's false constants
            pinned = value not in ("OFF", "0", "NO", "FALSE", "N", "IGNORE", "NOTFOUND", "") and \
                not value.endswith("-NOTFOUND")
    return pinned


def build_stamp(lib: MpiLibrary, root: Path, cuda: str, cuda_arch: str | None, cmake_args: list[str] = ()) -> dict:
    """What a build's gmb-build.json records and needs_build compares: the library's identity and fingerprint, the
    sources' hash, the CUDA settings and CMake arguments, and whether the engine pins its MPI library."""
    return {"identity": lib.identity, "fingerprint": library_fingerprint(lib),
            "source_hash": sources.source_hash(root), "cuda": cuda, "cuda_arch": cuda_arch or "",
            "cmake_args": list(cmake_args), "pinned": pins_mpi_library(list(cmake_args))}


def effective_cmake_args(lib: MpiLibrary, extra: list[str] | None = None) -> list[str]:
    """The library's declared ``cmake_args`` followed by the command line's ``--cmake-arg`` values."""
    return [*lib.cmake_args, *(extra or [])]


def needs_build(lib: MpiLibrary, root: Path, cuda: str | None = None, cuda_arch: str | None = None,
                cmake_args: list[str] | None = None) -> str | None:
    """Why the engine of ``lib`` must be (re)built, or None when the cached one is current. ``cuda`` None: any
    CUDA setting of the cached build will do (``gmb run`` after ``gmb build --cuda OFF`` does not rebuild);
    likewise the CMake arguments are compared only when some are given (declared or on the command line), except
    that an engine whose MPI library is not pinned is only reused when that is asked for again."""
    if lib.engine:
        return None
    stamp = build_dir(lib, root) / "gmb-build.json"
    if not stamp.is_file() or not engine_path(lib, root).exists():
        return "not built yet"
    try:
        data = json.loads(stamp.read_text())
    except ValueError:
        return "unreadable build stamp"
    args = effective_cmake_args(lib, cmake_args)
    want = build_stamp(lib, root, cuda, cuda_arch, args)
    keys = [("identity", "library changed"), ("fingerprint", "library reinstalled"),
            ("source_hash", "engine sources changed")]
    if want["pinned"] and not data.get("pinned", False):
        # an engine built with -DGMB_PIN_MPI_LIBRARY=OFF (or by an older gmb) is not reused by default
        return "cached engine does not pin its MPI library (built with GMB_PIN_MPI_LIBRARY=OFF or by an older gmb)"
    if args:
        keys.append(("cmake_args", "CMake arguments changed"))
    if cuda is not None:
        keys.append(("cuda", "CUDA setting changed"))
    if cuda_arch is not None:
        keys.append(("cuda_arch", "CUDA architectures changed"))
    for key, why in keys:
        have = data.get(key, {"cuda_arch": "", "cmake_args": []}.get(key))
        if key == "cuda" and want[key] == "AUTO" and have == "ON":
            continue  # AUTO on a machine that can build CUDA builds what ON built
        if have != want[key]:
            return why
    return None


def build_env(lib: MpiLibrary) -> dict[str, str]:
    """Environment for configuring and compiling, and for the fingerprint's ``mpicc -show``: the library's own
    (``process_env``: env_unset, path_remove, env) with its bin first on PATH (wrappers such as a PyPI wheel's mpicc
    find their own tools)."""
    env = lib.process_env()
    if lib.cc:
        env["PATH"] = str(Path(lib.cc).parent) + os.pathsep + env.get("PATH", "")
    return env


def portable_dir(root: Path, cuda: str, cuda_arch: str | None, cmake_args: list[str]) -> Path:
    """Where the sources that need no MPI are compiled for every engine of one source tree, CUDA choice and CMake
    arguments (src/CMakeLists.txt, GMB_PORTABLE_ONLY)."""
    key = hashlib.sha256("\0".join([str(Path(root).resolve()), cuda, cuda_arch or "", *cmake_args]).encode())
    return cache_dir() / "engines" / f"portable-{key.hexdigest()[:16]}"

# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the tests that use real tools (CMake, Debian's MPIs, Chromium, Slurm). Each such test is skipped,
with the reason, when what it needs is not installed.

Engines are built once per session from a copy of the engine sources (so the tests never touch the
repository's build/ and may edit the copy) into ``$GMB_TEST_CACHE`` when set (reused across runs: CI can keep
it), else a session temporary directory. The CUDA module is not built (``GMB_ENABLE_CUDA=OFF``) unless
``GMB_TEST_CUDA`` says otherwise: these tests are about the harness, and nvcc would triple the build time.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gmb.machine import detect, mpilibs

REPO = Path(__file__).resolve().parents[2]
# the schemas: CMake's GMB_SCHEMA_FILE and GMB_ENGINE_SCHEMA_FILE (installed to share/gmb/schema; the MPI tests validate
# against them)
SOURCES = ("CMakeLists.txt", "cmake", "src", "include", "apps", "reference", "schema")

DEBIAN = {  # family -> (mpicc, launcher)
    "openmpi": ("/usr/bin/mpicc.openmpi", "/usr/bin/mpiexec.openmpi"),
    "mpich": ("/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.mpich"),
}


def have_cmake() -> bool:
    return shutil.which("cmake") is not None and (shutil.which("c++") or shutil.which("g++")) is not None


def have_debian(family: str) -> bool:
    cc, launcher = DEBIAN[family]
    return have_cmake() and Path(cc).exists() and Path(launcher).exists()


def skip_unless_debian(family: str):
    return pytest.mark.skipif(not have_debian(family),
                              reason=f"needs cmake, g++ and Debian's {family} ({DEBIAN[family][0]})")


def debian_library(family: str) -> mpilibs.MpiLibrary:
    """The detected library behind Debian's suffixed launcher of ``family``."""
    for lib in detect.detect():
        if lib.family == family and lib.launcher_path == DEBIAN[family][1]:
            return lib
    for lib in detect.detect():
        if lib.family == family and lib.prefix == "/usr":
            return lib
    pytest.skip(f"Debian's {family} not detected")


def copy_sources(dest: Path, origin: Path | None = None) -> Path:
    """Mirror the engine sources of ``origin`` (default: this repository's working tree; ``$GMB_TEST_SOURCE``
    picks another tree, e.g. a ``git archive`` of a known-good commit) into ``dest``. Unchanged files keep their
    mtime and files gone from ``origin`` are removed, so a kept ``dest`` allows incremental engine builds."""
    origin = origin or REPO
    dest.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for name in SOURCES:
        src = origin / name
        files = [src] if src.is_file() else [f for f in src.rglob("*") if f.is_file()] if src.is_dir() else []
        for f in files:
            if "__pycache__" in f.parts:
                continue
            rel = f.relative_to(origin)
            wanted.add(rel)
            d = dest / rel
            if d.is_file() and d.read_bytes() == f.read_bytes():
                continue
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, d)  # a fresh mtime: make rebuilds what changed
    for f in [f for f in dest.rglob("*") if f.is_file()]:
        if f.relative_to(dest) not in wanted:
            f.unlink()
    return dest

# SPDX-License-Identifier: BSD-3-Clause
"""Engine builds: one gmb-bench per MPI installation, in the build cache (build_cache.py) from the engine sources
(sources.py), and an engine asked to describe itself.

CMake is given the library's ``mpicc`` (MPI_C_COMPILER; the engine uses MPI's C component only) and its
launcher (MPIEXEC_EXECUTABLE), ``-DGMB_ENABLE_CUDA=AUTO`` unless told otherwise, ``-DGMB_BUILD_TESTS=OFF`` and
then the library's ``cmake_args`` and any given on the command line (``--cmake-arg``). Configure and compile
run in the library's environment (``MpiLibrary.process_env``). ``build_all`` builds the engines of several
installations at once (one thread each, ``-j`` jobs per build).
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from .build_cache import (build_dir, build_env, build_stamp, effective_cmake_args, engine_path, needs_build,
                          portable_dir)
from .description import EngineDescription
from . import sources
from ..machine.mpilibs import MpiLibrary


class BuildError(RuntimeError):
    pass


def portable_objects(root: Path, cuda: str, cuda_arch: str | None, cmake_args: list[str], jobs: int | None, log
                     ) -> Path | None:
    """Compile what needs no MPI once (or bring it up to date) and return its manifest, which each engine's configure
    takes (GMB_PORTABLE_OBJECTS); None when that build failed: the engine then compiles those sources itself, and
    its own build says what is wrong."""
    pdir = portable_dir(root, cuda, cuda_arch, cmake_args)
    manifest = pdir / "gmb-portable-objects.txt"
    with _locked(pdir):
        _forget_other_source(pdir, root, log)
        configure = ["cmake", "-S", str(root), "-B", str(pdir), "-DCMAKE_BUILD_TYPE=Release", "-DGMB_PORTABLE_ONLY=ON",
                     f"-DGMB_ENABLE_CUDA={cuda}", *([f"-DCMAKE_CUDA_ARCHITECTURES={cuda_arch}"] if cuda_arch else []),
                     *cmake_args]
        compile_ = ["cmake", "--build", str(pdir), "--target", "gmb_portable", "-j", str(jobs or os.cpu_count() or 2)]
        if _run_logged([configure, compile_], pdir / "build.log", None):
            log(f"the sources every engine shares did not build in {pdir} (see its build.log): each engine compiles "
                "them itself")
            return None
    return manifest if manifest.is_file() else None


def _run_logged(steps: list[list[str]], logfile: Path, env: dict[str, str] | None) -> tuple[list[str], int] | None:
    """Run the commands one after the other, each written to ``logfile`` with its output; the first that fails and
    its exit status (None when all succeeded)."""
    with open(logfile, "a") as lf:
        for argv in steps:
            lf.write("$ " + " ".join(argv) + "\n")
            lf.flush()
            rc = subprocess.run(argv, stdout=lf, stderr=subprocess.STDOUT, env=env).returncode
            if rc != 0:
                return argv, rc
    return None


def _cmake_cache_value(bdir: Path, name: str) -> str:
    """A value of a build tree's CMakeCache.txt ("" when absent or NOTFOUND)."""
    try:
        text = (bdir / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return ""
    m = re.search(rf"^{re.escape(name)}:[A-Z]+=(.*)$", text, re.M)
    return m.group(1).strip() if m and not m.group(1).strip().endswith("NOTFOUND") else ""


def cmake_argv(lib: MpiLibrary, root: Path, bdir: Path, cuda: str = "AUTO", cuda_arch: str | None = None,
               cmake_args: list[str] = (), jobs: int | None = None, portable: Path | None = None):
    """Configure and build argv. The engine uses MPI's C component only: MPI_C_COMPILER selects the library,
    MPIEXEC_EXECUTABLE its launcher (CMake would otherwise take whichever mpiexec is first on PATH); ``portable``:
    the manifest of the objects every engine shares (portable_objects; "" in the cache without one)."""
    configure = ["cmake", "-S", str(root), "-B", str(bdir), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DGMB_ENABLE_CUDA={cuda}", "-DGMB_BUILD_TESTS=OFF", f"-DGMB_PORTABLE_OBJECTS={portable or ''}"]
    if lib.cc:
        configure.append(f"-DMPI_C_COMPILER={lib.cc}")
    if lib.launcher_path and Path(lib.launcher_path).name.split(".")[0] in ("mpirun", "mpiexec"):
        configure.append(f"-DMPIEXEC_EXECUTABLE={lib.launcher_path}")
    if cuda_arch:
        configure.append(f"-DCMAKE_CUDA_ARCHITECTURES={cuda_arch}")
    configure += cmake_args  # last: they override the above
    # the engine and the application profiler (gmb profile) built against the same MPI library
    return configure, ["cmake", "--build", str(bdir), "--target", "gmb-bench", "gmb-profile", "-j",
                       str(jobs or os.cpu_count() or 2)]


CMAKE_MIN = (3, 22)


def check_tools(lib: MpiLibrary) -> None:
    """Raise BuildError with a fix when CMake, a C/C++ compiler or the library's mpicc is missing."""
    cmake = shutil.which("cmake")
    if not cmake:
        raise BuildError("cmake not found: install it (Debian: apt-get install cmake; or pip install cmake)")
    out = subprocess.run([cmake, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"(\d+)\.(\d+)", out)
    if m and (int(m.group(1)), int(m.group(2))) < CMAKE_MIN:
        raise BuildError(f"cmake {m.group(0)} is too old (need >= {CMAKE_MIN[0]}.{CMAKE_MIN[1]}): "
                         "pip install cmake, or a newer distribution package")
    cxx = os.environ.get("CXX") or next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    cc = os.environ.get("CC") or next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
    if not cxx or not cc:
        raise BuildError("no C/C++ compiler found: install one (Debian: apt-get install g++)")
    if not lib.cc:
        raise BuildError(f"{lib.name}: no mpicc next to {lib.launcher_path}: install the library's development "
                         "files (Debian: libopenmpi-dev / libmpich-dev) or declare cc = \"/path/to/mpicc\"")
    if not Path(lib.cc).exists() and not shutil.which(lib.cc):
        raise BuildError(f"{lib.name}: mpicc {lib.cc} does not exist")


@contextlib.contextmanager
def _locked(bdir: Path):
    """One build per cache directory at a time (two gmb processes may start together)."""
    bdir.mkdir(parents=True, exist_ok=True)
    with open(bdir / ".lock", "w") as f:
        try:
            import fcntl

            fcntl.flock(f, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        yield


def default_cuda() -> str:
    """``$GMB_ENABLE_CUDA`` (AUTO, ON, OFF), default AUTO: the CUDA module is built when nvcc is found."""
    v = os.environ.get("GMB_ENABLE_CUDA", "AUTO").upper()
    if v not in ("AUTO", "ON", "OFF"):
        raise BuildError(f"GMB_ENABLE_CUDA must be AUTO, ON or OFF (got {v!r})")
    return v


def build(lib: MpiLibrary, root: Path | None = None, force: bool = False, cuda: str | None = None,
          cuda_arch: str | None = None, log=print, cmake_args: list[str] | None = None, jobs: int | None = None) -> Path:
    """Build (or reuse) the engine for ``lib``; returns the gmb-bench path. Build output goes to build.log.
    ``cmake_args``: more CMake arguments after the library's own; ``jobs``: parallel compile jobs."""
    if lib.engine:
        return Path(lib.engine)
    if cuda is None and "GMB_ENABLE_CUDA" in os.environ:
        cuda = default_cuda()
    root = root or sources.repo_root()
    if root is None or not (root / "CMakeLists.txt").is_file():
        raise BuildError(f"{lib.name}: {sources.no_sources()}; {sources.no_engine_advice(lib)}")
    args = effective_cmake_args(lib, cmake_args)
    why = "forced" if force else needs_build(lib, root, cuda, cuda_arch, cmake_args)
    if why is None:
        log(f"{lib.name}: engine up to date ({engine_path(lib, root)})")
        return engine_path(lib, root)
    check_tools(lib)
    bdir = build_dir(lib, root)
    with _locked(bdir):
        if not force and needs_build(lib, root, cuda, cuda_arch, cmake_args) is None:  # built meanwhile elsewhere
            return engine_path(lib, root)
        stamp = bdir / "gmb-build.json"
        stamp.unlink(missing_ok=True)
        log(f"{lib.name}: building engine ({why}) in {bdir} ...")
        _forget_other_source(bdir, root, log)
        cuda = cuda or default_cuda()
        portable = portable_objects(root, cuda, cuda_arch, args, jobs, log)
        # the CUDA compiler the portable build found (none with CUDA off): the engine's configure need not look for it
        # again (4 s)
        nvcc = _cmake_cache_value(portable.parent, "CMAKE_CUDA_COMPILER") if portable else ""
        found = [f"-DCMAKE_CUDA_COMPILER={nvcc}"] if nvcc else []
        configure, compile_ = cmake_argv(lib, root, bdir, cuda, cuda_arch, [*found, *args], jobs, portable)
        logfile = bdir / "build.log"
        failed = _run_logged([configure, compile_], logfile, build_env(lib))
        if failed:
            (argv, rc), tail = failed, _error_tail(logfile)
            raise BuildError(f"{lib.name}: `{' '.join(argv[:3])} ...` failed (exit {rc}); see {logfile}"
                             + (f"\n{tail}" if tail else ""))
        if not engine_path(lib, root).exists():
            raise BuildError(f"{lib.name}: build finished but {engine_path(lib, root)} is missing; see {logfile}")
        stamp.write_text(json.dumps({**build_stamp(lib, root, cuda, cuda_arch, args), "library": lib.describe(),
                                     "source": str(root)}, indent=1))
    log(f"{lib.name}: built {engine_path(lib, root)}")
    return engine_path(lib, root)


def _forget_other_source(bdir: Path, root: Path, log) -> None:
    """CMake refuses a build tree configured from another source directory (the repository moved, or
    GMB_SOURCE points elsewhere): drop its cache so the tree is configured afresh for this one."""
    cache = bdir / "CMakeCache.txt"
    if not cache.is_file():
        return
    m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(errors="replace"), re.M)
    if m and Path(m.group(1)).resolve() != root.resolve():
        log(f"engine sources moved ({m.group(1)} -> {root}): configuring {bdir} afresh")
        cache.unlink()
        shutil.rmtree(bdir / "CMakeFiles", ignore_errors=True)


def _error_tail(logfile: Path, n: int = 8) -> str:
    lines = logfile.read_text(errors="replace").splitlines()
    errs = [ln for ln in lines if re.search(r"error:|undefined reference|Could NOT find|CMake Error", ln)]
    return "\n".join("  " + ln for ln in (errs or lines)[:n])


def build_all(libs: list[MpiLibrary], root: Path | None = None, force: bool = False, cuda: str | None = None,
              cuda_arch: str | None = None, log=print, cmake_args: list[str] | None = None,
              jobs: int | None = None) -> dict[str, Path | BuildError]:
    """Build the engines of several libraries at once: one thread per installation (libraries sharing one,
    e.g. pml ucx / ob1 / NCCL via ob1, wait for the same build). Returns library name -> engine path, or the
    BuildError that stopped its build."""
    groups: dict[Path, list[MpiLibrary]] = {}
    for lib in libs:
        groups.setdefault(Path(lib.engine) if lib.engine else build_dir(lib, root), []).append(lib)

    def one(group: list[MpiLibrary]):
        try:
            return build(group[0], root, force, cuda, cuda_arch, log, cmake_args, jobs)
        except BuildError as exc:
            return exc

    out: dict[str, Path | BuildError] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(groups))) as pool:
        for group, result in zip(groups.values(), pool.map(one, groups.values())):
            for lib in group:
                out[lib.name] = result
    return out


def describe_engine(engine: str | Path, timeout: float = 60, env: dict[str, str] | None = None) -> EngineDescription:
    """The engine's description, ``gmb-bench list --format json`` (runs without a launcher: singleton MPI init), in
    ``env`` (the library's ``process_env``: an engine linked against one Open MPI must not load another one's
    libmpi). BuildError when it cannot be run; DescriptionError when it was built before it described itself, or when its
    records would not keep a setting (EngineDescription.check_records_settings)."""
    try:
        p = subprocess.run([str(engine), "list", "--format", "json"], capture_output=True, text=True,
                           timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"{engine} list failed: {exc}") from None
    if p.returncode != 0:
        raise BuildError(f"{engine} list exited {p.returncode}: {p.stderr.strip()[-300:]}")
    try:
        start = p.stdout.index("{")
        data = json.loads(p.stdout[start:])
    except ValueError:
        raise BuildError(f"{engine} list printed no JSON") from None
    description = EngineDescription(data, source=f"engine {engine}")
    description.check_records_settings()
    return description

# SPDX-License-Identifier: BSD-3-Clause
"""Engine builds: one gmb-bench per MPI installation, cached by the library's identity.

Cache layout: ``$GMB_CACHE`` (default ``~/.cache/gmb``) ``/engines/<family>-<version>-<key>/`` holding
the CMake build tree, ``build.log`` and ``gmb-build.json`` (library identity and fingerprint, hash of the engine
sources, CUDA settings). The key hashes the identity (family, version, prefix, mpicc) and the engine source
root (resolved path), so another library, or another checkout sharing the cache, gets another directory; a
build is redone when the engine sources change, when the installation was
reinstalled (fingerprint: ``mpicc -show`` and the libmpi files), or when the CUDA settings differ.

CMake is given the library's ``mpicc`` (MPI_C_COMPILER; the engine uses MPI's C component only) and its
launcher (MPIEXEC_EXECUTABLE), ``-DGMB_ENABLE_CUDA=AUTO`` unless told otherwise, ``-DGMB_BUILD_TESTS=OFF`` and
then the library's ``cmake_args`` and any given on the command line (``--cmake-arg``). Configure and compile
run in the library's environment (``MpiLibrary.process_env``). ``build_all`` builds the engines of several
installations at once (one thread each, ``-j`` jobs per build).
"""

from __future__ import annotations

import contextlib
import hashlib
from concurrent.futures import ThreadPoolExecutor
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from .description import EngineDescription
from ..machine.mpilibs import MpiLibrary

SOURCE_GLOBS = ("CMakeLists.txt", "cmake/**/*", "src/**/*", "include/**/*", "apps/**/*", "reference/**/*")


class BuildError(RuntimeError):
    pass


def _is_source_tree(path: Path) -> bool:
    return (path / "CMakeLists.txt").is_file() and (path / "include" / "gmb").is_dir() and (path / "src").is_dir()


def repo_root() -> Path | None:
    """Where the engine sources are meant to be: ``$GMB_SOURCE``, else the checkout this harness runs from (none for
    a harness installed with pip). ``source_root`` says whether sources are really there."""
    env = os.environ.get("GMB_SOURCE")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        if _is_source_tree(parent):
            return parent
    return None


def source_root() -> Path | None:
    """The engine source tree engines are built from: ``$GMB_SOURCE`` or this harness's checkout, when it holds
    the sources (a CMakeLists.txt); None otherwise."""
    root = repo_root()
    return root if root is not None and (root / "CMakeLists.txt").is_file() else None


def no_sources() -> str:
    """Why there are no engine sources, in words."""
    env = os.environ.get("GMB_SOURCE")
    if env:
        return f"GMB_SOURCE={env} holds no engine sources (no CMakeLists.txt there)"
    return "no engine sources: this gmb does not run from a checkout and GMB_SOURCE is not set"


def no_engine_advice(lib: MpiLibrary | None = None) -> str:
    """The three ways to give a library an engine when it declares none (gmb build, gmb run)."""
    built_for = f" built against {lib.family} {lib.version} from {lib.prefix}" if lib is not None else ""
    return (f"give it an engine: set GMB_ENGINE to a gmb-bench{built_for}; or put such a gmb-bench on PATH "
            f"(cmake --install, a module or Spack load); or set GMB_SOURCE to the engine sources (a gmb checkout) "
            f"so that gmb builds one")


def cache_dir() -> Path:
    return Path(os.environ.get("GMB_CACHE", Path.home() / ".cache" / "gmb"))


def source_hash(root: Path) -> str:
    h = hashlib.sha256()
    files = sorted({p for g in SOURCE_GLOBS for p in root.glob(g)
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"})
    for p in files:
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build_dir(lib: MpiLibrary, root: Path | None = None) -> Path:
    """Per installation and engine source tree, not per declared name: libraries that differ only in launcher
    settings or environment (e.g. Open MPI with pml ucx and with ob1) share one engine; two checkouts (``root``,
    default ``repo_root()``, resolved) sharing one ``$GMB_CACHE`` get one directory each instead of rebuilding over
    each other's engine."""
    root = root if root is not None else repo_root()
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
                                  env=_library_env(lib)).stdout
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


def _stamp(lib: MpiLibrary, root: Path, cuda: str, cuda_arch: str | None, cmake_args: list[str] = ()) -> dict:
    return {"identity": lib.identity, "fingerprint": library_fingerprint(lib), "source_hash": source_hash(root),
            "cuda": cuda, "cuda_arch": cuda_arch or "", "cmake_args": list(cmake_args),
            "pinned": pins_mpi_library(list(cmake_args))}


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
    want = _stamp(lib, root, cuda, cuda_arch, args)
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


def _library_env(lib: MpiLibrary) -> dict[str, str]:
    """Environment for configuring/compiling: the library's own (``process_env``: env_unset, path_remove, env)
    with its bin first on PATH (wrappers such as a PyPI wheel's mpicc find their own tools)."""
    env = lib.process_env()
    if lib.cc:
        env["PATH"] = str(Path(lib.cc).parent) + os.pathsep + env.get("PATH", "")
    return env


def portable_dir(root: Path, cuda: str, cuda_arch: str | None, cmake_args: list[str]) -> Path:
    """Where the sources that need no MPI are compiled for every engine of one source tree, CUDA choice and CMake
    arguments (src/CMakeLists.txt, GMB_PORTABLE_ONLY)."""
    key = hashlib.sha256("\0".join([str(Path(root).resolve()), cuda, cuda_arch or "", *cmake_args]).encode())
    return cache_dir() / "engines" / f"portable-{key.hexdigest()[:16]}"


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
    root = root or repo_root()
    if root is None or not (root / "CMakeLists.txt").is_file():
        raise BuildError(f"{lib.name}: {no_sources()}; {no_engine_advice(lib)}")
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
        failed = _run_logged([configure, compile_], logfile, _library_env(lib))
        if failed:
            (argv, rc), tail = failed, _error_tail(logfile)
            raise BuildError(f"{lib.name}: `{' '.join(argv[:3])} ...` failed (exit {rc}); see {logfile}"
                             + (f"\n{tail}" if tail else ""))
        if not engine_path(lib, root).exists():
            raise BuildError(f"{lib.name}: build finished but {engine_path(lib, root)} is missing; see {logfile}")
        stamp.write_text(json.dumps({**_stamp(lib, root, cuda, cuda_arch, args), "library": lib.describe(),
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

"""Engine builds: one gmb-bench per MPI library, cached by the library's identity.

Cache layout: ``$GMB_CACHE`` (default ``~/.cache/gmb``) ``/engines/<name>-<build_hash>/`` holding the CMake
build tree and ``gmb-build.json`` (library identity + hash of the engine sources). A build is redone when
the engine sources change (the hash differs) or when the identity differs (a different directory).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from .mpilibs import MpiLibrary

SOURCE_GLOBS = ("CMakeLists.txt", "cmake/**/*", "src/**/*", "include/**/*", "apps/**/*", "bench/**/*")


class BuildError(RuntimeError):
    pass


def repo_root() -> Path | None:
    env = os.environ.get("GMB_SOURCE")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        if (parent / "CMakeLists.txt").is_file() and (parent / "schema").is_dir():
            return parent
    return None


def cache_dir() -> Path:
    return Path(os.environ.get("GMB_CACHE", Path.home() / ".cache" / "gmb"))


def source_hash(root: Path) -> str:
    h = hashlib.sha256()
    files = sorted({p for g in SOURCE_GLOBS for p in root.glob(g) if p.is_file()})
    for p in files:
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build_dir(lib: MpiLibrary) -> Path:
    return cache_dir() / "engines" / f"{lib.name}-{lib.build_hash}"


def engine_path(lib: MpiLibrary) -> Path:
    if lib.engine:
        return Path(lib.engine)
    return build_dir(lib) / "gmb-bench"


def needs_build(lib: MpiLibrary, root: Path) -> bool:
    if lib.engine:
        return False
    stamp = build_dir(lib) / "gmb-build.json"
    if not stamp.is_file() or not engine_path(lib).exists():
        return True
    data = json.loads(stamp.read_text())
    return data.get("source_hash") != source_hash(root) or data.get("identity") != lib.identity


def cmake_argv(lib: MpiLibrary, root: Path, bdir: Path, cuda: str = "AUTO", cuda_arch: str | None = None):
    configure = ["cmake", "-S", str(root), "-B", str(bdir), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DGMB_ENABLE_CUDA={cuda}"]
    if lib.cxx:
        configure.append(f"-DMPI_CXX_COMPILER={lib.cxx}")
    if lib.cc:
        configure.append(f"-DMPI_C_COMPILER={lib.cc}")
    if cuda_arch:
        configure.append(f"-DCMAKE_CUDA_ARCHITECTURES={cuda_arch}")
    return configure, ["cmake", "--build", str(bdir), "-j", str(os.cpu_count() or 2)]


def build(lib: MpiLibrary, root: Path | None = None, force: bool = False, cuda: str = "AUTO",
          cuda_arch: str | None = None, log=print) -> Path:
    """Build (or reuse) the engine for ``lib``; returns the gmb-bench path. Build output goes to build.log."""
    if lib.engine:
        return Path(lib.engine)
    root = root or repo_root()
    if root is None or not (root / "CMakeLists.txt").is_file():
        raise BuildError("engine sources not found (set GMB_SOURCE to the repository root)")
    if not force and not needs_build(lib, root):
        log(f"{lib.name}: engine up to date ({engine_path(lib)})")
        return engine_path(lib)
    bdir = build_dir(lib)
    bdir.mkdir(parents=True, exist_ok=True)
    configure, compile_ = cmake_argv(lib, root, bdir, cuda, cuda_arch)
    logfile = bdir / "build.log"
    with open(logfile, "a") as lf:
        for argv in (configure, compile_):
            lf.write("$ " + " ".join(argv) + "\n")
            lf.flush()
            rc = subprocess.run(argv, stdout=lf, stderr=subprocess.STDOUT).returncode
            if rc != 0:
                raise BuildError(f"{lib.name}: `{' '.join(argv[:3])} ...` failed (exit {rc}); see {logfile}")
    if not engine_path(lib).exists():
        raise BuildError(f"{lib.name}: build finished but {engine_path(lib)} is missing; see {logfile}")
    (bdir / "gmb-build.json").write_text(json.dumps({"identity": lib.identity, "source_hash": source_hash(root),
                                                     "library": lib.describe()}, indent=1))
    log(f"{lib.name}: built {engine_path(lib)}")
    return engine_path(lib)


def engine_capabilities(engine: str | Path, timeout: float = 60) -> dict:
    """``gmb-bench list --format json`` (runs without a launcher: singleton MPI init)."""
    try:
        p = subprocess.run([str(engine), "list", "--format", "json"], capture_output=True, text=True,
                           timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"{engine} list failed: {exc}") from None
    if p.returncode != 0:
        raise BuildError(f"{engine} list exited {p.returncode}: {p.stderr.strip()[-300:]}")
    try:
        start = p.stdout.index("{")
        return json.loads(p.stdout[start:])
    except ValueError:
        raise BuildError(f"{engine} list printed no JSON") from None

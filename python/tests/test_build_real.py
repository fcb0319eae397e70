# SPDX-License-Identifier: BSD-3-Clause
"""`gmb build`: CMake against the real Debian MPIs (skipped when cmake / mpicc are absent), plus the error paths."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from realmpi import DEBIAN, debian_library, have_debian, skip_unless_debian

from gmb.engine import build, build_cache, sources
from gmb.cli import main
from gmb.machine.mpilibs import MpiLibrary


def _lib(tmp_path, **kw):
    d = dict(name="x", family="mpich", version="1.0", prefix=str(tmp_path), launcher_path=str(tmp_path / "mpiexec"),
             launcher="mpiexec", cc=str(tmp_path / "mpicc"))
    d.update(kw)
    return MpiLibrary(**d)


def test_cmake_argv_selects_library_and_launcher(tmp_path):
    lib = _lib(tmp_path)
    configure, compile_ = build.cmake_argv(lib, Path("/src"), tmp_path / "b", "AUTO")
    assert f"-DMPI_C_COMPILER={lib.cc}" in configure
    assert f"-DMPIEXEC_EXECUTABLE={lib.launcher_path}" in configure
    assert "-DGMB_BUILD_TESTS=OFF" in configure and "-DGMB_ENABLE_CUDA=AUTO" in configure
    assert compile_[:3] == ["cmake", "--build", str(tmp_path / "b")] and "gmb-bench" in compile_
    srun = _lib(tmp_path, launcher_path="/usr/bin/srun", launcher="srun")
    assert not any(a.startswith("-DMPIEXEC_EXECUTABLE") for a in build.cmake_argv(srun, Path("/s"), tmp_path)[0])


def test_build_dir_per_installation(tmp_path):
    a = _lib(tmp_path)
    assert build_cache.build_dir(a) != build_cache.build_dir(_lib(tmp_path, cc="/other/mpicc"))
    assert build_cache.build_dir(a) != build_cache.build_dir(_lib(tmp_path, version="1.1"))
    # two declared libraries on one installation (e.g. pml ucx / ob1) share one engine
    assert build_cache.build_dir(a) == build_cache.build_dir(_lib(tmp_path, name="y",
                                                                  launcher_args=["--mca", "pml", "ob1"]))


def test_missing_cmake_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text("")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(build.BuildError, match="cmake not found.*apt-get install cmake"):
        build.build(_lib(tmp_path), root=tmp_path / "src", log=lambda m: None)


def test_missing_compiler_and_mpicc_are_clear_errors(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    cmake = bindir / "cmake"
    cmake.write_text("#!/bin/sh\necho cmake version 3.25.1\n")
    cmake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(build.BuildError, match="no C/C\\+\\+ compiler"):
        build.check_tools(_lib(tmp_path))
    for n in ("cc", "c++"):
        (bindir / n).write_text("")
        (bindir / n).chmod(0o755)
    with pytest.raises(build.BuildError, match="no mpicc.*libopenmpi-dev"):
        build.check_tools(_lib(tmp_path, cc=None))
    cmake.write_text("#!/bin/sh\necho cmake version 3.18.4\n")
    with pytest.raises(build.BuildError, match="too old"):
        build.check_tools(_lib(tmp_path))


def test_cli_build_reports_failure(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    cfg = tmp_path / "l.toml"
    cfg.write_text(f'[[library]]\nname = "x"\nfamily = "mpich"\nversion = "1"\nlauncher_path = "{tmp_path}/mpiexec"\n')
    assert main(["build", "--config", str(cfg), "--no-detect"]) == 1
    assert "cmake not found" in capsys.readouterr().err


def _cache_value(bdir: Path, key: str) -> str:
    m = re.search(rf"^{key}:[A-Z]+=(.*)$", (bdir / "CMakeCache.txt").read_text(), re.M)
    return m.group(1) if m else ""


@pytest.mark.parametrize("family", ["openmpi", "mpich"])
def test_real_build_cached_and_rebuilt(family, real_env, capsys):
    if not have_debian(family):
        pytest.skip(f"needs cmake, g++ and Debian's {family} ({DEBIAN[family][0]})")
    lib = debian_library(family)
    src = real_env["source"]
    engine = build.build(lib, root=src, log=print)
    bdir = build_cache.build_dir(lib)
    assert engine == bdir / "gmb-bench" and os.access(engine, os.X_OK)
    assert _cache_value(bdir, "MPI_C_COMPILER") == DEBIAN[family][0]
    assert _cache_value(bdir, "MPIEXEC_EXECUTABLE") == DEBIAN[family][1]
    assert _cache_value(bdir, "GMB_BUILD_TESTS") == "OFF"
    stamp = json.loads((bdir / "gmb-build.json").read_text())
    assert stamp["identity"] == lib.identity and stamp["source_hash"] == sources.source_hash(src)
    assert build.describe_engine(engine).benchmark("latency").family == "pt2pt"
    # linked against the library it was built for
    ldd = subprocess.run(["ldd", str(engine)], capture_output=True, text=True).stdout
    assert ("libmpi.so.40" if family == "openmpi" else "libmpich.so") in ldd

    # cached: nothing rebuilt
    mtime = engine.stat().st_mtime_ns
    capsys.readouterr()
    assert build.build(lib, root=src, log=print) == engine
    assert "up to date" in capsys.readouterr().out and engine.stat().st_mtime_ns == mtime

    # engine sources changed: rebuilt (incrementally) in the same directory
    app = src / "apps" / "gmb_bench.cpp"
    app.write_text(app.read_text() + f"\n// touched by test for {family}\n")
    assert build_cache.needs_build(lib, src) == "engine sources changed"
    assert build.build(lib, root=src, log=print) == engine
    assert engine.stat().st_mtime_ns != mtime and build_cache.needs_build(lib, src) is None

    # another installation identity: another directory, nothing shared
    other = MpiLibrary(**{**lib.__dict__, "version": lib.version + "-other"})
    assert build_cache.build_dir(other) != bdir and build_cache.needs_build(other, src) == "not built yet"

    # the library was reinstalled (fingerprint differs): rebuilt
    stamp = json.loads((bdir / "gmb-build.json").read_text())
    (bdir / "gmb-build.json").write_text(json.dumps({**stamp, "fingerprint": "0" * 16}))
    assert build_cache.needs_build(lib, src) == "library reinstalled"


def test_the_engines_of_two_libraries_share_what_needs_no_mpi(real_env):
    """What needs no MPI (src/portable, the GPU runtime) is compiled once: each library's engine is configured with
    the one manifest of those objects, links them, and runs."""
    if not (have_debian("openmpi") and have_debian("mpich")):
        pytest.skip("needs cmake, g++ and Debian's Open MPI and MPICH")
    src = real_env["source"]
    manifests = set()
    for family in ("openmpi", "mpich"):
        lib = debian_library(family)
        engine = build.build(lib, root=src, log=print)
        manifests.add(_cache_value(build_cache.build_dir(lib), "GMB_PORTABLE_OBJECTS"))
        assert build.describe_engine(engine).benchmark("latency").family == "pt2pt"
    (manifest,) = manifests
    lines = Path(manifest).read_text().splitlines()
    objects = [ln.split(" ", 1)[1] for ln in lines if ln.startswith("object ")]
    assert objects and all(Path(o).is_file() for o in objects)
    assert Path(manifest).parent == build_cache.portable_dir(src, real_env["cuda"], None, [])
    assert any(ln.startswith("configuration cuda=") for ln in lines)


@skip_unless_debian("openmpi")
def test_cli_build_twice(real_env, capsys):
    lib = debian_library("openmpi")
    assert main(["build", "--library", lib.name]) == 0
    capsys.readouterr()
    assert main(["build", "--library", lib.name]) == 0
    assert "up to date" in capsys.readouterr().out


def test_build_tree_of_moved_sources_is_reconfigured(tmp_path):
    bdir = tmp_path / "b"
    (bdir / "CMakeFiles").mkdir(parents=True)
    (bdir / "CMakeCache.txt").write_text(f"CMAKE_HOME_DIRECTORY:INTERNAL={tmp_path / 'old'}\n")
    (tmp_path / "new").mkdir()
    build._forget_other_source(bdir, tmp_path / "old", log=lambda m: None)
    assert (bdir / "CMakeCache.txt").exists()  # same sources: kept (incremental build)
    build._forget_other_source(bdir, tmp_path / "new", log=lambda m: None)
    assert not (bdir / "CMakeCache.txt").exists() and not (bdir / "CMakeFiles").exists()


def test_campaign_gives_coll_an_operation():
    from fake_engine import describe

    from gmb.campaign.plan import plan
    from gmb.campaign.spec import Block, Campaign

    c = Campaign("c", [Block(["coll"], sizes="4:64", ranks=[2], operations=["allreduce", "bcast"]),
                       Block(["latency"], memory=["host:host"])], repetitions=2)
    lib = MpiLibrary("l", "mpich", "4", "/usr", "/usr/bin/mpiexec.mpich", "mpiexec")
    launches, _ = plan(c, [lib], {"l": describe()})
    coll = [x for x in launches if x.benchmark == "coll"]
    assert sorted(x.engine_args[1] for x in coll) == ["allreduce", "allreduce", "bcast", "bcast"]
    assert len({x.launch_id for x in launches}) == len(launches) == 6
    lat = next(x for x in launches if x.benchmark == "latency")
    assert lat.engine_args[1] == "--send"


def test_build_dir_per_source_tree(tmp_path, monkeypatch):
    """Two checkouts sharing GMB_CACHE do not overwrite each other's engine: the source root is part of the key."""
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    a, b = tmp_path / "checkout-a", tmp_path / "checkout-b"
    a.mkdir()
    b.mkdir()
    (tmp_path / "link-a").symlink_to(a)
    lib = _lib(tmp_path)
    assert build_cache.build_dir(lib, a) != build_cache.build_dir(lib, b)
    assert build_cache.build_dir(lib, tmp_path / "link-a") == build_cache.build_dir(lib, a)  # resolved
    assert build_cache.engine_path(lib, b) == build_cache.build_dir(lib, b) / "gmb-bench"
    monkeypatch.setenv("GMB_SOURCE", str(b))  # the default root: $GMB_SOURCE, else this checkout
    assert build_cache.build_dir(lib) == build_cache.build_dir(lib, b)
    assert build_cache.build_dir(lib).parent == tmp_path / "cache" / "engines"
    assert build_cache.build_dir(lib).name.startswith("mpich-1.0-")

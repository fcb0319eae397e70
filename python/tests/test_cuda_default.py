# SPDX-License-Identifier: BSD-3-Clause
"""The engine builds' CUDA default (topology.engine_cuda): nothing asked, a CUDA compiler present and no NVIDIA
driver, engines are built without CUDA (said once); with a driver, CMake's AUTO; whatever is asked wins. The driver
probe is faked; CMake is a fake that records its arguments."""

import ctypes
import json
import os
from pathlib import Path

import pytest

from gmb.engine import build
from gmb.machine import topology
from gmb.cli import main


@pytest.fixture
def machine(monkeypatch):
    """Nothing asked; a CUDA compiler; ``set(driver)`` fakes the probe (True: a driver that runs CUDA programs)."""
    monkeypatch.delenv("GMB_ENABLE_CUDA", raising=False)
    monkeypatch.setattr(topology, "cuda_compiler", lambda: "/opt/cuda/bin/nvcc")
    monkeypatch.setattr(topology, "_said_no_driver", False)

    def set_driver(present: bool):
        monkeypatch.setattr(topology, "nvidia_driver",
                            lambda: (True, "") if present else (False, "libcuda.so.1: cannot open shared object file"))
    set_driver(False)
    return set_driver


def test_no_driver_builds_without_cuda_and_says_so_once(machine, capsys):
    assert topology.engine_cuda(None) == "OFF"
    assert topology.engine_cuda(None) == "OFF"
    err = capsys.readouterr().err
    assert err.count("no NVIDIA driver") == 1
    assert "engines built without CUDA; --cuda ON to build it anyway" in err and "libcuda.so.1" in err
    assert topology.engine_cuda(None, quiet=True) == "OFF"


def test_driver_present_leaves_cmake_auto(machine, capsys):
    machine(True)
    assert topology.engine_cuda(None) == "AUTO"
    assert capsys.readouterr().err == ""


def test_a_gpu_node_does_not_take_an_engine_cached_without_cuda(tmp_path, monkeypatch):
    """A cache shared with a login node without a driver holds an engine built OFF: a GPU node (AUTO) rebuilds it,
    and takes one built ON or AUTO."""
    import json

    from gmb.engine import build_cache
    from gmb.machine.mpilibs import MpiLibrary

    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "src"
    root.mkdir()
    (root / "CMakeLists.txt").write_text("")
    lib = MpiLibrary("x", "openmpi", "4.1.6", str(tmp_path), str(tmp_path / "mpirun"), "mpirun")
    bdir = build_cache.build_dir(lib, root)
    bdir.mkdir(parents=True)
    (bdir / "gmb-bench").write_text("")
    for cached, rebuilt in (("OFF", "CUDA setting changed"), ("ON", None), ("AUTO", None)):
        (bdir / "gmb-build.json").write_text(json.dumps(build_cache.build_stamp(lib, root, cached, None)))
        assert build_cache.needs_build(lib, root, cuda="AUTO") == rebuilt, cached


@pytest.mark.parametrize("asked", ["ON", "AUTO", "OFF"])
def test_what_is_asked_wins(machine, asked, capsys):
    assert topology.engine_cuda(asked) == asked
    assert capsys.readouterr().err == ""


def test_env_cmake_arg_and_no_compiler_are_not_overridden(machine, monkeypatch):
    assert topology.engine_cuda(None, ["-DGMB_ENABLE_CUDA=ON"]) is None  # CMake takes it last
    monkeypatch.setenv("GMB_ENABLE_CUDA", "AUTO")
    assert topology.engine_cuda(None) is None  # build.build reads it: a test asking for a CUDA compile gets one
    monkeypatch.delenv("GMB_ENABLE_CUDA")
    monkeypatch.setattr(topology, "cuda_compiler", lambda: None)
    assert topology.engine_cuda(None) is None  # AUTO finds no nvcc anyway: nothing to say


def test_probe_on_this_machine_answers():
    usable, why = topology.nvidia_driver()
    assert isinstance(usable, bool) and (usable or why)


def test_probe_says_why_without_libcuda():
    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("an NVIDIA driver's libcuda.so.1 loads here")
    except OSError:
        pass
    topology.nvidia_driver.cache_clear()
    try:
        usable, why = topology.nvidia_driver()
    finally:
        topology.nvidia_driver.cache_clear()
    assert not usable and "libcuda.so.1" in why


@pytest.fixture
def fake_cmake(tmp_path, monkeypatch):
    """A declared library built by a fake cmake (records its configure arguments, makes gmb-bench)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "cmake.log"
    (bindir / "cmake").write_text(f"""#!/bin/sh
case "$1" in
  --version) echo "cmake version 3.28.1" ;;
  --build) printf '#!/bin/sh\\n' > "$2/gmb-bench"; chmod +x "$2/gmb-bench" ;;
  *) case "$*" in
       *GMB_PORTABLE_ONLY*) echo "$@" >> {log}.portable ;;  # the objects every engine shares: the same choice
       *) echo "$@" >> {log} ;;
     esac ;;
esac
""")
    (bindir / "mpicc").write_text("#!/bin/sh\necho gcc -I/x -L/x/lib -lmpi\n")
    (bindir / "mpiexec").write_text("#!/bin/sh\n")
    for f in bindir.iterdir():
        f.chmod(0o755)
    src = tmp_path / "src"
    (src / "src").mkdir(parents=True)
    (src / "include" / "gmb").mkdir(parents=True)
    (src / "CMakeLists.txt").write_text("project(x)\n")
    cfg = tmp_path / "libs.toml"
    cfg.write_text(f'[[library]]\nname = "x"\nfamily = "mpich"\nversion = "1.0"\nlauncher_path = "{bindir}/mpiexec"\n'
                   f'cc = "{bindir}/mpicc"\n')
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GMB_SOURCE", str(src))
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("GMB_ENGINE", raising=False)

    def gmb_build(*more):
        log.unlink(missing_ok=True)
        rc = main(["build", "--config", str(cfg), "--no-detect", *more])
        portable = Path(f"{log}.portable")
        cuda = [a for a in (log.read_text().split() if log.exists() else []) if a.startswith("-DGMB_ENABLE_CUDA=")]
        shared = [a for a in (portable.read_text().split() if portable.exists() else [])
                  if a.startswith("-DGMB_ENABLE_CUDA=")]
        portable.unlink(missing_ok=True)
        assert shared == cuda, f"the shared objects configured with {shared}, the engine with {cuda}"
        stamps = list((tmp_path / "cache" / "engines").glob("*/gmb-build.json"))
        return rc, cuda, json.loads(stamps[0].read_text())["cuda"] if stamps else None
    return gmb_build


def test_cmake_gets_off_without_driver_and_auto_with_one(machine, fake_cmake, capsys):
    rc, cuda, stamp = fake_cmake()
    assert rc == 0 and cuda == ["-DGMB_ENABLE_CUDA=OFF"] and stamp == "OFF"
    assert "no NVIDIA driver" in capsys.readouterr().err
    # the resolved choice is what the cache compares: asked again, the OFF engine is current
    assert fake_cmake() == (0, [], "OFF")
    # a driver now (the same cache on a GPU node), nothing asked: the engine built without CUDA is not taken, it is
    # rebuilt with CMake's AUTO (CUDA when nvcc is found), and then current
    machine(True)
    assert fake_cmake() == (0, ["-DGMB_ENABLE_CUDA=AUTO"], "AUTO")
    assert fake_cmake() == (0, [], "AUTO")
    # that engine (maybe with CUDA) is not taken for the OFF one when the driver is gone again: rebuilt once
    machine(False)
    assert fake_cmake() == (0, ["-DGMB_ENABLE_CUDA=OFF"], "OFF")


def test_explicit_on_wins_without_driver(machine, fake_cmake, capsys):
    assert fake_cmake("--cuda", "ON") == (0, ["-DGMB_ENABLE_CUDA=ON"], "ON")
    assert "no NVIDIA driver" not in capsys.readouterr().err
    assert fake_cmake() == (0, ["-DGMB_ENABLE_CUDA=OFF"], "OFF")  # nothing asked here: OFF, the cache compares


def test_env_asks_for_cuda_without_driver(machine, fake_cmake, monkeypatch):
    """The test suite's GMB_TEST_CUDA becomes $GMB_ENABLE_CUDA (conftest.real_env): a test asking for a CUDA
    compile gets one, driver or not."""
    monkeypatch.setenv("GMB_ENABLE_CUDA", "AUTO")
    assert fake_cmake() == (0, ["-DGMB_ENABLE_CUDA=AUTO"], "AUTO")
    monkeypatch.setenv("GMB_ENABLE_CUDA", "ON")
    assert fake_cmake() == (0, ["-DGMB_ENABLE_CUDA=ON"], "ON")


def test_run_no_build_says_nothing(machine, fake_setup, tmp_path, capsys):
    """`gmb run --no-build` builds nothing: no word about CUDA."""
    c = tmp_path / "c.toml"
    c.write_text('[campaign]\nname = "n"\n[[run]]\nbenchmarks = ["latency"]\nmemory = ["host:host"]\n'
                 'sizes = "1:8"\noptions = { iters = 2 }\n')
    main(["run", str(c), "--config", str(fake_setup["config"]), "--no-detect", "--no-build", "--results",
          str(tmp_path / "r"), "--no-progress", "--no-report"])
    assert "no NVIDIA driver" not in capsys.readouterr().err


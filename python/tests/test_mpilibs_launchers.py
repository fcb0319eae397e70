# SPDX-License-Identifier: BSD-3-Clause
import json
import os
import shutil

import pytest

from gmb.machine import detect, launchers, libraries
from gmb.machine import mpilibs
from gmb.machine import topology
from gmb.machine.mpilibs import MpiLibrary


def _lib(family="openmpi", **kw):
    d = dict(name="x", family=family, version="5.0.7", prefix="/opt/cuda-mpi/ompi", launcher_path="/opt/cuda-mpi/ompi/bin/mpirun",
             launcher="mpirun")
    d.update(kw)
    return MpiLibrary(**d)


def test_profiles_apply_env_and_args():
    lib = mpilibs.apply_profile(_lib(env={"UCX_TLS": "sm,self"}), "openmpi-ucx")
    assert lib.launcher_args[:3] == ["--mca", "pml", "ucx"]
    assert lib.env["UCX_TLS"] == "sm,self"  # the declared value overrides the profile's
    assert mpilibs.apply_profile(_lib(family="mpich"), "mpich").env["MPIR_CVAR_ENABLE_GPU"] == "1"
    assert mpilibs.PROFILES["cray-mpich"]["env"]["MPICH_GPU_SUPPORT_ENABLED"] == "1"
    assert mpilibs.PROFILES["mvapich2-gdr"]["env"]["MV2_USE_CUDA"] == "1"
    with pytest.raises(mpilibs.ConfigError):
        mpilibs.apply_profile(_lib(), "nope")


def test_identity_hash_changes_with_version():
    a, b = _lib(), _lib(version="5.0.8")
    assert a.build_hash != b.build_hash and len(a.build_hash) == 16
    assert _lib().build_hash == a.build_hash


def test_load_config(tmp_path):
    (tmp_path / "ompi" / "bin").mkdir(parents=True)
    (tmp_path / "ompi" / "bin" / "mpirun").write_text("")
    cfg = tmp_path / "l.toml"
    cfg.write_text(f"""
[[library]]
name = "ucx"
prefix = "{tmp_path / 'ompi'}"
profile = "openmpi-ucx"
version = "5.0.7"
launcher_args = ["--bind-to", "none"]
[[library]]
name = "ob1"
prefix = "{tmp_path / 'ompi'}"
profile = "openmpi-ob1"
version = "5.0.7"
""")
    libs = libraries.load_config(cfg)
    assert [lib.name for lib in libs] == ["ucx", "ob1"]
    assert libs[0].launcher == "mpirun" and libs[0].family == "openmpi" and libs[0].source == "declared"
    assert libs[0].launcher_args == ["--mca", "pml", "ucx", "--bind-to", "none"]
    assert "smcuda" in " ".join(libs[1].launcher_args)
    bad = tmp_path / "b.toml"
    bad.write_text("[[library]]\nname='x'\n")
    with pytest.raises(mpilibs.ConfigError, match="prefix"):
        libraries.load_config(bad)


def test_mpirun_argv_root_and_oversubscribe(monkeypatch):
    lib = mpilibs.apply_profile(_lib(), "openmpi-ob1")
    spec = launchers.LaunchSpec(ranks=(os.cpu_count() or 1) + 1, program=["gmb-bench", "latency"], bind="core",
                                env={"CUDA_VISIBLE_DEVICES": "0,1"})
    L = launchers.get("mpirun")
    argv = L.argv(lib, spec)
    assert argv[:3] == ["/opt/cuda-mpi/ompi/bin/mpirun", "-np", str(spec.ranks)]
    assert "--oversubscribe" in argv and argv[-2:] == ["gmb-bench", "latency"]
    assert argv.index("--mca") < argv.index("gmb-bench")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    env = L.environment(lib, spec, base={})
    assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_hydra_and_srun_argv():
    lib = mpilibs.apply_profile(_lib(family="mpich", launcher_path="/usr/bin/mpiexec.mpich"), "mpich")
    argv = launchers.get("mpiexec").argv(lib, launchers.LaunchSpec(2, ["e"], hostfile="hf", ranks_per_node=1))
    assert argv == ["/usr/bin/mpiexec.mpich", "-n", "2", "-f", "hf", "-ppn", "1", "e"]
    assert launchers.get("mpiexec").environment(lib, launchers.LaunchSpec(2, ["e"]), {})["MPIR_CVAR_ENABLE_GPU"] == "1"
    ompi = mpilibs.apply_profile(_lib(), "openmpi-ucx")
    s = launchers.get("srun")
    spec = launchers.LaunchSpec(8, ["e"], nodes=2, ranks_per_node=4)
    argv = s.argv(ompi, spec)
    assert argv[:5] == ["srun", "-n", "8", "-N", "2"] and "--mca" not in argv and "--mpi=pmix" in argv
    assert s.environment(ompi, spec, {})["OMPI_MCA_pml"] == "ucx"
    with pytest.raises(KeyError, match="unknown launcher"):
        launchers.get("qsub")


def test_a_binding_given_by_the_block_and_by_the_library_is_given_once():
    """Open MPI refuses a command line that names --bind-to twice ("listed more than once"): the block's binding
    is left out where the library's launcher arguments already bind; the plan refuses two different ones."""
    ompi = _lib(launcher_args=["--bind-to", "none", "--mca", "pml", "ucx"])
    argv = launchers.get("mpirun").argv(ompi, launchers.LaunchSpec(2, ["e"], bind="none"))
    assert argv.count("--bind-to") == 1
    assert launchers.get("mpirun").argv(_lib(), launchers.LaunchSpec(2, ["e"], bind="core")).count("--bind-to") == 1
    hydra = _lib(family="mpich", launcher_path="/usr/bin/mpiexec.mpich", launcher_args=["-bind-to=core"])
    assert "-bind-to" not in launchers.get("mpiexec").argv(hydra, launchers.LaunchSpec(2, ["e"], bind="core"))
    assert launchers.launcher_binding(["--cpu-bind=cores"]) == "cores"
    assert launchers.binding_conflict("core", _lib(launcher_args=["--cpu-bind=cores"])) is None  # srun's word
    assert launchers.binding_conflict("none", ompi) is None and launchers.binding_conflict(None, ompi) is None
    why = launchers.binding_conflict("core", ompi)
    assert "bind = \"core\"" in why and "launcher_args bind them otherwise ('none')" in why


def test_each_launcher_reaches_other_hosts_through_an_agent_its_own_way():
    assert launchers.get("mpirun").remote_shell_arguments("/s/agent") == ["--mca", "plm_rsh_agent", "/s/agent"]
    assert launchers.get("mpiexec").remote_shell_arguments("/s/agent") == ["-launcher", "ssh", "-launcher-exec",
                                                                           "/s/agent"]
    assert launchers.get("srun").remote_shell_arguments("/s/agent") == []  # srun starts its ranks itself


@pytest.mark.skipif(not shutil.which("mpirun.openmpi") and not shutil.which("mpiexec.mpich"),
                    reason="no Debian MPI installed")
def test_detect_debian_alternatives():
    libs = detect.detect()
    fams = {lib.family for lib in libs}
    if shutil.which("mpirun.openmpi"):
        assert "openmpi" in fams
        o = next(lib for lib in libs if lib.family == "openmpi")
        assert o.version[0].isdigit() and o.cxx and o.cxx.endswith(".openmpi")
        assert mpilibs.cuda_aware_static(o) in (True, False)
    if shutil.which("mpiexec.mpich"):
        m = next(lib for lib in libs if lib.family == "mpich")
        assert m.launcher == "mpiexec" and m.version[0].isdigit()
    assert len({lib.name for lib in libs}) == len(libs)


TOPO = """\
        GPU0    GPU1    GPU2    GPU3    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    NV18    PIX     SYS     0-47    0               N/A
GPU1    NV18     X      NV18    NV18    SYS     0-47    0               N/A
GPU2    NV18    NV18     X      NV18    SYS     48-95   1               N/A
GPU3    PIX     NV18    NV18     X      SYS     48-95   1               N/A

Legend:
  X    = Self
"""


def test_parse_nvidia_smi_topo():
    n, links, numa = topology.parse_nvidia_smi_topo(TOPO)
    assert n == 4 and links[(0, 1)] == "NV18" and links[(0, 3)] == "PIX" and links[(2, 2)] == "X"
    assert numa == {0: 0, 1: 0, 2: 1, 3: 1}
    t = topology.Topology(gpus=[topology.Gpu(i, "H200") for i in range(4)], links=links, numa_nodes={0: "", 1: ""})
    assert t.gpu_pairs_by_class() == {"nvlink": (0, 1), "pcie": (0, 3)}
    assert t.path_classes(hosts=2) == ["host", "cross-socket", "host-device", "same-gpu", "nvlink", "pcie",
                                       "inter-node"]


def test_srun_cpu_bind_values_are_srun_values():
    s = launchers.get("srun")
    lib = _lib(launcher="srun")
    binds = {b: next(a for a in s.argv(lib, launchers.LaunchSpec(2, ["e"], bind=b)) if a.startswith("--cpu-bind="))
             for b in ("none", "core", "socket", "numa")}
    assert binds == {"none": "--cpu-bind=none", "core": "--cpu-bind=cores", "socket": "--cpu-bind=sockets",
                     "numa": "--cpu-bind=ldoms"}  # srun has no "numas": a NUMA domain is a locality domain


@pytest.mark.parametrize("text,msg", [
    ('[library]\nname = "x"\n', r"\[library\] must be written \[\[library\]\]"),
    ('library = 3\n', r"library must be \[\[library\]\] tables"),
    ('[[library]]\nname = "x"\nlauncher_path = "/m"\nenv = "A=1"\n', "env must be a table"),
    ('[[library]]\nname = "x"\nlauncher_path = "/m"\nlauncher = "bogus"\n',
     "unknown launcher 'bogus' \\(accepted: mpiexec, mpirun, srun\\)"),
    ('[[library]]\nname = "x"\nlauncher_path = 3\n', "launcher_path must be a non-empty string"),
    ('[[library]]\nname = "x"\nlauncher_path = "/m"\nprofile = "ucx"\n', "unknown profile 'ucx'"),
    ('[[libary]]\nname = "x"\n', r"unknown top-level keys \['libary'\]"),
])
def test_config_types(tmp_path, text, msg):
    cfg = tmp_path / "l.toml"
    cfg.write_text(text)
    with pytest.raises(mpilibs.ConfigError, match=msg):
        libraries.load_config(cfg)


def _fake_launcher(tmp_path, script: str) -> MpiLibrary:
    f = tmp_path / "mpirun"
    f.write_text("#!/bin/bash\n" + script)
    f.chmod(0o755)
    return _lib(launcher_path=str(f), prefix=str(tmp_path))


def test_engine_doctor_crash_is_a_not_aware_verdict(tmp_path):
    """pml ucx with UCX defaults dies on device memory (mpirun exits 139): gmb doctor reports the library as not
    aware with the signal and the engine's FATAL line, instead of failing."""
    from gmb.engine import doctor

    lib = _fake_launcher(tmp_path, 'echo "some launcher noise" >&2\n'
                                   'echo "gmb-bench: FATAL on rank 1 at awareness.cpp:84: the MPI library stopped '
                                   'working while proving it can move device memory" >&2\n'
                                   'for a in "$@"; do [ "$prev" = --out ] && printf \'{"type": "context", "mp\' > "$a";'
                                   ' prev=$a; done\nexit 139\n')
    ed = doctor.engine_doctor(lib, tmp_path / "gmb-bench")
    assert ed["crashed"] and ed["signal"] == 11 and ed["gpu_awareness"]["verdict"] == "not aware"
    assert ed["gpu_awareness"]["summary"].startswith("the awareness proof crashed (signal 11): gmb-bench: FATAL on "
                                                     "rank 1")
    rep = {"topology": {"source": "none", "gpus": [], "links": {}, "numa_nodes": {}, "path_classes": [], "notes": []},
           "libraries": [{**lib.describe(), "cuda_aware_static": None, "engine_doctor": ed}], "missing": []}
    assert "engine doctor: not aware: the awareness proof crashed (signal 11)" in doctor.format_text(rep)
    # killed by a signal without a launcher in between (-N), no FATAL message
    lib = _fake_launcher(tmp_path, "kill -SEGV $$\n")
    ed = doctor.engine_doctor(lib, tmp_path / "gmb-bench")
    assert ed["gpu_awareness"] == {"verdict": "not aware", "summary": "the awareness proof crashed (signal 11)"}
    # MPICH's Hydra: exit status 11 and its banner on standard output (seen with MPICH 4.0.2 on device memory)
    lib = _fake_launcher(tmp_path, 'echo "gmb-bench: FATAL on host vm rank 0: signal Segmentation fault while running: '
                                   'the GPU awareness proof" >&2\n'
                                   'echo "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault '
                                   '(signal 11)"\nexit 11\n')
    ed = doctor.engine_doctor(lib, tmp_path / "gmb-bench")
    assert ed["crashed"] and ed["signal"] == 11 and ed["gpu_awareness"]["verdict"] == "not aware"
    # exit 11 without Hydra's words is an ordinary failure
    lib = _fake_launcher(tmp_path, "echo 'exit eleven' >&2\nexit 11\n")
    assert doctor.engine_doctor(lib, tmp_path / "gmb-bench") == {"error": "exit 11: exit eleven"}
    # an ordinary failure stays an error
    lib = _fake_launcher(tmp_path, "echo 'cannot start' >&2\nexit 1\n")
    assert doctor.engine_doctor(lib, tmp_path / "gmb-bench") == {"error": "exit 1: cannot start"}


def _doctor_config(tmp_path, monkeypatch, launcher_script: str, extra: str = "") -> str:
    """A libraries config with one Open MPI library "ucx" whose launcher runs ``launcher_script`` (and a
    declared engine), HOME pointed away from the user's own config."""
    launcher = _fake_launcher(tmp_path, launcher_script).launcher_path
    engine = tmp_path / "gmb-bench"
    engine.write_text("")
    cfg = tmp_path / "l.toml"
    cfg.write_text(f'[[library]]\nname = "ucx"\nfamily = "openmpi"\nversion = "5"\nlauncher_path = "{launcher}"\n'
                   f'engine = "{engine}"\n{extra}')
    monkeypatch.setenv("HOME", str(tmp_path))
    return str(cfg)


def test_gmb_doctor_with_a_crashing_engine(tmp_path, monkeypatch, capsys):
    from gmb.cli import main

    cfg = _doctor_config(tmp_path, monkeypatch, "exit 139\n")
    assert main(["doctor", "--config", cfg, "--no-detect"]) == 0
    out = capsys.readouterr().out
    assert "engine doctor: not aware: the awareness proof crashed (signal 11)" in out
    assert "ucx: not aware: the awareness proof crashed (signal 11)" in out


def _aware_doctor_script(extra: str = "") -> str:
    """A launcher that writes an engine doctor's context (verdict aware) to --out, then runs ``extra``."""
    ctx = json.dumps({"type": "context", "mpi": {"gpu_awareness": {"verdict": "aware", "summary": "proved"}}})
    return (f"for a in \"$@\"; do [ \"$prev\" = --out ] && out=$a; prev=$a; done\n"
            f"echo '{ctx}' > \"$out\"\n{extra}")


def test_engine_doctor_crash_in_the_fresh_buffer_check_keeps_the_verdict(tmp_path):
    """The doctor proves awareness first; a crash in its later fresh-buffer check (device buffers freed and
    allocated again) is that check's finding, not a "not aware" verdict."""
    from gmb.engine import doctor

    lib = _fake_launcher(tmp_path, _aware_doctor_script(
        "echo \"gmb-bench: FATAL on host rank 1: signal Segmentation fault while running: the doctor's fresh-buffer "
        "check (window of 8 2-byte ...)\" >&2\nexit 139\n"))
    ed = doctor.engine_doctor(lib, tmp_path / "gmb-bench")
    assert ed["gpu_awareness"]["verdict"] == "aware"
    assert ed["fresh_buffers"]["status"] == "crashed" and "signal 11" in ed["fresh_buffers"]["detail"]


def test_gmb_doctor_names_the_setting_that_matters(tmp_path, monkeypatch, capsys):
    """`gmb doctor --settings`: the library's engine doctor crashes without UCX_MEMTYPE_CACHE=n (pml ucx with UCX's
    memory-type cache on device memory): the doctor names that setting, and not the one that changes nothing."""
    from gmb.cli import main

    result = json.dumps({"type": "result", "metrics": {"fresh_buffers": {"status": "passed", "detail": "ok"}}})
    cfg = _doctor_config(tmp_path, monkeypatch, '[ "$UCX_MEMTYPE_CACHE" = n ] || exit 139\n' + _aware_doctor_script(
        f"echo '{result}' >> \"$out\"\n"), 'env = {UCX_MEMTYPE_CACHE = "n", UCX_TLS = "all"}\n')
    monkeypatch.delenv("UCX_MEMTYPE_CACHE", raising=False)
    assert main(["doctor", "--config", cfg, "--no-detect", "--settings"]) == 0
    out = capsys.readouterr().out
    assert "engine doctor: aware: proved" in out
    assert "device buffers freed and allocated again: passed (ok)" in out
    assert ("setting that matters: UCX_MEMTYPE_CACHE=n: needed: without it the doctor says not aware (the awareness "
            "proof crashed: signal 11)") in out
    assert "UCX_TLS" not in out.split("setting that matters")[1]

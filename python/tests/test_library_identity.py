# SPDX-License-Identifier: BSD-3-Clause
"""The MPI library a launch ran is the one its figures are stored under: the check on records, the isolation of
each library's environment, the launch-time and ingest-time refusals (fake engines; test_identity_real.py runs the
same with real MPIs that share a soname)."""

import json
import sqlite3
import sys

import pytest

from gmb.engine import build, build_cache
from gmb.engine import doctor
from gmb.engine.configurations import Configuration
from gmb.machine.topology import Topology
from gmb.options import LibraryOptions
from gmb.run import setup
from gmb.machine import identity
from gmb.machine import mpilibs
from gmb.cli import main
from synth import context
from test_cli import run_gmb


def lib(name="ompi", family="openmpi", version="4.1.6", prefix="/usr", dirs=("/usr/lib/x86_64-linux-gnu",), **kw):
    return mpilibs.MpiLibrary(name=name, family=family, version=version, prefix=prefix,
                              launcher_path=f"{prefix}/bin/mpirun", library_dirs=list(dirs), **kw)


def ctx_loading(path, version_text, ranks=None):
    c = context("r", "latency", version_text)
    c["mpi"]["library_object"] = {"loaded": path, "loaded_realpath": path, "linked": path, "linked_realpath": path,
                                  "matches_build": True}
    for r, p in zip(c["ranks"], ranks or [path] * len(c["ranks"])):
        r["mpi_library"] = p
    return c


def test_the_library_planned_passes():
    c = ctx_loading("/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.6", "Open MPI v4.1.6, package: Debian OpenMPI")
    assert identity.mismatch(lib(), c) is None


def test_another_installation_of_the_same_soname_is_named_with_both():
    c = ctx_loading("/opt/cuda-mpi/ompi/lib/libmpi.so.40", "Open MPI v5.0.7, package: Open MPI lab")
    why = identity.mismatch(lib(), c)
    assert why.startswith("expected Open MPI 4.1.6 from /usr, loaded /opt/cuda-mpi/ompi/lib/libmpi.so.40")
    assert "does not say 4.1.6" in why and "(Open MPI v5.0.7, package: Open MPI lab)" in why


def test_one_rank_on_another_library_is_enough():
    c = ctx_loading("/usr/lib/x86_64-linux-gnu/libmpi.so.40", "Open MPI v4.1.6",
                    ranks=["/usr/lib/x86_64-linux-gnu/libmpi.so.40", "/home/me/ompi/lib/libmpi.so.40"])
    assert "loaded /home/me/ompi/lib/libmpi.so.40" in identity.mismatch(lib(), c)


def test_version_string_of_another_family_or_version():
    other_family = context("r", "latency", "MPICH Version: 4.0.2")
    assert "names another library" in identity.mismatch(lib(), other_family)
    # 4.1.60 is not 4.1.6; records of engines that do not name their library object are checked by version alone
    assert "does not say 4.1.6" in identity.mismatch(lib(), context("r", "latency", "Open MPI v4.1.60"))
    assert identity.mismatch(lib(version="unknown"), context("r", "latency", "Open MPI v4.1.60")) is None
    assert identity.mismatch(lib(), context("r", "latency", "Open MPI v4.1.6")) is None


def test_prefix_is_the_fallback_when_directories_are_unknown():
    c = ctx_loading("/opt/a/lib/libmpi.so.12", "MPICH Version: 4.0.2")
    assert identity.mismatch(lib(family="mpich", version="4.0.2", prefix="/opt/a", dirs=()), c) is None
    assert "loaded /opt/a/lib" in identity.mismatch(lib(family="mpich", version="4.0.2", prefix="/opt/b", dirs=()), c)


def test_links_resolved_on_both_sides(tmp_path):
    real = tmp_path / "real" / "lib"
    real.mkdir(parents=True)
    (real / "libmpi.so.40.0").write_text("")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    c = ctx_loading(str(tmp_path / "alias" / "lib" / "libmpi.so.40.0"), "Open MPI v4.1.6")
    assert identity.mismatch(lib(dirs=[str(real)]), c) is None


def test_library_dirs_follow_links_to_where_libmpi_lives(tmp_path):
    # Debian: openmpi/lib holds libmpi.so -> ../../libmpi.so.40.30.4
    top = tmp_path / "x86_64-linux-gnu"
    wrapper_dir = top / "openmpi" / "lib"
    wrapper_dir.mkdir(parents=True)
    (top / "libmpi.so.40.30.4").write_text("")
    (wrapper_dir / "libmpi.so").symlink_to("../../libmpi.so.40.30.4")
    assert identity.library_dirs([str(wrapper_dir)], "/usr") == [str(wrapper_dir), str(top)]
    (tmp_path / "p" / "lib").mkdir(parents=True)
    assert identity.library_dirs([], str(tmp_path / "p")) == [str(tmp_path / "p" / "lib")]
    # an MPICH built against a UCX elsewhere: its wrapper names that UCX's lib/, a dependency other installations use
    # too (kept out of their environments, an Open MPI that finds the same UCX through LD_LIBRARY_PATH would lose it)
    mpich_lib, ucx_lib = tmp_path / "mpich" / "lib", tmp_path / "ucx" / "lib"
    for d, name in ((mpich_lib, "libmpi.so.12"), (ucx_lib, "libucp.so.0")):
        d.mkdir(parents=True)
        (d / name).write_text("")
    assert identity.library_dirs([str(mpich_lib), str(ucx_lib)], str(tmp_path / "mpich")) == [str(mpich_lib)]


def _script(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return str(path)


def test_wrapper_directories_from_showme_and_show(tmp_path):
    libdir = tmp_path / "ompi" / "lib"
    libdir.mkdir(parents=True)
    ompi = _script(tmp_path / "ompi" / "bin" / "mpicc", f'[ "$1" = -showme:libdirs ] && echo {libdir}\n')
    assert identity.wrapper_library_dirs(ompi, "openmpi", {}) == [str(libdir)]
    mpich = _script(tmp_path / "mpich" / "bin" / "mpicc",
                    f'echo "cc -I/x/include -L{tmp_path}/mpich/lib -Wl,-rpath -Wl,{tmp_path}/mpich/lib -lmpi"\n')
    assert identity.wrapper_library_dirs(mpich, "mpich", {}) == [f"{tmp_path}/mpich/lib"]
    assert identity.wrapper_library_dirs(None, "mpich", {}) == []


def test_each_library_runs_without_the_other_installations_directories(monkeypatch):
    system = lib("ompi-4", dirs=["/usr/lib/x86_64-linux-gnu/openmpi/lib", "/usr/lib/x86_64-linux-gnu"])
    lab = lib("ompi-5", version="5.0.7", prefix="/opt/cuda-mpi/ompi", dirs=["/opt/cuda-mpi/ompi/lib"])
    ucx = lib("ompi-5-ucx", version="5.0.7", prefix="/opt/cuda-mpi/ompi", dirs=["/opt/cuda-mpi/ompi/lib"])  # same install
    system, lab, ucx = identity.isolated([system, lab, ucx])
    assert system.isolate_from == ["/opt/cuda-mpi/ompi/lib", "/opt/cuda-mpi/ompi/bin"]
    assert set(lab.isolate_from) == {"/usr/lib/x86_64-linux-gnu/openmpi/lib", "/usr/lib/x86_64-linux-gnu"}
    assert "/usr/bin" not in lab.isolate_from  # never a system bin directory
    base = {"LD_LIBRARY_PATH": "/opt/cuda-mpi/ompi/lib:/opt/cuda-mpi/ucx/lib:/usr/lib/x86_64-linux-gnu", "PATH":
            "/opt/cuda-mpi/ompi/bin:/usr/bin:/bin"}
    env = system.process_env(base)
    assert env["LD_LIBRARY_PATH"] == "/opt/cuda-mpi/ucx/lib:/usr/lib/x86_64-linux-gnu"
    assert env["PATH"] == "/usr/bin:/bin"
    env = lab.process_env(base)
    assert env["LD_LIBRARY_PATH"] == "/opt/cuda-mpi/ompi/lib:/opt/cuda-mpi/ucx/lib" and env["PATH"] == base["PATH"]
    assert ucx.process_env(base)["LD_LIBRARY_PATH"] == env["LD_LIBRARY_PATH"]


def test_launcher_and_wrapper_of_different_installations(tmp_path):
    ompi_bin = tmp_path / "ompi" / "bin"
    launcher = _script(ompi_bin / "mpirun", "echo 'mpirun (Open MPI) 4.1.6'\n")
    mpich_cc = _script(tmp_path / "mpich" / "bin" / "mpicc", "echo 'mpicc for MPICH version 4.0.2'\n")
    mixed = mpilibs.MpiLibrary("x", "openmpi", "4.1.6", str(tmp_path / "ompi"), launcher, cc=mpich_cc)
    assert "says 'mpicc for MPICH version 4.0.2'" in identity.launcher_and_wrapper(mixed, {})
    other_build = _script(tmp_path / "ompi2" / "bin" / "mpicc",
                          '[ "$1" = -showme:version ] && echo "mpicc: Open MPI 4.1.6 (Language: C)"\n')
    assert "installed under" in identity.launcher_and_wrapper(
        mpilibs.MpiLibrary("y", "openmpi", "4.1.6", str(tmp_path / "ompi"), launcher, cc=other_build), {})
    own = _script(ompi_bin / "mpicc", '[ "$1" = -showme:version ] && echo "mpicc: Open MPI 4.1.6 (Language: C)"\n')
    assert identity.launcher_and_wrapper(
        mpilibs.MpiLibrary("z", "openmpi", "4.1.6", str(tmp_path / "ompi"), launcher, cc=own), {}) is None


def test_engine_built_unpinned_is_not_reused_by_default(tmp_path, monkeypatch):
    assert build_cache.pins_mpi_library([]) and build_cache.pins_mpi_library(["-DGMB_PIN_MPI_LIBRARY=ON"])
    assert not build_cache.pins_mpi_library(["-DGMB_PIN_MPI_LIBRARY=OFF"])
    assert not build_cache.pins_mpi_library(["-DGMB_PIN_MPI_LIBRARY=x-NOTFOUND"])
    assert build_cache.pins_mpi_library(["-DGMB_PIN_MPI_LIBRARY=OFF", "-DGMB_PIN_MPI_LIBRARY:BOOL=ON"])
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "src"
    root.mkdir()
    x = lib(prefix=str(tmp_path))
    bdir = build_cache.build_dir(x, root)
    bdir.mkdir(parents=True)
    (bdir / "gmb-bench").write_text("")
    off = ["-DGMB_PIN_MPI_LIBRARY=OFF"]
    (bdir / "gmb-build.json").write_text(json.dumps(build_cache.build_stamp(x, root, "OFF", None, off)))
    assert build_cache.needs_build(x, root, cmake_args=off) is None  # asked for again: reused
    assert "does not pin its MPI library" in build_cache.needs_build(x, root)  # a plain build does not take it
    (bdir / "gmb-build.json").write_text(json.dumps(build_cache.build_stamp(x, root, "OFF", None)))
    assert build_cache.needs_build(x, root) is None


CAMPAIGN = """
[campaign]
name = "identity"
repetitions = 2
[[run]]
benchmarks = ["latency"]
memory = ["host:host"]
sizes = "1:64"
"""


def _store(outdir):
    return sqlite3.connect(outdir / "store.sqlite")


def test_launch_that_ran_another_library_stores_no_figure(fake_setup, tmp_path, monkeypatch, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    # fakempi-a is declared with its launcher under tmp/bin: its library lies under tmp (the prefix)
    monkeypatch.setenv("FAKE_MPI_LIBRARY", str(tmp_path / "lib" / "libmpi.so.40"))
    assert run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "ok",
                   "--no-build", "--library", "fakempi-a") == 0
    (outdir,) = (tmp_path / "ok").iterdir()
    assert {r[0] for r in _store(outdir).execute("SELECT status FROM launches")} == {"ok"}

    # the launches see another libmpi (e.g. a campaign env's LD_LIBRARY_PATH): no figure is stored under the name
    c.write_text(CAMPAIGN + 'env = { FAKE_MPI_LIBRARY = "/opt/other/lib/libmpi.so.40", '
                            'FAKE_LIBRARY_VERSION = "Open MPI v5.0.7" }\n')
    capsys.readouterr()
    assert run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "bad",
                   "--no-build", "--library", "fakempi-a") == 1
    err = capsys.readouterr().err
    (outdir,) = (tmp_path / "bad").iterdir()
    db = _store(outdir)
    rows = db.execute("SELECT status, reason FROM launches").fetchall()
    assert {r[0] for r in rows} == {"wrong-library"}
    assert rows[0][1].startswith(f"expected Open MPI 9.9.0 from {tmp_path}, loaded /opt/other/lib/libmpi.so.40")
    assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM contexts").fetchone()[0] == 0
    assert len(list((outdir / "raw").iterdir())) == 2  # kept for inspection
    assert "fakempi-a: 2 launch(es) ran another MPI library" in err
    html = (outdir / "report.html").read_text()
    assert "ran another MPI library" in html and "/opt/other/lib/libmpi.so.40" in html


def test_engine_that_loads_another_library_is_skipped_before_any_launch(fake_setup, tmp_path, monkeypatch, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    monkeypatch.setenv("FAKE_MPI_LIBRARY", "/opt/other/lib/libmpi.so.40")
    rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                 "--no-build", "--library", "fakempi-a")
    err = capsys.readouterr().err
    assert rc == 1 and "nothing to run" in err
    assert "skipping fakempi-a: all: its engine" in err and "does not run this library: expected Open MPI 9.9.0" in err


def test_engine_crash_after_swap_is_a_wrong_library_launch(fake_setup, tmp_path, monkeypatch):
    """A library swapped for an incompatible one can crash in MPI_Init, before any record: the engine's start-up
    warning names the swap."""
    engine = fake_setup["bindir"] / "gmb-bench-a"
    engine.write_text("#!/bin/sh\n"
                      "echo 'gmb-bench: warning: MPI library swapped: running /x/libmpi.so.40 but built against "
                      "/y/libmpi.so.40.30.4 (LD_LIBRARY_PATH=/x); figures belong to the library running' >&2\n"
                      "kill -SEGV $$\n")
    from gmb.run import execute
    from gmb.campaign.plan import Launch
    from gmb.results.store import Store

    x = Launch("l1", "fakempi-a", "latency", "host:host", "", 2, 1, ["latency"], {}, None, None, 10, "pt2pt")
    lib_a = mpilibs.MpiLibrary("fakempi-a", "openmpi", "9.9.0", str(tmp_path), str(fake_setup["bindir"] / "mpirun"),
                               launcher="mpirun")
    st = Store(":memory:")
    (tmp_path / "out").mkdir()
    execute.run_launches(tmp_path / "out", [x], {"fakempi-a": Configuration(lib_a, str(engine))}, st, "c",
                         progress=False)
    (row,) = st.launches()
    assert row["status"] == "wrong-library"
    assert "running /x/libmpi.so.40 but built against /y/libmpi.so.40.30.4" in row["reason"]


def test_ingest_refuses_records_of_another_library(fake_setup, tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    bad = tmp_path / "bad.jsonl"
    for path, lib_path, text in ((good, tmp_path / "lib" / "libmpi.so.40", "Open MPI v9.9.0"),
                                 (bad, "/opt/other/lib/libmpi.so.40", "Open MPI v5.0.7")):
        path.write_text(json.dumps(ctx_loading(str(lib_path), text)) + "\n")
    db = tmp_path / "s.sqlite"
    rc = main(["ingest", str(db), str(good), str(bad), "--library", "fakempi-a", "--config", str(fake_setup["config"]),
               "--no-detect"])
    err = capsys.readouterr().err
    assert rc == 2 and f"{bad}: expected Open MPI 9.9.0" in err and "nothing stored" in err
    assert not db.exists()
    assert main(["ingest", str(db), str(good), "--library", "fakempi-a", "--config", str(fake_setup["config"]),
                 "--no-detect"]) == 0
    # a name gmb does not know is checked by what it says: one that names another family (or none) is refused,
    # one that names the records' family is stored, with a note naming what the records say
    capsys.readouterr()
    assert main(["ingest", str(db), str(bad), "--library", "my-ompi", "--no-detect"]) == 2
    assert f"{bad}: its records say openmpi-5.0.7" in capsys.readouterr().err
    assert main(["ingest", str(db), str(bad), "--library", "openmpi-mine", "--no-detect"]) == 0
    err = capsys.readouterr().err
    assert "openmpi-mine is not a library gmb found" in err and "its records say openmpi-5.0.7" in err


def test_doctor_shows_what_each_engine_loads(fake_setup, tmp_path, monkeypatch):
    """The doctor diagnoses the library configurations a run would make (nothing built): an engine that loads
    another library has none there, and the doctor shows what it loads."""
    monkeypatch.setenv("FAKE_MPI_LIBRARY", "/opt/other/lib/libmpi.so.40")
    monkeypatch.setattr(build, "build_all", lambda *a, **k: pytest.fail("the doctor built"))
    topo = Topology(gpus=[], links={}, numa_nodes={0: "0-1"})
    confs = setup.diagnosed_configurations(LibraryOptions(config=str(fake_setup["config"]), no_detect=True), topo)
    assert all(isinstance(c, Configuration) for c in confs)
    assert "does not run this library" in next(c for c in confs if c.name == "fakempi-a").no_engine
    rep = doctor.diagnose(confs, topo, run_engine_doctor=False)
    a = next(x for x in rep["libraries"] if x["name"] == "fakempi-a")
    assert a["engine_loads"]["loaded"] == "/opt/other/lib/libmpi.so.40"
    assert "expected Open MPI 9.9.0" in a["engine_loads"]["mismatch"]
    text = doctor.format_text(rep)
    assert "engine loads: /opt/other/lib/libmpi.so.40 (Open MPI v9.9.0)  WRONG LIBRARY" in text
    assert any("its engine does not run this library" in m for m in rep["missing"])

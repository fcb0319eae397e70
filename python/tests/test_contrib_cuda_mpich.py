# SPDX-License-Identifier: BSD-3-Clause
"""contrib/cuda-mpich/build-cuda-mpich.sh: bad input is refused before anything is unpacked or built, with what was
wrong and what is accepted (exit 2), and nothing of an existing installation is touched."""

import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "contrib" / "cuda-mpich" / "build-cuda-mpich.sh"


def _run(*args, env=None):
    p = subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env, timeout=60)
    return p.returncode, p.stderr


@pytest.fixture
def toolkit(tmp_path):
    """A directory that looks like a CUDA toolkit (bin/nvcc), so the checks after it are reached."""
    nvcc = tmp_path / "cuda" / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    return nvcc.parent.parent


def test_usage_and_unknown_options(tmp_path):
    rc, err = _run()
    assert rc == 2 and "usage:" in err and "SOURCE PREFIX" in err
    rc, err = _run("src.tar.xz", tmp_path / "p", "--with-cuda", "/x")
    assert rc == 2 and "unknown option '--with-cuda'" in err and "--cuda DIR, --ucx DIR, --sm LIST, --jobs N" in err


def test_missing_toolkit_ucx_and_source_are_named(tmp_path, toolkit):
    rc, err = _run("src.tar.xz", tmp_path / "p", "--cuda", tmp_path / "nowhere")
    assert rc == 2 and f"{tmp_path}/nowhere/bin/nvcc not found" in err
    rc, err = _run("src.tar.xz", tmp_path / "p", "--cuda", toolkit, "--ucx", tmp_path)
    assert rc == 2 and "ucp.h not found: --ucx must name a UCX installation" in err
    rc, err = _run(tmp_path / "mpich-4.0.2.tar.xz", tmp_path / "p", "--cuda", toolkit)
    assert rc == 2 and "mpich-4.0.2.tar.xz: no such file or directory" in err
    not_mpich = tmp_path / "src"
    not_mpich.mkdir()
    rc, err = _run(not_mpich, tmp_path / "p", "--cuda", toolkit)
    assert rc == 2 and "has no configure script: not an MPICH release source" in err


def test_an_existing_installation_is_never_built_over(tmp_path, toolkit):
    prefix = tmp_path / "mpich"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "mpicc").write_text("kept")
    rc, err = _run(tmp_path, prefix, "--cuda", toolkit)
    assert rc == 2 and "already holds an MPI (bin/mpicc): choose an empty prefix" in err
    assert (prefix / "bin" / "mpicc").read_text() == "kept" and not (tmp_path / "mpich.build").exists()

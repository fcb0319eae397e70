# SPDX-License-Identifier: BSD-3-Clause
"""The release tarball (`cmake --build <build> --target package_source`): gmb-<version>.tar.gz of the committed
files and its sha256 beside it, the same bytes for the same commit, configurable from its unpacked copy; the version
is the one of CMakeLists.txt, and python/pyproject.toml says the same."""

import hashlib
import re
import shutil
import subprocess
import tarfile
import tomllib

import pytest

from conftest import HERE

REPO = HERE.parent.parent
CMAKE_VERSION = re.search(r"project\(gmb VERSION (\S+)", (REPO / "CMakeLists.txt").read_text()).group(1)
HOST_ONLY = ["-DBUILD_TESTING=OFF", "-DGMB_ENABLE_CUDA=OFF"]


def committed_files() -> list[str]:
    out = subprocess.run(["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        pytest.skip(f"not a git checkout (the tarball is made from one): {out.stderr.strip()}")
    return out.stdout.split()


def package_source(build):
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(build), *HOST_ONLY], check=True, capture_output=True)
    out = subprocess.run(["cmake", "--build", str(build), "--target", "package_source"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return build / f"gmb-{CMAKE_VERSION}.tar.gz", out.stdout


def test_the_harness_has_the_version_of_cmakelists():
    with open(REPO / "python" / "pyproject.toml", "rb") as f:
        assert tomllib.load(f)["project"]["version"] == CMAKE_VERSION


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("git") is None, reason="needs cmake and git")
def test_the_tarball_holds_the_committed_files_and_configures(tmp_path):
    files = committed_files()
    tarball, printed = package_source(tmp_path / "build")
    sha256 = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert (tmp_path / "build" / f"{tarball.name}.sha256").read_text() == f"{sha256}  {tarball.name}\n"
    assert sha256 in printed
    prefix = f"gmb-{CMAKE_VERSION}/"
    with tarfile.open(tarball) as tar:
        members = [m.name for m in tar.getmembers() if m.isfile() or m.issym()]
        assert sorted(members) == sorted(prefix + f for f in files)
        tar.extractall(tmp_path / "unpacked", filter="tar")
    again, _ = package_source(tmp_path / "again")
    assert again.read_bytes() == tarball.read_bytes()
    out = subprocess.run(["cmake", "-S", str(tmp_path / "unpacked" / prefix), "-B", str(tmp_path / "from-tarball"),
                          *HOST_ONLY], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr

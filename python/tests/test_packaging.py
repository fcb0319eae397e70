# SPDX-License-Identifier: BSD-3-Clause
"""The site packages of gmb (packaging/): EasyBuild accepts the easyconfigs and Spack the packages gmb and py-gmb,
where the tools are installed (each test skipped, with the reason, otherwise), and every recipe pins the same release
tarball."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HERE

PACKAGING = HERE.parent.parent / "packaging"
EASYCONFIGS = sorted((PACKAGING / "easybuild").glob("*.eb"))
SPACK_PACKAGES = sorted((PACKAGING / "spack" / "packages").glob("*/package.py"))
LMOD = Path("/usr/share/lmod/lmod/libexec/lmod")  # Debian's lmod package


def tool(name: str) -> str | None:
    """NAME beside this Python (a virtual environment's bin/) or on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def test_every_recipe_pins_the_one_release_tarball():
    pinned = {path.relative_to(PACKAGING): re.findall(r"\b[0-9a-f]{64}\b", path.read_text())
              for path in [*EASYCONFIGS, *SPACK_PACKAGES]}
    assert len(pinned) == 5 and all(len(checksums) == 1 for checksums in pinned.values()), pinned
    assert len({checksums[0] for checksums in pinned.values()}) == 1, pinned


@pytest.mark.skipif(tool("eb") is None, reason="EasyBuild is not installed (pip install easybuild)")
@pytest.mark.skipif(not LMOD.exists(), reason=f"EasyBuild needs a modules tool: no Lmod at {LMOD} (apt-get install lmod)")
def test_easybuild_accepts_the_easyconfigs_and_finds_their_dependencies(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # eb runs `python`
           "EASYBUILD_PREFIX": str(tmp_path), "EASYBUILD_MODULES_TOOL": "Lmod", "LMOD_CMD": str(LMOD),
           "EASYBUILD_ALLOW_USE_AS_ROOT_AND_ACCEPT_CONSEQUENCES": "1"}  # CI runs as root
    out = subprocess.run([tool("eb"), "--dry-run", "--robot", *map(str, EASYCONFIGS)], capture_output=True, text=True,
                         env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    for module in ("gmb/0.1.0)", "gmb/0.1.0-foss-2024a)", "gmb/0.1.0-foss-2024a-CUDA-12.6.0)",
                   "CUDA/12.6.0)", "NCCL/2.22.3-GCCcore-13.3.0-CUDA-12.6.0)"):
        assert f"(module: {module}" in out.stdout, out.stdout


@pytest.mark.skipif(tool("spack") is None, reason="Spack is not installed (a clone of its repository, bin/ on PATH)")
def test_spack_concretizes_gmb_and_py_gmb(tmp_path):
    env = {**os.environ, "SPACK_USER_CONFIG_PATH": str(tmp_path), "SPACK_DISABLE_LOCAL_CONFIG": "1"}
    add = subprocess.run([tool("spack"), "repo", "add", str(PACKAGING / "spack")], capture_output=True, text=True,
                         env=env)
    assert add.returncode == 0, add.stdout + add.stderr
    out = subprocess.run([tool("spack"), "spec", "gmb", "py-gmb"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"gmb@0\.1\.0\b", out.stdout) and re.search(r"py-gmb@0\.1\.0\b", out.stdout), out.stdout

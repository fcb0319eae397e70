# SPDX-License-Identifier: BSD-3-Clause
# The Spack package of gmb's Python harness (docs/install.md, "Spack"), from the same release tarball as the
# engine's package gmb, beside it.

import os

from spack.package import *

try:  # Spack >= 1.0 with repositories of package API v2: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.python import PythonPackage
except ImportError:  # Spack 0.x (and 1.x reading this API v1 repository): from spack.package above
    pass


class PyGmb(PythonPackage):
    """The harness of gmb, the GPU-aware MPI benchmarks: discovers MPI libraries, builds the engine gmb-bench,
    runs campaigns, stores their JSON Lines records and reports them (`gmb`)."""

    # Where the release tarball is, as in the package gmb: the folder at GMB_SOURCE_URL, by default the build/
    # folder of the checkout this repository is in; py-gmb@main is that checkout's main branch (or GMB_GIT_URL).
    _checkout = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))
    url = os.environ.get("GMB_SOURCE_URL", f"file://{_checkout}/build").rstrip("/") + "/gmb-0.1.0.tar.gz"
    git = os.environ.get("GMB_GIT_URL", f"file://{_checkout}")

    license("BSD-3-Clause")

    version("0.1.0", sha256="f65ae9ad80f72e65634a14af2d65ed6297a93c8a81f6d89b028dcedb2c5b228d")
    version("main", branch="main")

    build_directory = "python"  # the harness's pyproject.toml

    depends_on("python@3.11:", type=("build", "run"))
    depends_on("py-setuptools@61:", type="build")
    depends_on("py-matplotlib@3.8.4:", type=("build", "run"))
    depends_on("py-numpy@1.24:", type=("build", "run"))
    depends_on("py-jsonschema@4:", type=("build", "run"))

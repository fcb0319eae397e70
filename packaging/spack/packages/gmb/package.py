# SPDX-License-Identifier: BSD-3-Clause
# The Spack package of gmb's engine (docs/install.md, "Spack"); py-gmb beside it is the harness. Add this repository
# with
#   spack repo add <gmb checkout>/packaging/spack
# then e.g. `spack install gmb +cuda +nccl cuda_arch=90`.

import os

from spack.package import *

try:  # Spack >= 1.0 with repositories of package API v2: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
except ImportError:  # Spack 0.x (and 1.x reading this API v1 repository): from spack.package above
    pass


class Gmb(CMakePackage, CudaPackage):
    """GPU-aware MPI benchmarks: gmb-bench measures point-to-point, collective, halo and copy-ceiling
    performance of MPI libraries on host, pinned, device and managed memory (NCCL optional), and writes
    JSON Lines records with their provenance. The Python harness (`gmb`) is the package py-gmb."""

    # gmb has no public address yet. Its versions come from the release tarball gmb-<version>.tar.gz, which
    # `cmake --build <build> --target package_source` makes, in the folder at GMB_SOURCE_URL (file:///path/to/build,
    # or a site's web or mirror folder); by default the build/ folder of the checkout this repository is in.
    # gmb@main is that checkout's main branch (or the Git repository at GMB_GIT_URL).
    _checkout = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))
    url = os.environ.get("GMB_SOURCE_URL", f"file://{_checkout}/build").rstrip("/") + "/gmb-0.1.0.tar.gz"
    git = os.environ.get("GMB_GIT_URL", f"file://{_checkout}")

    license("BSD-3-Clause")

    version("0.1.0", sha256="f65ae9ad80f72e65634a14af2d65ed6297a93c8a81f6d89b028dcedb2c5b228d")
    version("main", branch="main")

    # +cuda (and cuda_arch) come from CudaPackage.
    variant("nccl", default=False, description="Build the NCCL transport (--transport nccl); needs +cuda")
    conflicts("+nccl", when="~cuda", msg="the NCCL transport needs the CUDA module (+cuda)")

    depends_on("c", type="build")  # language dependencies: Spack >= 0.23 (remove both for older Spack)
    depends_on("cxx", type="build")
    depends_on("cmake@3.22:", type="build")
    depends_on("mpi")
    depends_on("nccl", when="+nccl")
    for _arch in CudaPackage.cuda_arch_values:  # NCCL built for the GPUs gmb is built for
        depends_on(f"nccl +cuda cuda_arch={_arch}", when=f"+nccl cuda_arch={_arch}")
    # CUDA >= 11 for the engine's C++17 device code; nvcc of CUDA 13 drops architectures below 75.
    depends_on("cuda@11:", when="+cuda")
    conflicts("cuda_arch=none", when="+cuda", msg="set the GPU architecture, e.g. cuda_arch=90")

    # Unit tests (GoogleTest) and MPI tests (Python with jsonschema validates the records), under --test.
    depends_on("googletest", type="test")
    depends_on("python@3.8:", type="test")
    depends_on("py-jsonschema", type="test")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("GMB_ENABLE_CUDA", spec.satisfies("+cuda")),
            self.define("GMB_ENABLE_NCCL", spec.satisfies("+nccl")),
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
            self.define("BUILD_TESTING", self.run_tests),
            # Keep this MPI's library directories searched first (DT_RPATH), as a build by hand does.
            self.define("GMB_PIN_MPI_LIBRARY", True),
        ]
        mpiexec = join_path(spec["mpi"].prefix.bin, "mpiexec")
        if os.path.exists(mpiexec):
            args.append(self.define("MPIEXEC_EXECUTABLE", mpiexec))
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CUDA_COMPILER", join_path(spec["cuda"].prefix.bin, "nvcc")))
            args.append(self.define("CUDAToolkit_ROOT", spec["cuda"].prefix))
            args.append(self.define("CMAKE_CUDA_ARCHITECTURES", spec.variants["cuda_arch"].value))
        if spec.satisfies("+nccl"):
            args.append(self.define("NCCL_ROOT", spec["nccl"].prefix))
        if self.run_tests:
            args.append(self.define("Python3_EXECUTABLE", spec["python"].command.path))
        return args

    def setup_build_environment(self, env):
        # The MPI tests launch several ranks on one build node, as root in containers: let Open MPI do both
        # (MPICH ignores these).
        if self.run_tests:
            env.set("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.set("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            env.set("OMPI_MCA_rmaps_base_oversubscribe", "1")
            env.set("PRTE_MCA_rmaps_default_mapping_policy", ":oversubscribe")

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_installed(self):
        """The installed engine runs and describes itself."""
        gmb_bench = Executable(self.prefix.bin.join("gmb-bench"))
        out = gmb_bench("list", output=str, error=str)
        if "gmb-bench" not in out:
            raise InstallError("gmb-bench list did not describe the engine")

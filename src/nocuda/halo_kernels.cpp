// SPDX-License-Identifier: BSD-3-Clause
// Host-only build: the halo mini-app's GPU kernels do not exist; device and managed fields are
// reported unsupported with this reason (never a crash).
#include "gmb/error.hpp"
#include "gmb/halo_kernels.hpp"

namespace gmb::halo {

std::unique_ptr<GpuKernels> make_gpu_kernels() {
  throw Unsupported("the halo GPU kernels need the CUDA module: this gmb-bench was built without CUDA "
                    "(reconfigure with -DGMB_ENABLE_CUDA=ON)");
}

}  // namespace gmb::halo

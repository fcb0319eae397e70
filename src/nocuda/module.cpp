// SPDX-License-Identifier: BSD-3-Clause
// The module table of a host-only build: the GPU kinds exist, unavailable, with the reason.
#include "gmb/platform.hpp"

namespace gmb {

void register_modules(Platform& platform) {
  register_host_memory(platform.memory);
  const std::string reason = "this gmb-bench was built without CUDA (reconfigure with -DGMB_ENABLE_CUDA=ON)";
  platform.gpu_unavailable_reason = reason;
  register_gpu_memory_kinds(platform.memory, reason, GpuAllocators{});
  register_nccl(platform);
}

}  // namespace gmb

// SPDX-License-Identifier: BSD-3-Clause
// The module table of a CUDA build: host kinds from core, GPU kinds and the runtime from here.
#include "gmb/platform.hpp"
#include "gpu_runtime.hpp"
#include "memory_kinds.hpp"

namespace gmb {

void register_modules(Platform& platform) {
  register_host_memory(platform.memory);
  platform.gpu = std::make_unique<cuda::CudaRuntime>();
  std::string error;
  if (platform.gpu->device_count(&error) == 0)
    platform.gpu_unavailable_reason = "no CUDA driver or GPU is usable here (" + error + ")";
  cuda::register_gpu_memory(platform.memory, platform.gpu_unavailable_reason);
  register_nccl(platform);
}

}  // namespace gmb

// SPDX-License-Identifier: BSD-3-Clause
// What this build and machine offer: memory kinds and, with the CUDA module, a GPU runtime.
#pragma once

#include <memory>
#include <string>

#include "gmb/gpu.hpp"
#include "gmb/memory.hpp"
#include "gmb/nccl.hpp"

namespace gmb {

struct Platform {
  MemoryKinds memory;
  std::unique_ptr<GpuRuntime> gpu;  // null in a host-only build
  // Why there is no usable GPU (host-only build, or no device visible); empty when there is one.
  std::string gpu_unavailable_reason;
  NcclSupport nccl;  // the NCCL transport, or why there is none
};

// Fills `platform` with the host kinds and whatever optional modules this build has. Implemented
// once per build flavour (src/cuda/module.cpp or src/nocuda/module.cpp): no #ifdef here.
void register_modules(Platform& platform);

}  // namespace gmb

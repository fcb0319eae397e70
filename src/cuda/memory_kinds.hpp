// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include "gmb/memory.hpp"

namespace gmb::cuda {

// Registers pinned, device and managed; unavailable with `unavailable_reason` when it is not empty.
void register_gpu_memory(MemoryKinds& kinds, const std::string& unavailable_reason);

}  // namespace gmb::cuda

// SPDX-License-Identifier: BSD-3-Clause
// CUPTI's unified-memory counters (GPU and CPU page faults, bytes migrated each way). libcupti is
// opened at run time, so gmb-bench runs where CUPTI is absent and reports why it cannot count.
#pragma once

#include <memory>
#include <string>

#include "gmb/gpu.hpp"

namespace gmb::cuda {

// A counter for the current device, or null with `reason` set.
std::unique_ptr<UnifiedMemoryCounter> make_cupti_unified_memory_counter(std::string* reason);

}  // namespace gmb::cuda

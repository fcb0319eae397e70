// SPDX-License-Identifier: BSD-3-Clause
// A build without the NCCL module: the transport exists, unavailable, with the reason CMake gave.
#include "gmb/nccl.hpp"
#include "gmb/platform.hpp"

#ifndef GMB_NCCL_ABSENT_REASON
#error "CMake defines GMB_NCCL_ABSENT_REASON for builds without NCCL"
#endif

namespace gmb {

void register_nccl(Platform& platform) { platform.nccl.unavailable_reason = GMB_NCCL_ABSENT_REASON; }

}  // namespace gmb

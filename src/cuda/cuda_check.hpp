// SPDX-License-Identifier: BSD-3-Clause
// CUDA error checking for the CUDA module: every runtime call goes through GMB_CUDA_CHECK.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "gmb/error.hpp"

#define GMB_CUDA_CHECK(call)                                                                      \
  do {                                                                                            \
    const cudaError_t gmb_cuda_status_ = (call);                                                  \
    if (gmb_cuda_status_ != cudaSuccess)                                                          \
      ::gmb::fatal(__FILE__, __LINE__,                                                            \
                   std::string(#call) + " failed: " + cudaGetErrorName(gmb_cuda_status_) + ": " + \
                       cudaGetErrorString(gmb_cuda_status_));                                     \
  } while (0)

// After a kernel launch: launch errors are reported by cudaGetLastError.
#define GMB_CUDA_CHECK_LAUNCH(what) GMB_CUDA_CHECK(cudaGetLastError())

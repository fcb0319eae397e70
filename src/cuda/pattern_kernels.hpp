// SPDX-License-Identifier: BSD-3-Clause
// Kernels that write and check the validation pattern in device-accessible memory, so that
// validating device buffers needs no host copies. Same pattern as gmb::pattern_byte.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gmb::cuda {

void launch_fill_pattern(void* data, std::size_t bytes, std::uint32_t seed, bool complement, cudaStream_t stream);
// Returns the first mismatching offset, or `bytes` when everything matches. Synchronises `stream`.
std::size_t first_pattern_mismatch(const void* data, std::size_t bytes, std::uint32_t seed, cudaStream_t stream);
// Reads every page once on the device (managed memory: migrates it there).
void launch_touch(void* data, std::size_t bytes, cudaStream_t stream);
// One block spinning on the SM clock for about `seconds` (converted with the device's clock rate).
void launch_busy(double seconds, cudaStream_t stream);
void launch_empty(cudaStream_t stream);
// Grid-stride copy by the SMs (16-byte words where aligned).
void launch_sm_copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

}  // namespace gmb::cuda

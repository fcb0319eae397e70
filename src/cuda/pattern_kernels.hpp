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
// A producer for partitioned sends: about two blocks per SM, an equal share of them per partition. The blocks
// of partition p wait until (p + 1) / partitions of `seconds` have passed since they started (partitions
// finish in order, spread over the kernel's time, as a kernel whose work advances through its output), write
// their slice of partition p of `data` (`bytes` split equally) with the validation pattern for `seed` and make
// it visible to the system; the last of them sets flags[p] = epoch (flags: host memory the device can write,
// e.g. cudaMallocHost).
void launch_partition_producer(void* data, std::size_t bytes, int partitions, double seconds, std::uint32_t seed,
                               std::uint32_t* flags, std::uint32_t epoch, cudaStream_t stream);
// Grid-stride copy by the SMs (16-byte words where aligned).
void launch_sm_copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

}  // namespace gmb::cuda

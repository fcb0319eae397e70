// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>

#include "cuda_check.hpp"
#include "pattern_kernels.hpp"

namespace gmb::cuda {

namespace {

__device__ __forceinline__ std::uint8_t device_pattern_byte(std::size_t offset, std::uint32_t seed) {
  const std::uint64_t x = offset * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
  return static_cast<std::uint8_t>((x >> 32) ^ (x >> 56));
}

__global__ void fill_kernel(std::uint8_t* data, std::size_t bytes, std::uint32_t seed, std::uint8_t flip) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < bytes;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[k] = device_pattern_byte(k, seed) ^ flip;
}

__global__ void check_kernel(const std::uint8_t* data, std::size_t bytes, std::uint32_t seed,
                             unsigned long long* first_bad) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < bytes;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    if (data[k] != device_pattern_byte(k, seed)) atomicMin(first_bad, static_cast<unsigned long long>(k));
}

__global__ void touch_kernel(volatile std::uint8_t* data, std::size_t bytes, std::size_t stride) {
  for (std::size_t k = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) * stride; k < bytes;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x * stride)
    data[k] = data[k];
}

__global__ void busy_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void empty_kernel() {}

__device__ __forceinline__ unsigned long long global_nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Blocks [p * per_partition, (p + 1) * per_partition) produce partition p, each a slice of it, so that
// writing a large partition takes the SMs a partition's share of the device, not one SM. The last of them
// to finish (per-partition counters, zeroed before the launch) sets the partition's flag.
__global__ void partition_producer_kernel(std::uint8_t* data, std::size_t partition_bytes, unsigned per_partition,
                                          unsigned long long span_ns, int partitions, std::uint32_t seed,
                                          unsigned* finished, volatile std::uint32_t* flags, std::uint32_t epoch) {
  const std::size_t p = blockIdx.x / per_partition, slice = blockIdx.x % per_partition;
  if (threadIdx.x == 0) {
    // The global timer, not the SM clock: it counts nanoseconds whatever clock the SM runs at.
    const unsigned long long until = global_nanoseconds() + span_ns * (p + 1) / static_cast<unsigned>(partitions);
    while (global_nanoseconds() < until) {
    }
  }
  __syncthreads();
  const std::size_t slice_bytes = (partition_bytes + per_partition - 1) / per_partition;
  const std::size_t begin = p * partition_bytes + slice * slice_bytes;
  const std::size_t end = min(begin + slice_bytes, (p + 1) * partition_bytes);
  if (begin < end) {
    const std::size_t aligned_begin = min(end, (begin + 7) / 8 * 8), aligned_end = max(aligned_begin, end / 8 * 8);
    for (std::size_t k = begin + threadIdx.x; k < aligned_begin; k += blockDim.x) data[k] = device_pattern_byte(k, seed);
    for (std::size_t k = aligned_begin + 8 * threadIdx.x; k < aligned_end; k += 8 * static_cast<std::size_t>(blockDim.x)) {
      std::uint64_t word = 0;
      for (int b = 0; b < 8; ++b) word |= static_cast<std::uint64_t>(device_pattern_byte(k + b, seed)) << (8 * b);
      *reinterpret_cast<std::uint64_t*>(data + k) = word;
    }
    for (std::size_t k = aligned_end + threadIdx.x; k < end; k += blockDim.x) data[k] = device_pattern_byte(k, seed);
  }
  // Every thread's writes are visible to the host and to other devices before the flag says so.
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&finished[p], 1u) + 1 == per_partition) flags[p] = epoch;
}

__global__ void copy16_kernel(uint4* dst, const uint4* src, std::size_t words) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < words;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[k] = src[k];
}

__global__ void copy1_kernel(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < bytes;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[k] = src[k];
}

unsigned grid_for(std::size_t items) {
  const std::size_t blocks = (items + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

}  // namespace

void launch_fill_pattern(void* data, std::size_t bytes, std::uint32_t seed, bool complement, cudaStream_t stream) {
  if (bytes == 0) return;
  fill_kernel<<<grid_for(bytes), 256, 0, stream>>>(static_cast<std::uint8_t*>(data), bytes, seed,
                                                    complement ? 0xff : 0x00);
  GMB_CUDA_CHECK_LAUNCH("fill_kernel");
}

std::size_t first_pattern_mismatch(const void* data, std::size_t bytes, std::uint32_t seed, cudaStream_t stream) {
  if (bytes == 0) return 0;
  unsigned long long* first_bad = nullptr;
  GMB_CUDA_CHECK(cudaMallocAsync(&first_bad, sizeof *first_bad, stream));
  const unsigned long long none = bytes;
  GMB_CUDA_CHECK(cudaMemcpyAsync(first_bad, &none, sizeof none, cudaMemcpyHostToDevice, stream));
  check_kernel<<<grid_for(bytes), 256, 0, stream>>>(static_cast<const std::uint8_t*>(data), bytes, seed, first_bad);
  GMB_CUDA_CHECK_LAUNCH("check_kernel");
  unsigned long long result = bytes;
  GMB_CUDA_CHECK(cudaMemcpyAsync(&result, first_bad, sizeof result, cudaMemcpyDeviceToHost, stream));
  GMB_CUDA_CHECK(cudaFreeAsync(first_bad, stream));
  GMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<std::size_t>(result);
}

void launch_touch(void* data, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  constexpr std::size_t kStride = 4096;  // one access per page is enough to migrate it
  touch_kernel<<<grid_for((bytes + kStride - 1) / kStride), 256, 0, stream>>>(static_cast<std::uint8_t*>(data), bytes,
                                                                              kStride);
  GMB_CUDA_CHECK_LAUNCH("touch_kernel");
}

void launch_busy(double seconds, cudaStream_t stream) {
  // The SM clock rate in kHz; cached per device because the attribute query is not free.
  static thread_local int cached_device = -1;
  static thread_local int clock_khz = 0;
  int device = 0;
  GMB_CUDA_CHECK(cudaGetDevice(&device));
  if (device != cached_device) {
    GMB_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    cached_device = device;
  }
  const long long cycles = static_cast<long long>(seconds * clock_khz * 1e3);
  busy_kernel<<<1, 1, 0, stream>>>(cycles);
  GMB_CUDA_CHECK_LAUNCH("busy_kernel");
}

void launch_empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  GMB_CUDA_CHECK_LAUNCH("empty_kernel");
}

void launch_partition_producer(void* data, std::size_t bytes, int partitions, double seconds, std::uint32_t seed,
                               std::uint32_t* flags, std::uint32_t epoch, cudaStream_t stream) {
  // Per-device counters of finished blocks per partition, kept between launches (grown when more partitions
  // are asked for) and zeroed on the stream before each launch.
  struct Counters {
    unsigned* finished = nullptr;
    int capacity = 0, sms = 0;
  };
  static thread_local Counters by_device[64];
  int device = 0;
  GMB_CUDA_CHECK(cudaGetDevice(&device));
  Counters& c = by_device[device % 64];
  if (c.sms == 0) GMB_CUDA_CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, device));
  if (c.capacity < partitions) {
    if (c.finished) GMB_CUDA_CHECK(cudaFree(c.finished));
    GMB_CUDA_CHECK(cudaMalloc(&c.finished, sizeof(unsigned) * static_cast<std::size_t>(partitions)));
    c.capacity = partitions;
  }
  GMB_CUDA_CHECK(cudaMemsetAsync(c.finished, 0, sizeof(unsigned) * static_cast<std::size_t>(partitions), stream));
  // About two blocks per SM over the whole grid: every partition gets its share of the device.
  const unsigned per_partition = static_cast<unsigned>(std::max(1, (2 * c.sms + partitions - 1) / partitions));
  const auto span_ns = static_cast<unsigned long long>(seconds > 0 ? seconds * 1e9 : 0);
  partition_producer_kernel<<<static_cast<unsigned>(partitions) * per_partition, 512, 0, stream>>>(
      static_cast<std::uint8_t*>(data), bytes / static_cast<std::size_t>(partitions), per_partition, span_ns, partitions,
      seed, c.finished, flags, epoch);
  GMB_CUDA_CHECK_LAUNCH("partition_producer_kernel");
}

void launch_sm_copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  int device = 0, sms = 0;
  GMB_CUDA_CHECK(cudaGetDevice(&device));
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned blocks = static_cast<unsigned>(sms * 4);
  const bool aligned = (reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | bytes) % 16 == 0;
  if (aligned) copy16_kernel<<<blocks, 512, 0, stream>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src), bytes / 16);
  else copy1_kernel<<<blocks, 512, 0, stream>>>(static_cast<std::uint8_t*>(dst), static_cast<const std::uint8_t*>(src), bytes);
  GMB_CUDA_CHECK_LAUNCH("copy_kernel");
}

}  // namespace gmb::cuda
